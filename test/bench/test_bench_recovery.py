"""`affplan bench recovery` with the shipped right-answering script: every LASP and CoPAL case
succeeds; the hands-full and closed-container cases need high-level replans without the mid
level and none with it; learned knowledge prevents the failure on a second run."""
from __future__ import annotations

import json

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
