"""Helpers for tests that run real rclpy nodes and processes."""
from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node

from affplan_ros.launcher import NodeProcess
from affplan_ros.nodes.base import spin


def spin_until(executor, condition: Callable[[], bool], timeout: float) -> bool:
    """Spin until ``condition()`` holds or ``timeout`` seconds pass; return whether it held."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        executor.spin_once(timeout_sec=0.05)
    return True


@contextmanager
def isolated_node(name: str) -> Iterator[tuple[Node, SingleThreadedExecutor]]:
    """A node in a context of its own, shut down afterwards even when the test fails."""
    context = Context()
    rclpy.init(context=context, domain_id=int(os.environ["ROS_DOMAIN_ID"]))
    node = rclpy.create_node(name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        yield node, executor
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)


@contextmanager
def nodes_in_process(factories: Sequence[Callable[[], Node]], client_name: str, *,
                     params_file: Optional[Path] = None, threads: int = 4) -> Iterator[list[Node]]:
    """The project's node classes (``factories``, with ``params_file``) and a client node named
    ``client_name``, in a context of their own, spun by a MultiThreadedExecutor in a thread;
    yields the nodes, the client last. A node class that raises (bad parameters) raises here."""
    import rclpy.utilities

    context = Context()
    args = ["--ros-args", "--params-file", str(params_file)] if params_file else None
    rclpy.init(context=context, domain_id=int(os.environ["ROS_DOMAIN_ID"]), args=args)
    saved = rclpy.utilities.g_default_context
    rclpy.utilities.g_default_context = context  # the node classes take the default context
    nodes: list[Node] = []
    executor, spinner = None, None
    try:
        for make in factories:
            nodes.append(make())
        nodes.append(rclpy.create_node(client_name, context=context))
        executor = MultiThreadedExecutor(num_threads=threads, context=context)
        for node in nodes:
            executor.add_node(node)
        spinner = threading.Thread(target=spin, args=(executor,), daemon=True)
        spinner.start()
        yield nodes
    finally:
        rclpy.utilities.g_default_context = saved
        if executor is not None:
            executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.shutdown(context=context)
        if spinner is not None:
            spinner.join(5.0)


class Received:
    """The messages of a topic as they arrive at ``node`` (spun elsewhere), and a wait for a
    condition on them that wakes on each arrival instead of polling. A context manager: the
    subscription goes with it."""

    def __init__(self, node: Node, msg_type, topic: str, qos):
        self.node, self.messages = node, []
        self._changed = threading.Condition()
        self._sub = node.create_subscription(msg_type, topic, self._arrived, qos)

    def _arrived(self, msg) -> None:
        with self._changed:
            self.messages.append(msg)
            self._changed.notify_all()

    def wait(self, condition: Callable[[list], bool], timeout: float) -> bool:
        """Whether ``condition(messages)`` held within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: condition(self.messages), timeout)

    def close(self) -> None:
        self.node.destroy_subscription(self._sub)

    def __enter__(self) -> "Received":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# One implementation of "start a process and wait for READY", shared with `affplan up`.
ChildProcess = NodeProcess


def send_skill(skill: str, ns: str, server: str = "", timeout: float = 20.0, **fields):
    """Send one goal to a skill action server (``<ns>/skills/<skill>`` unless ``server`` names
    it) and return its result (within ``timeout`` seconds)."""
    from rclpy.action import ActionClient

    from affplan_ros.interfaces import interface_types

    action = interface_types("action")[skill]
    with isolated_node("skill_client") as (node, executor):
        client = ActionClient(node, action, f"{ns}/{server or 'skills/' + skill.lower()}")
        assert client.wait_for_server(timeout_sec=20.0)
        sent = client.send_goal_async(action.Goal(**fields))
        assert spin_until(executor, sent.done, 10.0) and sent.result().accepted
        result = sent.result().get_result_async()
        assert spin_until(executor, result.done, timeout)
        return result.result().result


def printed_calls(proc: NodeProcess, since: int, settle: float = 0.3) -> list[dict]:
    """The JSON lines a fake driver process printed since line ``since`` (its output arrives
    through a pipe, after the call it reports: ``settle`` seconds for the last ones)."""
    import json

    time.sleep(settle)
    return [json.loads(line) for line in proc.output[since:] if line.startswith("{")]


def python_script(path: Path, *args: str) -> list[str]:
    return [sys.executable, str(path), *args]
