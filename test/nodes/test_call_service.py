"""call_service (affplan_ros/nodes/base.py): a request whose response is lost (the server had not
discovered our brand-new client yet) goes out again when the caller says it may be repeated, and
only then. The client is a stand-in with rclpy's client surface; the graph is not consulted."""
from __future__ import annotations

import time
from concurrent.futures import Future

import pytest

from affplan_ros.nodes.base import call_service

pytestmark = pytest.mark.ros


class LosesFirstResponse:
    """A service client whose first request's response never arrives."""

    def __init__(self, name: str):
        self.srv_name, self.sent = name, 0

    def wait_for_service(self, timeout_sec: float) -> bool:
        return True

    def call_async(self, request) -> Future:
        self.sent += 1
        future: Future = Future()
        if self.sent > 1:
            future.set_result(("answer", request))
        return future


def test_a_repeatable_request_from_a_new_client_goes_out_again_after_silence():
    client = LosesFirstResponse("/t/read_once_lost")
    started = time.monotonic()
    response, why = call_service(client, "req", 8.0, resend_silent_s=1.0)
    assert response == ("answer", "req") and why == "" and client.sent == 2
    assert time.monotonic() - started < 4.0


def test_a_request_not_marked_repeatable_is_sent_once():
    client = LosesFirstResponse("/t/write_once_lost")
    response, why = call_service(client, "req", 2.0)
    assert response is None and client.sent == 1
    assert why == "no answer within 2 s from /t/write_once_lost"


def test_a_result_that_comes_as_the_server_goes_is_the_result():
    """A skill server that answers and then exits: its answer is taken, not 'stopped'."""
    from rclpy.task import Future as RclFuture

    from affplan_ros.nodes.base import FutureWait

    future = RclFuture()

    def answered_then_gone() -> bool:
        future.set_result("failed: out of reach")
        return True

    assert FutureWait(future).until(time.monotonic() + 5.0, answered_then_gone) == "done"
    assert FutureWait(RclFuture()).until(time.monotonic() + 5.0, lambda: True) == "stopped"


def test_a_server_is_gone_only_when_the_graph_misses_it_twice_in_a_row():
    from affplan_ros.nodes.base import ServerWatch

    class Info:
        endpoint_gid = b"server-1"

    class Node:
        broken = False

        def get_subscriptions_info_by_topic(self, _topic, no_mangle=False):
            if self.broken:
                raise RuntimeError("rcl: the graph is busy")
            return [Info()]

    node = Node()
    watch = ServerWatch(node, "/affplan/skills/pour", every_s=0.0)
    node.broken = True
    assert not watch.gone()
    node.broken = False
    answers = iter([[], [Info()], [], []])
    node.get_subscriptions_info_by_topic = lambda _topic, no_mangle=False: next(answers)
    assert not watch.gone()         # missed once: the graph's answers are not always whole
    assert not watch.gone()         # there again
    assert not watch.gone()
    assert watch.gone()             # missed twice in a row: gone
    assert watch.gone()


def test_a_server_discovered_after_the_goal_went_out_is_the_goals_server():
    """The first look lists only a killed server's endpoints (the new one not discovered yet);
    the new one shows up, then the killed one leaves: the step's server is still there."""
    from affplan_ros.nodes.base import ServerWatch

    class Info:
        def __init__(self, gid: bytes):
            self.endpoint_gid = gid

    class Node:
        answers = iter([[Info(b"killed")], [Info(b"killed"), Info(b"new")], [Info(b"new")], [Info(b"new")], []])

        def get_subscriptions_info_by_topic(self, _topic, no_mangle=False):
            return next(self.answers)

    watch = ServerWatch(Node(), "/affplan/skills/place", every_s=0.0)
    assert [watch.gone() for _ in range(3)] == [False, False, False]
    watch._learn_until = 0.0        # later on, endpoints that appear are not the goal's server's
    assert not watch.gone()          # the new one gone once: the graph's answers are not always whole
