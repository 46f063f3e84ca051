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
        assert slow.wait(0.2) == "" and not slow._done.is_set()      # still warming up: no verdict yet
        release.set()
        assert slow.wait(5.0) == "" and slow._done.is_set()

        broken = WarmUp(node, lambda: {}["oam"])
        assert broken.wait(5.0) == "KeyError: 'oam'"
        assert broken.wait(0.0) == "KeyError: 'oam'"                   # kept for every later request
