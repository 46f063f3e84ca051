"""The built-in arm planner: where MoveIt is not installed, the robot plans its arm motions on its
own URDF and sends them to its FollowJointTrajectory controllers (ros2_controllers'
joint_trajectory_controller on a Tiago++, or the simulated robot's).

What it reads is what any robot publishes: ``/robot_description`` (URDF), ``/joint_states`` (where
the joints are), ``/tf`` (where the base is in the map). A motion is: the pose into the base's
frame, inverse kinematics (robots/kinematics.py), a collision-free joint path and its timing
(robots/motion.py), then the controller's goal, whose result decides: a goal the controller
refuses or aborts is a failed motion with the controller's error string.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from affplan_ros.core.model.failure import Cause
from affplan_ros.robots.drivers import CANCELED, Box, DriverUnavailable, Pose, Problem, finish, send_once
from affplan_ros.robots.kinematics import KinematicsError, RobotKinematics
from affplan_ros.robots.motion import Limits, PathResult, TimedPath, joint_path, line_path, timed

WAIT_FOR_ROBOT_S = 10.0     # for the description, joint states and TF after start-up
PLAN_TIME_S = 2.0           # OMPL's search, per motion
TRAJECTORY_SLACK_S = 10.0   # a controller may take this much longer than its trajectory


@dataclass(frozen=True)
class ArmController:
    """One arm: its FollowJointTrajectory action; the joints it moves are the URDF's chain from
    the base to the hand's link, without the joints other controllers move (the torso's)."""

    group: str
    action: str


class BuiltinArm:
    def __init__(self, node, controllers: Sequence[ArmController], base_frame: str, map_frame: str = "map",
                 other_joints: Sequence[str] = (), max_velocity: float = 0.8, max_acceleration: float = 1.5,
                 frames=None, callback_group=None):
        try:
            from control_msgs.action import FollowJointTrajectory
        except ImportError as exc:
            raise DriverUnavailable("control_msgs is not installed: install ros-$ROS_DISTRO-control-msgs "
                                    "and start the robot's arm controllers") from exc
        from rclpy.action import ActionClient
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String

        from affplan_ros.nodes.base import LATCHED_QOS
        from affplan_ros.robots.frames import FrameBuffer

        self._type = FollowJointTrajectory
        self.node, self.base_frame, self.map_frame = node, base_frame, map_frame
        self.other_joints = set(other_joints)
        self.max_velocity, self.max_acceleration = max_velocity, max_acceleration
        self.clients = {c.group: ActionClient(node, FollowJointTrajectory, c.action, callback_group=callback_group)
                        for c in controllers}
        self.frames = frames if frames is not None else FrameBuffer(node, callback_group)
        self._lock = threading.Lock()
        self._joints: dict[str, float] = {}
        self._urdf = ""
        self._kinematics: Optional[RobotKinematics] = None
        self._obstacles: tuple[Box, ...] = ()
        self._ready = threading.Event()
        node.create_subscription(String, "/robot_description", self._on_description, LATCHED_QOS,
                                 callback_group=callback_group)
        node.create_subscription(JointState, "/joint_states", self._on_joints, 10, callback_group=callback_group)

    # -- what the robot publishes ------------------------------------------------------------------
    def _on_description(self, msg) -> None:
        with self._lock:
            self._urdf, self._kinematics = msg.data, None

    def _on_joints(self, msg) -> None:
        with self._lock:
            self._joints.update(zip(msg.name, msg.position))

    def joints(self) -> dict[str, float]:
        with self._lock:
            return dict(self._joints)

    def _model(self) -> tuple[Optional[RobotKinematics], str]:
        """The kinematics (built on first use from the latest description), or why not."""
        deadline = time.monotonic() + WAIT_FOR_ROBOT_S
        while True:
            with self._lock:
                urdf, have_joints = self._urdf, bool(self._joints)
            if urdf and have_joints:
                break
            if time.monotonic() > deadline:
                missing = [topic for topic, ok in (("/robot_description", urdf), ("/joint_states", have_joints))
                           if not ok]
                return None, f"the robot publishes no {' and no '.join(missing)}"
            time.sleep(0.05)
        with self._lock:
            if self._kinematics is None:
                try:
                    self._kinematics = RobotKinematics(self._urdf)
                except KinematicsError as exc:
                    return None, str(exc)
            return self._kinematics, ""

    def _base_from_map(self) -> Optional[np.ndarray]:
        deadline = time.monotonic() + WAIT_FOR_ROBOT_S
        while (found := self.frames.transform(self.base_frame, self.map_frame)) is None:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
        return found

    def arm_joints(self, kin: RobotKinematics, link: str) -> list[str]:
        return [j for j in kin.chain(link) if j not in self.other_joints]

    # -- the Arm protocol --------------------------------------------------------------------------
    def keep_clear(self, boxes: Sequence[Box]) -> None:
        self._obstacles = tuple(boxes)

    def move_to(self, group: str, pose: Pose, link: str, cancel, line: bool = False) -> Optional[Problem]:
        if cancel():
            return CANCELED
        client = self.clients.get(group)
        if client is None:
            return Problem(f"no arm controller configured for {group}")
        kin, why = self._model()
        if kin is None:
            return Problem(why, Cause.MOTION_FAILED)
        to_base = self._base_from_map() if pose.frame != self.base_frame else np.eye(4)
        if to_base is None:
            return Problem(f"no transform from {self.map_frame} to {self.base_frame} on /tf", Cause.MOTION_FAILED)
        boxes = [self._in_base(b, to_base) for b in self._obstacles]
        start = self.joints()
        names = self.arm_joints(kin, link)
        missing = [n for n in names if n not in start]
        if missing:
            return Problem(f"/joint_states lacks {', '.join(missing)}", Cause.MOTION_FAILED)
        target = to_base @ _matrix(pose) if pose.frame != self.base_frame else _matrix(pose)
        where = f"({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f}) in {pose.frame}"
        with self._lock:    # one model, one plan at a time
            kin.set_obstacles(boxes)
            planned = self._plan(kin, link, start, names, target, line)
        if planned.waypoints is None:
            cause = Cause.BLOCKED if "collision" in planned.why else Cause.UNREACHABLE
            return Problem(f"no motion of {group} to {where}: {planned.why}", cause)
        path = timed(names, planned.waypoints, Limits({n: self.max_velocity for n in names},
                                                      {n: self.max_acceleration for n in names}))
        if cancel():
            return CANCELED
        return self._follow(client, group, path, cancel, where)

    def _plan(self, kin: RobotKinematics, link: str, start: Mapping[str, float], names: list[str],
              target: np.ndarray, line: bool) -> PathResult:
        if line:
            return line_path(kin, link, start, names, target[:3, 3], target[:3, :3])
        solution = kin.solve(link, target[:3, 3], target[:3, :3], start, names)
        if not solution.ok:
            return PathResult(why=solution.why)
        return joint_path(kin, start, {**start, **solution.joints}, names, PLAN_TIME_S)

    @staticmethod
    def _in_base(box: Box, to_base: np.ndarray) -> Box:
        if box.frame != "map":
            return box
        centre = to_base @ np.array([*box.centre, 1.0])
        yaw = box.yaw + float(np.arctan2(to_base[1, 0], to_base[0, 0]))
        return Box(box.name, tuple(float(v) for v in centre[:3]), box.half, yaw, "base")

    def _follow(self, client, group: str, path: TimedPath, cancel, where: str) -> Optional[Problem]:
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectoryPoint

        if not client.wait_for_server(timeout_sec=5.0):
            return Problem(f"the {group} controller does not answer", Cause.MOTION_FAILED)
        goal = self._type.Goal()
        goal.trajectory.joint_names = list(path.joint_names)
        for t, q, dq in zip(path.times, path.positions, path.velocities):
            ns = round(t * 1e9)
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=list(q), velocities=list(dq),
                time_from_start=Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)))
        handle, problem = send_once(client, goal, cancel, f"the {group} controller")
        if handle is None:
            return problem
        got, problem = finish(handle, path.duration + TRAJECTORY_SLACK_S, cancel, f"the {group} controller")
        if got is None:
            return problem
        if got.result.error_code != self._type.Result.SUCCESSFUL:
            said = got.result.error_string or f"error code {got.result.error_code}"
            return Problem(f"the {group} controller did not reach {where}: {said}", Cause.MOTION_FAILED)
        return None


def _matrix(pose: Pose) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    w, x, y, z = pose.quaternion()
    out = np.eye(4)
    out[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
    out[:3, 3] = (pose.x, pose.y, pose.z)
    return out
