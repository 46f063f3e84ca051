"""MapNamer: an object seen again where it was keeps its name across views; another one of the
same class elsewhere gets a new name; size sets how far a re-seen point may wander."""
from __future__ import annotations

import numpy as np
import pytest

from affplan_ros.core.perception.association import MapNamer
from affplan_ros.core.perception.oad import PerceivedObject

FX = 300.0
LOOK_FORWARD = (np.eye(3), np.zeros(3))   # optical frame = map frame, at the origin


def thing(cls: str, x: float, z: float, width_px: float = 20.0, instance: int = 0, conf: float = 0.9):
    return PerceivedObject(cls, instance, frozenset(), conf, (100.0, 100.0, 100.0 + width_px, 130.0), cls, -1,
                           (x, 0.0, z))


def names(objects) -> list[str]:
    return [o.name for o in objects]


def test_the_same_place_keeps_the_name_across_views_and_another_place_gets_a_new_one():
    namer = MapNamer()
    assert names(namer.name([thing("cup", 0.0, 1.0)], LOOK_FORWARD, FX)) == ["cup0"]
    # The head turned away and back; the 2D tracker would call the cup at another place cup0 too.
    turned = (np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]), np.zeros(3))
    elsewhere = thing("cup", 0.0, 2.0)             # seen straight ahead after the turn: map (2, 0, 0)
    assert names(namer.name([elsewhere], turned, FX)) == ["cup1"]
    again = thing("cup", 0.05, 1.02)               # the first cup, measured a few cm off
    assert names(namer.name([again], LOOK_FORWARD, FX)) == ["cup0"]
    # Two cups in one view are two objects, even next to the one known.
    assert sorted(names(namer.name([thing("cup", 0.0, 1.0), thing("cup", 0.1, 1.0)], LOOK_FORWARD, FX))) == [
        "cup0", "cup2"]


def test_a_large_object_may_be_measured_further_off_than_a_small_one():
    namer = MapNamer(min_reach_m=0.3, size_factor=0.6)
    namer.name([thing("table", 0.0, 2.0, width_px=200.0), thing("apple", 1.0, 2.0)], LOOK_FORWARD, FX)
    # The table is 200 px x 2 m / 300 px = 1.33 m wide: its point may move 0.8 m; an apple's 0.3 m.
    moved = namer.name([thing("table", 0.6, 2.0, width_px=200.0), thing("apple", 1.5, 2.0)], LOOK_FORWARD, FX)
    assert names(moved) == ["table0", "apple1"]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="min_reach_m"):
        MapNamer(min_reach_m=0.0)


def test_two_boxes_of_one_bowl_in_a_frame_give_one_name_and_two_apples_side_by_side_two():
    from dataclasses import replace

    from affplan_ros.core.perception.association import one_per_thing

    # Measured in the fridge of a held-back kitchen: a bowl's rim box and body box (IoU 0.48, so
    # NMS kept both) 2 cm apart in depth; each turned view then named two bowls there.
    rim = replace(thing("bowl", 0.10, 0.80, width_px=80, conf=0.37), box=(225.0, 115.0, 311.0, 193.0))
    body = replace(thing("bowl", 0.11, 0.82, width_px=80, conf=0.64, instance=1), box=(230.0, 146.0, 314.0, 206.0))
    assert names(one_per_thing([rim, body], FX)) == ["bowl1"]          # the surer box stays
    namer = MapNamer()
    assert names(namer.name(one_per_thing([rim, body], FX), LOOK_FORWARD, FX)) == ["bowl0"]
    # Two apples touching (8 cm wide, 8 cm apart; the boxes touch): two things.
    left = replace(thing("apple", 0.00, 0.8, width_px=32), box=(100.0, 100.0, 132.0, 130.0))
    right = replace(thing("apple", 0.08, 0.8, width_px=32, instance=1), box=(130.0, 100.0, 162.0, 130.0))
    assert names(one_per_thing([left, right], FX)) == ["apple0", "apple1"]
    # Another class on the spot is not this rule's (the detector's cross_class_iou is).
    cup = replace(thing("cup", 0.10, 0.80, width_px=80, instance=0), box=(225.0, 115.0, 311.0, 193.0))
    assert len(one_per_thing([cup, body], FX)) == 2
