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


def remove_stale_fastdds_shm(min_age_s: float = 60.0, shm: Path = Path("/dev/shm")) -> list[str]:
    """Remove Fast DDS shared-memory files (ports, their mutexes, segments) that no process has
    mapped or open, that are ours and untouched for ``min_age_s``: participants killed earlier on
    this machine leave them behind (527 were found once), and a new participant that reuses a
    stale port of the same domain and index may never receive. Fast DDS cleans only its own
    files on a clean exit; its `fastdds shm clean` tool is part of the ROS CLI we do not have."""
    if not shm.is_dir():
        return []
    in_use: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            in_use.update(line.split(maxsplit=5)[-1].strip() for line in (proc / "maps").read_text().splitlines()
                          if "/dev/shm/" in line)
            in_use.update(os.readlink(fd) for fd in (proc / "fd").iterdir())
        except OSError:
            continue  # gone meanwhile, or not ours to read
    removed, now = [], time.time()
    for path in shm.iterdir():
        if not any(tag in path.name for tag in ("fastrtps", "fastdds")) or str(path) in in_use:
            continue
        try:
            info = path.lstat()
            if info.st_uid == os.getuid() and now - info.st_mtime > min_age_s:
                path.unlink()
                removed.append(path.name)
        except OSError:
            continue
    return removed
