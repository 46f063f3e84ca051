"""A container's opening and inner space: where its contents leave it, whether that is over
another container's opening, and what lies in it. World geometry shared by the physics skills
(sim/physics/pouring.py, skills.py) and the hardware's rules (a tipped container's liquid flows
out: sim/hardware/liquids.py; what lies in water gets wet: sim/hardware/tools.py)."""
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


def inner_height(world: PhysicsWorld, container: str) -> float:
    """Free height above a container's inner floor: up to a cabinet's roof, or a carryable
    container's inner height (what sticks out above a bowl's rim still counts as in it)."""
    thing = world.things[container]
    if thing.kind == ThingKind.FURNITURE:
        centre, _, _ = world.site(thing.inner_site)
        roof = thing.geometry.height if thing.geometry is not None else centre[2] + 0.5
        return max(roof - centre[2], 0.05)
    inner = thing.props.inner
    return (inner[2] if inner else thing.props.size[2]) + 0.05


def lies_in(world: PhysicsWorld, obj: str, container: str) -> bool:
    """Whether ``obj``'s centre lies in ``container``'s inner volume (above its inner floor,
    below its rim or roof)."""
    thing = world.things.get(container)
    if thing is None or not world.has_site(thing.inner_site) or obj not in world.things:
        return False
    centre, rot, size = world.site(thing.inner_site)
    local = rot.T @ (world.position(obj) - centre)
    return (abs(local[0]) <= size[0] + 0.02 and abs(local[1]) <= size[1] + 0.02
            and -0.02 <= local[2] <= inner_height(world, container))
