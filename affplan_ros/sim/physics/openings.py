"""Where a container's contents leave it and whether that is over another container's opening:
world geometry shared by the pouring skill (sim/physics/pouring.py) and the hardware's rule that
lets a tipped container's liquid flow out (sim/hardware/liquids.py)."""
from __future__ import annotations

import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind


def mouth(world: PhysicsWorld, source: str) -> np.ndarray:
    """Where the poured thing leaves the source, world frame: the centre of its opening (its top,
    along its own up axis); a watering can's spout tip (the top of its front end, its local +x:
    the handle is near the back)."""
    props = world.things[source].props
    half = object_geometry(props).half
    return world.position(source) + world.rotation(source) @ np.array([half[0] if has_spout(props) else 0.0, 0.0,
                                                                       half[2]])


def has_spout(props) -> bool:
    """A thing held by a handle over its top is a watering can, with a spout at its +x end
    (objects.yaml, ``top_handle``)."""
    return props.top_handle is not None


def rim_height(world: PhysicsWorld, target: str) -> float:
    """World height of the target's rim: an object's top as it stands; a piece of furniture's top
    (a sink's walls rise to its top, 18 cm above its basin's floor: aiming 5 cm above the floor put
    the bottle and the hand inside the basin, and the arm met its wall)."""
    thing = world.things[target]
    if thing.kind == ThingKind.OBJECT:
        half = object_geometry(thing.props).half
        return float(world.position(target)[2] + abs(world.rotation(target)[2, 2]) * half[2])
    if thing.geometry is not None and thing.geometry.height > 0.0:
        return float(thing.geometry.height)
    return float(world.site(thing.inner_site)[0][2] + 0.05)


def mouth_over(world: PhysicsWorld, source: str, target: str) -> bool:
    """Whether ``source``'s mouth is over ``target``'s opening, above its rim."""
    centre, rot, size = world.site(world.things[target].inner_site)
    at = mouth(world, source)
    local = rot.T @ (at - centre)
    return abs(local[0]) <= size[0] and abs(local[1]) <= size[1] and at[2] > rim_height(world, target)
