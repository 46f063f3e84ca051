"""`affplan up` / `affplan memory` / `affplan ask` as a person uses them, in processes of their own."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def affplan(*args: str, env: dict, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "affplan_ros.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=kw.pop("timeout", 60), **kw)


@pytest.mark.parametrize("single", [False, True], ids=["separate_processes", "single_process"])
def test_up_reports_ready_serves_and_stops_on_ctrl_c(single):
    env = {**os.environ, "AFFPLAN_LLM_BASE_URL": ""}   # the module's own ROS domain (conftest)
    up = subprocess.Popen([sys.executable, "-m", "affplan_ros.cli", "up", "--quiet",
                           *(["--single-process"] if single else [])],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = up.stdout.readline()
            lines.append(line)
            if "suite ready in" in line or not line:
                break
        how = "in one process" if single else "separate processes: sim_world"
        ready = re.search(rf"suite ready in ([\d.]+) s \(5 nodes, {how}", "".join(lines))
        assert ready, "".join(lines)
        assert "offline instruction interpreter" in lines[0] and "AFFPLAN_LLM_BASE_URL" in "".join(lines)
        pids = [int(p) for p in
                subprocess.run(["pgrep", "-P", str(up.pid)], capture_output=True, text=True).stdout.split()]
        assert len(pids) == (1 if single else 5)

        shown = affplan("memory", "--json", env=env)
        assert shown.returncode == 0, shown.stderr
        memory = json.loads(shown.stdout)
        assert {l["name"]: l["explored"] for l in memory["locations"]} == {
            "table0": True, "counter0": True, "refrigerator0": False}

        up.send_signal(signal.SIGINT)                    # Ctrl-C
        out, _ = up.communicate(timeout=30)
        assert up.returncode == 0 and "suite stopped" in out and "exit codes" not in out
        assert not [p for p in pids if os.path.exists(f"/proc/{p}")]
    finally:
        if up.poll() is None:
            up.kill()


def test_ask_and_memory_say_clearly_when_no_suite_runs():
    env = {}   # the module's own ROS domain, where no suite runs any more
    asked = affplan("ask", "bring me a cup", env=env)
    assert asked.returncode == 2 and "no suite answers at /affplan/execute_task" in asked.stdout
    assert "affplan up" in asked.stdout
    shown = affplan("memory", env=env)
    assert shown.returncode == 2 and "is the suite running" in shown.stderr
