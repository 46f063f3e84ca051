"""A physics executor that sees through the perception pipeline: Explore's view of a place is
what the detector finds on the head camera's rendered RGB-D frame, not what the physics state
says. The ROS-free twin of sim_world with ``perception:=true`` (there the perception node runs
the same pipeline on the published frames), for benchmarks and tests without a suite.

What the robot then knows comes only from frames: names from where things are in the map
(``MapNamer``), on/in from boxes and depth, closed doors assumed (a detector cannot tell), and
only what stands at the place looked at (``at_location``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from affplan_ros.core.model.records import ObjectRecord, Observation
from affplan_ros.core.model.scene import Relation
from affplan_ros.core.perception.pipeline import Observation as Seen
from affplan_ros.core.perception.pipeline import PerceptionPipeline
from affplan_ros.core.perception.views import at_location
from affplan_ros.sim.physics.camera import CameraFrame, HeadCamera
from affplan_ros.sim.physics.executor import PhysicsExecutor


def view_of(seen: Seen, location: str) -> Observation:
    """The pipeline's frame as Explore reports it (``at_location``): what stands at ``location``,
    the place itself included, with the relations among these (assumed ones marked)."""
    view = at_location(seen, location)
    objects = [ObjectRecord(o.name, o.class_name, o.instance, tuple(sorted(o.affordances))) for o in view.objects]
    relations = [Relation(r.predicate, tuple(r.args)) for r in view.relations]
    return Observation(tuple(objects), tuple(relations), location,
                       assumed=tuple(Relation(r.predicate, tuple(r.args)) for r in view.relations if r.assumed))


class PerceivingExecutor(PhysicsExecutor):
    """``PhysicsExecutor`` whose ``observe`` turns the head to the place, renders the camera and
    runs ``pipeline`` (a loaded detector) on the frame. ``frames`` keeps the last views seen
    (frame, what the pipeline made of it) for reports."""

    def __init__(self, *args, pipeline: PerceptionPipeline, width: int = 320, height: int = 240, **kwargs):
        super().__init__(*args, **kwargs)
        if pipeline.detector is None:
            raise ValueError("the perception pipeline has no detector loaded")
        self.pipeline = pipeline
        self.camera = HeadCamera(self.world, width, height)
        self.frames: list[tuple[CameraFrame, Seen]] = []

    def close(self) -> None:
        self.camera.close()

    def observe(self, location: str, *, see_inside_closed: bool = False) -> Observation:
        # see_inside_closed (what a person told the robot) has no camera: a frame shows what it shows.
        self.look_at(location)
        frame = self.camera.render()
        bgr = np.ascontiguousarray(frame.rgb[:, :, ::-1])
        seen = self.pipeline.process(bgr, frame.depth, (frame.fx, frame.fy, frame.cx, frame.cy), draw=False,
                                     camera_pose=(frame.rotation, frame.position))
        self.frames.append((frame, seen))
        return view_of(seen, location)

    def last_view(self) -> Optional[tuple[CameraFrame, Seen]]:
        return self.frames[-1] if self.frames else None
