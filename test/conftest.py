"""Shared pytest fixtures: ROS 2 isolation, child processes, and the optional ../shared data."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Every DDS participant in the tests stays on this machine and in a domain of its own, so two
# test runs (or a running suite) on one machine never see each other; each test module gets a
# domain of its own too (below), so nothing a module left running can reach the next one.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(10 + os.getpid() % 90))
_FIRST_DOMAIN = int(os.environ["ROS_DOMAIN_ID"])
# MuJoCo renders offscreen through EGL; it reads this when first imported, which a test module may
# do before the package's sim/physics/__init__.py sets it.
os.environ.setdefault("MUJOCO_GL", "egl")
_module_domains: dict[str, int] = {}
# The tests kill nodes on purpose (restarts, a skill server down). A Fast DDS shared-memory
# segment left by a killed participant can crash the next participant that opens it (a node
# exited with SIGSEGV at start once in CI; ros2/launch_ros#562, ros2/rmw_fastrtps#860), so the
# tests talk over UDP on localhost only.
os.environ.setdefault("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")
# Servers in this process (a person's AskHuman, nodes run in-process) wait for callers they have
# not matched yet, as the nodes do (affplan_ros/env.py).
from affplan_ros.env import dds_defaults  # noqa: E402 - after the variables above

dds_defaults()


def _interfaces_built() -> str | None:
    try:
        import rclpy  # noqa: F401

        import affplan_ros.msg  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return None


def pytest_collection_modifyitems(config, items):
    problem = _interfaces_built()
    if problem is None:
        return
    # `make test` sets AFFPLAN_REQUIRE_ROS=1: there a missing build is a failure, not a skip.
    if os.environ.get("AFFPLAN_REQUIRE_ROS") == "1":
        raise pytest.UsageError(f"ROS 2 interfaces are required but not importable: {problem}")
    skip = pytest.mark.skip(reason=f"ROS 2 / affplan_ros interfaces not available ({problem}); run `make setup`")
    for item in items:
        if "ros" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The original AutoGPT+P data; tests that need it skip on machines without ../shared."""
    from affplan_ros.env import shared_data_dir

    found = shared_data_dir()
    if found is None:
        pytest.skip("../shared/datasets (original AutoGPT+P data) is absent on this machine")
    return found


@pytest.fixture(autouse=True, scope="module")
def _ros_domain_per_module(request):
    """A ROS domain per test module (0-101 are the ids safe on Linux): nodes a failed module
    left behind, or its latched topics, are never seen by the next module's nodes."""
    name = request.module.__name__
    domain = _module_domains.setdefault(name, 1 + (_FIRST_DOMAIN + 37 * len(_module_domains)) % 101)
    before = os.environ["ROS_DOMAIN_ID"]
    os.environ["ROS_DOMAIN_ID"] = str(domain)
    yield domain
    os.environ["ROS_DOMAIN_ID"] = before

