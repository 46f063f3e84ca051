"""Helpers for tests that run real rclpy nodes and processes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node


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


class ChildProcess:
    """A process that prints READY when it is up; stopped with SIGINT, killed if it lingers."""

    def __init__(self, argv: Sequence[str], ready_timeout: float = 30.0, env: dict | None = None):
        self.argv = list(argv)
        self.output: list[str] = []
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, **(env or {})},
        )
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + ready_timeout
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                break
        if not self._ready.is_set():
            self.stop()
            time.sleep(0.1)  # let the reader thread collect the last lines
            raise RuntimeError(f"{self.argv} did not become ready within {ready_timeout} s:\n" + "".join(self.output))

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            if line.strip() == "READY":
                self._ready.set()

    def stop(self, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def python_script(path: Path, *args: str) -> list[str]:
    return [sys.executable, str(path), *args]
