"""at_location: a frame as the view of one place: the place named as the map names it, and only
what stands on or in it."""
from __future__ import annotations

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
