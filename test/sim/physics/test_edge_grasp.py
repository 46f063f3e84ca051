"""A book wider than the gripper: slid to the table's edge by the fingertips, pinched by its
overhanging edge with the hand level, carried level, put down flat; all judged by the physics."""
from __future__ import annotations

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np
from test_grasps import held, table_scene


def test_a_book_is_slid_to_the_edge_taken_by_it_and_put_down_flat():
    sk = table_scene("book:0")
    w = sk.world
    assert sk.navigate("table0", near="book0").success
    y0 = w.position("book0")[1]
    result = sk.grasp("book0", "table0")
    assert result.success, result.reason
    side = result.details["side"]
    assert result.details.get("edge") and held(sk, "book0", side)
    assert abs(w.position("book0")[1] - y0) > 0.05                  # it really slid towards the robot
    assert "table0" not in w.contacts("book0")                     # and rose off the table
    sk._tuck()
    assert held(sk, "book0", side) and abs(w.rotation("book0")[2, 2]) > 0.9   # carried level
    placed = sk.place("book0", "table0")
    assert placed.success, placed.reason
    w.step(w.steps(0.5))
    assert w.resting_on("book0", "table0") and abs(w.rotation("book0")[2, 2]) > 0.99
    assert not np.isnan(w.position("book0")).any()
