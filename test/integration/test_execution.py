"""The executor runs plans through the simulated robot's skill servers, as separate processes."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.ros

NS = "/affplan"
APPLE_PLAN = [  # what the planner derives for "bring me the apple" in config/scenarios/kitchen.txt
    ("move", "robot0", ["counter0", "refrigerator0"]),
    ("open", "robot0", ["refrigerator0", "refrigerator0"]),
    ("take_out", "robot0", ["apple0", "refrigerator0", "refrigerator0"]),
    ("move", "robot0", ["refrigerator0", "human0"]),
    ("handover", "robot0", ["human0", "apple0"]),
]


def node_process(executable: str, **params):
    from affplan_ros.launcher import NodeProcess, node_argv

    return NodeProcess(node_argv(executable, NS, params))


@pytest.fixture
def executor():
    proc = node_process("executor", server_wait_s=5.0, step_timeout_s=20.0)
    yield proc
    assert proc.stop() == 0, "".join(proc.output)


@pytest.fixture
def sim_world():
    proc = node_process("sim_world", time_scale=0.02)
    yield proc
    assert proc.stop() == 0, "".join(proc.output)


def make_plan(steps):
    from affplan_ros.msg import Plan, PlanStep

    return Plan(goal="(and (inhand apple0 human0))", steps=[
        PlanStep(index=i, action=a, agent=agent, arguments=args, cost=1.0) for i, (a, agent, args) in enumerate(steps)])


def run_plan(plan, cancel_after_feedback: int | None = None, timeout: float = 60.0):
    from rclpy.action import ActionClient
    from ros_support import isolated_node, spin_until

    from affplan_ros.action import ExecutePlan
    from affplan_ros.nodes.base import wait_for_action

    feedback = []
    with isolated_node("plan_runner") as (node, executor):
        client = ActionClient(node, ExecutePlan, f"{NS}/execute_plan")
        assert wait_for_action(node, client, f"{NS}/execute_plan", 20.0), "executor not available"
        send = client.send_goal_async(ExecutePlan.Goal(plan=plan),
                                      feedback_callback=lambda m: feedback.append(m.feedback))
        assert spin_until(executor, send.done, 10.0)
        handle = send.result()
        assert handle.accepted
        if cancel_after_feedback is not None:
            assert spin_until(executor, lambda: len(feedback) >= cancel_after_feedback, timeout)
            cancel = handle.cancel_goal_async()
            assert spin_until(executor, cancel.done, 10.0)
        result = handle.get_result_async()
        assert spin_until(executor, result.done, timeout), "plan did not finish"
        # Feedback and result are separate topics: the last feedback may arrive after the result,
        # and with both cores loaded reliable DDS resends a lost UDP datagram only after the next
        # heartbeat (feedback of steps 2-4 came more than 5 s after the result in a fresh-clone run).
        done = result.result().result.steps_done
        spin_until(executor, lambda: sum(f.status == "succeeded" for f in feedback) >= done, 20.0)
        return result.result().status, result.result().result, feedback


def test_plan_runs_step_by_step_with_feedback(sim_world, executor):
    from action_msgs.msg import GoalStatus

    status, result, feedback = run_plan(make_plan(APPLE_PLAN))
    assert status == GoalStatus.STATUS_SUCCEEDED, result.message
    assert result.success and result.steps_done == 5
    assert [s.action for s in result.executed] == [a for a, _, _ in APPLE_PLAN]
    succeeded = [f.current_step for f in feedback if f.status == "succeeded"]
    assert succeeded == [0, 1, 2, 3, 4]


def test_environment_steps_are_left_to_the_world(sim_world, executor):
    from action_msgs.msg import GoalStatus

    # "wipe the counter": the sponge gets wet in the bucket of water by itself (wetten has no
    # agent and no skill); the executor only reports it, and wet_swipe then finds it wet.
    wipe = [("grasp", "robot0", ["sponge0", "counter0", "counter0"]),
            ("putin", "robot0", ["sponge0", "bucket0", "counter0"]),
            ("wetten", "", ["sponge0", "bucket0", "water0"]),
            ("take_out", "robot0", ["sponge0", "bucket0", "counter0"]),
            ("wet_swipe", "robot0", ["sponge0", "counter0", "counter0"])]
    status, result, feedback = run_plan(make_plan(wipe))
    assert status == GoalStatus.STATUS_SUCCEEDED, result.message
    assert result.steps_done == 5
    assert any(f.current_step == 2 and "happens by itself: wetten(sponge0, bucket0, water0)" in f.message
               for f in feedback)


def test_false_precondition_fails_with_what_why_suggestion(sim_world, executor):
    from action_msgs.msg import GoalStatus

    from affplan_ros.msg import FailureObservation

    # Taking the apple out before opening the fridge: the world refuses, and says why.
    steps = [APPLE_PLAN[0], APPLE_PLAN[2]]
    status, result, _ = run_plan(make_plan(steps))
    assert status == GoalStatus.STATUS_ABORTED
    assert not result.success and result.steps_done == 1
    failure = result.failure
    assert failure.code == FailureObservation.CODE_PRECONDITION
    assert "take_out" in failure.what
    assert "refrigerator0 is closed" in failure.why
    assert "closed refrigerator0" in failure.suggestion
    assert result.message.startswith("Error: ")


def test_cancel_mid_plan_stops_and_leaves_later_steps_undone(executor):
    from action_msgs.msg import GoalStatus

    from affplan_ros.msg import FailureObservation

    slow = node_process("sim_world", time_scale=1.0)  # a move takes 4 s
    try:
        status, result, feedback = run_plan(make_plan(APPLE_PLAN), cancel_after_feedback=1)
    finally:
        assert slow.stop() == 0, "".join(slow.output[-60:])
    assert status == GoalStatus.STATUS_CANCELED
    assert result.steps_done == 0
    assert result.failure.code == FailureObservation.CODE_CANCELED


def test_missing_skill_server_fails_fast_with_a_clear_message(executor):
    import time

    from action_msgs.msg import GoalStatus

    from affplan_ros.msg import FailureObservation

    started = time.monotonic()
    status, result, _ = run_plan(make_plan(APPLE_PLAN[:1]))
    assert time.monotonic() - started < 10.0
    assert status == GoalStatus.STATUS_ABORTED
    assert result.failure.code == FailureObservation.CODE_UNAVAILABLE
    assert f"{NS}/skills/navigate" in result.failure.why
