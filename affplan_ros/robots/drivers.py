"""What a real robot's skills are made of: base motion (Nav2), arm motion (MoveIt), grippers.

Each driver is a small class with one job and a protocol the skills use (``Navigator``,
``Arm``, ``Gripper``). The real ones import their ROS 2 packages only when constructed, and
fail with a message naming the package to install when it is absent: Nav2's ``nav2_msgs``
(NavigateToPose action), MoveIt's ``moveit_py``, ``control_msgs`` (GripperCommand action).

A driver reports what the robot's own interfaces said: a ``Problem`` (why, and the cause a
repair can act on) or None, and a gripper its ``Grip`` (where the fingers stopped, whether they
stalled), from which the skills tell a held object from an empty hand.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Protocol, Sequence

from affplan_ros.core.model.failure import Cause


class DriverUnavailable(RuntimeError):
    """A robot driver's package is not installed (or its server does not answer)."""


@dataclass(frozen=True)
class Pose:
    """A pose in ``frame``: position (m) and orientation as yaw, then pitch, then roll about the
    turned axes (q = q_z(yaw) q_y(pitch) q_x(roll); rad). A gripper's x axis is its approach
    direction, so pitch pi/2 points it down (a grasp from above) and roll tilts what it holds."""

    x: float
    y: float
    z: float = 0.0
    yaw: float = 0.0
    frame: str = "map"
    roll: float = 0.0
    pitch: float = 0.0

    def offset(self, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> "Pose":
        return replace(self, x=self.x + dx, y=self.y + dy, z=self.z + dz)

    def tilted(self, roll: float) -> "Pose":
        return replace(self, roll=roll)

    def quaternion(self) -> tuple[float, float, float, float]:
        """(w, x, y, z)."""
        cy, sy = math.cos(self.yaw / 2), math.sin(self.yaw / 2)
        cp, sp = math.cos(self.pitch / 2), math.sin(self.pitch / 2)
        cr, sr = math.cos(self.roll / 2), math.sin(self.roll / 2)
        return (cy * cp * cr + sy * sp * sr, cy * cp * sr - sy * sp * cr,
                cy * sp * cr + sy * cp * sr, sy * cp * cr - cy * sp * sr)

    def matrix(self):
        """The pose as a 4x4 homogeneous transform (numpy)."""
        import numpy as np
        from scipy.spatial.transform import Rotation

        w, x, y, z = self.quaternion()
        out = np.eye(4)
        out[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
        out[:3, 3] = (self.x, self.y, self.z)
        return out

    def to_msg(self, stamp=None):
        from geometry_msgs.msg import PoseStamped

        msg = PoseStamped()
        msg.header.frame_id = self.frame
        if stamp is not None:
            msg.header.stamp = stamp
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = self.x, self.y, self.z
        o = msg.pose.orientation
        o.w, o.x, o.y, o.z = self.quaternion()
        return msg

    @classmethod
    def from_msg(cls, msg) -> "Pose":
        q = msg.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        pitch = math.asin(max(-1.0, min(1.0, 2 * (q.w * q.y - q.z * q.x))))
        roll = math.atan2(2 * (q.w * q.x + q.y * q.z), 1 - 2 * (q.x * q.x + q.y * q.y))
        p = msg.pose.position
        return cls(p.x, p.y, p.z, yaw, msg.header.frame_id or "map", roll, pitch)


@dataclass(frozen=True)
class Box:
    """Something to keep clear of: a box (centre, half extents, yaw about z) in ``frame``."""

    name: str
    centre: tuple[float, float, float]
    half: tuple[float, float, float]
    yaw: float = 0.0
    frame: str = "map"


@dataclass(frozen=True)
class HeldBox:
    """What a hand holds, as a box in its link's frame (centre, half extents, orientation w x y z):
    the arm's paths keep it clear of things too."""

    name: str
    centre: tuple[float, float, float]
    half: tuple[float, float, float]
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Problem:
    """Why a driver's motion did not happen as commanded."""

    why: str
    cause: Optional[Cause] = None
    canceled: bool = False


CANCELED = Problem("canceled", canceled=True)
GRIPPER_THERE_M = 0.003     # fingers this near the commanded opening are there


@dataclass(frozen=True)
class Grip:
    """How a gripper command ended (control_msgs' GripperCommand result): the opening the fingers
    stopped at (m), whether they stalled on something, whether they reached the commanded
    opening; ``problem`` when the command itself did not finish."""

    position: float = 0.0
    stalled: bool = False
    reached_goal: bool = True
    problem: Optional[Problem] = None


class Navigator(Protocol):
    def go_to(self, pose: Pose, timeout_s: float, cancel: Callable[[], bool]) -> Optional[Problem]: ...

    def follow(self, path: Sequence[Pose], timeout_s: float, cancel: Callable[[], bool]) -> Optional[Problem]:
        """Drive the base along ``path`` as it is (no planning round it)."""


class Arm(Protocol):
    def move_to(self, group: str, pose: Pose, link: str, cancel: Callable[[], bool],
                line: bool = False, speed: float = 1.0) -> Optional[Problem]:
        """Move ``link`` of ``group`` to ``pose``; ``line``: along a straight line of the link
        (onto a grasp, a lift), where the arm's planner can; ``speed``: the fraction of the
        joints' speed and acceleration limits it may use (a knife brought down onto food)."""

    def keep_clear(self, boxes: Sequence[Box]) -> None:
        """What the arm's paths must avoid from now on besides the robot itself (map frame)."""

    def hold(self, link: str, thing: Optional[HeldBox]) -> None:
        """What ``link``'s hand now holds (None: nothing), to be kept clear of things with it."""


    def shoulder(self, link: str) -> Optional[tuple[float, float]]:
        """Where ``link``'s arm starts, x and y in the base's frame (None: not known)."""

    def turn_wrist(self, group: str, link: str, radians: float, cancel: Callable[[], bool]) -> Optional[Problem]:
        """The hand turned ``radians`` about the vertical through it (anticlockwise seen from
        above), by its wrist where it can: a screw cap's turn."""

    def hand_position(self, link: str) -> Optional[tuple[float, float, float]]:
        """Where ``link`` is now, in the base's frame (None: not known)."""

    def reaches(self, link: str, poses: Sequence[Pose], base: Pose) -> Optional[bool]:
        """Whether the hand would reach ``poses`` in turn from a base standing at ``base`` (None:
        cannot be told; the skills then find out by moving)."""


class Gripper(Protocol):
    def command(self, hand: str, position: float, max_effort: float, cancel: Callable[[], bool]) -> Grip: ...


def _wait(future, timeout_s: float, cancel) -> str:
    from affplan_ros.nodes.base import FutureWait

    return FutureWait(future).until(time.monotonic() + timeout_s, cancel)


def send_once(client, goal, cancel, what: str) -> tuple[Optional[Any], Optional[Problem]]:
    """(accepted goal handle, None) or (None, why not). No answer and a refusal are told apart:
    they have different causes on a robot. Never sent twice: Nav2 and ros2_controllers accept a
    copy and abort the goal already running (preemption), so a resend would move the robot
    unobserved."""
    from affplan_ros.nodes.base import send_goal

    handle, outcome = send_goal(client, goal, timeout=10.0, stop=cancel, resend_after_s=math.inf)
    if handle is None:
        return None, CANCELED if outcome == "stopped" else Problem(f"{what} did not answer the goal within 10 s")
    if not handle.accepted:
        return None, Problem(f"{what} refused the goal")
    return handle, None


def finish(handle, timeout_s: float, cancel, what: str) -> tuple[Optional[Any], Optional[Problem]]:
    """(the goal's result, None) or (None, why not); a cancel or a timeout cancels the goal on its
    server, so nothing keeps moving after the skill gave up."""
    done = handle.get_result_async()
    outcome = _wait(done, timeout_s, cancel)
    if outcome != "done":
        _wait(handle.cancel_goal_async(), 5.0, lambda: False)
        return None, CANCELED if outcome == "stopped" else Problem(f"{what} did not finish within {timeout_s:g} s")
    return done.result(), None


class Nav2Navigator:
    """Base motion through Nav2: NavigateToPose (planned by Nav2) and FollowPath (a path the skill
    computed, driven by Nav2's controller server as it is: a door's arc)."""

    def __init__(self, node, action_name: str = "navigate_to_pose", callback_group=None,
                 follow_path_action: str = "follow_path"):
        try:
            from nav2_msgs.action import FollowPath, NavigateToPose
        except ImportError as exc:
            raise DriverUnavailable("Nav2 is not installed (no nav2_msgs): install ros-$ROS_DISTRO-nav2-msgs "
                                    "and run Nav2 on the robot") from exc
        from rclpy.action import ActionClient

        self._type, self._follow_type = NavigateToPose, FollowPath
        self.client = ActionClient(node, NavigateToPose, action_name, callback_group=callback_group)
        self.follow_client = ActionClient(node, FollowPath, follow_path_action, callback_group=callback_group)
        self.node = node

    def follow(self, path: Sequence[Pose], timeout_s: float, cancel) -> Optional[Problem]:
        if not self.follow_client.wait_for_server(timeout_sec=5.0):
            return Problem(f"Nav2's controller server does not answer at {self.follow_client._action_name}")
        goal = self._follow_type.Goal()
        stamp = self.node.get_clock().now().to_msg()
        goal.path.header.frame_id = path[0].frame if path else "map"
        goal.path.header.stamp = stamp
        goal.path.poses = [pose.to_msg(stamp) for pose in path]
        return _run_nav2(self.follow_client, goal, timeout_s, cancel, "Nav2's FollowPath",
                         "the base did not follow its path")

    def go_to(self, pose: Pose, timeout_s: float, cancel) -> Optional[Problem]:
        if not self.client.wait_for_server(timeout_sec=5.0):
            return Problem(f"Nav2 does not answer at {self.client._action_name}")
        goal = self._type.Goal()
        goal.pose = pose.to_msg(self.node.get_clock().now().to_msg())
        return _run_nav2(self.client, goal, timeout_s, cancel, "Nav2", "Nav2 failed")


def _run_nav2(client, goal, timeout_s: float, cancel, what: str, failed: str) -> Optional[Problem]:
    """Send a Nav2 goal once and wait for it; a goal that does not succeed says Nav2's error_msg."""
    handle, problem = send_once(client, goal, cancel, what)
    if handle is None:
        return problem
    got, problem = finish(handle, timeout_s, cancel, what)
    if got is None:
        return problem
    from action_msgs.msg import GoalStatus

    if got.status != GoalStatus.STATUS_SUCCEEDED:
        detail = getattr(got.result, "error_msg", "") or f"status {got.status}"
        return Problem(f"{failed}: {detail}", Cause.BLOCKED)
    return None


# MoveIt's error codes (moveit_msgs/MoveItErrorCodes) that mean something is in the way rather
# than out of reach.
_COLLISION_CODES = {-10: "START_STATE_IN_COLLISION", -12: "GOAL_IN_COLLISION"}


def _moveit_code_name(code: int) -> str:
    try:
        from moveit_msgs.msg import MoveItErrorCodes
    except ImportError:
        return _COLLISION_CODES.get(code, f"error code {code}")
    names = {v: k for k, v in vars(MoveItErrorCodes).items() if k.isupper() and isinstance(v, int)}
    return names.get(code, f"error code {code}")


class MoveItArm:
    """Arm motion with MoveIt 2's Python API (``moveit_py``): plan to a pose, execute, and report
    what MoveIt said: a plan's error code, an execution that did not succeed, a cancel that
    stopped the arm (the trajectory execution manager's stop, not just giving up waiting)."""

    def __init__(self, node_name: str = "affplan_moveit", poll_s: float = 0.05):
        try:
            from moveit.planning import MoveItPy
        except ImportError as exc:
            raise DriverUnavailable("MoveIt is not installed (no moveit_py): install ros-$ROS_DISTRO-moveit-py "
                                    "and start move_group's configuration for this robot") from exc
        self.moveit = MoveItPy(node_name=node_name)
        self.poll_s = poll_s

    def move_to(self, group: str, pose: Pose, link: str, cancel, line: bool = False,
                speed: float = 1.0) -> Optional[Problem]:
        """``line`` is not asked of MoveIt here: moveit_py plans the motion to the pose; ``speed``
        below 1 becomes its velocity and acceleration scaling factors."""
        if cancel():
            return CANCELED
        component = self.moveit.get_planning_component(group)
        component.set_start_state_to_current_state()
        component.set_goal_state(pose_stamped_msg=pose.to_msg(), pose_link=link)
        plan = component.plan() if speed >= 1.0 else component.plan(single_plan_parameters=self._scaled(speed))
        where = f"({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f})"
        if not plan:
            code = int(getattr(getattr(plan, "error_code", None), "val", 0))
            cause = Cause.BLOCKED if code in _COLLISION_CODES else Cause.UNREACHABLE
            return Problem(f"MoveIt found no motion of {group} to {where}: {_moveit_code_name(code)}", cause)
        if cancel():
            return CANCELED
        return self._execute(group, plan.trajectory, cancel, where)

    def _scaled(self, speed: float):
        from moveit.planning import PlanRequestParameters

        params = PlanRequestParameters(self.moveit, "")
        params.max_velocity_scaling_factor = params.max_acceleration_scaling_factor = speed
        return params

    def keep_clear(self, boxes: Sequence[Box]) -> None:
        """MoveIt keeps its planning scene from the robot's own sensors (its octomap)."""

    def hold(self, link: str, thing: Optional[HeldBox]) -> None:
        """Not passed on: MoveIt's attached objects are its planning scene's (not set up here)."""

    def shoulder(self, link: str) -> Optional[tuple[float, float]]:
        """Not asked of MoveIt: where to stand is then found by moving there and planning."""
        return None

    def turn_wrist(self, group: str, link: str, radians: float, cancel) -> Optional[Problem]:
        """A pose goal: ``link`` where it is, turned about the vertical, planned and executed by
        MoveIt (its IK turns the wrist; moveit_py's RobotState gives the pose now)."""
        from geometry_msgs.msg import PoseStamped

        if cancel():
            return CANCELED
        component = self.moveit.get_planning_component(group)
        component.set_start_state_to_current_state()
        now = component.get_start_state().get_pose(link)
        goal = PoseStamped()
        goal.header.frame_id = self.moveit.get_robot_model().model_frame
        goal.pose.position = now.position
        q, c, s = now.orientation, math.cos(radians / 2), math.sin(radians / 2)
        o = goal.pose.orientation       # the turn about the model frame's z, then the hand as it was
        o.w, o.x, o.y, o.z = c * q.w - s * q.z, c * q.x - s * q.y, c * q.y + s * q.x, c * q.z + s * q.w
        component.set_goal_state(pose_stamped_msg=goal, pose_link=link)
        plan = component.plan()
        if not plan:
            code = int(getattr(getattr(plan, "error_code", None), "val", 0))
            return Problem(f"MoveIt found no turn of {group}'s wrist: {_moveit_code_name(code)}", Cause.UNREACHABLE)
        return self._execute(group, plan.trajectory, cancel, f"{group}'s wrist turned {radians:.2f} rad")

    def hand_position(self, link: str) -> Optional[tuple[float, float, float]]:
        """Not asked of MoveIt here (its planning scene knows)."""
        return None

    def reaches(self, link: str, poses: Sequence[Pose], base: Pose) -> Optional[bool]:
        """Not asked of MoveIt (its IK plans from where the base stands now)."""
        return None

    def _execute(self, group: str, trajectory, cancel, where: str) -> Optional[Problem]:
        manager = self._execution_manager()
        try:   # MoveIt 2 from Iron on: execute(group_name, trajectory, blocking)
            self.moveit.execute(group, trajectory, blocking=False)
        except TypeError:   # Humble: execute(trajectory, blocking, controllers)
            self.moveit.execute(trajectory, blocking=False, controllers=[])
        # wait_for_execution releases the GIL but cannot be interrupted: it waits in a thread of its
        # own while this one watches for a cancel, which stops the execution (and so the wait).
        waiter = threading.Thread(target=manager.wait_for_execution, name="moveit_wait", daemon=True)
        waiter.start()
        canceled = False
        while waiter.is_alive():
            if not canceled and cancel():
                manager.stop_execution()
                canceled = True
            waiter.join(self.poll_s)
        if canceled:
            return CANCELED
        status = str(getattr(manager.get_last_execution_status(), "status", "UNKNOWN"))
        if status != "SUCCEEDED":
            return Problem(f"MoveIt's execution of {group}'s motion to {where} ended {status}", Cause.MOTION_FAILED)
        return None

    def _execution_manager(self):
        # Humble's binding spells the getter "trajactory" (fixed in later releases).
        for name in ("get_trajectory_execution_manager", "get_trajactory_execution_manager"):
            getter = getattr(self.moveit, name, None)
            if getter is not None:
                return getter()
        raise DriverUnavailable("this moveit_py has no trajectory execution manager")


class GripperActions:
    """Grippers through control_msgs' GripperCommand action, one server per hand."""

    def __init__(self, node, servers: dict[str, str], callback_group=None):
        try:
            from control_msgs.action import GripperCommand
        except ImportError as exc:
            raise DriverUnavailable("control_msgs is not installed: install ros-$ROS_DISTRO-control-msgs "
                                    "and start the robot's gripper controllers") from exc
        from rclpy.action import ActionClient

        self._type = GripperCommand
        self.clients = {hand: ActionClient(node, GripperCommand, name, callback_group=callback_group)
                        for hand, name in servers.items()}

    def command(self, hand: str, position: float, max_effort: float, cancel) -> Grip:
        client = self.clients.get(hand)
        if client is None:
            return Grip(problem=Problem(f"no gripper configured for the {hand} hand"))
        if not client.wait_for_server(timeout_sec=5.0):
            return Grip(problem=Problem(f"the {hand} gripper does not answer"))
        goal = self._type.Goal()
        goal.command.position, goal.command.max_effort = float(position), float(max_effort)
        handle, problem = send_once(client, goal, cancel, f"the {hand} gripper")
        if handle is None:
            return Grip(problem=problem)
        got, problem = finish(handle, 15.0, cancel, f"the {hand} gripper")
        if got is None:
            return Grip(problem=problem)
        from action_msgs.msg import GoalStatus

        result = got.result
        grip = Grip(float(result.position), bool(result.stalled), bool(result.reached_goal))
        # A parallel gripper closing on an object stalls short of its goal, and ros2_controllers'
        # gripper controller then aborts the goal: that is a grip, not a failure; nor are fingers
        # that ended where they were sent whatever the status says. Any other end is one.
        there = abs(grip.position - position) <= GRIPPER_THERE_M
        if got.status != GoalStatus.STATUS_SUCCEEDED and not (grip.stalled or grip.reached_goal or there):
            return Grip(grip.position, grip.stalled, grip.reached_goal,
                        Problem(f"the {hand} gripper stopped at {grip.position:.3f} m (status {got.status})",
                                Cause.MOTION_FAILED))
        return grip
