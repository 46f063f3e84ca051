"""The omnidirectional base on the physics: driven along a path as Nav2's controller would drive
it (NavigateToPose), or by velocity commands (``/cmd_vel``). Its position servos are the wheels;
whether it got there is read back from the base's joints, so something in the way shows up as a
base that stops short (blocked)."""
from __future__ import annotations

from dataclasses import dataclass
from math import cos, hypot, pi, sin
from typing import Optional, Sequence

import mujoco

from affplan_ros.sim.hardware.controller import Controller
from affplan_ros.sim.physics.robot import BASE_JOINTS
from affplan_ros.sim.physics.world import BasePose

ARRIVED_M, ARRIVED_RAD = 0.04, 0.05     # within these of the goal, the base has arrived
BLOCKED_M = 0.15                        # further than this behind its set-point, something stops it
SETTLE_S = 3.0                          # s after the path's end to arrive
CMD_VEL_TIMEOUT_S = 0.5                 # a velocity command holds this long (as Tiago's base controller)


def _wrap(angle: float) -> float:
    return (angle + pi) % (2 * pi) - pi


def _smooth(s: float) -> float:
    return 0.5 - 0.5 * cos(pi * min(max(s, 0.0), 1.0))


@dataclass(frozen=True)
class BaseOutcome:
    arrived: bool
    text: str = ""
    canceled: bool = False


class BaseController(Controller[BaseOutcome]):
    def __init__(self, model: mujoco.MjModel, speed: float, yaw_rate: float):
        super().__init__(model, BASE_JOINTS)
        self.speed, self.yaw_rate = speed, yaw_rate
        self._segments: list[tuple[BasePose, BasePose, float]] = []     # from, to, duration (s)
        self._total = 0.0                                                # s the segments take
        self._t = 0.0
        self._velocity: Optional[tuple[float, float, float]] = None       # vx, vy (base frame), wz
        self._velocity_age = 0.0

    def pose(self, data: mujoco.MjData) -> BasePose:
        return BasePose(*(float(data.qpos[q]) for q in self._qpos))

    def _set_point(self, data: mujoco.MjData) -> BasePose:
        return BasePose(*(float(data.ctrl[a]) for a in self._act))

    def drive(self, path: Sequence[BasePose], data: mujoco.MjData) -> None:
        """Follow ``path`` (waypoints, the last the goal) from the present set-point."""
        with self._lock:
            start = self._set_point(data)
            segments = []
            for goal in path:
                turn = _wrap(goal.yaw - start.yaw)
                goal = BasePose(goal.x, goal.y, start.yaw + turn)
                seconds = max(hypot(goal.x - start.x, goal.y - start.y) / self.speed, abs(turn) / self.yaw_rate, 0.2)
                segments.append((start, goal, seconds))
                start = goal
            self._segments, self._t, self._velocity = segments, 0.0, None
            self._total = sum(seconds for *_, seconds in segments)
            self._begin()

    def remaining(self, data: mujoco.MjData) -> float:
        """Metres left along the path (Nav2's distance_remaining)."""
        with self._lock:
            if not self._segments:
                return 0.0
            pose, elapsed, index = self.pose(data), self._t, len(self._segments) - 1
            for k, (_, _, seconds) in enumerate(self._segments):
                if elapsed < seconds:
                    index = k
                    break
                elapsed -= seconds
            ahead = self._segments[index][1]
            rest = sum(hypot(b.x - a.x, b.y - a.y) for a, b, _ in self._segments[index + 1:])
            return hypot(ahead.x - pose.x, ahead.y - pose.y) + rest

    def command_velocity(self, vx: float, vy: float, wz: float) -> None:
        """A /cmd_vel message: ignored while a path is driven (Nav2 owns the base then)."""
        with self._lock:
            if not self.running:
                self._velocity, self._velocity_age = (vx, vy, wz), 0.0

    def update(self, data: mujoco.MjData, dt: float) -> None:
        with self._lock:
            if self.running:
                self._follow(data, dt)
            elif self._velocity is not None:
                self._integrate(data, dt)

    def _follow(self, data: mujoco.MjData, dt: float) -> None:
        self._t += dt
        elapsed = self._t
        target = self._segments[-1][1]
        for a, b, seconds in self._segments:
            if elapsed < seconds:
                s = _smooth(elapsed / seconds)
                target = BasePose(a.x + s * (b.x - a.x), a.y + s * (b.y - a.y), a.yaw + s * (b.yaw - a.yaw))
                break
            elapsed -= seconds
        for act, value in zip(self._act, (target.x, target.y, target.yaw)):
            data.ctrl[act] = value
        pose = self.pose(data)
        behind = hypot(pose.x - target.x, pose.y - target.y)
        if behind > BLOCKED_M:
            self._hold(data)
            self._end(BaseOutcome(False, f"the base is {behind:.2f} m short of where it should be: "
                                         "something is in the way"))
            return
        goal = self._segments[-1][1]
        off, turn = hypot(pose.x - goal.x, pose.y - goal.y), abs(_wrap(pose.yaw - goal.yaw))
        if self._t >= self._total and off < ARRIVED_M and turn < ARRIVED_RAD:
            self._end(BaseOutcome(True))
        elif self._t > self._total + SETTLE_S:
            self._hold(data)
            self._end(BaseOutcome(False, f"the base stopped {off:.2f} m and {turn:.2f} rad from the goal"))

    def _integrate(self, data: mujoco.MjData, dt: float) -> None:
        self._velocity_age += dt
        if self._velocity_age > CMD_VEL_TIMEOUT_S:
            self._velocity = None
            return
        vx, vy, wz = self._velocity
        x, y, yaw = (float(data.ctrl[a]) for a in self._act)
        data.ctrl[self._act[0]] = x + (vx * cos(yaw) - vy * sin(yaw)) * dt
        data.ctrl[self._act[1]] = y + (vx * sin(yaw) + vy * cos(yaw)) * dt
        data.ctrl[self._act[2]] = yaw + wz * dt

    def _stopped(self, data: mujoco.MjData) -> BaseOutcome:
        return BaseOutcome(False, "canceled", canceled=True)
