"""IALP's grounding predicates computed by the physics world (core/recovery/grounding.py's
provider interface), so that plans avoid the steps this world would refuse.

* ``reachable o``: from where the robot would stand for it (in front of its place, lined up with
  it, as the grasp step does), IK finds a top-down grasp (pre-grasp, grasp and lift poses) for a
  carryable object; for a door or drawer, its handle is within the arm's length. The robot does
  not move to find out.
* ``graspable o``: a carryable object narrower than the gripper's opening across its narrowest
  horizontal side, or flat enough for the edge grasp (a book), or else taken between both hands
  (a salad), with nothing resting on it (read from the physics' contacts).
* ``placeable s``: a free spot on ``s``'s top (or, for a container, its inner floor) for an
  9 cm object.
* ``detected o``: the head camera could see it at its place: not behind a closed door or lid.
"""
from __future__ import annotations

import numpy as np

from affplan_ros.core.recovery.grounding import CallbackGrounding, GroundingAnswer, GroundingPredicate
from affplan_ros.sim.physics.edge_grasp import is_flat_and_wide
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.two_hands import needs_two_hands
from affplan_ros.sim.physics.world import ThingKind

PROBE_HALF = (0.045, 0.045, 0.045)   # the object a free spot must fit (a 9 cm cup)


class PhysicsGrounding:
    """Answers grounding queries from the physics state of ``executor``'s world, as it is now."""

    def __init__(self, executor: PhysicsExecutor):
        self.executor = executor

    def ground(self, predicate: GroundingPredicate, candidates) -> GroundingAnswer:
        # One reading of the relations serves every candidate of this query.
        self._relations = self.executor.relations()
        functions = {"reachable": self.reachable, "graspable": self.graspable, "placeable": self.placeable,
                     "detected": self.detected}
        return CallbackGrounding(functions).ground(predicate, candidates)

    # -- the predicates ---------------------------------------------------------------------------
    def reachable(self, name: str) -> bool:
        ex = self.executor
        w = ex.world
        thing = w.things.get(name)
        if thing is None or thing.body_id < 0:
            return False
        if thing.kind == ThingKind.FURNITURE:
            if not thing.joint or not w.has_site(thing.handle_site):
                return False
            pose = w.approach_pose(name)
            handle = w.to_base_frame(w.site(thing.handle_site)[0], pose)
            return any(ex.skills._within_arm_length(side, handle) for side in ("l", "r"))
        if thing.kind != ThingKind.OBJECT:
            return False
        place = self._place_of(name)
        if place is None:
            return False
        placement = w.things[place].placement
        p = w.position(name)
        pose = w.approach_pose(place, placement.to_local(p[0], p[1])[0])
        return ex.skills.grasp_reachable(name, pose)

    def graspable(self, name: str) -> bool:
        w = self.executor.world
        thing = w.things.get(name)
        if thing is None or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
            return False
        width, _, _ = self.executor.skills.top_down_grasp(name)
        covered = any(a[0] == "on" and a[2] == name for a in self._relations)
        # Too wide from above but flat: the edge grasp slides it out and pinches it (edge_grasp.py);
        # not flat: both hands take it between them (two_hands.py).
        skills = self.executor.skills
        fits = width <= w.spec.max_aperture - 0.01 or is_flat_and_wide(skills, name, width) or \
            needs_two_hands(skills, name, width)
        return fits and not covered

    def placeable(self, name: str) -> bool:
        w = self.executor.world
        thing = w.things.get(name)
        if thing is None or thing.kind not in (ThingKind.FURNITURE, ThingKind.OBJECT):
            return False
        for site in (thing.top_site, thing.inner_site):
            if w.has_site(site) and self.executor.skills._free_spots(
                    name, site, None, PROBE_HALF, w.base_pose(), rotation=np.eye(3)):
                return True
        return False

    def detected(self, name: str) -> bool:
        ex = self.executor
        return name in ex.world.things and not ex._hidden(name)

    def _place_of(self, name: str):
        """The furniture the robot stands at for ``name`` (its location's anchor)."""
        loc = next((a[2] for a in self._relations if a[0] == "located" and a[1] == name), None)
        anchor = self.executor.anchors.by_location.get(loc) if loc else None
        thing = self.executor.world.things.get(anchor) if anchor else None
        return anchor if thing is not None and thing.placement is not None else None
