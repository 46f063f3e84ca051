"""The screw caps of the simulated home while it is a robot's hardware: a cap comes off when a
robot hand holds it and turns it anticlockwise (seen from above), and goes on turned clockwise.

A cap's thread is not modelled: whether the lid is on stays the world's flag
(``PhysicsWorld.closed_lids``), as for the physics skills (sim/physics/lids.py). What changes it
here is only the physics state: both pads of one robot hand on the container with the hand at
its top (within ``CAP_BAND``), and the hand turned about the vertical by ``TURN_RAD`` or more
while they stay on it, the container not dragged along (``DRAGGED``).
"""
from __future__ import annotations

import math

import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.robot import ARM_SIDES, pad_geoms
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

TURN_RAD = 1.2        # the hand turned this far while holding the cap: it came off (or went on)
CAP_BAND = 0.04       # m below the container's top the hand holds it by its cap
DRAGGED = 0.03        # m the container may move while its cap is turned
CHECK_EVERY_S = 0.05  # s of simulated time between two looks


class Lids:
    def __init__(self, world: PhysicsWorld):
        self.world = world
        self.capped = [n for n, t in world.things.items()
                       if t.kind == ThingKind.OBJECT and t.props.articulation == "lid"]
        self._pads = pad_geoms(world.model)
        self._turning: dict[tuple[str, str], tuple[float, float, np.ndarray]] = {}   # start yaw, turned, position
        self._since = 0.0

    def update(self, data, dt: float) -> None:
        """One control period of ``dt`` simulated seconds (under the world's lock)."""
        self._since += dt
        if not self.capped or self._since < CHECK_EVERY_S:
            return
        self._since = 0.0
        w = self.world
        holding = set()
        for side in ARM_SIDES:
            tcp, rot, _ = w.site(f"{side}_tcp")
            # A horizontal line turning with the hand (one of its axes across the approach), seen from above.
            axis = rot[:, 1] if math.hypot(rot[0, 1], rot[1, 1]) > 0.5 else rot[:, 2]
            yaw = math.atan2(axis[1], axis[0])
            for name in self.capped:
                if len(w.touching_geoms(name, self._pads[side])) < 2 or tcp[2] < self._top(name) - CAP_BAND:
                    continue
                key = (side, name)
                holding.add(key)
                position = w.position(name)
                last, turned, start = self._turning.get(key, (yaw, 0.0, position))
                # The fingers' line has no front: a step is the smaller of the two ways round.
                turned += math.remainder(yaw - last, math.pi)
                if float(np.hypot(*(position - start)[:2])) > DRAGGED:
                    turned, start = 0.0, position     # dragged round with the hand: no turn of the cap
                if turned >= TURN_RAD:
                    w.closed_lids.discard(name)
                    turned = 0.0
                elif turned <= -TURN_RAD:
                    w.closed_lids.add(name)
                    turned = 0.0
                self._turning[key] = (yaw, turned, start)
        for key in list(self._turning):
            if key not in holding:
                del self._turning[key]

    def _top(self, name: str) -> float:
        w = self.world
        half = np.array(object_geometry(w.things[name].props).half)
        return float(w.position(name)[2] + np.abs(w.rotation(name)[2, :]) @ half)
