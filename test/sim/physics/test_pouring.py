"""Pouring from a held container, judged by physics (sim/physics/pouring.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.physics.pouring import fill
from affplan_ros.sim.physics.skills import FailureCode, Skills
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def kitchen_with_water_in_a_bottle(lid: bool = False) -> Skills:
    text = (KITCHEN.read_text().replace("cup:0\n", "cup:0\nbottle:0\n", 1)
            .replace("liquid_in water:0 bucket:0", "liquid_in water:0 bottle:0\non bottle:0 counter:0"
                     + ("\nclosed bottle:0" if lid else ""))
            .replace("counter0 counter:0 cup:0", "counter0 counter:0 cup:0 bottle:0"))
    sk = Skills(build_world(parse_scene_text(text)))
    assert sk.navigate("counter0", near="bottle0").success and sk.grasp("bottle0").success
    return sk


def test_water_moves_into_the_cup_only_by_tilting_the_bottle_over_it():
    sk = kitchen_with_water_in_a_bottle()
    w = sk.world
    litres = w.liquids["bottle0"]["water0"]
    assert sk.navigate("counter0", near="cup0").success
    cup_at = w.position("cup0").copy()
    result = fill(sk, "bottle0", "water0", "cup0")
    assert result.success, result.reason
    assert w.liquids["cup0"]["water0"] == litres and "water0" not in w.liquids["bottle0"]
    assert sk.holding("bottle0") and w.rotation("bottle0")[2, 2] > 0.8     # held, and upright again
    assert abs(w.position("cup0")[0] - cup_at[0]) < 0.02                    # the cup was not knocked


def test_a_closed_bottle_an_empty_one_and_one_not_held_pour_nothing():
    closed = kitchen_with_water_in_a_bottle(lid=True)
    out = fill(closed, "bottle0", "water0", "cup0")
    assert not out.success and out.code == FailureCode.CONTAINER_CLOSED and "cup0" not in closed.world.liquids
    empty = kitchen_with_water_in_a_bottle()
    assert not fill(empty, "bottle0", "milk0", "cup0").success
    assert fill(empty, "cup0", "water0", "bottle0").code == FailureCode.NOT_HELD
