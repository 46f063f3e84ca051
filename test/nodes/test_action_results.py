"""An action server on simulated time keeps a finished goal's result (nodes/base.py RESULT_KEEP_S).

rclpy keeps a result ``result_timeout`` seconds of the node's clock after the goal ends, 10 by
default. A simulation running faster than real time used them up between the execute callback's
``abort()`` and rclpy storing the result: the goal was expired, rclpy's ``_execute_goal`` raised
KeyError out of ``executor.spin()``, and the skill server's node died (ros2/rclpy#1236). In the
benchmarks the step then ended as "the skill server stopped during the step"."""
from __future__ import annotations

import ast
import os
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

PACKAGE = Path(__file__).resolve().parents[2] / "affplan_ros"


def _run_goal_across_a_clock_jump(result_timeout: float) -> tuple[object, list]:
    """A goal whose callback aborts it, then sees simulated time jump 60 s before it returns.
    (the client's result or None, what the spinning thread raised)."""
    import rclpy
    from rclpy.action import ActionClient, ActionServer
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock

    from affplan_ros.action import Navigate
    from affplan_ros.nodes.base import FutureWait

    context = Context()
    rclpy.init(context=context, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    server = rclpy.create_node("result_keep_server", context=context,
                               parameter_overrides=[Parameter("use_sim_time", value=True)])
    client = rclpy.create_node("result_keep_client", context=context)
    clock_pub = client.create_publisher(Clock, "/clock", 10)
    raised: list = []

    def tick(seconds: float) -> None:
        clock_pub.publish(Clock(clock=rclpy.time.Time(seconds=seconds).to_msg()))

    def execute(goal_handle):
        goal_handle.abort()
        tick(61.0)    # the simulation runs on while the callback ends
        deadline = time.monotonic() + 5.0
        while server.get_clock().now().nanoseconds < 60e9 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)   # the server's expiry timer has its turn on another thread
        return Navigate.Result()

    ActionServer(server, Navigate, "/result_keep/navigate", execute_callback=execute,
                 result_timeout=result_timeout)
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    executor.add_node(server)
    executor.add_node(client)

    def spin() -> None:
        try:
            while context.ok():
                executor.spin_once(timeout_sec=0.05)
        except Exception as exc:  # noqa: BLE001 - what the test looks at
            raised.append(exc)

    spinner = threading.Thread(target=spin, daemon=True)
    try:
        tick(1.0)
        spinner.start()
        action = ActionClient(client, Navigate, "/result_keep/navigate")
        assert action.wait_for_server(timeout_sec=10.0)
        sent = FutureWait(action.send_goal_async(Navigate.Goal()))
        assert sent.until(time.monotonic() + 10.0) == "done"
        handle = sent.future.result()
        got = FutureWait(handle.get_result_async())
        result = got.future.result() if got.until(time.monotonic() + 10.0) == "done" else None
        return result, raised
    finally:
        rclpy.shutdown(context=context)
        spinner.join(5.0)
        executor.shutdown()


def test_a_result_is_kept_while_simulated_time_runs_ahead():
    from action_msgs.msg import GoalStatus

    from affplan_ros.nodes.base import RESULT_KEEP_S

    result, raised = _run_goal_across_a_clock_jump(RESULT_KEEP_S)
    assert not raised, raised
    assert result is not None and result.status == GoalStatus.STATUS_ABORTED


def test_rclpys_default_keep_loses_the_result():
    """What the constant is for: with rclpy's default the same goal's result is gone (the client
    hears "unknown"), or, where the expiry comes a moment later, the spinning thread dies."""
    from action_msgs.msg import GoalStatus

    result, raised = _run_goal_across_a_clock_jump(10)
    assert result is None or result.status != GoalStatus.STATUS_ABORTED or raised, (result, raised)


def test_every_action_server_of_the_package_keeps_its_results():
    missing = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ActionServer" \
                    and not any(k.arg == "result_timeout" for k in node.keywords):
                missing.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not missing, f"ActionServer without result_timeout=RESULT_KEEP_S: {missing}"
