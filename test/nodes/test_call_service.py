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
