import pytest
from _oracle import autogpt_dir

from affplan_ros.core.files.scene_io import (
    SceneFormatError,
    load_scene,
    parse_scene_text,
    read_scenarios,
)

SCENE = """SCENE-DESCRIPTION
OBJECTS
human:0
table:0
counter:0
cup:0
apple:0
END-OBJECTS
RELATIONS
on cup:0 table:0
on apple:0 counter:0
on spoon:0 counter:0
at robot:0 table:0
at human:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 cup:0
counter0 counter:0 apple:0 spoon:0
END-LOCATIONS
"""


def test_synthetic_scene(tmp_path):
    path = tmp_path / "kitchen.txt"
    path.write_text(SCENE)
    scene = load_scene(path)
    assert {"cup0", "table0", "apple0", "robot0", "human0", "spoon0"} <= set(scene.objects)
    assert scene.agents == ["human0", "robot0"]
    assert scene.location_of("cup0") == "table0"
    assert scene.location_of("robot0") == "table0"
    # spoon:0 is used but never declared: a warning naming file and line, not a crash
    assert any("kitchen.txt:12" in w and "spoon:0" in w for w in scene.warnings)


def test_malformed_scene_names_file(tmp_path):
    path = tmp_path / "junk.txt"
    path.write_text("hello\nworld\n")
    with pytest.raises(SceneFormatError, match="junk.txt:1"):
        load_scene(path)


def test_typos_are_warnings():
    scene = parse_scene_text("OBJECTS\ncup:0\nnot an object\nEND-OBJECT\nRELATIONS\nfoo cup:0\n"
                             "END-RELATIONS\n", "x.txt")
    text = "\n".join(scene.warnings)
    assert "x.txt:3" in text and "x.txt:4" in text and "x.txt:6" in text
    assert "cup0" in scene.objects


def test_scenario_variants(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("task,scene_file,desired_goal,min_costs\nGive me the cup,k.txt,and (inhand cup0 human0),3\n")
    b = tmp_path / "b.csv"
    b.write_text("task,scene_file,explored,substitutions_file,desired_goal,min_tool_calls,min_costs\n"
                 "I want an apple,k.txt,all,apple.csv,or (inhand banana0 human0),2,x\n")
    fa, fb = read_scenarios(a), read_scenarios(b)
    assert fa.variant == "planning" and fa.cases[0].min_costs == 3
    assert fb.variant == "tool_selection" and fb.cases[0].min_tool_calls == 2
    assert fb.cases[0].substitutions_file == "apple.csv" and fb.cases[0].min_costs is None
    assert any("b.csv:2" in w for w in fb.warnings)


def test_all_original_scenes_load():
    base = autogpt_dir() / "autogpt_p" / "data" / "evaluation"
    files = sorted(base.rglob("*.txt"))
    assert len(files) > 100
    warnings = []
    for f in files:
        scene = load_scene(f)  # must never raise
        assert scene.objects, f
        warnings += scene.warnings
    print(f"{len(files)} scene files, {len(warnings)} warnings:")
    print("\n".join(warnings))


def test_all_original_scenarios_load():
    base = autogpt_dir() / "autogpt_p" / "data" / "evaluation" / "scenarios"
    for f in sorted(base.glob("*.csv")):
        try:
            read_scenarios(f)
        except SceneFormatError as exc:  # files of another format (substitution CSVs)
            assert "desired_goal" in str(exc)
