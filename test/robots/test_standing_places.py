"""Where the robot software moves the base to reach its work (robots/skills.py ``_step_in_front``),
with the arm's IK and Nav2 stood in for: the order of the places it asks Nav2 for."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from affplan_ros.core.model.failure import Cause
from affplan_ros.robots.drivers import Pose, Problem
from affplan_ros.robots.poses import SeenObject

FRIDGE = SeenObject("refrigerator0", 0.0, 0.0, 0.9, 0.0, (0.7, 0.7, 1.8), kind="furniture")


def _robot(stands, reachable: set, near_standoff: float = 0.06):
    """A stand-in for the skills node: ``stands`` answers each IK question of places (by
    distance), Nav2 reaches only ``reachable``."""
    asked, driven, folds = [], [], []

    def stands_that_reach(support, point, distance, facing, hand, targets, min_move=None):
        asked.append((round(distance, 2), min_move))   # None: the usual least move
        return stands(round(distance, 2))

    def go_to(place, _timeout, _cancel):
        driven.append(place)
        return None if place in reachable else Problem("no path to the goal", Cause.BLOCKED)

    robot = SimpleNamespace(base_radius=0.27, standoff=0.1, near_standoff=near_standoff,
                            _stands_that_reach=stands_that_reach, navigator=SimpleNamespace(go_to=go_to),
                            nav_timeout=10.0, _fold=lambda _cancel: folds.append(True),
                            _robot_pose=lambda: (0.0, 1.0, -1.57), _problem=lambda what, problem: problem)
    return robot, asked, driven, folds


def _step(robot):
    from affplan_ros.robots.skills import RobotSkillsNode

    return RobotSkillsNode._step_in_front(robot, FRIDGE, (0.0, 0.1), "place", lambda: False, "left",
                                          lambda _base: [])


def test_nearer_places_are_asked_for_where_nav2_brings_the_base_to_none_at_the_usual_distance():
    from affplan_ros.robots.skills import NEAR_MOVE_MIN_M

    usual = [Pose(0.0, 0.72, 0.0, -2.2), Pose(0.1, 0.72, 0.0, -2.8)]
    near = [Pose(0.0, 0.68, 0.0, -1.57)]
    robot, asked, driven, folds = _robot(lambda d: usual if d == 0.37 else near, reachable={near[0]})
    assert _step(robot) is True
    assert asked == [(0.37, None), (0.33, NEAR_MOVE_MIN_M)]
    assert driven == usual + near and folds == [True], "the arm folds once, before the first drive"


@pytest.mark.parametrize("near_standoff", [0.06, 0.1])
def test_the_usual_distance_alone_where_it_is_reached_or_no_nearer_one_is_allowed(near_standoff):
    usual = [Pose(0.0, 0.72, 0.0, -2.2)]
    robot, asked, driven, _ = _robot(lambda d: usual if d == 0.37 else [], reachable=set(),
                                     near_standoff=near_standoff)
    assert _step(robot) is False
    assert len(asked) == (2 if near_standoff < 0.1 else 1) and driven == usual
    robot, asked, driven, _ = _robot(lambda d: usual, reachable={usual[0]})
    assert _step(robot) is True and len(asked) == 1


def test_the_base_stays_and_the_arm_stays_out_where_no_place_reaches():
    robot, asked, driven, folds = _robot(lambda d: [], reachable=set())
    assert _step(robot) is False and driven == [] and folds == []
