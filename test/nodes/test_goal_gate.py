"""One goal at a time (affplan_ros/nodes/goal_gate.py): a goal whose acceptance could not be sent
to its client does not hold the server. rclpy accepts such a goal, fails to send the acceptance
(Fast DDS: the server has not matched the brand-new client's response reader yet) and never
runs it; the server must take the client's resent copy, and later goals.

The node test runs the real executor node and a real action client over DDS; only the first
acceptance send fails, as rcl reports it (RCLError from send_goal_response)."""
from __future__ import annotations

import time
from types import SimpleNamespace
from uuid import uuid4

import pytest
from rclpy.action import GoalResponse
from ros_support import nodes_in_process

from affplan_ros.nodes.goal_gate import OneGoalAtATime

pytestmark = pytest.mark.ros


class Log:
    def __init__(self):
        self.lines: list[str] = []

    def warning(self, text: str) -> None:
        self.lines.append(text)


def handle(task: str):
    return SimpleNamespace(goal_id=SimpleNamespace(uuid=uuid4().bytes), request=SimpleNamespace(task=task),
                           execute=lambda: None)


def gate(pending_s: float = 0.2):
    log = Log()
    return OneGoalAtATime(log, "execute_task", lambda goal: goal.task, pending_s=pending_s), log


def test_a_running_goal_holds_the_server_until_it_is_released():
    g, log = gate()
    first = handle("bring the apple")
    assert g.on_goal(first.request) == GoalResponse.ACCEPT
    g.on_accepted(first)
    time.sleep(0.3)  # longer than the pending hold: a running goal holds regardless
    assert g.holds(first) and g.current == "bring the apple"
    assert g.on_goal(handle("wipe the table").request) == GoalResponse.REJECT
    assert log.lines == ["execute_task refused 'wipe the table': busy with 'bring the apple'"]
    g.release(first)
    assert g.current == "" and g.on_goal(handle("wipe the table").request) == GoalResponse.ACCEPT


def test_an_acceptance_never_handed_on_stops_holding_the_server_after_the_pending_time():
    g, log = gate()
    lost, copy = handle("bring the apple"), handle("bring the apple")
    assert g.on_goal(lost.request) == GoalResponse.ACCEPT      # its acceptance is never delivered
    assert g.on_goal(copy.request) == GoalResponse.REJECT      # still within the pending time
    time.sleep(0.3)
    assert g.on_goal(copy.request) == GoalResponse.ACCEPT
    assert "the acceptance of 'bring the apple' never reached its client" in log.lines[-1]
    g.on_accepted(copy)
    assert g.holds(copy) and not g.holds(lost)


def test_of_two_goals_handed_on_together_only_the_first_holds_the_server():
    g, _ = gate(pending_s=0.0)   # an acceptance slower than the pending time
    slow, other = handle("bring the apple"), handle("wipe the table")
    assert g.on_goal(slow.request) == GoalResponse.ACCEPT
    assert g.on_goal(other.request) == GoalResponse.ACCEPT
    g.on_accepted(slow)
    g.on_accepted(other)
    assert g.holds(slow) and not g.holds(other)
    g.release(other)                  # the refused one ending does not free the server
    assert g.current == "bring the apple"


@pytest.fixture
def executor_node():
    """The executor node in this process and a client node, spun by a multi-threaded executor."""
    from affplan_ros.nodes.executor import ExecutorNode

    with nodes_in_process((ExecutorNode,), "goal_gate_test_client") as nodes:
        yield nodes


def test_the_executor_takes_the_copy_of_a_plan_whose_acceptance_could_not_be_sent(executor_node, monkeypatch):
    from rclpy.action import ActionClient
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    from affplan_ros.action import ExecutePlan
    from affplan_ros.nodes.base import RESEND_GOAL_S, FutureWait, send_goal

    server_node, client_node = executor_node
    sent = []
    real_send = _rclpy.ActionServer.send_goal_response

    def first_send_fails(self, header, response):
        sent.append(response.accepted)
        if len(sent) == 1:   # what rcl says when rmw_send_response times out on an unmatched client
            raise _rclpy.RCLError("Failed to send goal response")
        return real_send(self, header, response)

    monkeypatch.setattr(_rclpy.ActionServer, "send_goal_response", first_send_fails)
    client = ActionClient(client_node, ExecutePlan, "execute_plan")
    assert client.wait_for_server(timeout_sec=20.0)
    for attempt in ("the lost one and its copy", "the next plan"):
        started = time.monotonic()
        goal_handle, outcome = send_goal(client, ExecutePlan.Goal(), timeout=15.0)
        assert goal_handle is not None and goal_handle.accepted, (attempt, outcome, sent)
        result = FutureWait(goal_handle.get_result_async())
        assert result.until(time.monotonic() + 10.0) == "done", attempt
        assert result.future.result().result.success, (attempt, result.future.result().result.message)
        if attempt == "the lost one and its copy":
            # The first acceptance was lost; the copy went out after the resend time, and was taken.
            assert sent[:2] == [True, True] and time.monotonic() - started >= RESEND_GOAL_S
        else:
            assert sent[2:] == [True] and time.monotonic() - started < RESEND_GOAL_S
    assert server_node._gate.current == ""
