"""The simulated world applies true preconditions and effects and explains refusals."""
from __future__ import annotations

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.model.failure import FailureCode
from affplan_ros.sim.world import SimWorld

SCENE = """SCENE-DESCRIPTION
OBJECTS
counter:0
refrigerator:0
apple:0
cup:0
human:0
END-OBJECTS
RELATIONS
in apple:0 refrigerator:0
closed refrigerator:0
on cup:0 counter:0
at human:0 counter:0
at robot:0 counter:0
END-RELATIONS
LOCATIONS
counter0 counter:0 cup:0
refrigerator0 refrigerator:0 apple:0
END-LOCATIONS
"""


def world() -> SimWorld:
    return SimWorld(parse_scene_text(SCENE, "test"))


def test_closed_fridge_refuses_take_out_and_says_why():
    w = world()
    outcome = w.execute([("take_out", "robot0", ("apple0", "refrigerator0", "counter0"))])
    assert not outcome.success
    failure = outcome.failure
    assert failure.code is FailureCode.PRECONDITION and failure.recoverable
    assert "refrigerator0 is closed" in failure.why
    assert failure.suggestion == "make (closed refrigerator0) false first"
    assert w.holds("in", "apple0", "refrigerator0")  # nothing changed


def test_steps_change_the_world_in_order():
    w = world()
    for step in [("move", "robot0", ("counter0", "refrigerator0")),
                 ("open", "robot0", ("refrigerator0", "refrigerator0")),
                 ("take_out", "robot0", ("apple0", "refrigerator0", "refrigerator0"))]:
        assert w.execute([step]).success, step
    assert w.holds("inhand", "apple0", "robot0")
    assert not w.holds("in", "apple0", "refrigerator0")
    w.reset()
    assert w.holds("in", "apple0", "refrigerator0")


def test_first_applicable_candidate_wins():
    w = world()
    # A Grasp skill goal may mean grasp (from a support) or take_out (from a container).
    outcome = w.execute([("grasp", "robot0", ("cup0", "counter0", "counter0")),
                         ("take_out", "robot0", ("cup0", "counter0", "counter0"))])
    assert outcome.success and outcome.action == "grasp"


def test_unknown_object_is_not_found_and_affordances_are_enforced():
    w = world()
    missing = w.execute([("grasp", "robot0", ("glass0", "counter0", "counter0"))])
    assert missing.failure.code is FailureCode.NOT_FOUND and "glass0" in missing.failure.why
    # An apple cannot be opened: the affordance guard of the domain holds in the world too.
    w.execute([("move", "robot0", ("counter0", "refrigerator0"))])
    refused = w.execute([("open", "robot0", ("apple0", "refrigerator0"))])
    assert not refused.success and "apple0 affords open" in refused.failure.why
