"""How the robot software's hand comes in to a grasp and lifts from it (robots/skills.py
``_try_grasps``), with the arm stood in for: an arm that reaches the grasp but not the usual
12 cm above it (the far side of a counter) comes in from 5 cm and lifts 5 cm."""
from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import pytest

from affplan_ros.core.model.failure import Cause
from affplan_ros.robots.drivers import Pose, Problem
from affplan_ros.robots.grasping import DOWN, Grasp
from affplan_ros.robots.poses import SeenObject

SPOON = SeenObject("spoon0", 1.0, 0.0, 0.91, 0.0, (0.15, 0.03, 0.02))
GRASP = Pose(1.0, 0.0, 0.94, 0.0, pitch=DOWN)


def _robot(highest: float):
    """A stand-in for the skills node whose arm reaches no pose above ``highest``."""
    from affplan_ros.robots.skills import RobotSkillsNode

    moves = []

    def move_to(_group, pose, _link, _cancel, line=False):
        moves.append((round(pose.z - GRASP.z, 3), line))
        return None if pose.z <= highest + 1e-9 else Problem("out of reach", Cause.UNREACHABLE)

    robot = SimpleNamespace(groups={"left": "arm_left"}, links={"left": "gripper_left"}, approach=0.12,
                            arm=SimpleNamespace(move_to=move_to), holding={}, held={},
                            _close_on=lambda *a, **k: None, _take_hold=lambda *a: None,
                            _robot_pose=lambda: (0.0, 0.0, 0.0), _ends_skill=RobotSkillsNode._ends_skill,
                            _problem=lambda what, problem: None if problem is None else problem)
    robot._steps = partial(RobotSkillsNode._steps, robot)
    robot._lift = partial(RobotSkillsNode._lift, robot)
    return robot, moves


def _grasp(robot):
    from affplan_ros.robots.skills import RobotSkillsNode

    grasp = Grasp("top", GRASP, GRASP.offset(dz=0.12), 0.03)
    return RobotSkillsNode._try_grasps(robot, SimpleNamespace(object="spoon0"), SPOON, "left", [grasp],
                                      "grasp spoon0", lambda: False)


@pytest.mark.parametrize("highest, expected", [
    (2.0, [(0.12, False), (0.0, True), (0.12, True)]),                                   # as usual
    (0.995, [(0.12, False), (0.05, False), (0.0, True), (0.12, True), (0.05, True)]),     # from nearer
])
def test_the_hand_comes_in_and_lifts_from_nearer_where_the_usual_height_is_out_of_reach(highest, expected):
    robot, moves = _robot(highest)
    failure, missed = _grasp(robot)
    assert failure is None and missed == [] and robot.holding == {"left": "spoon0"}
    assert moves == expected


def test_a_grasp_the_hand_reaches_from_no_height_is_missed_with_why():
    robot, moves = _robot(0.9)
    failure, missed = _grasp(robot)
    assert failure is False and len(missed) == 1 and "out of reach" in missed[0]
    assert moves == [(0.12, False), (0.05, False)] and robot.holding == {}
