"""The random homes of `bench physics --generated` (bench/generated.py): the same seed gives the
same homes and tasks, every capability is drawn as often, each scene parses and names what its
task needs, and the benchmark reports its results by capability."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from affplan_ros.bench.generated import CAPABILITIES, generated_cases
from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.core.knowledge.objects import load_object_table


@pytest.fixture(scope="module")
def homes():
    return generated_cases(2 * len(CAPABILITIES), 7, load_object_table(), load_oam())


def test_the_same_seed_gives_the_same_homes_and_another_seed_others(homes):
    again = generated_cases(2 * len(CAPABILITIES), 7, load_object_table(), load_oam())
    assert [(c.task, c.scene_text) for c in again] == [(c.task, c.scene_text) for c in homes]
    other = generated_cases(2 * len(CAPABILITIES), 8, load_object_table(), load_oam())
    assert [c.scene_text for c in other] != [c.scene_text for c in homes]


def test_every_capability_is_drawn_as_often_in_kitchens_and_offices(homes):
    assert Counter(c.capability for c in homes) == {c: 2 for c in CAPABILITIES}
    assert {c.room for c in homes} == {"kitchen", "office"}
    with pytest.raises(ValueError, match="--generated 0"):
        generated_cases(0, 7, load_object_table(), load_oam())


def test_each_scene_parses_and_holds_what_its_task_needs(homes):
    for case in homes:
        parse_scene_text(case.scene_text)
        text = case.scene_text
        goal_names = case.desired_goal.replace("(", " ").replace(")", " ").split()[2:]
        for name in goal_names:
            cls, index = name.rstrip("0123456789"), name[len(name.rstrip("0123456789")):]
            assert f"\n{cls}:{index}\n" in text, (case.task, name)
        if case.capability == "chop":
            assert "kitchen_knife:" in text and ("cutting_board:" in text or "plate:" in text), case.task
        if case.capability in ("pour", "wipe"):
            assert "liquid_in water:0 bottle:" in text, case.task
        if case.capability == "bring":
            assert "at human:0" in text


@pytest.mark.shared
def test_bench_physics_generated_reports_by_capability(shared_datasets, tmp_path):
    from affplan_ros.cli import main

    out = tmp_path / "generated"
    data = shared_datasets / "autogpt_p" / "autogpt_p" / "data"
    code = main(["bench", "physics", "--data", str(data), "--generated", "3", "--seed", "1",
                 "--case", "generated#0", "--case", "generated#2", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "results.json").read_text())
    assert [c["index"] for c in report["cases"]] == [0, 2]
    assert set(report["capabilities"]) == {CAPABILITIES[0], CAPABILITIES[2]}
    for c in report["cases"]:
        assert (out / "scenes" / c["scene_file"]).is_file() and c["capability"] in CAPABILITIES
    assert "## By capability" in (out / "summary.md").read_text()
