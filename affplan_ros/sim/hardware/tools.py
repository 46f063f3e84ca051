"""Cutting, wetting and wiping in the simulated home while it is a robot's hardware.

None of these is simulated as a change of material: the world keeps ``chopped``, ``wet`` and
``cleaned`` sets (``PhysicsWorld``), as for the physics skills (sim/physics/tools.py). What
changes them here is only the physics state, whoever moved the bodies:

* a thing whose class affords ``cut`` (a knife), held by both pads of one robot hand, that comes
  down onto a thing whose class is ``consumable`` while that lies on something (not in a hand):
  the thing is chopped;
* a thing that lies in an open container holding a liquid gets wet;
* a wet thing whose class affords ``wet-swipe`` (a sponge, a cloth), held in a robot hand and
  drawn ``WIPE_M`` in all across the top of a surface it touches there: the surface is clean.

Which classes cut, are food, or wipe is the home's object-affordance map: the same knowledge the
planner used, so what it plans with a knife is what cuts here.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from affplan_ros.core.knowledge.oam import OamDatabase
from affplan_ros.sim.physics.bodies import vertical_half
from affplan_ros.sim.physics.openings import lies_in
from affplan_ros.sim.physics.robot import pad_geoms
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

CHECK_EVERY_S = 0.05   # s of simulated time between two looks
DOWN_M = 0.0005        # m a blade must have come down since the last look for a touch to cut
WIPE_M = 0.25          # m a wet tool is drawn across a surface's top, in all, to clean it
ON_TOP_M = 0.03        # m the tool's bottom may be from the surface's top and still wipe it
RESTING_SPEED = 0.2    # m/s: a thing moving faster than this is not lying still to be cut


class Tools:
    def __init__(self, world: PhysicsWorld, oam: OamDatabase):
        self.world = world

        def affording(affordance: str) -> list[str]:
            return [n for n, t in world.things.items() if t.kind == ThingKind.OBJECT and t.class_name in oam
                    and oam.has(t.class_name, affordance)]

        self.blades, self.food, self.wipers = affording("cut"), set(affording("consumable")), affording("wet-swipe")
        self._pads = pad_geoms(world.model)
        self._heights: dict[str, float] = {}                   # blade -> its height at the last look
        self._wiped: dict[tuple[str, str], float] = {}         # (tool, surface) -> m drawn across it
        self._last_xy: dict[str, np.ndarray] = {}              # tool -> where it was at the last look
        self._since = 0.0

    def update(self, data, dt: float) -> None:
        """One control period of ``dt`` simulated seconds (under the world's lock)."""
        self._since += dt
        if self._since < CHECK_EVERY_S:
            return
        self._since = 0.0
        self._wet()
        if not self.blades and not self.wipers:
            return
        # One contact pass per look (each query of the world's would run a forward pass).
        w = self.world
        touching: dict[str, set[str]] = {}
        pads: dict[str, set[int]] = {}
        every_pad = {g for ids in self._pads.values() for g in ids}
        for g1, g2 in w.contact_pairs():
            o1, o2 = w.owner(g1), w.owner(g2)
            if o1 != o2:
                touching.setdefault(o1, set()).add(o2)
                touching.setdefault(o2, set()).add(o1)
            for pad, other in ((g1, o2), (g2, o1)):
                if pad in every_pad:
                    pads.setdefault(other, set()).add(pad)
        in_hand = self._in_hands(pads)
        for blade in self.blades:
            self._cut(blade, touching, in_hand)
        for tool in self.wipers:
            self._wipe(tool, touching, in_hand)

    def _in_hands(self, pads: dict[str, set[int]]) -> set[str]:
        """What both pads of one robot hand touch (``pads``: which pads touch each thing)."""
        return {name for name, on in pads.items() if any(len(on & set(ids)) >= 2 for ids in self._pads.values())}

    def _cut(self, blade: str, touching: dict[str, set[str]], in_hand: set[str]) -> None:
        w = self.world
        height = float(w.position(blade)[2])
        last = self._heights.get(blade)
        self._heights[blade] = height
        if last is None or last - height < DOWN_M or blade not in in_hand:
            return
        for target in touching.get(blade, set()) & self.food:
            lying = touching.get(target, set()) - {blade, w.robot_name}
            if lying and target not in in_hand and w.velocity(target) < RESTING_SPEED:
                w.chopped.add(target)

    def _wet(self) -> None:
        w = self.world
        for container, contents in w.liquids.items():
            if container in w.closed_lids or not any(litres > 0 for litres in contents.values()):
                continue
            for name, thing in w.things.items():
                if name != container and thing.kind == ThingKind.OBJECT and name not in w.wet \
                        and lies_in(w, name, container):
                    w.wet.add(name)

    def _wipe(self, tool: str, touching: dict[str, set[str]], in_hand: set[str]) -> None:
        w = self.world
        xy = w.position(tool)[:2].copy()
        last, self._last_xy[tool] = self._last_xy.get(tool), xy
        if last is None or tool not in w.wet or tool not in in_hand:
            return
        surface = self._under(tool, touching.get(tool, set()))
        if surface is None:
            return
        key = (tool, surface)
        self._wiped[key] = self._wiped.get(key, 0.0) + float(np.hypot(*(xy - last)))
        if self._wiped[key] >= WIPE_M:
            w.cleaned.add(surface)

    def _under(self, tool: str, touched: set[str]) -> Optional[str]:
        """What ``tool`` touches with its bottom on its top (a table's top, not its edge)."""
        w = self.world
        bottom = float(w.position(tool)[2]) - vertical_half(w.things[tool].props, w.rotation(tool))
        for name in sorted(touched):
            thing = w.things.get(name)
            if thing is None or thing.kind not in (ThingKind.FURNITURE, ThingKind.OBJECT) \
                    or not w.has_site(thing.top_site):
                continue
            centre, rot, size = w.site(thing.top_site)
            local = rot.T @ (w.position(tool) - centre)
            if abs(bottom - centre[2]) <= ON_TOP_M and abs(local[0]) <= size[0] and abs(local[1]) <= size[1]:
                return name
        return None
