"""Start-up environment: defaults written by ``make setup`` into ``.venv/affplan.env``.

``affplan`` and the node executables call :func:`load_env` first, so nothing has to be
sourced by hand.  Variables already set in the environment win over the file.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_FILE_NAME = "affplan.env"


def env_file() -> Path:
    return Path(sys.prefix) / ENV_FILE_NAME


def load_env(path: Path | None = None) -> dict[str, str]:
    """Apply ``KEY=VALUE`` lines of the env file as defaults; return what was applied."""
    path = path or env_file()
    applied: dict[str, str] = {}
    if not path.is_file():
        return applied
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key, value = key.strip(), value.strip()
        if key and key not in os.environ:
            os.environ[key] = value
            applied[key] = value
    return applied


def repo_root() -> Path:
    """The checkout (source layout) this package runs from."""
    return Path(__file__).resolve().parent.parent


def share_dir() -> Path:
    """Where ``launch/`` and ``config/`` live: the checkout, or share/affplan_ros after colcon."""
    root = repo_root()
    if (root / "config").is_dir():
        return root
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        candidate = Path(prefix) / "share" / "affplan_ros"
        if candidate.is_dir():
            return candidate
    return root


def config_file(relative: str, override: str = "") -> Path:
    """``override`` if given (a parameter or option), else ``config/<relative>`` of the package."""
    return Path(override) if override else share_dir() / "config" / relative


def shared_data_dir() -> Path | None:
    """The original AutoGPT+P data (``../shared/datasets``) if this machine has it."""
    configured = os.environ.get("AFFPLAN_SHARED")
    candidates = [Path(configured)] if configured else []
    candidates.append(repo_root().parent / "shared")
    for candidate in candidates:
        if (candidate / "datasets").is_dir():
            return candidate / "datasets"
    return None


# The Fast DDS profile the nodes and clients use unless the user names one (FASTDDS_DEFAULT_
# PROFILES_FILE). A service server answers only once it has matched the client's response
# reader, and waits for that no longer than the response writer's max_blocking_time: 100 ms by
# default. A server that just started, or a client that just started, on a loaded computer, is
# matched later, and the answer was dropped ("client will not receive response"): the caller
# then waited out its whole timeout (CI, November 2026: a restarted planning node's plan lost).
# The profile lets the writer wait up to 5 s (ros2/rmw_fastrtps#704 made it configurable).
FASTDDS_PROFILE = "fastdds_profiles.xml"


def dds_defaults() -> None:
    """Suite and clients meet on this machine, and servers wait for a client they have not yet
    matched, unless the user configured otherwise. Before rclpy.init (Fast DDS reads its
    profile when the first participant is made)."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    rmw = os.environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
    named = any(os.environ.get(k) for k in ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE"))
    if rmw.startswith("rmw_fastrtps") and not named:
        os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = str(config_file(FASTDDS_PROFILE))
