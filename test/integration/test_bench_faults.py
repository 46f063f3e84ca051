"""``affplan bench faults`` on a few tasks: nodes killed before and during every task, malformed
input, old observations delivered late; nothing hangs, memory and learned knowledge lose
nothing, every failure names its cause, and the results are written."""
from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_faults_lose_nothing_and_hang_nothing(tmp_path):
    from affplan_ros.bench.faults import FaultBench, write_report

    report = FaultBench(tmp_path, tasks=3, seed=4, kill_rate=1.0, task_timeout=120.0, time_scale=0.1).run()
    write_report(tmp_path, report)
    t = report["totals"]
    assert t["tasks"] == 3 and t["hung"] == 0, report["tasks"]
    assert t["facts_lost"] == 0, [f for f in report["faults"] if f["facts_lost"]]
    assert t["facts_gained_by_a_fault"] == 0, [f for f in report["faults"] if f["facts_gained"]]
    assert t["knowledge_lost"] == 0 and t["knowledge_entries_after"] == t["knowledge_entries_before"] == 2
    assert t["died_unasked"] == 0, report["died_unasked"]
    assert t["unexplained_failures"] == 0 and all(x["message"] for x in report["tasks"] if x["outcome"] == "failed")
    assert t["kills"] >= 4 and t["kills_during_tasks"] >= 1 and t["recovery_max_s"] < 30
    assert t["completed"] >= 1
    assert json.loads((tmp_path / "results.json").read_text())["totals"] == t
    assert "| tasks hung | **0** |" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "faults.png").stat().st_size > 1000
