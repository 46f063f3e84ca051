"""A joint trajectory controller on the physics, as ros2_controllers' joint_trajectory_controller
behaves for control_msgs' FollowJointTrajectory: the trajectory starts from where the joints are,
is sampled every control period (linear between points given by positions, cubic where the
points give velocities too) into the joints' position servos, and ends

* SUCCESSFUL once the joints are within the goal tolerance of the last point, after its time;
* PATH_TOLERANCE_VIOLATED as soon as a joint strays further than its path tolerance from where
  it should be (an arm stopped by a collision); the joints then hold where they are;
* GOAL_TOLERANCE_VIOLATED when the goal tolerance is not met ``goal_time_tolerance`` after the
  last point's time.

A goal must name every joint of the controller (its allow_partial_joints_goal is false), with
times that increase; a bad goal is refused with INVALID_JOINTS or INVALID_GOAL.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Optional, Sequence

import mujoco
import numpy as np

from affplan_ros.sim.hardware.controller import Controller

DEFAULT_GOAL_TOLERANCE = 0.05      # rad or m: the joint counts as arrived
DEFAULT_GOAL_TIME_S = 1.0          # s after the last point's time the goal may still be reached
NO_TOLERANCE = -1.0                # control_msgs' "erased" tolerance


class TrajectoryError(IntEnum):
    """control_msgs/FollowJointTrajectory's error codes."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


@dataclass(frozen=True)
class TrajectoryPoint:
    time_s: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()


@dataclass(frozen=True)
class TrajectoryOutcome:
    error: TrajectoryError
    text: str = ""
    canceled: bool = False


@dataclass(frozen=True)
class Tracking:
    """Where the joints should be, are, and the difference (the action's feedback)."""

    desired: tuple[float, ...]
    actual: tuple[float, ...]
    index: int


class TrajectoryController(Controller[TrajectoryOutcome]):
    def __init__(self, model: mujoco.MjModel, joints: Sequence[str], names: Sequence[str]):
        """``joints``: the model's joints it drives; ``names``: their names on the ROS graph."""
        super().__init__(model, joints)
        self.names = tuple(names)
        self._points: list[TrajectoryPoint] = []
        self._path = self._goal_tol = np.zeros(len(self._act))
        self._goal_time = DEFAULT_GOAL_TIME_S
        self._t = 0.0
        self._tracking: Optional[Tracking] = None

    def problem(self, joint_names: Sequence[str], points: Sequence[TrajectoryPoint]) -> Optional[TrajectoryOutcome]:
        """Why a goal is refused, or None (checked before it is accepted)."""
        if sorted(joint_names) != sorted(self.names):
            return TrajectoryOutcome(TrajectoryError.INVALID_JOINTS,
                                     f"the goal names {list(joint_names)}; this controller drives {list(self.names)}")
        times = [p.time_s for p in points]
        for i, p in enumerate(points):
            if len(p.positions) != len(joint_names) or (p.velocities and len(p.velocities) != len(joint_names)):
                return TrajectoryOutcome(TrajectoryError.INVALID_GOAL, f"point {i} has not one value per joint")
            if not all(math.isfinite(v) for v in (*p.positions, *p.velocities, p.time_s)):
                return TrajectoryOutcome(TrajectoryError.INVALID_GOAL, f"point {i} has a value that is not finite")
        if any(b <= a for a, b in zip(times, times[1:])) or (times and times[0] < 0):
            return TrajectoryOutcome(TrajectoryError.INVALID_GOAL, "time_from_start must increase from 0")
        return None

    def command(self, joint_names: Sequence[str], points: Sequence[TrajectoryPoint], data: mujoco.MjData,
                path_tolerance: dict[str, float] | None = None, goal_tolerance: dict[str, float] | None = None,
                goal_time_s: float = 0.0) -> None:
        """Start following ``points`` (checked by :meth:`problem`); a running one is replaced."""
        order = [list(joint_names).index(n) for n in self.names]
        start = TrajectoryPoint(0.0, tuple(float(data.qpos[q]) for q in self._qpos))
        mapped = [TrajectoryPoint(p.time_s, tuple(p.positions[i] for i in order),
                                  tuple(p.velocities[i] for i in order) if p.velocities else ()) for p in points]
        if mapped and mapped[0].time_s == 0.0:
            mapped = mapped[1:] if len(mapped) > 1 else mapped     # a first point at t = 0 is where it starts
        with self._lock:
            self._points = [start, *mapped]
            self._path = self._tolerances(path_tolerance, 0.0)
            self._goal_tol = self._tolerances(goal_tolerance, DEFAULT_GOAL_TOLERANCE)
            self._goal_time = goal_time_s if goal_time_s > 0 else DEFAULT_GOAL_TIME_S
            self._t = 0.0
            self._begin()

    def _tolerances(self, given: dict[str, float] | None, default: float) -> np.ndarray:
        # control_msgs: 0 (or no entry) keeps the default, -1 erases the tolerance; no default is
        # no tolerance.
        values = []
        for name in self.names:
            v = (given or {}).get(name, 0.0)
            tolerance = math.inf if v == NO_TOLERANCE else abs(v) or default
            values.append(tolerance or math.inf)
        return np.array(values)

    def update(self, data: mujoco.MjData, dt: float) -> None:
        with self._lock:
            if not self.running:
                return
            self._t += dt
            desired, index = self._sample(self._t)
            for a, value in zip(self._act, desired):
                data.ctrl[a] = value
            actual = np.array([float(data.qpos[q]) for q in self._qpos])
            self._tracking = Tracking(tuple(desired), tuple(actual), index)
            error = np.abs(actual - desired)
            stray = np.flatnonzero(error > self._path)
            if stray.size:
                j = int(stray[0])
                self._hold(data)
                self._end(TrajectoryOutcome(TrajectoryError.PATH_TOLERANCE_VIOLATED,
                                            f"{self.names[j]} is {error[j]:.3f} from where it should be "
                                            f"(path tolerance {self._path[j]:.3f})"))
                return
            end = self._points[-1].time_s
            if self._t < end:
                return
            final = np.array(self._points[-1].positions)
            off = np.abs(actual - final)
            if np.all(off <= self._goal_tol):
                self._end(TrajectoryOutcome(TrajectoryError.SUCCESSFUL))
            elif self._t > end + self._goal_time:
                j = int(np.argmax(off - self._goal_tol))
                self._hold(data)
                self._end(TrajectoryOutcome(TrajectoryError.GOAL_TOLERANCE_VIOLATED,
                                            f"{self.names[j]} ended {off[j]:.3f} from its goal "
                                            f"(goal tolerance {self._goal_tol[j]:.3f})"))

    def _sample(self, t: float) -> tuple[np.ndarray, int]:
        points = self._points
        if t >= points[-1].time_s:
            return np.array(points[-1].positions), len(points) - 2
        i = next(k for k in range(1, len(points)) if t < points[k].time_s)
        a, b = points[i - 1], points[i]
        span = b.time_s - a.time_s
        s = (t - a.time_s) / span
        pa, pb = np.array(a.positions), np.array(b.positions)
        if a.velocities and b.velocities:   # cubic Hermite: positions and velocities at both ends
            va, vb = np.array(a.velocities) * span, np.array(b.velocities) * span
            h = (2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2)
            return h[0] * pa + h[1] * va + h[2] * pb + h[3] * vb, i - 1
        return pa + s * (pb - pa), i - 1

    def _stopped(self, data: mujoco.MjData) -> TrajectoryOutcome:
        return TrajectoryOutcome(TrajectoryError.SUCCESSFUL, "canceled", canceled=True)

    def tracking(self) -> Optional[Tracking]:
        with self._lock:
            return self._tracking
