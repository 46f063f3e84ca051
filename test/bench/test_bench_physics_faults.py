"""`affplan bench physics --faults` (bench/physics_faults.py): faults fire, are seen, and are reported."""
from __future__ import annotations

import json

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import pytest

from affplan_ros.bench import physics_faults as pf
from affplan_ros.bench.frame import BenchSetupError, save


def test_the_task_file_is_checked(tmp_path):
    assert {t["name"] for t in pf.load_tasks(pf.DEFAULT_TASKS)} >= {"fetch_apple", "cup_to_table"}
    bad = tmp_path / "tasks.yaml"
    bad.write_text("tasks:\n  - {name: x, scene: kitchen.txt, task: t, goal: (on cup0 table0), faults: [melted]}\n")
    with pytest.raises(BenchSetupError, match="unknown fault kind.*melted"):
        pf.load_tasks(bad)
    bad.write_text("tasks:\n  - {name: x, scene: kitchen.txt}\n")
    with pytest.raises(BenchSetupError, match="lacks task, goal, faults"):
        pf.load_tasks(bad)


def test_a_run_with_and_without_a_fault_is_measured_and_reported(tmp_path):
    task = {"name": "hand_knife", "scene": "kitchen.txt", "task": "hand me the knife",
            "goal": "(inhand kitchen_knife0 human0)", "faults": ["removed"]}
    base = pf.run_one(task, None, 0)
    assert base["error"] is None and base["completed"] and base["sim_seconds"] > 5
    assert "handover kitchen_knife0" in " ".join(base["executed"]).replace("human0 ", "")
    faulted = pf.run_one(task, "removed", 1, baseline=base)
    assert faulted["error"] is None and faulted["fired"] == "kitchen_knife0 taken out of the room"
    assert faulted["detected"] and not faulted["completed"] and faulted["extra_wall_seconds"] is None
    report = pf.build_report([base, faulted], [1], 1.0)
    stats = report["kinds"]["removed"]
    assert (stats["runs"], stats["fired"], stats["detected"], stats["completed"]) == (1, 1, 1, 0)
    files = save(tmp_path, report, pf.summary_markdown(report),
                 plot=("physics_faults.png", lambda p: pf.write_plot(report, p)))
    assert json.loads(files[0].read_text())["kinds"]["removed"]["fired"] == 1
    summary = files[1].read_text()
    assert "| removed | 1 | 1 | 1/1" in summary and "taken out of the room" in summary
    assert files[2].stat().st_size > 5000
