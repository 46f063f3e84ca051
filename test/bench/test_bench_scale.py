"""`affplan bench scale` on tiny scenes: files, JSON structure, pruned == unpruned costs."""
import argparse
import json

import pytest

from affplan_ros.bench import scale


@pytest.mark.slow
def test_scale_tiny_run(tmp_path):
    parser = argparse.ArgumentParser()
    scale.configure(parser)
    args = parser.parse_args(["--objects", "10,20", "--repeats", "1", "--out", str(tmp_path)])
    assert scale.run(args) == 0
    for name in ("results.json", "summary.md", "scale.png"):
        assert (tmp_path / name).stat().st_size > 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["benchmark"] == "scale" and data["all_costs_agree"] is True
    assert [e["requested"] for e in data["sizes"]] == [10, 20]
    for entry in data["sizes"]:
        for variant in ("pruned", "unpruned"):
            v = entry[variant]
            assert {"total_s", "planner_s", "translate_s", "search_s", "operators", "timeouts", "solved"} <= set(v)
            assert v["solved"] == v["goals"] == len(scale.GOAL_KINDS)
        assert entry["costs_differ"] == 0 and entry["costs_agree"] == len(scale.GOAL_KINDS)
    kinds = {r["goal_kind"] for r in data["runs"]}
    assert kinds == set(scale.GOAL_KINDS)
    for r in data["runs"]:
        assert r["pruned"]["cost"] == r["unpruned"]["cost"] is not None
        assert r["pruned"]["objects_used"] <= r["unpruned"]["objects_used"]
        for v in (r["pruned"], r["unpruned"]):  # proven optimal: the bound is the cost
            assert v["optimal"] and v["lower_bound"] == v["cost"]
    assert "| objects |" in (tmp_path / "summary.md").read_text()


def test_household_scene_is_deterministic_and_sized():
    a, b = scale.household_scene(70, seed=3), scale.household_scene(70, seed=3)
    assert a.objects == b.objects and a.relations == b.relations and a.locations == b.locations
    assert len(a.objects) == 70
    classes = {o.class_name for o in a.objects.values()}
    assert {"human", "robot", "table", "refrigerator", "cup", "water", "kitchen_knife"} <= classes
    assert scale.household_scene(70, seed=4).relations != a.relations


def test_scale_prompts_and_pruned_only(tmp_path):
    parser = argparse.ArgumentParser()
    scale.configure(parser)
    args = parser.parse_args(["--objects", "10,35", "--repeats", "1", "--goals", "chop", "--no-unpruned",
                              "--prompts", "--out", str(tmp_path)])
    assert scale.run(args) == 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert all(r["unpruned"]["status"] == "not_run" for r in data["runs"])
    small, ref = (e["prompts"] for e in data["sizes"])
    assert set(small["requests"]) == {"bring", "place", "clear", "thirsty", "hungry"}
    # A home within the prompt budget is listed whole: the bigger one costs more tokens.
    assert ref["requests"]["bring"]["goal"] > small["requests"]["bring"]["goal"]
    assert data["prompt_ratios"]["largest"]["objects"] == 35
    assert data["prompt_ratios"]["by_size"]["35"]["bring"]["goal"] == 1.0
    # recovery's prompts are counted too, and grow with the home while it is listed whole
    assert {"replan", "lasp_cause"} <= set(data["prompt_ratios"]["by_size"]["35"]["bring"])
    assert ref["requests"]["bring"]["replan"] > ref["requests"]["bring"]["goal"]
    assert ref["requests"]["bring"]["lasp_cause"] > small["requests"]["bring"]["lasp_cause"]
    assert ref["memory"]["merge_s"] is not None and ref["memory"]["objects"] == 35
    text = (tmp_path / "summary.md").read_text()
    assert "Prompt tokens" in text and "merge one location" in text
    assert (tmp_path / "scale_prompts.png").stat().st_size > 0


def test_padding_adds_distractors_and_changes_nothing_of_the_scene():
    from affplan_ros.bench.padding import pad_scene

    base = scale.household_scene(35)
    padded = pad_scene(base, 300, seed=1)
    assert len(padded.objects) == len(base.objects) + 300
    assert set(base.relations) <= set(padded.relations)
    new = set(padded.objects) - set(base.objects)
    for r in padded.relations:
        if r not in base.relations:     # a distractor on or in a new place, nothing else
            assert r.predicate in ("on", "in") and set(r.args) <= new
    assert not any(padded.objects[n].is_agent for n in new)
    assert set(base.locations) < set(padded.locations) and len(padded.locations) - len(base.locations) == 30
    assert pad_scene(base, 300, seed=1).relations == padded.relations


def test_a_negative_pad_is_refused_with_a_clear_error(tmp_path, capsys):
    from affplan_ros.cli import main

    for bench in (["plan"], ["autogptp", "--llm", "offline"]):
        assert main(["bench", *bench, "--pad", "-3", "--out", str(tmp_path)]) == 2
        assert "--pad -3: a number of objects >= 0" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
