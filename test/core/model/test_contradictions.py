"""Scene files that say two things which cannot both hold, and which failures they explain."""
from __future__ import annotations

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.model.contradictions import contradictions


def scene(*relations: str):
    objects = ["desk:0", "table:0", "counter:0", "bowl:0", "banana:0", "door:0", "robot:0"]
    return parse_scene_text("\n".join(["OBJECTS", *objects, "END-OBJECTS", "RELATIONS", *relations,
                                       "END-RELATIONS", "LOCATIONS", "table0 table:0", "END-LOCATIONS"]))


def test_a_door_opened_and_closed_and_a_bowl_in_two_places_clash():
    found = contradictions(scene("opened door:0", "closed door:0", "on bowl:0 desk:0", "on bowl:0 table:0",
                                 "on banana:0 counter:0"))
    assert [str(c) for c in found] == ["(opened door0) and (closed door0)", "(on bowl0 desk0) and (on bowl0 table0)"]
    door, bowl = found
    # Only a failure that rests on the clash is the data's.
    assert door.behind(goal_atoms=(("closed", "door0"),)) and door.behind(("close", "robot0", "door0", "door0"))
    assert not door.behind(("grasp", "robot0", "bowl0", "desk0", "desk0"))
    assert not door.behind(("place", "robot0", "bowl0", "door0", "door0"))   # not about opened/closed
    assert bowl.behind(("grasp", "robot0", "bowl0", "desk0", "desk0"))
    assert not bowl.behind(goal_atoms=(("clean", "bowl0"),))


def test_resting_in_something_that_stands_on_a_place_is_no_clash():
    assert contradictions(scene("in banana:0 bowl:0", "on banana:0 counter:0", "on bowl:0 counter:0")) == []
    clash = contradictions(scene("in banana:0 bowl:0", "on banana:0 counter:0", "on bowl:0 table:0"))
    assert [str(c) for c in clash] == ["(in banana0 bowl0) and (on banana0 counter0)"]
