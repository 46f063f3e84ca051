"""`affplan bench scale` on tiny scenes: files, JSON structure, pruned == unpruned costs."""
import argparse
import json

from affplan_ros.bench import scale


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
    assert "| objects |" in (tmp_path / "summary.md").read_text()


def test_household_scene_is_deterministic_and_sized():
    a, b = scale.household_scene(70, seed=3), scale.household_scene(70, seed=3)
    assert a.objects == b.objects and a.relations == b.relations and a.locations == b.locations
    assert len(a.objects) == 70
    classes = {o.class_name for o in a.objects.values()}
    assert {"human", "robot", "table", "refrigerator", "cup", "water", "kitchen_knife"} <= classes
    assert scale.household_scene(70, seed=4).relations != a.relations
