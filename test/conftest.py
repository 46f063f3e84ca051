"""Shared pytest fixtures: ROS 2 isolation, child processes, the optional ../shared data, and
where the time of a run went (the slowest modules, after pytest's slowest tests)."""
from __future__ import annotations

import atexit
import itertools
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import pytest
from domain_coordinator import domain_id as claim_domain

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Every DDS participant in the tests stays on this machine and in a domain of its own, so two
# test runs, two pytest-xdist workers or a running suite on one machine never see each other.
# A domain is claimed through ros2's domain_coordinator (a port held while the domain is in use),
# which is what makes a domain unique across processes; ids are taken in a stride that starts
# at a different place in each process, so a module does not get the domain the module before
# it just left (nodes a failed module left behind, or its latched topics, are never seen).
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
_claims = ExitStack()
_stride = itertools.count(os.getpid() % 100)


def _next_domain() -> int:
    return 1 + (37 * next(_stride)) % 100   # 37 and 100 are coprime: every id 1-100 in turn


# The session's domain, for anything outside a module; held until the process ends.
os.environ["ROS_DOMAIN_ID"] = str(_claims.enter_context(claim_domain(_next_domain)))
# Files a worker writes are its own: pytest's tmp_path is per worker already; the detector's
# settings are written on first use.
os.environ["YOLO_CONFIG_DIR"] = tempfile.mkdtemp(prefix="affplan_yolo_")
atexit.register(shutil.rmtree, os.environ["YOLO_CONFIG_DIR"], True)
# MuJoCo renders offscreen through EGL; it reads this when first imported, which a test module may
# do before the package's sim/physics/__init__.py sets it.
os.environ.setdefault("MUJOCO_GL", "egl")
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


def _module_rank(items) -> dict[str, int]:
    """0 for a module with a slow test, 1 for one that starts ROS nodes, 2 for the rest."""
    rank: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        mine = 0 if "slow" in item.keywords else 1 if "ros" in item.keywords else 2
        rank[module] = min(rank.get(module, 2), mine)
    return rank


def pytest_collection_modifyitems(config, items):
    # The slow modules start first: with pytest-xdist (make test), a long module left to the end
    # would run alone while the other workers wait. The order within a module is kept.
    rank = _module_rank(items)
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])
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
def _ros_domain_per_module():
    """A ROS domain per test module (1-100, safe on Linux), claimed for the module's time."""
    before = os.environ["ROS_DOMAIN_ID"]
    with claim_domain(_next_domain) as domain:
        os.environ["ROS_DOMAIN_ID"] = str(domain)
        try:
            yield domain
        finally:
            os.environ["ROS_DOMAIN_ID"] = before


# Where the time goes: every phase of every test, summed per module (with pytest-xdist, the
# reports reach the controller, so this counts all workers).
_module_seconds: dict[str, float] = defaultdict(float)
_run_started = time.monotonic()


def pytest_runtest_logreport(report):
    _module_seconds[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_terminal_summary(terminalreporter, config):
    if not _module_seconds or config.getoption("collectonly"):
        return
    wall = time.monotonic() - _run_started
    ranked = sorted(_module_seconds.items(), key=lambda kv: -kv[1])
    shown = [(m, s) for m, s in ranked if s >= 5.0]
    rest = ranked[len(shown):]
    terminalreporter.write_sep("=", f"time per test module (>= 5 s; {len(_module_seconds)} modules)")
    for module, seconds in shown:
        terminalreporter.write_line(f"{seconds:8.1f} s  {module}")
    terminalreporter.write_line(f"{sum(s for _m, s in rest):8.1f} s  the other {len(rest)} modules")
    terminalreporter.write_line(f"{sum(_module_seconds.values()):8.1f} s  in all tests; {wall:.1f} s of wall time")
