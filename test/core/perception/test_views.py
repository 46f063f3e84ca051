"""at_location: a frame as the view of one place: the place named as the map names it, and only
what stands on or in it."""
from __future__ import annotations

from dataclasses import replace

from affplan_ros.core.perception.oad import PerceivedObject
from affplan_ros.core.perception.pipeline import Observation
from affplan_ros.core.perception.relations import EstimatedRelation
from affplan_ros.core.perception.views import at_location


def obj(cls: str, instance: int, box) -> PerceivedObject:
    return PerceivedObject(cls, instance, frozenset(), 0.9, box)


def rel(predicate: str, *args: str) -> EstimatedRelation:
    return EstimatedRelation(predicate, args, 0.8)


def test_the_place_is_the_biggest_of_its_class_and_named_as_the_map_names_it():
    seen = Observation([obj("counter", 0, (0, 0, 50, 50)), obj("counter", 1, (0, 100, 320, 240)),
                        obj("cup", 0, (100, 120, 120, 150)), obj("bowl", 0, (10, 10, 30, 30))],
                       [rel("on", "cup0", "counter1"), rel("on", "bowl0", "counter0"), rel("closed", "counter1")],
                       [], [])
    view = at_location(seen, "counter0")
    # The big counter is the one looked at: it takes the name, the small one in the back gives it up.
    assert sorted(o.name for o in view.objects) == ["counter0", "cup0"]
    assert [str(r) for r in view.relations] == ["(on cup0 counter0)", "(closed counter0)"]


def test_what_stands_elsewhere_in_the_frame_is_left_out():
    seen = Observation([obj("table", 0, (0, 100, 320, 240)), obj("bowl", 0, (10, 150, 60, 200)),
                        obj("banana", 0, (20, 150, 50, 170)), obj("cup", 0, (250, 0, 270, 20))],
                       [rel("on", "bowl0", "table0"), rel("in", "banana0", "bowl0")], [], [])
    view = at_location(seen, "table0")
    assert sorted(o.name for o in view.objects) == ["banana0", "bowl0", "table0"]
    assert at_location(seen, "counter0").objects == []   # nothing of the counter in sight


def test_views_of_one_place_merge_into_one_with_each_thing_in_one_place():
    from affplan_ros.core.perception.views import merged

    left = Observation([obj("table", 0, (0, 100, 320, 240)), obj("bowl", 0, (0, 150, 40, 200))],
                       [EstimatedRelation("on", ("bowl0", "table0"), 0.6), rel("closed", "table0")], [], [])
    right = Observation([obj("table", 0, (0, 100, 320, 240)), obj("bowl", 0, (200, 150, 260, 200)),
                         obj("apple", 0, (210, 150, 230, 170))],
                        [EstimatedRelation("in", ("bowl0", "table0"), 0.4), rel("in", "apple0", "bowl0"),
                         rel("closed", "table0")], [], [])
    view = merged([left, right])
    assert sorted(o.name for o in view.objects) == ["apple0", "bowl0", "table0"]
    # One parent per thing (the surer estimate); the rest once.
    assert sorted(str(r) for r in view.relations) == ["(closed table0)", "(in apple0 bowl0)", "(on bowl0 table0)"]


KITCHEN = {"table": {"support", "push"}, "counter": {"support", "sturdy-support"},
           "refrigerator": {"contain", "support", "open"}, "pot": {"carry", "contain"}, "cup": {"carry", "contain"}}


def furn(cls: str, instance: int, box) -> PerceivedObject:
    return PerceivedObject(cls, instance, frozenset(KITCHEN[cls]), 0.9, box)


def test_a_counter_the_detector_calls_a_table_is_still_the_place_looked_at():
    # Close up, the physics detector calls the counter a table: what stands on it stood nowhere
    # (the frame had no counter) and was dropped from the view of counter0.
    seen = Observation([furn("table", 0, (8, 83, 319, 240)), furn("pot", 0, (107, 91, 212, 198)),
                        furn("cup", 0, (250, 150, 280, 190))],
                       [rel("on", "pot0", "table0"), rel("on", "cup0", "table0")], [], [], image_size=(320, 240))
    assert at_location(seen, "counter0").objects == []            # without the OAM: as before
    view = at_location(seen, "counter0", lambda c: KITCHEN[c])
    assert sorted(o.name for o in view.objects) == ["counter0", "cup0", "pot0"]
    place = next(o for o in view.objects if o.name == "counter0")
    assert place.class_name == "counter" and place.affordances == frozenset(KITCHEN["counter"])
    assert sorted(str(r) for r in view.relations) == ["(on cup0 counter0)", "(on pot0 counter0)"]
    # A table that does not fill the view is a table across the room, not the counter looked at.
    far = replace(seen, objects=[furn("table", 0, (40, 150, 280, 240)), *seen.objects[1:]])
    assert at_location(far, "counter0", lambda c: KITCHEN[c]).objects == []


def test_a_table_box_over_the_counter_is_the_counter_seen_twice_and_a_refrigerator_never_stands_in():
    seen = Observation([furn("counter", 0, (6, 90, 319, 240)), furn("table", 0, (7, 80, 320, 240)),
                        furn("pot", 0, (219, 95, 319, 221)), furn("cup", 0, (170, 150, 200, 190)),
                        furn("refrigerator", 0, (0, 0, 60, 240)), furn("cup", 1, (10, 100, 40, 140))],
                       [rel("on", "pot0", "table0"), rel("on", "cup0", "counter0"), rel("in", "cup1", "refrigerator0")],
                       [], [])
    view = at_location(seen, "counter0", lambda c: KITCHEN[c])
    # One counter0 (the table detection over it is gone), both things on it, nothing of the fridge.
    assert sorted(o.name for o in view.objects) == ["counter0", "cup0", "pot0"]
    assert sorted(str(r) for r in view.relations) == ["(on cup0 counter0)", "(on pot0 counter0)"]
    fridge_only = Observation([furn("counter", 0, (0, 100, 320, 240)), furn("cup", 0, (10, 100, 40, 140))],
                              [rel("on", "cup0", "counter0")], [], [])
    assert at_location(fridge_only, "refrigerator0", lambda c: KITCHEN[c]).objects == []
