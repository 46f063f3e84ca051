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
    assert "AFFPLAN_LLM_BASE_URL" in out                  # and says how to configure a real one
    assert "5 nodes up in" in out and "each its own process" in out
    assert "round 1: EXPLORE refrigerator0" in out        # the apple is hidden in the fridge
    assert "Explored refrigerator0: found apple0" in out
    assert "round 2: PLAN" in out
    assert "goal rejected (syntax)" in out                # the deliberate mistake is caught ...
    assert "goal (and (inhand apple0 human0)); plan of 4 steps, cost 4" in out  # ... and corrected
    assert out.count(" succeeded: ") == 5                 # the explore move + 4 plan steps
    assert "SUCCESS (done)" in out and "2 round(s), 4 LLM call(s)" in out


def test_demo_declines_unknown_task_without_an_endpoint():
    done = run_demo("--task", "make me a sandwich", env={"AFFPLAN_LLM_BASE_URL": ""})
    assert done.returncode == 2
    assert "scripted backend only knows the sample task" in done.stdout
    assert "AFFPLAN_LLM_BASE_URL" in done.stdout
