"""The robot's kinematics from its own URDF (``/robot_description``): forward kinematics, inverse
kinematics of an arm and collision checks of a configuration against the robot itself and boxes
it was told about.

MuJoCo reads URDF and computes kinematics and contacts; ``mink`` (differential IK as a QP, on
MuJoCo models) solves the IK. Nothing here knows the simulator: on a real robot the same URDF
comes from its robot_state_publisher. Frames are the URDF's; positions are in its root link's
frame (the base footprint on a mobile robot).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

import mink
import mujoco
import numpy as np

from affplan_ros.robots.drivers import Box

# A pose counts as reached within these (as MoveIt's default goal tolerances, roughly).
POSITION_TOLERANCE_M = 0.005
ORIENTATION_TOLERANCE_RAD = 0.03
IK_STEP_S = 0.05            # integration step of the differential IK
IK_ITERATIONS = 300         # bound on one solve; it says why it stopped when it ends unsolved
# Links this close along the kinematic tree (joints between them) are not checked against each
# other: their shapes overlap at the joints by design, and the joint limits keep them apart, as the
# "adjacent" and "never in collision" pairs of a MoveIt SRDF.
NEAR_IN_TREE = 3
# MuJoCo keeps frames without mass as bodies only if static fusing is off; visuals are not needed.
_COMPILER = '<mujoco><compiler fusestatic="false" discardvisual="true" balanceinertia="true"/></mujoco>'


class KinematicsError(ValueError):
    """The robot description cannot be used (not URDF, or a frame or joint it lacks)."""


@dataclass(frozen=True)
class Attached:
    """A thing a hand holds, as a box fixed to ``link``: its centre, half extents and
    orientation (w, x, y, z) in the link's frame."""

    name: str
    link: str
    centre: tuple[float, float, float]
    half: tuple[float, float, float]
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)


@dataclass
class IKSolution:
    ok: bool
    joints: dict[str, float] = field(default_factory=dict)
    position_error: float = float("inf")
    orientation_error: float = float("inf")
    why: str = ""


class RobotKinematics:
    """One robot's kinematic model, loaded from URDF text."""

    def __init__(self, urdf: str):
        match = re.search(r"<robot\b[^>]*>", urdf)
        if match is None:
            raise KinematicsError("the robot description is not URDF (no <robot> element)")
        self.urdf = urdf[:match.end()] + _COMPILER + urdf[match.end():]
        self._obstacles: tuple[Box, ...] = ()
        self._attached: tuple[Attached, ...] = ()
        self._load((), ())

    def _load(self, boxes: Sequence[Box], attached: Sequence["Attached"]) -> None:
        try:
            spec = mujoco.MjSpec.from_string(self.urdf)
            for box in boxes:
                c, s = np.cos(box.yaw / 2), np.sin(box.yaw / 2)
                spec.worldbody.add_geom(name=f"obstacle/{box.name}", type=mujoco.mjtGeom.mjGEOM_BOX,
                                        pos=list(box.centre), size=list(box.half), quat=[c, 0.0, 0.0, s])
            for held in attached:
                body = spec.body(held.link)
                if body is None:
                    raise KinematicsError(f"the robot description has no link {held.link!r} to attach to")
                body.add_geom(name=f"held/{held.name}", type=mujoco.mjtGeom.mjGEOM_BOX, pos=list(held.centre),
                              size=list(held.half), quat=list(held.quat))
            self.model = spec.compile()
        except ValueError as exc:   # MuJoCo's parse and compile errors
            raise KinematicsError(f"the robot description does not load: {exc}") from exc
        self._obstacles, self._attached = tuple(boxes), tuple(attached)
        self.data = mujoco.MjData(self.model)
        self.configuration = mink.Configuration(self.model)
        self._qadr = {self.model.joint(j).name: int(self.model.joint(j).qposadr[0]) for j in range(self.model.njnt)}
        self._dadr = {self.model.joint(j).name: int(self.model.joint(j).dofadr[0]) for j in range(self.model.njnt)}
        # The world's boxes are checked against everything; a held thing, fixed to its hand's link,
        # against what is not near that link in the tree (not the fingers around it).
        self._obstacle_geoms = {g for g in range(self.model.ngeom)
                                if self.model.geom(g).name.startswith("obstacle/")}
        self._depth = [0] * self.model.nbody
        for b in range(1, self.model.nbody):
            self._depth[b] = self._depth[int(self.model.body_parentid[b])] + 1
        # Pairs that touch in the model's own rest pose are built that way (a finger in its
        # palm), not collisions; they are left out of every check.
        self._built_touching: set[tuple[int, int]] = set()
        self._built_touching = self._touching(self._qpos({}))

    # -- model facts -------------------------------------------------------------------------------
    @property
    def joint_names(self) -> list[str]:
        return list(self._qadr)

    def limits(self, joint: str) -> tuple[float, float]:
        self._joint(joint)
        lo, hi = self.model.joint(joint).range
        return float(lo), float(hi)

    def chain(self, frame: str) -> list[str]:
        """The movable joints from the root to ``frame``, root first."""
        self._frame(frame)
        body, out = self.model.body(frame).id, []
        while body > 0:
            out += [self.model.joint(j).name for j in range(self.model.njnt) if int(self.model.jnt_bodyid[j]) == body]
            body = int(self.model.body_parentid[body])
        return out[::-1]

    def link_of(self, joint: str) -> str:
        """The link ``joint`` moves (the URDF joint's child)."""
        self._joint(joint)
        return self.model.body(int(self.model.jnt_bodyid[self.model.joint(joint).id])).name

    def _joint(self, name: str) -> None:
        if name not in self._qadr:
            raise KinematicsError(f"the robot description has no joint {name!r}")

    def _frame(self, name: str) -> None:
        if mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, name) < 0:
            raise KinematicsError(f"the robot description has no link {name!r}")

    def set_obstacles(self, boxes: Iterable[Box], attached: Iterable["Attached"] = ()) -> None:
        """What the arm must keep clear of from now on, in the root frame, and what the hands hold
        (it moves with them and must keep clear too); replaces what was set before."""
        boxes, attached = tuple(boxes), tuple(attached)
        if boxes != self._obstacles or attached != self._attached:
            self._load(boxes, attached)

    # -- kinematics --------------------------------------------------------------------------------
    def _qpos(self, joints: Mapping[str, float]) -> np.ndarray:
        q = self.model.qpos0.copy()
        for name, value in joints.items():
            if name in self._qadr:
                q[self._qadr[name]] = value
        return q

    def forward(self, joints: Mapping[str, float], frame: str) -> tuple[np.ndarray, np.ndarray]:
        """Position and rotation (3x3) of ``frame`` in the root frame at ``joints``."""
        self._frame(frame)
        self.data.qpos[:] = self._qpos(joints)
        mujoco.mj_kinematics(self.model, self.data)
        body = self.data.body(frame)
        return body.xpos.copy(), body.xmat.reshape(3, 3).copy()

    def axis(self, joints: Mapping[str, float], joint: str) -> np.ndarray:
        """The unit axis ``joint`` turns about (moves along) in the root frame at ``joints``."""
        self._joint(joint)
        self.data.qpos[:] = self._qpos(joints)
        mujoco.mj_kinematics(self.model, self.data)
        return self.data.xaxis[self.model.joint(joint).id].copy()

    def solve(self, frame: str, position: Sequence[float], rotation: np.ndarray, start: Mapping[str, float],
              moving: Sequence[str], avoid: bool = True) -> IKSolution:
        """Joints of ``moving`` that put ``frame`` at ``position``/``rotation`` (root frame),
        from ``start`` (the rest of the robot stays there), inside the joint limits and, with
        ``avoid``, clear of the obstacles and of itself."""
        self._frame(frame)
        for name in moving:
            self._joint(name)
        q = self._qpos(start)
        # Joint states a hair outside a limit (a joint resting on its stop) make the QP infeasible.
        limited = self.model.jnt_limited.astype(bool)
        for j in np.flatnonzero(limited):
            adr = self.model.jnt_qposadr[j]
            q[adr] = np.clip(q[adr], self.model.jnt_range[j, 0] + 1e-6, self.model.jnt_range[j, 1] - 1e-6)
        self.configuration.update(q)
        movers = {self._dadr[n] for n in moving}
        frozen = [d for d in range(self.model.nv) if d not in movers]
        task = mink.FrameTask(frame, "body", position_cost=1.0, orientation_cost=0.5, lm_damping=1e-3)
        task.set_target(mink.SE3.from_rotation_and_translation(mink.SO3.from_matrix(np.asarray(rotation, float)),
                                                               np.asarray(position, float)))
        # A light pull towards the start keeps the elbow where it was between nearby targets.
        rest = mink.PostureTask(self.model, cost=1e-3)
        rest.set_target(q)
        constraints = [mink.DofFreezingTask(self.model, dof_indices=frozen)] if frozen else []
        limits = [mink.ConfigurationLimit(self.model)]
        pos_err = rot_err = float("inf")
        for _ in range(IK_ITERATIONS):
            try:
                velocity = mink.solve_ik(self.configuration, [task, rest], IK_STEP_S, "daqp", damping=1e-4,
                                         limits=limits, constraints=constraints)
            except mink.NoSolutionFound:
                return IKSolution(False, why=f"no IK solution for {frame}: the QP has none within the joint limits")
            self.configuration.integrate_inplace(velocity, IK_STEP_S)
            err = task.compute_error(self.configuration)
            pos_err, rot_err = float(np.linalg.norm(err[:3])), float(np.linalg.norm(err[3:]))
            if pos_err < POSITION_TOLERANCE_M * 0.5 and rot_err < ORIENTATION_TOLERANCE_RAD * 0.5:
                break
        joints = {n: float(self.configuration.q[self._qadr[n]]) for n in moving}
        solution = IKSolution(False, joints, pos_err, rot_err)
        if pos_err > POSITION_TOLERANCE_M or rot_err > ORIENTATION_TOLERANCE_RAD:
            solution.why = (f"out of reach: the closest pose of {frame} is {pos_err * 100:.1f} cm and "
                            f"{np.degrees(rot_err):.0f} deg away")
        elif avoid and (hit := self.collision({**start, **joints})):
            solution.why = f"in collision there: {hit}"
        else:
            solution.ok = True
        return solution

    def reaches(self, frame: str, targets: Sequence[np.ndarray], start: Mapping[str, float],
                moving: Sequence[str]) -> Optional[list[dict[str, float]]]:
        """The joints at each of ``targets`` (4x4 poses in the root frame) where ``frame`` reaches
        them in turn from ``start``, within the joint limits; obstacles and the robot itself are
        left out (a motion's planning checks those). None where it does not."""
        out = []
        for target in targets:
            solution = self.solve(frame, target[:3, 3], target[:3, :3], start, moving, avoid=False)
            if not solution.ok:
                return None
            start = {**start, **solution.joints}
            out.append(dict(solution.joints))
        return out

    # -- collisions --------------------------------------------------------------------------------
    def _touching(self, q: np.ndarray) -> set[tuple[int, int]]:
        self.data.qpos[:] = q
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_collision(self.model, self.data)
        out = set()
        for c in self.data.contact[:self.data.ncon]:
            if c.dist < 0:
                out.add((min(c.geom1, c.geom2), max(c.geom1, c.geom2)))
        return out

    def collision(self, joints: Mapping[str, float]) -> str:
        """'' when the robot at ``joints`` touches neither itself nor an obstacle; otherwise what
        touches what (link names, or ``obstacle/<name>``)."""
        for pair in sorted(self._touching(self._qpos(joints)) - self._built_touching):
            if self._obstacle_geoms.intersection(pair) or not self._near_in_tree(
                    *(int(self.model.geom_bodyid[g]) for g in pair)):
                return " touches ".join(self._geom_owner(g) for g in pair)
        return ""

    def _near_in_tree(self, a: int, b: int) -> bool:
        steps = 0
        while a != b:
            if self._depth[a] < self._depth[b]:
                a, b = b, a
            a, steps = int(self.model.body_parentid[a]), steps + 1
        return steps <= NEAR_IN_TREE

    def _geom_owner(self, geom: int) -> str:
        name = self.model.geom(geom).name
        if name.startswith(("obstacle/", "held/")):
            return name
        return self.model.body(int(self.model.geom_bodyid[geom])).name
