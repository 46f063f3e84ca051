"""A 15 cm salad, wider than the 9 cm gripper and not flat: taken between both hands, held by
friction alone, carried, set down; all judged by the physics (``two_hands.py``)."""
from __future__ import annotations

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
from test_grasps import table_scene

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.relations import Anchors, read_relations
from affplan_ros.sim.physics.two_hands import both_hands, touching_hands

SALAD_ON_TABLE = """OBJECTS
table:0
robot:0
salad:0
END-OBJECTS
RELATIONS
on salad:0 table:0
at robot:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 salad:0
END-LOCATIONS
"""


def test_a_salad_is_taken_between_both_hands_carried_and_set_down():
    sk = table_scene("salad:0")
    w = sk.world
    assert sk.navigate("table0", near="salad0").success
    z0 = w.position("salad0")[2]
    result = sk.grasp("salad0", "table0")
    assert result.success and result.details.get("two_hands"), result.reason
    # Both hands hold it, each pressing with its pads, and it rose off the table with them.
    assert both_hands(sk) == "salad0" and touching_hands(sk, "salad0") == 2
    assert "table0" not in w.contacts("salad0") and w.position("salad0")[2] > z0 + 0.05
    inhand = {a for a in read_relations(w, sk, parse_scene_text(SALAD_ON_TABLE), Anchors.of(
        parse_scene_text(SALAD_ON_TABLE))) if a[0] == "inhand"}
    assert inhand == {("inhand", "salad0", "robot0")}
    sk._tuck()                                        # carried before the robot, above furniture
    w.step(w.steps(1.0))
    assert touching_hands(sk, "salad0") == 2 and w.position("salad0")[2] > 1.0
    placed = sk.place("salad0", "table0")
    assert placed.success, placed.reason
    assert all(h is None for h in sk.held.values()) and touching_hands(sk, "salad0") == 0
    assert w.resting_on("salad0", "table0")


def test_with_a_hand_full_a_salad_is_not_taken():
    sk = table_scene("salad:0", "apple:0")
    assert sk.navigate("table0", near="apple0").success
    assert sk.grasp("apple0", "table0").success
    result = sk.grasp("salad0", "table0")
    assert not result.success and result.code == Cause.HAND_FULL
    assert "both hands" in result.reason and "apple0" in result.reason
