"""Nodes load heavy things in a warm-up thread: requests wait for it and see why it failed."""
from __future__ import annotations

import threading

import pytest

pytestmark = pytest.mark.ros


def test_a_request_waits_for_the_warm_up_and_gets_its_error():
    from ros_support import isolated_node

    from affplan_ros.nodes.base import WarmUp

    release = threading.Event()
    with isolated_node("warm_up_test") as (node, _executor):
        slow = WarmUp(node, lambda: release.wait(5.0))
        # Still warming up after the wait: the request is told so, never served by a half-loaded node.
        assert slow.wait(0.2) == "warm_up_test is still starting after 0.2 s; try again shortly"
        assert not slow._done.is_set()
        release.set()
        assert slow.wait(5.0) == "" and slow._done.is_set()

        broken = WarmUp(node, lambda: {}["oam"])
        assert broken.wait(5.0) == "KeyError: 'oam'"
        assert broken.wait(0.0) == "KeyError: 'oam'"                   # kept for every later request
