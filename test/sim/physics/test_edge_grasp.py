"""A book wider than the gripper: slid to the table's edge by the fingertips, pinched by its
overhanging edge with the hand level, carried level, put down flat; all judged by the physics."""
from __future__ import annotations

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np
from test_grasps import KITCHEN, held, table_scene

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.sim.physics.edge_grasp import is_flat_and_wide
from affplan_ros.sim.physics.skills import Skills
from affplan_ros.sim.physics.world import build_world


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


def test_a_cutting_board_on_the_counter_is_taken_by_its_edge():
    sk = Skills(build_world(load_scene(KITCHEN)))    # 35 x 25 x 2 cm: too wide from above
    assert sk.navigate("counter0", near="cutting_board0").success
    result = sk.grasp("cutting_board0", "counter0")
    assert result.success and result.details.get("edge"), result.reason
    assert held(sk, "cutting_board0", result.details["side"]) and "counter0" not in sk.world.contacts("cutting_board0")


def test_a_salad_is_no_flat_thing_to_take_by_its_edge():
    sk = table_scene("salad:0")
    width, _, _ = sk.top_down_grasp("salad0")
    assert not is_flat_and_wide(sk, "salad0", width)
