"""Issue 17.4 through the ROS graph: `bench recovery --set lasp --through suite` runs a numeric
case (too heavy to lift) and a property case (microwave-safe) through the running node suite:
each suite learns over ExecuteTask, a restarted suite on the same knowledge file plans with it
and never fails."""
from __future__ import annotations

import json

import pytest
from _recovery import ANSWERS

from affplan_ros.cli import main

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_numeric_and_property_cases_learn_in_the_suite_and_survive_its_restart(tmp_path) -> None:
    out = tmp_path / "suite"
    rc = main(["bench", "recovery", "--set", "lasp", "--through", "suite", "--case", "lasp_serve_fruit_3",
               "--case", "lasp_heat_milk_3", "--llm", f"scripted:{ANSWERS}", "--out", str(out)])
    assert rc == 0
    report = json.loads((out / "results.json").read_text())
    rows = {r["scenario"]: r for r in report["cases"]}
    assert set(rows) == {"lasp_serve_fruit_3", "lasp_heat_milk_3"} and all(r["via"] == "suite" for r in rows.values())
    for sid, learned in (("lasp_serve_fruit_3", "grasp requires (<= (mass ?object) (lift_capacity ?actor))"),
                         ("lasp_heat_milk_3", "heat_liquid requires (microwavable ?container)")):
        r = rows[sid]
        assert r["success"] and learned in r["learned"], (sid, r["stop_message"], r["suite"]["transcript"])
        assert r["suite"]["failures"] == 1                                   # failed once, then learned
        rep = r["repeat"]
        assert rep["success"] and rep["failures"] == 0 and rep["learned"] == [], (sid, rep)
    assert "apple0" in " ".join(rows["lasp_serve_fruit_3"]["repeat"]["plans"][0])
    assert "bowl0" in " ".join(rows["lasp_heat_milk_3"]["repeat"]["plans"][0])
    kept = json.loads((out / "suite" / "lasp_heat_milk_3" / "knowledge.json").read_text())
    assert [(p["name"], p["source"]) for p in kept["properties"]] == [("microwavable", "microwave_safe")]
    summary = (out / "summary.md").read_text()
    assert "LASP cases through the node suite (2/2 succeeded" in summary


def test_objects_elsewhere_are_found_by_exploring_and_the_restart_stays_within_a_few_llm_calls(tmp_path) -> None:
    """The two cases whose object is not where the robot looks: the sandwich's plate is in the
    cupboard (LASP keeps the refinement, the loop explores and finds it), and after a restart
    the memory lacks the milk's bowl (no plan reaches the goal: the goal loop stops at the
    repeated goal, the tool loop looks where the robot stands instead of planning again)."""
    out = tmp_path / "suite"
    rc = main(["bench", "recovery", "--set", "lasp", "--through", "suite", "--case", "lasp_heat_sandwich_2",
               "--case", "lasp_heat_milk_2", "--llm", f"scripted:{ANSWERS}", "--out", str(out)])
    assert rc == 0
    rows = {r["scenario"]: r for r in json.loads((out / "results.json").read_text())["cases"]}
    sandwich, milk = rows["lasp_heat_sandwich_2"], rows["lasp_heat_milk_2"]
    assert sandwich["success"], (sandwich["stop_message"], sandwich["suite"]["transcript"])
    assert "heat_food requires (microwavable ?plate)" in sandwich["learned"]
    said = sandwich["suite"]["transcript"]
    assert any(m.startswith("round ") and "EXPLORE cupboard0" in m for m in said), said
    assert any("looked at cupboard0 instead" in m and "plate0" in m for m in said), said
    assert "plate0" in " ".join(sandwich["executed"])
    for sid, r in rows.items():
        rep = r["repeat"]
        assert rep["success"] and rep["failures"] == 0 and rep["llm_calls"] <= 10, (sid, rep)
    assert "bowl0" in " ".join(milk["repeat"]["plans"][0])
