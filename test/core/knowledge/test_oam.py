import pytest
from _oracle import autogpt_dir

from affplan_ros.core.knowledge.affordances import load_affordances
from affplan_ros.core.knowledge.oam import (
    OamDatabase,
    OamFormatError,
    UnknownClassError,
    load_oam,
    save_oam,
)


def test_default_oam_lookups():
    oam = load_oam()
    assert "cut" in oam.affordances_of("kitchen_knife")
    assert "bowl" in oam.classes_with("liquid-contain")
    assert oam.has("bottle", "open")


def test_unknown_class_error():
    with pytest.raises(UnknownClassError, match="spaceship"):
        load_oam().affordances_of("spaceship")


def test_default_oam_uses_known_affordances():
    names = set(load_affordances().names())
    for cls, affs in load_oam().mapping.items():
        assert affs <= names, (cls, affs - names)


def test_roundtrip(tmp_path):
    oam = OamDatabase({"cup": frozenset({"carry", "contain"})}, "t")
    save_oam(oam, tmp_path / "o.yaml")
    assert load_oam(tmp_path / "o.yaml").mapping == oam.mapping


def test_original_formats():
    base = autogpt_dir()
    oam = load_oam(base / "object_affordance_mapping/data/oam/simulation_classes_2.json")
    assert "support" in oam.affordances_of("table")
    affs = load_affordances(base / "object_affordance_mapping/data/affordances/proposed_affordances.json")
    assert "wet-swipe" in affs and affs.description("cut")


# --- malformed files (issue 13): one clear error naming the file and the entry -----------

@pytest.mark.parametrize("text, says", [
    ("classes:\n  cup: carry\n", "class 'cup': expected a list of affordance names, got str 'carry'; write [carry]"),
    ("classes:\n  cup: [grasp, [carry]]\n", "class 'cup': ['carry'] is not an affordance name"),
    ("classes:\n  cup: [grasp, on]\n", "True is not an affordance name"),      # YAML's on = true
    ("classes:\n  cup: [grasp, carry now]\n", "'carry now' is not an affordance name"),
    ("classes:\n  null: [grasp]\n", "class None is not a name (a NoneType); quote it"),
    ("classes: [cup, plate]\n", "'classes' must map class names to lists of affordances"),
    ("- cup\n- plate\n", "expected a mapping with 'classes'"),
    ("classes:\n  cup: [grasp\n", "not valid YAML"),
    ("classes:\n\tcup: [grasp]\n", "not valid YAML"),
])
def test_malformed_yaml_oam_files_are_refused(tmp_path, text: str, says: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(OamFormatError) as exc:
        load_oam(path)
    assert str(path) in str(exc.value) and says in str(exc.value)
    assert isinstance(exc.value, ValueError)      # what the callers catch


@pytest.mark.parametrize("text, says", [
    ('{"oams": [{"object": "cup", "affordances": [{"name": "grasp"}]}', "not valid JSON"),
    ('{"oams": {"cup": ["grasp"]}}', "'oams' must be a list"),
    ('{"oams": ["cup"]}', "oams[0] must be a mapping with 'object'"),
    ('{"oams": [{"object": "cup", "affordances": "grasp"}]}', "oams[0] (cup): expected a list"),
    ('{"oams": [{"object": "cup", "affordances": [{"label": "grasp"}]}]}', "{'label': 'grasp'} is not an affordance"),
    ('{"oams": [{"object": 7, "affordances": []}]}', "oams[0].object 7 is not a name"),
])
def test_malformed_autogptp_oam_files_are_refused(tmp_path, text: str, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(OamFormatError) as exc:
        load_oam(path)
    assert str(path) in str(exc.value) and says in str(exc.value)


def test_a_file_that_is_not_utf8_is_refused(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"classes:\n  cup: [gr\xe4sp]\n")
    with pytest.raises(OamFormatError, match="bad.yaml"):
        load_oam(path)


def test_loose_but_valid_files_still_load(tmp_path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("name: t\nclasses:\n  cup:\n  7up: [grasp, liquid-contain]\n  Coffee Table: [support]\n",
                    encoding="utf-8")
    oam = load_oam(path)
    assert oam.mapping == {"cup": frozenset(), "7up": frozenset({"grasp", "liquid-contain"}),
                           "Coffee Table": frozenset({"support"})}
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    assert load_oam(empty).mapping == {}
    with pytest.raises(FileNotFoundError):
        load_oam(tmp_path / "missing.yaml")
