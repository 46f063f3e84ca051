"""A physics executor that sees through the perception pipeline: Explore's view of a place is
what the detector finds on the head camera's rendered RGB-D frame, not what the physics state
says. The ROS-free twin of sim_world with ``perception:=true`` (there the perception node runs
the same pipeline on the published frames), for benchmarks and tests without a suite.

What the robot then knows comes only from frames: names from where things are in the map
(``MapNamer``), on/in from boxes and depth, closed doors assumed (a detector cannot tell), and
only what stands at the place looked at (``at_location``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np

from affplan_ros.core.model.records import ObjectRecord, Observation
from affplan_ros.core.model.scene import Relation
from affplan_ros.core.perception.pipeline import Observation as Seen
from affplan_ros.core.perception.pipeline import PerceptionPipeline
from affplan_ros.core.perception.views import at_location, merged
from affplan_ros.sim.physics.camera import CameraFrame, HeadCamera
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.world import ThingKind


def view_of(view: Seen, location: str) -> Observation:
    """A view of ``location`` (``at_location``) as Explore reports it: the objects, the place itself
    included, with the relations among these (assumed ones marked)."""
    objects = [ObjectRecord(o.name, o.class_name, o.instance, tuple(sorted(o.affordances))) for o in view.objects]
    relations = [Relation(r.predicate, tuple(r.args)) for r in view.relations]
    return Observation(tuple(objects), tuple(relations), location,
                       assumed=tuple(Relation(r.predicate, tuple(r.args)) for r in view.relations if r.assumed))


# Explore looks straight at the place, then turned to either side: close to a counter, one frame
# shows only its middle (radians of head pan; the names agree across them by where things are).
HEAD_SWEEP = (0.0, 0.45, -0.45)
GROUNDING_REACH_M = 0.35   # a perceived object is the world's nearest thing of its class within this


class PerceivingExecutor(PhysicsExecutor):
    """``PhysicsExecutor`` whose ``observe`` turns the head to the place, renders the camera and
    runs ``pipeline`` (a loaded detector) on the frame. ``frames`` keeps the views seen (frame,
    the view of the place) for reports.

    Plans then name what the camera named. A step's arguments reach the world's bodies through
    ``grounding``: each perceived object is the nearest thing of its class to where the camera
    measured it (what the arm would reach for there); a detection with no such thing near stays
    ungrounded, and a step on it fails as a step on something that is not there."""

    def __init__(self, *args, pipeline: PerceptionPipeline, width: int = 320, height: int = 240, **kwargs):
        super().__init__(*args, **kwargs)
        if pipeline.detector is None:
            raise ValueError("the perception pipeline has no detector loaded")
        self.pipeline = pipeline
        self.camera = HeadCamera(self.world, width, height)
        self.frames: list[tuple[CameraFrame, Seen]] = []
        self.grounding: dict[str, str] = {}
        self.perceived: set[str] = set()

    def close(self) -> None:
        self.camera.close()

    def observe(self, location: str, *, see_inside_closed: bool = False) -> Observation:
        # see_inside_closed (what a person told the robot) has no camera: a frame shows what it shows.
        raised = self.clear_view()   # the tucked arms hide much of a view turned to their side
        try:
            views = [self._view_turned(location, pan) for pan in HEAD_SWEEP]
        finally:
            self.end_view(raised)
        seen = view_of(merged(views), location)
        here = self.location_of_robot()
        if here != location:
            return seen
        # Where the robot stands it knows without a camera (its own localisation): the view says
        # so, as every view of the robot's place does.
        return replace(seen, objects=(*seen.objects, self._record(self.robot)),
                       relations=(*seen.relations, Relation("at", (self.robot, location))))

    def _view_turned(self, location: str, pan_offset: float) -> Seen:
        """One frame of ``location`` with the head turned ``pan_offset`` from straight at it; its
        objects grounded where the camera saw them."""
        self.look_at(location, pan_offset)
        frame = self.camera.render()
        bgr = np.ascontiguousarray(frame.rgb[:, :, ::-1])
        seen = self.pipeline.process(bgr, frame.depth, (frame.fx, frame.fy, frame.cx, frame.cy), draw=False,
                                     camera_pose=(frame.rotation, frame.position))
        view = at_location(seen, location, self.pipeline.oam.affordances_of)
        self.frames.append((frame, view))
        for o in view.objects:
            if o.name == location:
                continue
            self.perceived.add(o.name)
            if o.position is None:
                continue
            at = frame.rotation @ np.asarray(o.position, float) + frame.position
            thing = self._nearest_thing(o.class_name, at)
            if thing is not None:
                self.grounding[o.name] = thing
            else:
                self.grounding.pop(o.name, None)
        return view

    def _nearest_thing(self, class_name: str, at: np.ndarray) -> Optional[str]:
        best, best_d = None, GROUNDING_REACH_M
        for name, thing in self.world.things.items():
            if thing.class_name != class_name or thing.kind not in (ThingKind.OBJECT, ThingKind.FURNITURE):
                continue
            d = float(np.linalg.norm(self.world.position(name) - at))
            if d <= best_d:
                best, best_d = name, d
        return best

    def world_name(self, name: str) -> str:
        if name in self.grounding:
            return self.grounding[name]
        # Seen, but nothing of its class is where it was seen (a false detection): no body.
        return f"{name} (nothing there)" if name in self.perceived else super().world_name(name)
