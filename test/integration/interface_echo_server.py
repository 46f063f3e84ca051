#!/usr/bin/env python3
"""Serve every affplan_ros interface once, for test_interfaces.py (runs as its own process).

* every message type: published latched on /affplan_test/msg/<Name>, filled with sample values;
* every service: answers sample(Response) when the request equals sample(Request), else a
  default response (so the client can tell its request arrived intact);
* every action: checks the goal the same way, sends sample(Feedback), returns sample(Result);
* /affplan_test/cancellable (ExecuteTask): sends feedback until the client cancels it.
"""
from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interface_samples import sample  # noqa: E402

from affplan_ros.action import ExecuteTask  # noqa: E402
from affplan_ros.interfaces import interface_types  # noqa: E402
from affplan_ros.nodes.base import run_node  # noqa: E402

PREFIX = "/affplan_test"
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


class InterfaceEcho(Node):
    def __init__(self) -> None:
        super().__init__("interface_echo")
        self._publishers_kept = []
        for name, cls in interface_types("msg").items():
            pub = self.create_publisher(cls, f"{PREFIX}/msg/{name}", LATCHED)
            pub.publish(sample(cls))
            self._publishers_kept.append(pub)
        for name, cls in interface_types("srv").items():
            self.create_service(cls, f"{PREFIX}/srv/{name}", partial(self._serve, cls))
        group = ReentrantCallbackGroup()
        self._skill_servers = [
            ActionServer(self, cls, f"{PREFIX}/action/{name}",
                         execute_callback=partial(self._execute, cls), callback_group=group)
            for name, cls in interface_types("action").items()
        ]
        self._skill_servers.append(ActionServer(
            self, ExecuteTask, f"{PREFIX}/cancellable", execute_callback=self._until_canceled,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT, callback_group=group))

    @staticmethod
    def _serve(cls, request, response):
        return sample(cls.Response) if request == sample(cls.Request) else response

    @staticmethod
    def _execute(cls, goal_handle):
        if goal_handle.request != sample(cls.Goal):
            goal_handle.abort()
            return cls.Result()
        # Feedback is a volatile topic: a subscriber matched a moment late misses a single
        # message, so send it a few times (the client checks the first one it gets).
        for _ in range(3):
            goal_handle.publish_feedback(sample(cls.Feedback))
            time.sleep(0.1)
        goal_handle.succeed()
        return sample(cls.Result)

    @staticmethod
    def _until_canceled(goal_handle):
        deadline = time.monotonic() + 30.0  # bounded: a lost cancel must not hang the test
        rounds = 0
        while time.monotonic() < deadline:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return ExecuteTask.Result(success=False, stop_reason="canceled", rounds=rounds)
            goal_handle.publish_feedback(ExecuteTask.Feedback(round=rounds, message="working"))
            rounds += 1
            time.sleep(0.05)
        goal_handle.abort()
        return ExecuteTask.Result(success=False, stop_reason="bound", rounds=rounds)


def main() -> int:
    return run_node(InterfaceEcho)


if __name__ == "__main__":
    sys.exit(main())
