"""Every custom message, service and action crosses a real DDS link between two processes."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PREFIX = "/affplan_test"


@pytest.fixture(scope="module")
def echo_server():
    from ros_support import ChildProcess, python_script

    server = ChildProcess(python_script(HERE / "interface_echo_server.py"))
    yield server
    assert server.stop() == 0, "echo server did not shut down cleanly:\n" + "".join(server.output)


def _source_names(folder: str, suffix: str) -> set[str]:
    return {p.stem for p in (ROOT / folder).glob(f"*{suffix}")}


@pytest.mark.parametrize("kind,suffix", [("msg", ".msg"), ("srv", ".srv"), ("action", ".action")])
def test_every_interface_file_is_built(kind, suffix):
    from affplan_ros.interfaces import interface_types

    assert set(interface_types(kind)) == _source_names(kind, suffix)


def test_every_message_type_arrives_intact(echo_server):
    from interface_samples import sample
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from ros_support import isolated_node, spin_until

    from affplan_ros.interfaces import interface_types

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
    types = interface_types("msg")
    received: dict[str, object] = {}
    with isolated_node("msg_checker") as (node, executor):
        for name, cls in types.items():
            node.create_subscription(cls, f"{PREFIX}/msg/{name}",
                                     lambda msg, name=name: received.setdefault(name, msg), latched)
        assert spin_until(executor, lambda: len(received) == len(types), 20.0), \
            f"missing: {sorted(set(types) - set(received))}"
    for name, cls in types.items():
        assert received[name] == sample(cls), name


def test_every_service_round_trip(echo_server):
    from interface_samples import sample
    from ros_support import isolated_node, spin_until

    from affplan_ros.interfaces import interface_types

    with isolated_node("srv_checker") as (node, executor):
        for name, cls in interface_types("srv").items():
            client = node.create_client(cls, f"{PREFIX}/srv/{name}")
            assert client.wait_for_service(timeout_sec=20.0), f"service {name} not available"
            future = client.call_async(sample(cls.Request))
            assert spin_until(executor, future.done, 10.0), f"no response from {name}"
            assert future.result() == sample(cls.Response), name
            if not cls.Request.get_fields_and_field_types():
                continue  # an empty request cannot differ from the sample
            # A request that differs gets the default response: the server really compared it.
            future = client.call_async(cls.Request())
            assert spin_until(executor, future.done, 10.0)
            assert future.result() == cls.Response(), name


def test_every_action_goal_feedback_result(echo_server):
    from action_msgs.msg import GoalStatus
    from interface_samples import sample
    from rclpy.action import ActionClient
    from ros_support import isolated_node, spin_until

    from affplan_ros.interfaces import interface_types
    from affplan_ros.nodes.base import wait_for_action

    with isolated_node("action_checker") as (node, executor):
        for name, cls in interface_types("action").items():
            client = ActionClient(node, cls, f"{PREFIX}/action/{name}")
            assert wait_for_action(node, client, f"{PREFIX}/action/{name}", 20.0), f"action {name} not available"
            feedback = []
            send = client.send_goal_async(sample(cls.Goal),
                                          feedback_callback=lambda fb, feedback=feedback: feedback.append(fb.feedback))
            assert spin_until(executor, send.done, 10.0), f"{name}: goal not answered"
            handle = send.result()
            assert handle.accepted, name
            result = handle.get_result_async()
            assert spin_until(executor, lambda result=result, feedback=feedback: result.done() and feedback,
                              10.0), f"{name}: no result/feedback"
            assert result.result().status == GoalStatus.STATUS_SUCCEEDED, name
            assert result.result().result == sample(cls.Result), name
            assert feedback[0] == sample(cls.Feedback), name
            client.destroy()


def test_action_cancel_stops_a_running_goal(echo_server):
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient
    from ros_support import isolated_node, spin_until

    from affplan_ros.action import ExecuteTask

    with isolated_node("cancel_checker") as (node, executor):
        client = ActionClient(node, ExecuteTask, f"{PREFIX}/cancellable")
        assert client.wait_for_server(timeout_sec=20.0)
        feedback = []
        send = client.send_goal_async(ExecuteTask.Goal(task="wipe the table"),
                                      feedback_callback=lambda fb: feedback.append(fb.feedback.round))
        assert spin_until(executor, send.done, 10.0)
        handle = send.result()
        assert handle.accepted
        assert spin_until(executor, lambda: len(feedback) >= 3, 10.0), "no progress before cancel"
        cancel = handle.cancel_goal_async()
        assert spin_until(executor, cancel.done, 10.0)
        assert len(cancel.result().goals_canceling) == 1
        result = handle.get_result_async()
        assert spin_until(executor, result.done, 10.0), "canceled goal never finished"
        assert result.result().status == GoalStatus.STATUS_CANCELED
        assert result.result().result.stop_reason == "canceled"
        assert feedback == sorted(feedback) and feedback[0] == 0
