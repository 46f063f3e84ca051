"""PDDL object names: class + instance number, split in one place (core.model.scene)."""
from __future__ import annotations

from affplan_ros.core.model.scene import class_of, object_name, split_name


def test_a_name_splits_into_class_and_instance_and_back():
    for cls, instance in (("cup", 0), ("human", 12), ("plastic_cup", 3), ("n7up", 1), ("a1b", 2)):
        assert split_name(object_name(cls, instance)) == (cls, instance)
        assert class_of(object_name(cls, instance)) == cls


def test_a_name_without_a_number_is_its_own_class():
    assert split_name("counter") is None and class_of("counter") == "counter"
    assert split_name("42") is None and class_of("42") == "42"   # nothing before the number
