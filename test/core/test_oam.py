import pytest

from affplan_ros.core.affordances import load_affordances
from affplan_ros.core.oam import OamDatabase, UnknownClassError, load_oam, save_oam

from _oracle import autogpt_dir


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
