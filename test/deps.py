"""What the tests may skip for: only what `make setup` was told to leave out."""
from __future__ import annotations

import importlib
import os

import pytest


def require_optional(module: str, reason: str):
    """Import ``module``, which `make setup` installs unless told not to (AFFPLAN_PERCEPTION=0):
    a skip only where it was left out on purpose, a failure where it should be there."""
    if os.environ.get("AFFPLAN_PERCEPTION") == "0":
        return pytest.importorskip(module, reason=reason)
    return importlib.import_module(module)
