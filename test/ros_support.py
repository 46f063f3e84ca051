"""Helpers for tests that run real rclpy nodes and processes."""
from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from affplan_ros.launcher import NodeProcess


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


# One implementation of "start a process and wait for READY", shared with `affplan up`.
ChildProcess = NodeProcess


def python_script(path: Path, *args: str) -> list[str]:
    return [sys.executable, str(path), *args]
