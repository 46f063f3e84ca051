"""The head RGB-D camera of the simulated hardware: frames rendered from a private copy of the
physics state, on a schedule in simulated time.

The renderer is ``sim/physics/camera.py``'s :class:`HeadCamera` (colour rgb8, depth in metres along
the optical axis, square pixels, principal point in the middle). Rendering takes tens of
milliseconds on a CPU; the physics must not wait that long for its lock, so the camera copies the
state it needs (joint positions, the people's hands, the time: microseconds, under the lock) into
an MjData of its own, computes the kinematics there and renders from that copy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import mujoco

from affplan_ros.sim.physics.camera import CameraFrame, HeadCamera
from affplan_ros.sim.physics.world import PhysicsWorld


class SnapshotCamera:
    """The head camera of ``world``, rendering a copy of its state. Make and use it in one
    thread: its EGL context belongs to the thread that made it."""

    def __init__(self, world: PhysicsWorld, width: int, height: int):
        self.world = world
        self._data = mujoco.MjData(world.model)
        self._camera = HeadCamera(world, width, height)

    def copy_state(self) -> float:
        """Copy what a frame shows from the world (hold the world's lock); its simulated time."""
        source = self.world.data
        self._data.qpos[:] = source.qpos
        self._data.mocap_pos[:] = source.mocap_pos
        self._data.mocap_quat[:] = source.mocap_quat
        self._data.time = source.time
        return float(source.time)

    def render(self) -> CameraFrame:
        """The frame of the state last copied (no lock needed: the copy is this camera's)."""
        model = self.world.model
        mujoco.mj_kinematics(model, self._data)
        mujoco.mj_comPos(model, self._data)
        mujoco.mj_camlight(model, self._data)
        return self._camera.render(self._data)

    def close(self) -> None:
        self._camera.close()


@dataclass
class FrameSchedule:
    """When the next frame is due, in simulated seconds: every ``period``; when rendering falls
    behind (the physics faster than real time, a slow CPU), the next frame is due at once and the
    missed ones are dropped, never queued, so frames come as fast as the wall clock allows."""

    period: float
    due: Optional[float] = None     # None: the first frame is due now

    def is_due(self, sim_time: float) -> bool:
        return self.due is None or sim_time >= self.due

    def taken(self, sim_time: float) -> None:
        """A frame of ``sim_time`` was rendered."""
        self.due = sim_time + self.period if self.due is None else max(self.due + self.period, sim_time)

    def wait_s(self, sim_time: float, real_time_factor: float, poll_s: float = 0.002, most_s: float = 0.1) -> float:
        """Wall seconds to wait before looking again: until the due time at ``real_time_factor``
        (as fast as it goes, 0: ``poll_s``), at most ``most_s`` (to notice a stop)."""
        if self.is_due(sim_time):
            return 0.0
        assert self.due is not None
        if real_time_factor <= 0:
            return poll_s
        return min(most_s, max(poll_s, (self.due - sim_time) / real_time_factor))
