"""Inverse kinematics of one arm (plus the torso lift) with ``mink`` on the robot's own model.

The IK works in a model of the robot alone with the base welded at the origin (``robot_only_xml``),
so targets are given in the base frame and the world's free bodies never enter the problem. Only
the chosen arm's seven joints and the torso move; every other DoF is frozen as an equality
constraint. A solution counts only if it meets the pose within tolerance inside the joint limits:
that is what "reachable" means to the skills.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import mink
import mujoco
import numpy as np

from affplan_ros.sim.physics.robot import TIAGO_PP, TORSO_JOINT, RobotSpec, arm_joints, robot_only_xml, tcp_site

# Position / orientation tolerances for a pose to count as reached.
POS_TOL = 0.01      # m
ROT_TOL = 0.08      # rad


def top_down_rotation(yaw: float) -> np.ndarray:
    """Gripper pointing down (its x axis = world -z) with the fingers closing along ``yaw``."""
    c, s = np.cos(yaw), np.sin(yaw)
    x = np.array([0.0, 0.0, -1.0])
    y = np.array([c, s, 0.0])
    return np.column_stack([x, y, np.cross(x, y)])


def tilted_rotation(rot: np.ndarray, heading: float, tilt: float) -> np.ndarray:
    """``rot`` turned by ``tilt`` about the horizontal axis across ``heading``: a hand pointing down
    leans its approach forward along ``heading`` (it reaches further at the same height)."""
    k = np.array([np.sin(heading), -np.cos(heading), 0.0])     # (0, 0, -1) x the heading
    skew = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return (np.eye(3) + np.sin(tilt) * skew + (1 - np.cos(tilt)) * skew @ skew) @ rot


def horizontal_rotation(heading: float, fingers_vertical: bool = False) -> np.ndarray:
    """Gripper pointing horizontally along ``heading``; the fingers close horizontally (around a
    vertical door handle) or, with ``fingers_vertical``, vertically (around a drawer's bar)."""
    c, s = np.cos(heading), np.sin(heading)
    x = np.array([c, s, 0.0])
    up = np.array([0.0, 0.0, 1.0])
    if fingers_vertical:
        return np.column_stack([x, up, np.cross(x, up)])
    return np.column_stack([x, np.cross(up, x), up])


@dataclass
class IKResult:
    success: bool
    joints: dict[str, float] = field(default_factory=dict)   # arm joints + torso, radians / metres
    pos_error: float = float("inf")
    rot_error: float = float("inf")


class ArmIK:
    """Damped QP-based differential IK (mink + daqp), iterated to convergence."""

    def __init__(self, spec: RobotSpec = TIAGO_PP):
        self.spec = spec
        self.model = mujoco.MjModel.from_xml_string(robot_only_xml(spec))
        self.configuration = mink.Configuration(self.model)
        self.limits = [mink.ConfigurationLimit(self.model)]
        self._qadr = {self.model.joint(j).name: int(self.model.joint(j).qposadr[0]) for j in range(self.model.njnt)}
        self._dadr = {self.model.joint(j).name: int(self.model.joint(j).dofadr[0]) for j in range(self.model.njnt)}

    def joint_names(self, side: str, use_torso: bool = True) -> tuple[str, ...]:
        return arm_joints(side) + ((TORSO_JOINT,) if use_torso else ())

    def solve(self, side: str, position: np.ndarray, rotation: np.ndarray, start: Mapping[str, float],
              use_torso: bool = True, posture: Optional[Mapping[str, float]] = None, iterations: int = 200) -> IKResult:
        """Find joints that put ``side``'s TCP at ``position``/``rotation`` (base frame), starting
        from ``start`` (joint name -> value; the rest of the robot stays as given there)."""
        q = self.model.qpos0.copy()
        for name, value in start.items():
            if name in self._qadr:
                q[self._qadr[name]] = value
        self.configuration.update(q)
        moving = set(self.joint_names(side, use_torso))
        frozen = [adr for name, adr in self._dadr.items() if name not in moving]
        constraints = [mink.DofFreezingTask(self.model, dof_indices=frozen)] if frozen else []

        target = mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(rotation), np.asarray(position, float))
        frame = mink.FrameTask(tcp_site(side), "site", position_cost=1.0, orientation_cost=0.5, lm_damping=1e-3)
        frame.set_target(target)
        # A light pull towards the start (or a given posture) keeps the elbow from flipping between
        # nearby targets, so that straight-line motions come out as smooth joint paths.
        rest = mink.PostureTask(self.model, cost=1e-3)
        rest_q = q.copy()
        for name, value in (posture or {}).items():
            if name in self._qadr:
                rest_q[self._qadr[name]] = value
        rest.set_target(rest_q)

        dt = 0.05
        pos_err = rot_err = float("inf")
        for _ in range(iterations):
            vel = mink.solve_ik(self.configuration, [frame, rest], dt, "daqp", damping=1e-4, limits=self.limits,
                                constraints=constraints)
            self.configuration.integrate_inplace(vel, dt)
            err = frame.compute_error(self.configuration)
            pos_err, rot_err = float(np.linalg.norm(err[:3])), float(np.linalg.norm(err[3:]))
            if pos_err < POS_TOL * 0.3 and rot_err < ROT_TOL * 0.3:
                break
        joints = {name: float(self.configuration.q[self._qadr[name]]) for name in self.joint_names(side, use_torso)}
        ok = pos_err < POS_TOL and rot_err < ROT_TOL and self._within_limits(joints)
        return IKResult(ok, joints, pos_err, rot_err)

    def _within_limits(self, joints: Mapping[str, float]) -> bool:
        for name, value in joints.items():
            lo, hi = self.model.joint(name).range
            if value < lo - 1e-3 or value > hi + 1e-3:
                return False
        return True

    def tcp_pose(self, side: str, joints: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """Forward kinematics in the base frame (for checks and tests)."""
        self._forward(joints)
        site = self.configuration.data.site(tcp_site(side))
        return site.xpos.copy(), site.xmat.reshape(3, 3).copy()

    def forearm_points(self, side: str, joints: Mapping[str, float], n: int = 4) -> list[np.ndarray]:
        """Points (base frame) along the forearm from the elbow to the wrist, the wrist included:
        what sweeps over things standing beside the hand's target."""
        data = self._forward(joints)
        elbow, wrist = data.body(f"{side}_link_5").xpos.copy(), data.body(f"{side}_link_6").xpos.copy()
        return [elbow + (wrist - elbow) * k / n for k in range(1, n + 1)]

    def elbow(self, side: str, joints: Mapping[str, float]) -> np.ndarray:
        """Forward kinematics of the elbow (base frame)."""
        return self._forward(joints).body(f"{side}_link_4").xpos.copy()

    def _forward(self, joints: Mapping[str, float]):
        q = self.model.qpos0.copy()
        for name, value in joints.items():
            if name in self._qadr:
                q[self._qadr[name]] = value
        self.configuration.update(q)
        return self.configuration.data
