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

import math
import threading
import time
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from affplan_ros.core.model.failure import Cause
from affplan_ros.robots.drivers import CANCELED, Box, DriverUnavailable, HeldBox, Pose, Problem, finish, send_once
from affplan_ros.robots.kinematics import Attached, KinematicsError, RobotKinematics
from affplan_ros.robots.motion import Limits, PathResult, TimedPath, inside_limits, joint_path, line_path, timed

WAIT_FOR_ROBOT_S = 10.0     # for the description, joint states and TF after start-up
PLAN_TIME_S = 2.0           # OMPL's search, per motion
TRAJECTORY_SLACK_S = 10.0   # a controller may take this much longer than its trajectory
# A joint within this of its goal has arrived, this long after the trajectory's end: a position-
# controlled arm holding a load sags a few hundredths of a radian (the grasp and the put-down feel
# and check for themselves whether the hand was where it had to be).
GOAL_TOLERANCE = 0.1        # rad (m for the torso)
GOAL_TIME_S = 2.0
VERTICAL_AXIS = 0.7         # cos of the most a wrist's axis may lean from the vertical for a cap's turn
IK_RESTARTS, IK_RESTART_RAD, IK_RESTART_SEED = 4, 0.8, 1   # the IK's further starts: turns of the arm's joints
SEEDS_KEPT = 9              # an arm's latest reach-check solutions kept as starts for the motion's IK


@dataclass(frozen=True)
class ArmController:
    """One arm: its FollowJointTrajectory action; the joints it moves are the URDF's chain from
    the base to the hand's link, less those of the shared controller."""

    group: str
    action: str


@dataclass(frozen=True)
class SharedController:
    """Joints on the way to every hand that a controller of their own moves (a Tiago++'s torso):
    the planner moves them with the arm, as MoveIt's arm_torso group, and sends their part of
    the trajectory to this controller at the same time."""

    action: str
    joints: tuple[str, ...]
    max_velocity: float = 0.1
    max_acceleration: float = 0.2


class BuiltinArm:
    def __init__(self, node, controllers: Sequence[ArmController], base_frame: str, map_frame: str = "map",
                 shared: Optional[SharedController] = None, fixed_joints: Sequence[str] = (),
                 max_velocity: float = 0.8, max_acceleration: float = 1.5, frames=None, callback_group=None):
        """``fixed_joints``: joints on the chain that stay where they are (no controller here)."""
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
        self.shared, self.fixed_joints = shared, set(fixed_joints)
        self.max_velocity, self.max_acceleration = max_velocity, max_acceleration
        self.clients = {c.group: ActionClient(node, FollowJointTrajectory, c.action, callback_group=callback_group)
                        for c in controllers}
        self.shared_client = None if shared is None else ActionClient(node, FollowJointTrajectory, shared.action,
                                                                      callback_group=callback_group)
        self.frames = frames if frames is not None else FrameBuffer(node, callback_group)
        self._lock = threading.Lock()
        self._joints: dict[str, float] = {}
        self._urdf = ""
        self._kinematics: Optional[RobotKinematics] = None
        self._obstacles: tuple[Box, ...] = ()
        self._held: dict[str, Attached] = {}
        self._seeds: dict[str, list[dict[str, float]]] = {}
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
        """What the planner moves for ``link``: its chain, the shared joints included where their
        controller is known, the fixed ones left out."""
        return [j for j in kin.chain(link) if j not in self.fixed_joints]

    def _own(self, names: Sequence[str]) -> list[str]:
        """Of ``names``, those not shared between the arms (a Tiago++'s torso lift)."""
        return [n for n in names if self.shared is None or n not in self.shared.joints]

    def _limits(self, names: Sequence[str], speed: float = 1.0) -> Limits:
        """The joints' limits, scaled by ``speed`` (a fraction of them, as MoveIt's velocity and
        acceleration scaling factors)."""
        shared = self.shared
        velocity = {n: speed * (shared.max_velocity if shared and n in shared.joints else self.max_velocity)
                    for n in names}
        acceleration = {n: speed * (shared.max_acceleration if shared and n in shared.joints
                                    else self.max_acceleration) for n in names}
        return Limits(velocity, acceleration)

    # -- the Arm protocol --------------------------------------------------------------------------
    def keep_clear(self, boxes: Sequence[Box]) -> None:
        self._obstacles = tuple(boxes)

    def hold(self, link: str, thing: Optional[HeldBox]) -> None:
        if thing is None:
            self._held.pop(link, None)
        else:
            self._held[link] = Attached(thing.name, link, thing.centre, thing.half, thing.quat)

    def _ready(self, group: str, cancel):
        """(the group's controller client, the kinematics), or the Problem why a motion cannot start."""
        if cancel():
            return CANCELED
        client = self.clients.get(group)
        if client is None:
            return Problem(f"no arm controller configured for {group}")
        kin, why = self._model()
        if kin is None:
            return Problem(why, Cause.MOTION_FAILED)
        return client, kin

    def move_to(self, group: str, pose: Pose, link: str, cancel, line: bool = False,
                speed: float = 1.0) -> Optional[Problem]:
        ready = self._ready(group, cancel)
        if isinstance(ready, Problem):
            return ready
        client, kin = ready
        to_base = self._base_from_map() if pose.frame != self.base_frame else np.eye(4)
        if to_base is None:
            return Problem(f"no transform from {self.map_frame} to {self.base_frame} on /tf", Cause.MOTION_FAILED)
        boxes = [self._in_base(b, to_base) for b in self._obstacles]
        start = self.joints()
        names = self.arm_joints(kin, link)
        missing = [n for n in names if n not in start]
        if missing:
            return Problem(f"/joint_states lacks {', '.join(missing)}", Cause.MOTION_FAILED)
        target = to_base @ pose.matrix() if pose.frame != self.base_frame else pose.matrix()
        where = f"({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f}) in {pose.frame}"
        with self._lock:    # one model, one plan at a time
            kin.set_obstacles(boxes, self._held.values())
            planned = self._plan(kin, link, start, names, target, line)
        if planned.waypoints is None:
            cause = Cause.BLOCKED if "collision" in planned.why else Cause.UNREACHABLE
            return Problem(f"no motion of {group} to {where}: {planned.why}", cause)
        path = timed(names, planned.waypoints, self._limits(names, speed))
        if cancel():
            return CANCELED
        return self._follow(client, group, path, cancel, where)

    def shoulder(self, link: str) -> Optional[tuple[float, float]]:
        """Where ``link``'s arm starts (the link of its first joint past the shared ones), x and y
        in the base's frame; None while the robot has not described itself."""
        kin, _ = self._model()
        if kin is None:
            return None
        own = self._own(self.arm_joints(kin, link))
        if not own:
            return None
        joints = self.joints()
        with self._lock:
            position, _ = kin.forward(joints, kin.link_of(own[0]))
        return float(position[0]), float(position[1])

    def hand_position(self, link: str) -> Optional[tuple[float, float, float]]:
        """Where ``link`` is now in the base's frame (forward kinematics of the joint states)."""
        kin, _ = self._model()
        if kin is None:
            return None
        joints = self.joints()
        with self._lock:
            position, _ = kin.forward(joints, link)
        return float(position[0]), float(position[1]), float(position[2])

    def reaches(self, link: str, poses: Sequence[Pose], base: Pose) -> Optional[bool]:
        """Whether ``link`` would reach each of ``poses`` (map frame) in turn were the base
        standing at ``base`` (map), the arm starting as it is now: inverse kinematics on the
        robot's own URDF, what is around left out (a motion's planning checks that). None where
        it cannot be told (no description or no TF yet)."""
        kin, _ = self._model()
        to_base = self._base_from_map()
        if kin is None or to_base is None:
            return None
        there = base.matrix()
        there[2, 3] = np.linalg.inv(to_base)[2, 3]      # the base's height above the map, as now
        to_there = np.linalg.inv(there)
        start, names = self.joints(), self.arm_joints(kin, link)
        with self._lock:
            joints = kin.reaches(link, [to_there @ pose.matrix() for pose in poses], start, names)
            if joints is not None:      # where the arm would be there: starts for the motion's IK
                self._seeds[link] = [*self._seeds.get(link, []), *joints][-SEEDS_KEPT:]
        return joints is not None

    def turn_wrist(self, group: str, link: str, radians: float, cancel) -> Optional[Problem]:
        """The hand turned ``radians`` about the vertical (anticlockwise seen from above) by the
        arm's last joint (a Tiago++'s wrist roll), the others held: a screw cap's turn, a joint
        motion rather than a line of the hand from a planned pose (the fingers on the cap keep
        the hand a few cm off that). Which way the joint turns follows from its axis as the arm
        stands: a hand pointing down turns anticlockwise for a negative roll."""
        ready = self._ready(group, cancel)
        if isinstance(ready, Problem):
            return ready
        client, kin = ready
        names = self._own(self.arm_joints(kin, link))
        start = self.joints()
        if not names or any(n not in start for n in names):
            return Problem(f"/joint_states lacks the joints of {group}", Cause.MOTION_FAILED)
        wrist = names[-1]
        with self._lock:
            up = float(kin.axis(start, wrist)[2])
        if abs(up) < VERTICAL_AXIS:
            return Problem(f"{wrist} does not turn the hand about the vertical as the arm stands (its axis is "
                           f"{math.degrees(math.acos(min(abs(up), 1.0))):.0f} degrees from it)", Cause.UNREACHABLE)
        lo, hi = kin.limits(wrist)
        goal = start[wrist] + (radians if up > 0 else -radians)
        if not lo <= goal <= hi:
            return Problem(f"{wrist} cannot turn {radians:.2f} rad from {start[wrist]:.2f} (its limits are "
                           f"{lo:.2f} to {hi:.2f})", Cause.UNREACHABLE)
        a = np.array([start[n] for n in names])
        b = a.copy()
        b[-1] = goal
        return self._follow(client, group, timed(names, [a, b], self._limits(names)), cancel,
                            f"{wrist} turned {radians:.2f} rad")

    def _plan(self, kin: RobotKinematics, link: str, start: Mapping[str, float], names: list[str],
              target: np.ndarray, line: bool) -> PathResult:
        if line:
            return line_path(kin, link, start, names, target[:3, 3], target[:3, :3])
        solution = kin.solve(link, target[:3, 3], target[:3, :3], start, names)
        # The IK follows the gradient from where the arm is and can stall short of a pose it
        # reaches from elsewhere, or end with the elbow against the head: again from where reach
        # checks found the arm would be, and where it ends in collision, from the arm's joints
        # turned a little (the same turns each time: a motion is planned the same when asked again).
        rng, own = np.random.default_rng(IK_RESTART_SEED), self._own(names)
        turned = [dict(zip(own, inside_limits(kin, own, [start[n] for n in own]
                                              + rng.uniform(-IK_RESTART_RAD, IK_RESTART_RAD, len(own)))))
                  for _ in range(IK_RESTARTS)]
        for seed in [*self._seeds.get(link, []), *turned]:
            if solution.ok or not ("out of reach" in solution.why and seed in self._seeds.get(link, [])
                                   or "in collision" in solution.why):
                break
            again = kin.solve(link, target[:3, 3], target[:3, :3], {**start, **seed}, names)
            solution = again if again.ok else solution
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
        """The trajectory to the arm's controller and, at the same time, the shared joints' part
        to theirs; both results decide."""
        own = self._own(path.joint_names)
        shared = [n for n in path.joint_names if n not in own]
        parts = [(client, group, own)]
        if shared:
            parts.append((self.shared_client, "torso", shared))
        for c, name, _ in parts:
            if not c.wait_for_server(timeout_sec=5.0):
                return Problem(f"the {name} controller does not answer", Cause.MOTION_FAILED)
        handles = []
        for c, name, joints in parts:
            handle, problem = send_once(c, self._goal(path, joints), cancel, f"the {name} controller")
            if handle is None:
                for h in handles:
                    finish(h, 0.0, lambda: True, "")
                return problem
            handles.append(handle)
        problem = None
        for handle, (_, name, _) in zip(handles, parts):
            got, stopped = finish(handle, path.duration + TRAJECTORY_SLACK_S, cancel, f"the {name} controller")
            if got is None:
                problem = problem or stopped
            elif got.result.error_code != self._type.Result.SUCCESSFUL and problem is None:
                said = got.result.error_string or f"error code {got.result.error_code}"
                problem = Problem(f"the {name} controller did not reach {where}: {said}", Cause.MOTION_FAILED)
        return problem

    def _goal(self, path: TimedPath, joints: Sequence[str]):
        from builtin_interfaces.msg import Duration
        from control_msgs.msg import JointTolerance
        from trajectory_msgs.msg import JointTrajectoryPoint

        index = [path.joint_names.index(j) for j in joints]
        goal = self._type.Goal()
        goal.trajectory.joint_names = list(joints)
        goal.goal_tolerance = [JointTolerance(name=j, position=GOAL_TOLERANCE) for j in joints]
        goal.goal_time_tolerance = Duration(sec=int(GOAL_TIME_S), nanosec=int(GOAL_TIME_S % 1 * 1e9))
        for t, q, dq in zip(path.times, path.positions, path.velocities):
            ns = round(t * 1e9)
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=[q[i] for i in index], velocities=[dq[i] for i in index],
                time_from_start=Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)))
        return goal

