"""Scenarios: AutoGPT+P scene files and the project's YAML with what the robot has explored."""
from __future__ import annotations

import pytest

from affplan_ros.env import share_dir
from affplan_ros.sim.world_scenario import ScenarioError, load_scenario

CONFIG = share_dir() / "config" / "scenarios"


def test_scene_file_is_all_explored_and_yaml_hides_the_rest():
    txt = load_scenario(CONFIG / "kitchen.txt")
    assert txt.explored is None and txt.hidden == [] and "refrigerator0" in txt.explored_locations()
    yml = load_scenario(CONFIG / "kitchen.yaml")
    assert yml.explored_locations() == ["table0", "counter0"] and yml.hidden == ["apple0"]
    assert set(yml.scene.objects) == set(txt.scene.objects)


def test_inline_yaml_scenario(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("objects: [table:0, cup:0, robot:0]\nrelations: ['on cup:0 table:0', 'at robot:0 table:0']\n"
                    "locations: {table0: [table:0, cup:0]}\n")
    s = load_scenario(path)
    assert set(s.scene.objects) == {"table0", "cup0", "robot0"} and s.explored_locations() == ["table0"]


@pytest.mark.parametrize("text,message", [
    ("scene: kitchen.txt\nexplored: [garage0]\n", "explored locations \\['garage0'\\] are not locations"),
    ("scene: kitchen.txt\nhidden_rules: []\n", "unknown keys \\['hidden_rules'\\]"),
    ("description: nothing\n", "give `scene:`"),
    ("scene: missing.txt\n", "missing.txt"),
    ("- a list\n", "a scenario is a mapping"),
])
def test_malformed_scenarios_are_named(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    (tmp_path / "kitchen.txt").write_text((CONFIG / "kitchen.txt").read_text())
    with pytest.raises(ScenarioError, match=message):
        load_scenario(path)


def test_recovery_scenarios_give_the_world_their_ground_truth():
    path = sorted((CONFIG / "recovery").glob("copal_*.yaml"))[0]
    s = load_scenario(path)
    assert s.scene.objects and s.explored is None and s.hidden == []
