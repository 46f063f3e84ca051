"""`affplan bench physics` on a few AutoGPT+P cases: the files and fields it writes."""
from __future__ import annotations

import json

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import pytest

from affplan_ros.bench.frame import BENCHMARKS


def test_physics_benchmark_is_registered():
    assert any(b.name == "physics" and b.module == "affplan_ros.bench.physics" for b in BENCHMARKS)


def test_every_skill_failure_code_has_a_meaning_in_the_summary():
    from affplan_ros.bench.physics import CAUSES
    from affplan_ros.core.model.failure import Cause

    assert {c.value for c in Cause} - CAUSES.keys() == set()


def _bench(shared_datasets, out, cases, *options) -> dict:
    """`affplan bench physics` on these simple_task cases, one at a time; its results.json."""
    from affplan_ros.cli import main

    data = shared_datasets / "autogpt_p" / "autogpt_p" / "data"
    picked = [arg for i in cases for arg in ("--case", f"simple_task#{i}")]
    code = main(["bench", "physics", "--data", str(data), "--set", "simple_task", *picked, *options, "--jobs", "1",
                 "--out", str(out)])
    assert code == 0
    return json.loads((out / "results.json").read_text())


@pytest.mark.shared
def test_bench_physics_writes_results_summary_and_plot(shared_datasets, tmp_path):
    # #9: open the fridge, take the tomato out of the bowl, put it in the fridge (succeeds);
    # #28: clear the counter (a physical failure on the way: a tissue that does not drop into the
    # box, the watering can knocked by the knife carried past it; must fail, not pretend); #16:
    # one move.
    out = tmp_path / "physics"
    report = _bench(shared_datasets, out, [9, 28, 16])
    cases = {c["index"]: c for c in report["cases"]}
    assert set(cases) == {9, 16, 28}
    for c in cases.values():
        for key in ("success", "failed_step", "cause", "steps_executed", "sim_seconds", "wall_seconds",
                    "real_time_factor", "plan"):
            assert key in c, key
    ok = cases[9]
    assert ok["success"] and ok["goal_holds"] and ok["steps_executed"] == ok["steps"] >= 4
    assert ok["sim_seconds"] > 10 and ok["real_time_factor"] > 5
    can = cases[28]
    assert not can["success"] and can["cause"] in ("slipped", "not_found", "blocked", "too_large")
    assert can["failed_step"] and can["failure"]["why"]
    assert cases[16]["success"] and cases[16]["steps_executed"] == 1
    totals = report["totals"]
    assert totals["cases"] == 3 and totals["success"] == 2 and totals["causes"] == {can["cause"]: 1}
    assert totals["median_rtf"] > 5
    summary = (out / "summary.md").read_text()
    assert "2/3" in summary and f"| {can['cause']} | 1 |" in summary and "Median real-time factor" in summary
    assert (out / "physics_bench.png").stat().st_size > 1000


@pytest.mark.shared
@pytest.mark.ros
@pytest.mark.slow
def test_the_robot_stack_carries_out_plans_judged_by_the_same_physics(shared_datasets, tmp_path):
    """--stack robot: the robot's own software (robot_skills, executor) on the simulated Tiago++'s
    hardware, poses from the referee; the goal judged from the physics state as for --stack sim.
    #16 walks to the refrigerator: the base's standing place in front of it comes from its box,
    Nav2 drives there, and the physics says the robot is at it.
    (Grasps and put-downs on the hardware: test/robots/test_builtin_arm.py, test_tiago_sim.py.)"""
    out = tmp_path / "robot"
    report = _bench(shared_datasets, out, [16], "--stack", "robot")
    assert report["worker"]["stack"] == "robot" and report["worker"]["poses"] == "oracle"
    cases = {c["index"]: c for c in report["cases"]}
    for c in cases.values():
        assert c["success"] and c["goal_holds"] and c["steps_executed"] == c["steps"] == 1, \
            (c["index"], c["cause"], c["failure"], c["notes"])
        assert c["sim_seconds"] > 1 and c["real_time_factor"] > 1
    assert "robot's own software" in (out / "summary.md").read_text()
