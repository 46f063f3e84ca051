"""What a real robot's skills are made of: base motion (Nav2), arm motion (MoveIt), grippers.

Each driver is a small class with one job and a protocol the skills use (``Navigator``,
``Arm``, ``Gripper``). The real ones import their ROS 2 packages only when constructed, and
fail with a message naming the package to install when it is absent: Nav2's ``nav2_msgs``
(NavigateToPose action), MoveIt's ``moveit_py``, ``control_msgs`` (GripperCommand action).
None of these can be installed on the development machines; tests drive the skills through
fakes of these protocols (test/robots).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Optional, Protocol


class DriverUnavailable(RuntimeError):
    """A robot driver's package is not installed (or its server does not answer)."""


@dataclass(frozen=True)
class Pose:
    """A pose in ``frame``: position (m), yaw (rad) and a roll (rad) about the gripper's x axis
    after the yaw; enough for base goals, top grasps and tilting a held container to pour."""

    x: float
    y: float
    z: float = 0.0
    yaw: float = 0.0
    frame: str = "map"
    roll: float = 0.0

    def offset(self, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> "Pose":
        return Pose(self.x + dx, self.y + dy, self.z + dz, self.yaw, self.frame, self.roll)

    def tilted(self, roll: float) -> "Pose":
        return Pose(self.x, self.y, self.z, self.yaw, self.frame, roll)

    def to_msg(self, stamp=None):
        import math

        from geometry_msgs.msg import PoseStamped

        msg = PoseStamped()
        msg.header.frame_id = self.frame
        if stamp is not None:
            msg.header.stamp = stamp
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = self.x, self.y, self.z
        # q = q_z(yaw) * q_x(roll)
        cy, sy = math.cos(self.yaw / 2), math.sin(self.yaw / 2)
        cr, sr = math.cos(self.roll / 2), math.sin(self.roll / 2)
        o = msg.pose.orientation
        o.w, o.x, o.y, o.z = cy * cr, cy * sr, sy * sr, sy * cr
        return msg

    @classmethod
    def from_msg(cls, msg) -> "Pose":
        import math

        q = msg.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        roll = math.atan2(2 * (q.w * q.x + q.y * q.z), 1 - 2 * (q.x * q.x + q.y * q.y))
        p = msg.pose.position
        return cls(p.x, p.y, p.z, yaw, msg.header.frame_id or "map", roll)


class Navigator(Protocol):
    def go_to(self, pose: Pose, timeout_s: float, cancel) -> Optional[str]: ...   # None or why it failed


class Arm(Protocol):
    def move_to(self, group: str, pose: Pose, link: str, cancel) -> Optional[str]: ...


class Gripper(Protocol):
    def command(self, hand: str, position: float, max_effort: float, cancel) -> Optional[str]: ...


def _wait(future, timeout_s: float, cancel) -> str:
    from affplan_ros.nodes.base import FutureWait

    return FutureWait(future).until(time.monotonic() + timeout_s, cancel)


def _send(client, goal, cancel, what: str) -> tuple[Optional[Any], str]:
    """(accepted goal handle, "") or (None, why not). No answer and a refusal are told apart: they
    have different causes on a robot. Never sent twice: Nav2 and ros2_controllers accept a copy
    and abort the goal already running (preemption), so a resend would move the robot unobserved."""
    from affplan_ros.nodes.base import send_goal

    handle, outcome = send_goal(client, goal, timeout=10.0, stop=cancel, resend_after_s=math.inf)
    if handle is None:
        return None, "canceled" if outcome == "stopped" else f"{what} did not answer the goal within 10 s"
    if not handle.accepted:
        return None, f"{what} refused the goal"
    return handle, ""


class Nav2Navigator:
    """Base motion through Nav2's NavigateToPose action (``nav2_msgs``)."""

    def __init__(self, node, action_name: str = "navigate_to_pose", callback_group=None):
        try:
            from nav2_msgs.action import NavigateToPose
        except ImportError as exc:
            raise DriverUnavailable("Nav2 is not installed (no nav2_msgs): install ros-$ROS_DISTRO-nav2-msgs "
                                    "and run Nav2 on the robot") from exc
        from rclpy.action import ActionClient

        self._type = NavigateToPose
        self.client = ActionClient(node, NavigateToPose, action_name, callback_group=callback_group)
        self.node = node

    def go_to(self, pose: Pose, timeout_s: float, cancel) -> Optional[str]:
        if not self.client.wait_for_server(timeout_sec=5.0):
            return f"Nav2 does not answer at {self.client._action_name}"
        goal = self._type.Goal()
        goal.pose = pose.to_msg(self.node.get_clock().now().to_msg())
        handle, why = _send(self.client, goal, cancel, "Nav2")
        if handle is None:
            return why
        done = handle.get_result_async()
        outcome = _wait(done, timeout_s, cancel)
        if outcome != "done":
            _wait(handle.cancel_goal_async(), 5.0, lambda: False)
            return "canceled" if outcome == "stopped" else f"Nav2 did not arrive within {timeout_s:g} s"
        from action_msgs.msg import GoalStatus

        got = done.result()
        if got.status != GoalStatus.STATUS_SUCCEEDED:
            detail = getattr(got.result, "error_msg", "") or f"status {got.status}"
            return f"Nav2 failed: {detail}"
        return None


class MoveItArm:
    """Arm motion with MoveIt 2's Python API (``moveit_py``): plan to a pose, execute."""

    def __init__(self, node_name: str = "affplan_moveit"):
        try:
            from moveit.planning import MoveItPy
        except ImportError as exc:
            raise DriverUnavailable("MoveIt is not installed (no moveit_py): install ros-$ROS_DISTRO-moveit-py "
                                    "and start move_group's configuration for this robot") from exc
        self.moveit = MoveItPy(node_name=node_name)

    def move_to(self, group: str, pose: Pose, link: str, cancel) -> Optional[str]:
        if cancel():
            return "canceled"
        component = self.moveit.get_planning_component(group)
        component.set_start_state_to_current_state()
        component.set_goal_state(pose_stamped_msg=pose.to_msg(), pose_link=link)
        plan = component.plan()
        if not plan:
            return f"MoveIt found no motion of {group} to ({pose.x:.2f}, {pose.y:.2f}, {pose.z:.2f})"
        self.moveit.execute(plan.trajectory, controllers=[])
        return None


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

    def command(self, hand: str, position: float, max_effort: float, cancel) -> Optional[str]:
        client = self.clients.get(hand)
        if client is None:
            return f"no gripper configured for the {hand} hand"
        if not client.wait_for_server(timeout_sec=5.0):
            return f"the {hand} gripper does not answer"
        goal = self._type.Goal()
        goal.command.position, goal.command.max_effort = float(position), float(max_effort)
        handle, why = _send(client, goal, cancel, f"the {hand} gripper")
        if handle is None:
            return why
        done = handle.get_result_async()
        if _wait(done, 15.0, cancel) != "done":
            return f"the {hand} gripper did not finish"
        return None
