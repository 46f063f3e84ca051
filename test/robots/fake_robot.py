"""The robot_skills node with fake drivers, as a process of its own (for test_robot_skills.py).

Nav2, MoveIt and the gripper controllers cannot be installed here. The fakes stand in at the
drivers' protocol (robots/drivers.py: Navigator, Arm, Gripper) and print every call as a JSON
line, so the test sees exactly which motions a skill commanded, in which order. With
``--ros-drivers`` the real Nav2 and gripper drivers run instead, against fake_nav2.py's action
servers; only MoveIt (a Python API, moveit_py) stays faked.
"""
import json
import sys


def log(**call):
    print(json.dumps(call), flush=True)


class FakeNavigator:
    def go_to(self, pose, timeout_s, cancel):
        from affplan_ros.robots.drivers import Problem

        log(driver="nav", x=pose.x, y=pose.y, yaw=round(pose.yaw, 3))
        return Problem("the path is blocked") if pose.x > 50 else None


class FakeArm:
    def move_to(self, group, pose, link, cancel, line=False, speed=1.0):
        log(driver="arm", group=group, link=link, z=round(pose.z, 3), x=round(pose.x, 3), roll=round(pose.roll, 2))
        return None

    def keep_clear(self, boxes):
        log(driver="arm", keep_clear=[b.name for b in boxes])

    def hold(self, link, thing):
        log(driver="arm", hold=thing.name if thing else None)

    def shoulder(self, link):
        return None     # as MoveIt's driver: where to stand is found by moving

    def reaches(self, link, poses, base):
        return None

    def hand_position(self, link):
        return None

    def turn_wrist(self, group, link, radians, cancel):
        log(driver="arm", group=group, link=link, wrist=round(radians, 2))
        return None


class FakeGripper:
    """Closing always finds something 4 cm wide between the fingers (the ROS stand-in in
    fake_nav2.py is the one that can close on nothing)."""

    def command(self, hand, position, max_effort, cancel):
        from affplan_ros.robots.drivers import Grip

        log(driver="gripper", hand=hand, position=position)
        return Grip(max(position, 0.04), stalled=position < 0.04, reached_goal=position >= 0.04)


def main():
    from affplan_ros.nodes.base import run_node
    from affplan_ros.robots.skills import RobotSkillsNode

    if "--ros-drivers" in sys.argv:
        # The real Nav2 and gripper drivers (their ROS actions served by fake_nav2.py); MoveIt's
        # Python API stays faked.
        sys.argv.remove("--ros-drivers")
        from affplan_ros.robots.drivers import GripperActions, Nav2Navigator

        drivers = lambda node, grippers, group: (Nav2Navigator(node, node.nav_action, group), FakeArm(),  # noqa: E731
                                                 GripperActions(node, grippers, group))
    else:
        drivers = lambda node, grippers, group: (FakeNavigator(), FakeArm(), FakeGripper())  # noqa: E731
    return run_node(lambda: RobotSkillsNode(drivers=drivers), sys.argv)


if __name__ == "__main__":
    raise SystemExit(main())
