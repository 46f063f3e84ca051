"""A spinning client survives subscriptions destroyed beside it (nodes/base.py ``spin``).

rclpy (kilted) raises InvalidHandle out of ``executor.spin()`` when another thread destroys a
subscription while the executor builds its wait set (ros2/rclpy#1284). The thread that spun a
SuiteClient then died without a word, and every later call of that client went unanswered: in
the stress runs, a test that had listened to a status topic left the next tests' reset_world
and get_memory calls unanswered for the rest of the module."""
from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.ros


def test_a_client_still_calls_and_hears_after_many_subscriptions_came_and_went():
    from std_msgs.msg import String
    from std_srvs.srv import Trigger

    from affplan_ros.nodes.base import LATCHED_QOS
    from affplan_ros.task_client import SuiteClient

    with SuiteClient("/spin_test", "spin_test") as client:
        node = client.node
        pub = node.create_publisher(String, "/spin_test/chatter", LATCHED_QOS)
        node.create_service(Trigger, "/spin_test/ping",
                            lambda _req, resp: setattr(resp, "success", True) or resp)
        stop = threading.Event()

        def chatter() -> None:   # messages keep arriving while subscriptions come and go
            while not stop.is_set():
                pub.publish(String(data="x"))
                stop.wait(0.001)

        talker = threading.Thread(target=chatter, daemon=True)
        talker.start()
        try:
            for _ in range(300):   # before the fix the spin thread died within about ten
                sub = node.create_subscription(String, "/spin_test/chatter", lambda _m: None, LATCHED_QOS)
                stop.wait(0.002)
                node.destroy_subscription(sub)
        finally:
            stop.set()
            talker.join(5)
        assert client._spin.is_alive(), "the client's executor stopped spinning"
        got, error = client.call(Trigger, "ping", Trigger.Request(), timeout=10.0)
        assert got is not None and got.success, error
