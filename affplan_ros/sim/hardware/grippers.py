"""A parallel gripper's controller on the physics, as ros2_controllers' gripper action controller
behaves: the fingers ramp to the commanded opening with at most the commanded effort, and the
command ends when they reach it or stall on something (stopped short of it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import mujoco

from affplan_ros.sim.hardware.controller import Controller
from affplan_ros.sim.physics.robot import FINGER_SQUEEZE

RAMP_S = 0.3            # s over which the set-point moves (a step slams thin walls through)
STILL_S = 0.1           # s the fingers must be still for the command to end
STILL_SPEED = 0.002     # m/s below which a finger counts as still
TIMEOUT_S = 3.0         # s of simulated time after which a command ends whatever the fingers do
GOAL_TOLERANCE = 0.004  # m of opening within which the goal counts as reached


@dataclass(frozen=True)
class GripperOutcome:
    position: float         # the opening between the pads (m)
    effort: float           # the force the fingers push with (N, the larger of the two)
    stalled: bool
    reached_goal: bool


class GripperController(Controller[GripperOutcome]):
    """One hand's two finger servos; ``update`` is called by the physics loop every control period
    (with the world's lock held), ``command`` and ``wait`` from an action server's thread."""

    def __init__(self, model: mujoco.MjModel, joints: tuple[str, str], stroke: float):
        super().__init__(model, joints)
        self.model, self.stroke = model, stroke
        self._qvel = [int(model.joint(j).dofadr[0]) for j in joints]
        self._max_force = [float(model.actuator_forcerange[a, 1]) for a in self._act]
        self._goal: Optional[float] = None
        self._start = self._target = 0.0
        self._elapsed = self._still = 0.0

    def command(self, position: float, max_effort: float, data: mujoco.MjData) -> None:
        """Start moving to ``position`` (opening, m); a running command is replaced (preempted)."""
        goal = min(max(float(position), 0.0), 2 * self.stroke)
        with self._lock:
            self._goal = goal
            # Closing squeezes: the set-point lies past shut and the force limit decides the grip.
            self._target = -FINGER_SQUEEZE if goal <= 0.0 else goal / 2
            self._start = float(data.ctrl[self._act[0]])
            self._elapsed = self._still = 0.0
            self._begin()
            for a, top in zip(self._act, self._max_force):
                force = top if max_effort <= 0 else min(float(max_effort), top)
                self.model.actuator_forcerange[a] = (-force, force)

    def update(self, data: mujoco.MjData, dt: float) -> None:
        with self._lock:
            if self._goal is None:
                return
            self._elapsed += dt
            s = min(self._elapsed / RAMP_S, 1.0)
            for a in self._act:
                data.ctrl[a] = self._start + (self._target - self._start) * s
            moving = any(abs(float(data.qvel[v])) > STILL_SPEED for v in self._qvel)
            self._still = 0.0 if moving or s < 1.0 else self._still + dt
            if self._still >= STILL_S or self._elapsed >= TIMEOUT_S:
                self._end(self._stopped(data))

    def opening(self, data: mujoco.MjData) -> float:
        """The opening between the pads (m), from the finger joints."""
        return max(0.0, sum(float(data.qpos[q]) for q in self._qpos))

    def _stopped(self, data: mujoco.MjData) -> GripperOutcome:
        """Where the fingers are now, against the goal of the command that ends."""
        position = self.opening(data)
        effort = max(abs(float(data.actuator_force[a])) for a in self._act)
        goal = self._goal if self._goal is not None else position
        reached = abs(position - goal) <= GOAL_TOLERANCE
        self._goal = None
        return GripperOutcome(position, effort, stalled=not reached, reached_goal=reached)
