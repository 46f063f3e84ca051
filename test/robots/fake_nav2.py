"""Fake Nav2 and gripper controllers speaking their real ROS 2 actions (nav2_msgs NavigateToPose and
control_msgs GripperCommand, as make setup builds them), for test_robot_skills.py.

Prints every goal it receives as a JSON line. Nav2 fails goals beyond x = 50 with Nav2's error
fields. The grippers behave as ros2_controllers' parallel gripper controller does: opening
reaches the goal; closing stops, stalled, at the width of what is between the fingers, taken in
turn from the parameter ``grip_widths`` (one width per close, 0 or none left: nothing there, and
the fingers close to the goal).
"""
import json
import sys


def main() -> int:
    from control_msgs.action import GripperCommand
    from nav2_msgs.action import NavigateToPose
    from rclpy.action import ActionServer
    from rclpy.node import Node

    from affplan_ros.nodes.base import run_node

    class FakeRobotDrivers(Node):
        def __init__(self):
            super().__init__("fake_robot_drivers")
            self.declare_parameter("grip_widths", [0.0])
            self.closes = 0
            ActionServer(self, NavigateToPose, "/navigate_to_pose", self.navigate)
            for name in ("/gripper_left_controller/gripper_cmd", "/gripper_right_controller/gripper_cmd"):
                ActionServer(self, GripperCommand, name, lambda h, name=name: self.grip(name, h))

        def navigate(self, handle):
            p = handle.request.pose
            print(json.dumps({"server": "navigate_to_pose", "frame": p.header.frame_id, "x": p.pose.position.x,
                              "y": p.pose.position.y, "qz": round(p.pose.orientation.z, 3)}), flush=True)
            handle.publish_feedback(NavigateToPose.Feedback(distance_remaining=0.0))
            result = NavigateToPose.Result()
            if p.pose.position.x > 50:
                result.error_code, result.error_msg = NavigateToPose.Result.UNKNOWN, "no path to the goal"
                handle.abort()
            else:
                handle.succeed()
            return result

        def grip(self, name, handle):
            c = handle.request.command
            print(json.dumps({"server": name, "position": c.position, "max_effort": c.max_effort}), flush=True)
            widths = list(self.get_parameter("grip_widths").value)
            width = 0.0
            if c.position < 0.01:   # a close: what is between the fingers stops them
                width = widths[self.closes] if self.closes < len(widths) else 0.0
                self.closes += 1
            if width > c.position:
                handle.abort()      # stalled short of the goal (allow_stalling false)
                return GripperCommand.Result(position=width, effort=c.max_effort, stalled=True, reached_goal=False)
            handle.succeed()
            return GripperCommand.Result(position=c.position, reached_goal=True)

    return run_node(FakeRobotDrivers, sys.argv)


if __name__ == "__main__":
    raise SystemExit(main())
