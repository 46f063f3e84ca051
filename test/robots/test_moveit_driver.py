"""The MoveIt driver (robots/drivers.py: MoveItArm) against a stand-in at moveit_py's API: a plan
that fails, an execution that does not succeed and a cancel each end the motion with what MoveIt
said, and a cancel stops the arm through the trajectory execution manager."""
from __future__ import annotations

import sys
import threading
import time

import moveit_standin  # test/robots/, on the path as pytest puts each test's folder there
import pytest

from affplan_ros.core.model.failure import Cause


@pytest.fixture
def arm(monkeypatch):
    from affplan_ros.robots.drivers import MoveItArm

    for name, module in moveit_standin.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    script = moveit_standin.Script()
    monkeypatch.setattr(moveit_standin.MoveItPy, "script", script)
    return MoveItArm("test_moveit", poll_s=0.01), script


def pose():
    from affplan_ros.robots.drivers import Pose

    return Pose(1.2, 1.0, 0.8, frame="map")


def test_a_motion_is_planned_to_the_pose_and_executed(arm):
    driver, script = arm
    assert driver.move_to("arm_left", pose(), "gripper_left_grasping_frame", lambda: False) is None
    assert script.calls == [("start_state", "arm_left"),
                            ("goal", "arm_left", "gripper_left_grasping_frame", 1.2, 1.0, 0.8),
                            ("plan", "arm_left"), ("execute", "arm_left", False)]


def test_a_slow_motion_asks_moveit_to_scale_its_speed(arm):
    driver, script = arm
    assert driver.move_to("arm_left", pose(), "gripper_left_grasping_frame", lambda: False, speed=0.2) is None
    assert ("plan", "arm_left", 0.2, 0.2) in script.calls and ("execute", "arm_left", False) in script.calls


@pytest.mark.parametrize("code, name, cause", [(-31, "NO_IK_SOLUTION", Cause.UNREACHABLE),
                                               (-12, "GOAL_IN_COLLISION", Cause.BLOCKED)])
def test_a_plan_that_fails_moves_nothing_and_says_why(arm, code, name, cause):
    driver, script = arm
    script.plan_error = code
    problem = driver.move_to("arm_right", pose(), "gripper_right_grasping_frame", lambda: False)
    assert problem is not None and problem.cause == cause and not problem.canceled
    assert "MoveIt found no motion of arm_right to (1.20, 1.00, 0.80)" in problem.why
    assert name in problem.why or f"error code {code}" in problem.why
    assert not [c for c in script.calls if c[0] == "execute"]


@pytest.mark.parametrize("status", ["ABORTED", "TIMED_OUT", "FAILED"])
def test_an_execution_that_does_not_succeed_is_a_failed_motion(arm, status):
    driver, script = arm
    script.execution = status
    problem = driver.move_to("arm_left", pose(), "gripper_left_grasping_frame", lambda: False)
    assert problem is not None and problem.cause == Cause.MOTION_FAILED
    assert problem.why.endswith(f"ended {status}")


def test_a_cancel_stops_the_arm_through_moveit(arm):
    driver, script = arm
    script.execution = "RUNS"
    asked = threading.Event()
    timer = threading.Timer(0.2, asked.set)
    timer.start()
    started = time.monotonic()
    problem = driver.move_to("arm_left", pose(), "gripper_left_grasping_frame", asked.is_set)
    assert problem is not None and problem.canceled
    assert ("stop_execution",) in script.calls and time.monotonic() - started < 5.0


def test_a_cancel_before_execution_moves_nothing(arm):
    driver, script = arm
    problem = driver.move_to("arm_left", pose(), "gripper_left_grasping_frame", lambda: True)
    assert problem is not None and problem.canceled and script.calls == []
