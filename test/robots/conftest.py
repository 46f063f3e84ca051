"""Stand-ins of the robot's ROS interfaces that cannot be installed here (nav2_msgs, control_msgs):
the same .action/.msg definitions, built once with rosidl and put on the path of the test
processes only, never of the product. The build is kept in the machine's cache (as make setup
keeps the project's interfaces) under the fingerprint of its sources, the lock of the ROS 2
wheels that generate it and the interpreter: another checkout finds it built."""
from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "fake_interfaces"
PACKAGES = ("nav2_msgs", "control_msgs")


def _fingerprint() -> str:
    digest = hashlib.sha256(sys.version.encode() + (HERE.parent.parent / "requirements" / "lock.txt").read_bytes())
    for path in sorted(SOURCES.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(SOURCES)).encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def _cache() -> Path:
    """Where make setup keeps builds (scripts/setup.sh: AFFPLAN_CACHE, else XDG's cache)."""
    configured = os.environ.get("AFFPLAN_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "affplan_ros"


def _build(package: str, prefix: Path) -> str:
    venv = Path(sys.prefix)
    env = {**os.environ, "CMAKE_PREFIX_PATH": str(venv), "AMENT_PREFIX_PATH": str(venv),
           "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    build = prefix / "build" / package
    steps = [["cmake", "-S", str(SOURCES / package), "-B", str(build), "-DBUILD_TESTING=OFF",
              f"-DCMAKE_INSTALL_PREFIX={prefix}", f"-DPython3_EXECUTABLE={sys.executable}"],
             ["cmake", "--build", str(build), "-j", "1"], ["cmake", "--install", str(build)]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, env=env, timeout=900)
        if done.returncode != 0:
            return f"{' '.join(step[:3])} failed:\n{(done.stdout + done.stderr)[-3000:]}"
    return ""


@pytest.fixture(scope="session")
def fake_robot_interfaces() -> dict[str, str]:
    """Environment for processes that import the stand-in nav2_msgs and control_msgs."""
    prefix = _cache() / "fake_robot_interfaces" / _fingerprint()
    stamp = prefix / "complete"
    prefix.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers (and two test runs) build one at a time; the others then find it built.
    with open(prefix / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.is_file():
            with ThreadPoolExecutor(len(PACKAGES)) as pool:  # first run only: about a minute
                errors = [e for e in pool.map(lambda p: _build(p, prefix), PACKAGES) if e]
            if errors:
                pytest.fail("building the stand-in robot interfaces failed: " + "\n".join(errors))
            stamp.touch()
    site = prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")])),
            "LD_LIBRARY_PATH": os.pathsep.join(filter(None, [str(prefix / "lib"),
                                                             os.environ.get("LD_LIBRARY_PATH", "")]))}
