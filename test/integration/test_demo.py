"""`affplan demo` (what `make demo` runs) completes the sample task and says what answered."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.ros


def run_demo(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "affplan_ros.cli", "demo", *args], capture_output=True, text=True,
                          timeout=240, env={**os.environ, **(env or {})})


def test_demo_runs_the_sample_task_end_to_end():
    done = run_demo(env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "SCRIPTED language backend" in out            # never pretends to be an LLM
    assert "rejected (syntax)" in out and "apple" in out  # the deliberate mistake is caught ...
    assert "accepted (and (inhand apple0 human0))" in out  # ... and corrected
    assert "5 steps, cost 5" in out
    assert out.count("succeeded:") == 5
    assert "SUCCESS: all 5 steps succeeded" in out


def test_demo_declines_unknown_task_without_an_endpoint():
    done = run_demo("--task", "make me a sandwich", env={"AFFPLAN_LLM_BASE_URL": ""})
    assert done.returncode == 2
    assert "scripted backend only knows the sample task" in done.stdout
    assert "AFFPLAN_LLM_BASE_URL" in done.stdout
