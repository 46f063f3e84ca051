"""The liquids of the simulated home while it is a robot's hardware: a container that stands
tipped lets its liquid flow out, into the container its mouth is over, else onto the floor.

The world keeps a liquid as a quantity per container (``PhysicsWorld.liquids``), not as
particles; the physics skills move it in their own pouring skill (sim/physics/pouring.py). When
the robot's own software pours, nothing but the physics state decides: a container with its lid
off whose up axis stays further than ``TIP_RAD`` from vertical (a watering can: ``SPOUT_TIP_RAD``)
for ``POUR_S`` empties into the container whose opening its mouth is over, above its rim, or is
spilled. The referee then reports the liquid with its new container, or not at all.
"""
from __future__ import annotations

import math

import numpy as np

from affplan_ros.sim.physics.openings import has_spout, mouth_over
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

TIP_RAD = 1.2          # a bottle, cup or carton pours once tipped this far (about 70 degrees)
SPOUT_TIP_RAD = 0.5    # a watering can pours from its spout sooner (about 30 degrees)
POUR_S = 0.5           # s it stays tipped before its liquid has left it
CHECK_EVERY_S = 0.1    # s of simulated time between two looks


class Liquids:
    def __init__(self, world: PhysicsWorld):
        self.world = world
        self._tipped: dict[str, float] = {}
        self._since = 0.0
        self.spilled: list[str] = []     # the containers that were emptied onto nothing, in order

    def update(self, data, dt: float) -> None:
        """One control period of ``dt`` simulated seconds (under the world's lock)."""
        self._since += dt
        if self._since < CHECK_EVERY_S:
            return
        period, self._since = self._since, 0.0
        w = self.world
        for source, contents in list(w.liquids.items()):
            thing = w.things.get(source)
            if (thing is None or thing.kind != ThingKind.OBJECT or source in w.closed_lids
                    or not any(litres > 0 for litres in contents.values())):
                self._tipped.pop(source, None)
                continue
            up = w.rotation(source)[:, 2]
            tilt = math.acos(float(np.clip(up[2], -1.0, 1.0)))
            if tilt < (SPOUT_TIP_RAD if has_spout(thing.props) else TIP_RAD):
                self._tipped.pop(source, None)
                continue
            self._tipped[source] = self._tipped.get(source, 0.0) + period
            if self._tipped[source] >= POUR_S:
                self._pour(source)

    def _pour(self, source: str) -> None:
        w = self.world
        target = next((name for name, t in w.things.items()
                       if name != source and t.kind in (ThingKind.OBJECT, ThingKind.FURNITURE)
                       and name not in w.closed_lids and w.has_site(t.inner_site) and mouth_over(w, source, name)),
                      None)
        for liquid, litres in list(w.liquids[source].items()):
            del w.liquids[source][liquid]
            if target is not None:
                w.liquids.setdefault(target, {})[liquid] = w.liquids.get(target, {}).get(liquid, 0.0) + litres
        if target is None:
            self.spilled.append(source)
        self._tipped.pop(source, None)
