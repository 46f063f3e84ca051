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
    assert "offline instruction interpreter" in out       # never pretends to be an LLM
    assert "accepted (and (inhand apple0 human0))  (answered by: offline;" in out
    assert "5 steps, cost 5" in out
    assert out.count("succeeded:") == 5
    assert "SUCCESS: all 5 steps succeeded" in out


def test_demo_declines_a_task_the_offline_interpreter_does_not_understand():
    done = run_demo("--task", "make me a sandwich", env={"AFFPLAN_LLM_BASE_URL": ""})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "offline backend declined: I do not know the word" in done.stdout
    assert "nothing was planned or executed" in done.stdout and "AFFPLAN_LLM_BASE_URL" in done.stdout
    assert "step 1/" not in done.stdout
