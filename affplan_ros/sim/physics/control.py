"""Moving the robot through its actuators: joint trajectories, base paths, the grippers.

Every motion is a sequence of position set-points fed to the servos while the physics steps; the
robot is never teleported. Whether a motion got where it was sent is read back from the joints,
so a collision that stops an arm or the base shows up as tracking error ("blocked").
"""
from __future__ import annotations

from dataclasses import dataclass
from math import cos, pi
from typing import Mapping, Sequence

from affplan_ros.sim.physics.robot import ARM_SIDES, FINGER_SQUEEZE, TORSO_JOINT, arm_joints, finger_joints
from affplan_ros.sim.physics.world import BasePose, PhysicsWorld

CONTROL_PERIOD = 0.01     # s between set-point updates (100 Hz, as a real controller)
TORSO_SPEED = 0.07        # m/s (Tiago's lift is about this slow; approximate)
ARM_TOL = 0.06            # rad: tracking error above this after settling means something stopped the arm
BASE_TOL = 0.04           # m
YAW_TOL = 0.05            # rad
BASE_STILL, YAW_STILL = 0.002, 0.005   # m, rad from its set-point within which the base is at rest


@dataclass(frozen=True)
class MotionOutcome:
    ok: bool
    error: float = 0.0        # worst tracking error at the end (rad or m)
    joint: str = ""           # the joint with that error


def _wrap(angle: float) -> float:
    return (angle + pi) % (2 * pi) - pi


def _smooth(s: float) -> float:
    """Cosine ramp: starts and stops with zero velocity, so the servos do not jerk what is held."""
    return 0.5 - 0.5 * cos(pi * min(max(s, 0.0), 1.0))


class RobotControl:
    def __init__(self, world: PhysicsWorld):
        self.world = world
        self.spec = world.spec
        self.steps_per_update = world.steps(CONTROL_PERIOD)

    # -- state ---------------------------------------------------------------------------------
    def joints(self) -> dict[str, float]:
        """Measured torso and arm joint values (what the IK starts from)."""
        names = (TORSO_JOINT,) + tuple(j for side in ARM_SIDES for j in arm_joints(side))
        return {n: self.world.qpos(n) for n in names}

    def aperture(self, side: str) -> float:
        return sum(self.world.qpos(j) for j in finger_joints(side))

    # -- joint motions -------------------------------------------------------------------------
    def _speed(self, joint: str) -> float:
        return TORSO_SPEED if joint == TORSO_JOINT else self.spec.arm_speed

    def follow(self, waypoints: Sequence[Mapping[str, float]], speed_scale: float = 1.0,
               settle: float = 0.4, tol: float = ARM_TOL) -> MotionOutcome:
        """Drive the servos through joint-space waypoints (piecewise smooth), then check that the
        last one was reached."""
        for target in waypoints:
            start = {j: self.world.ctrl(j) for j in target}
            duration = max([abs(target[j] - start[j]) / (self._speed(j) * speed_scale) for j in target] + [0.1])
            n = max(1, int(duration / CONTROL_PERIOD))
            for k in range(1, n + 1):
                s = _smooth(k / n)
                for j in target:
                    self.world.set_ctrl(j, start[j] + s * (target[j] - start[j]))
                self.world.step(self.steps_per_update)
        return self._settle(dict(waypoints[-1]) if waypoints else {}, settle, tol)

    def _settle(self, target: Mapping[str, float], seconds: float, tol: float) -> MotionOutcome:
        worst, joint = 0.0, ""
        for _ in range(max(1, int(seconds / CONTROL_PERIOD))):
            self.world.step(self.steps_per_update)
            worst, joint = self._worst(target)
            if worst < tol / 4:
                break
        return MotionOutcome(worst < tol, worst, joint)

    def _worst(self, target: Mapping[str, float]) -> tuple[float, str]:
        worst, joint = 0.0, ""
        for j, value in target.items():
            err = abs(self.world.qpos(j) - value)
            if err > worst:
                worst, joint = err, j
        return worst, joint

    # -- grippers ------------------------------------------------------------------------------
    def set_gripper(self, side: str, aperture: float, seconds: float = 0.6) -> float:
        """Command both fingers (``aperture`` metres between the pads) and wait; returns where
        they stopped (on an object, earlier than commanded)."""
        # Closing (aperture 0) squeezes: the set-point lies past shut, the force limit decides.
        q = -FINGER_SQUEEZE if aperture <= 0.0 else min(aperture / 2, self.spec.finger_stroke)
        start = self.world.ctrl(finger_joints(side)[0])
        # Ramp the set-point over half the time: a step command slams the fingers shut fast enough
        # to pass through a thin wall within one physics step.
        n = max(1, int(seconds / 2 / CONTROL_PERIOD))
        for k in range(1, n + 1):
            for j in finger_joints(side):
                self.world.set_ctrl(j, start + (q - start) * k / n)
            self.world.step(self.steps_per_update)
        self.world.step(self.world.steps(seconds / 2))
        return self.aperture(side)

    # -- base ----------------------------------------------------------------------------------
    def drive(self, path: Sequence[BasePose], settle: float = 1.0) -> MotionOutcome:
        """Drive the holonomic base along straight segments (turning while it translates)."""
        for goal in path:
            sx, sy, syaw = self.world.ctrl("base_x"), self.world.ctrl("base_y"), self.world.ctrl("base_yaw")
            dyaw = _wrap(goal.yaw - syaw)
            dist = ((goal.x - sx) ** 2 + (goal.y - sy) ** 2) ** 0.5
            duration = max(dist / self.spec.base_speed, abs(dyaw) / self.spec.base_yaw_rate, 0.2)
            n = max(1, int(duration / CONTROL_PERIOD))
            for k in range(1, n + 1):
                s = _smooth(k / n)
                self.world.set_ctrl("base_x", sx + s * (goal.x - sx))
                self.world.set_ctrl("base_y", sy + s * (goal.y - sy))
                self.world.set_ctrl("base_yaw", syaw + s * dyaw)
                self.world.step(self.steps_per_update)
        goal = path[-1]
        err, yaw_err = self._settle_base(goal, settle, BASE_TOL / 4, YAW_TOL / 4)
        return MotionOutcome(err < BASE_TOL and yaw_err < YAW_TOL, max(err, yaw_err), "base")

    def at_rest(self) -> bool:
        """Whether the base is within ``BASE_STILL`` / ``YAW_STILL`` of its set-point."""
        err, yaw_err = self._off(self._base_set_point())
        return err < BASE_STILL and yaw_err < YAW_STILL

    def come_to_rest(self, seconds: float = 2.0) -> bool:
        """Wait (at most ``seconds``) until the base is at rest at its set-point: a drive ends
        within 1 cm of it, and the base creeps on the rest of the way."""
        if not self.at_rest():
            self._settle_base(self._base_set_point(), seconds, BASE_STILL, YAW_STILL)
        return self.at_rest()

    def _base_set_point(self) -> BasePose:
        return BasePose(self.world.ctrl("base_x"), self.world.ctrl("base_y"), self.world.ctrl("base_yaw"))

    def _settle_base(self, goal: BasePose, seconds: float, tol: float, yaw_tol: float) -> tuple[float, float]:
        """Step until the base is within ``tol`` / ``yaw_tol`` of ``goal`` (at most ``seconds``)."""
        for _ in range(max(1, int(seconds / CONTROL_PERIOD))):
            self.world.step(self.steps_per_update)
            err, yaw_err = self._off(goal)
            if err < tol and yaw_err < yaw_tol:
                break
        return err, yaw_err

    def _off(self, goal: BasePose) -> tuple[float, float]:
        pose = self.world.base_pose()
        return ((pose.x - goal.x) ** 2 + (pose.y - goal.y) ** 2) ** 0.5, abs(_wrap(pose.yaw - goal.yaw))
