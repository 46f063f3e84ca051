"""`affplan bench recovery` with the shipped right-answering script: every LASP and CoPAL case
succeeds; the hands-full and closed-container cases need high-level replans without the mid
level and none with it; learned knowledge prevents the failure on a second run."""
from __future__ import annotations

import json

import pytest
import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
from _recovery import ANSWERS

from affplan_ros.cli import main

REPAIRABLE = ["copal_kitchen_hands_full", "copal_barman_hands_full", "copal_kitchen_closed_fridge",
              "copal_barman_closed_bottle"]


def bench(tmp_path, name: str, *extra: str) -> dict:
    out = tmp_path / name
    rc = main(["bench", "recovery", "--llm", f"scripted:{ANSWERS}", "--out", str(out), "--jobs", "1", *extra])
    assert rc == 0
    assert (out / "summary.md").is_file() and (out / "recovery_bench.png").stat().st_size > 10_000
    return json.loads((out / "results.json").read_text())


@pytest.mark.slow
def test_every_case_succeeds_with_the_right_answers(tmp_path) -> None:
    report = bench(tmp_path, "all", "--set", "all", "--feedback", "how", "--repair", "on")
    cases = report["cases"]
    assert len([c for c in cases if c["set"] == "lasp"]) == 11
    failed = [(c["id"], c["stop_message"]) for c in cases if not c["success"]]
    assert failed == []
    for c in cases:
        if c["set"] == "lasp":
            assert c["refinements"] >= 1 and c["learned"], c["id"]
            assert c["repeat"]["success"] and c["repeat"]["failures"] == 0, c["id"]   # learned: no repeat
        if c["scenario"] in REPAIRABLE:
            assert c["mid_replans"] >= 1 and c["high_replans"] == 0, c["id"]
    summary = (tmp_path / "all" / "summary.md").read_text()
    assert "LASP Table II" in summary and "LASP Table III" in summary and "CoPAL Fig. 3" in summary


def test_without_the_mid_level_the_high_level_replans(tmp_path) -> None:
    args = [x for c in REPAIRABLE for x in ("--case", c)]
    report = bench(tmp_path, "norepair", "--set", "copal", "--feedback", "why", "--repair", "off", *args)
    assert all(c["success"] and c["high_replans"] >= 1 and c["mid_replans"] == 0 for c in report["cases"])
    assert report["configs"]["why/norepair"]["success"] == 4
    # (feedback "what" without repair ends at the replan bound: test_recovery_loop.py)


def test_bad_options_are_refused(tmp_path, capsys) -> None:
    assert main(["bench", "recovery", "--llm", f"scripted:{ANSWERS}", "--feedback", "loud",
                 "--out", str(tmp_path)]) == 2
    assert "--feedback 'loud'" in capsys.readouterr().err
    assert main(["bench", "recovery", "--llm", f"scripted:{ANSWERS}", "--case", "nope",
                 "--out", str(tmp_path)]) == 2
    assert "no scenario nope" in capsys.readouterr().err
    assert main(["bench", "recovery", "--llm", "scripted:/no/such.yaml", "--out", str(tmp_path)]) == 2


def test_suite_runs_are_reported_apart_from_the_core_configurations() -> None:
    """--through both: the node suite's rows get their own table and totals; the core
    configurations count only the core runs."""
    from affplan_ros.bench.recovery import build_report, empty_result, summary_markdown

    def row(sid, via, success, repeat=None):
        case = {"id": f"{sid}@{via}", "scenario": sid, "set": "lasp", "family": "f", "title": sid, "task": "t",
                "feedback": "how", "repair": True, "expect": {"missing": ["numeric precondition"]}}
        r = {**empty_result(case), "success": success, "via": via, "learned": ["grasp requires (<= (mass ?object) "
                                                                              "(lift_capacity ?actor))"],
             "llm_calls": 8, "repeat": repeat}
        if via == "suite":
            r["suite"] = {"failures": 1, "start_seconds": 2.0, "task_seconds": 5.0}
        return r

    clean = {"success": True, "failures": 0, "llm_calls": 2, "plans": [["move robot0 table0 counter0"]], "learned": []}
    rows = [row("lasp_serve_fruit_3", "core", True), row("lasp_serve_fruit_3", "suite", True, clean),
            row("lasp_store_food_1", "suite", False)]
    cfg = {"levels": ["how"], "repairs": [True], "sets": ["lasp"], "llm": "x", "scenarios": "s", "through": "both",
           "worker": {"learn": "auto", "grounding": False, "mode": "plan", "max_replans": 5, "max_refinements": 4,
                      "time_limit": 30.0, "max_seconds": 300.0, "repeat": True}, "core_seconds": 1.0,
           "suite_seconds": 30.0}
    report = build_report(rows, cfg, 31.0)
    assert report["configs"]["how/repair"]["cases"] == 1 and report["configs"]["how/repair"]["success"] == 1
    assert report["suite"]["cases"] == 2 and report["suite"]["success"] == 1 and report["suite"]["restart_clean"] == 1
    text = summary_markdown(report)
    assert "LASP cases through the node suite (1/2 succeeded" in text
    assert "| lasp_serve_fruit_3 | numeric precondition | yes |" in text
    assert "**lasp_store_food_1@suite**" in text            # listed among the runs that did not reach the goal


def test_through_the_suite_needs_the_scripted_answers_and_lasp_cases(tmp_path, capsys) -> None:
    assert main(["bench", "recovery", "--llm", "endpoint", "--through", "suite", "--set", "lasp",
                 "--out", str(tmp_path)]) == 2
    assert "--through suite needs --llm scripted" in capsys.readouterr().err
    assert main(["bench", "recovery", "--llm", f"scripted:{ANSWERS}", "--through", "suite", "--set", "copal",
                 "--out", str(tmp_path)]) == 2
    assert "runs the LASP cases" in capsys.readouterr().err
