"""The people of the simulated home while it is a robot's hardware: cooperative and standing
still, as the physics skills' person model (sim/physics/handover.py) is, but acting on their own.

A person takes what a robot hand holds out to them: a thing held between both pads of a robot
hand, within ``PERSON_REACH`` of the person and kept still for ``STILL_S``, is reached for with a
free hand and gripped (the world's weld). The robot's software only holds it out and opens its
hand, as it would for a real person; the referee then finds it in the person's hand.
"""
from __future__ import annotations

from math import hypot

import numpy as np

from affplan_ros.sim.physics.robot import pad_geoms
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

PERSON_REACH = 0.60   # m from the person's centre they reach out to (an arm's length)
STILL_S = 0.5         # s a held-out thing stays still before the person takes it
STILL_SPEED = 0.03    # m/s: slower than this counts as still
CHECK_EVERY_S = 0.1   # s of simulated time between two looks (contacts cost a forward pass)


class People:
    def __init__(self, world: PhysicsWorld):
        self.world = world
        self.people = [n for n, t in world.things.items() if t.kind == ThingKind.AGENT and t.placement is not None]
        self._pads = pad_geoms(world.model)
        self._still: dict[str, float] = {}
        self._since = 0.0

    def update(self, data, dt: float) -> None:
        """One control period of ``dt`` simulated seconds (under the world's lock)."""
        self._since += dt
        if not self.people or self._since < CHECK_EVERY_S:
            return
        period, self._since = self._since, 0.0
        w = self.world
        offered = self._held_by_the_robot()
        for obj in list(self._still):
            if obj not in offered:
                del self._still[obj]
        for obj in offered:
            position = w.position(obj)
            person = self._within_reach(position)
            if person is None or w.velocity(obj) > STILL_SPEED:
                self._still.pop(obj, None)
                continue
            self._still[obj] = self._still.get(obj, 0.0) + period
            hand = w.free_hand(person)
            if self._still[obj] >= STILL_S and hand is not None:
                w.reach_out(person, np.asarray(position), hand)
                w.grip(person, obj, hand)
                del self._still[obj]

    def _held_by_the_robot(self) -> list[str]:
        """Things between both pads of a robot hand (one contact pass), not in a person's hand."""
        w = self.world
        pads = {g: side for side, geoms in self._pads.items() for g in geoms}
        touched: dict[tuple[str, str], set[int]] = {}
        for g1, g2 in w.contact_pairs():
            for pad, other in ((g1, g2), (g2, g1)):
                if pad in pads:
                    touched.setdefault((w.owner(other), pads[pad]), set()).add(pad)
        return sorted({obj for (obj, _side), got in touched.items() if len(got) == 2 and obj in w.things
                       and w.things[obj].kind == ThingKind.OBJECT and obj not in w.grips})

    def _within_reach(self, position) -> str | None:
        best, distance = None, PERSON_REACH
        for person in self.people:
            place = self.world.things[person].placement
            d = hypot(position[0] - place.x, position[1] - place.y)
            if d <= distance:
                best, distance = person, d
        return best
