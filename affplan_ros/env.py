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
