"""Cutting and wiping with a held tool, judged by physics (sim/physics/tools.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.physics.skills import FailureCode, Skills
from affplan_ros.sim.physics.tools import chop, wipe
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def kitchen(**replace: str) -> Skills:
    text = KITCHEN.read_text()
    for old, new in replace.items():
        text = text.replace(old, new)
    return Skills(build_world(parse_scene_text(text)))


def test_the_knife_comes_down_on_the_cucumber_lying_on_the_board():
    sk = kitchen(**{"banana:0\n": "banana:0\ncucumber:0\n",
                    "on cutting_board:0 counter:0": "on cutting_board:0 counter:0\non cucumber:0 cutting_board:0",
                    "counter0 counter:0": "counter0 counter:0 cucumber:0"})
    w = sk.world
    assert w.resting_on("cucumber0", "cutting_board0")
    nothing = chop(sk, "kitchen_knife0", "cucumber0", "cutting_board0")
    assert not nothing.success and nothing.code == FailureCode.NOT_HELD and not w.chopped
    assert sk.navigate("counter0", near="kitchen_knife0").success and sk.grasp("kitchen_knife0").success
    assert sk.navigate("counter0", near="cucumber0").success
    result = chop(sk, "kitchen_knife0", "cucumber0", "cutting_board0")
    assert result.success, result.reason
    assert w.chopped == {"cucumber0"} and sk.holding("kitchen_knife0")
    assert w.resting_on("cucumber0", "cutting_board0")


def test_a_wet_sponge_drawn_over_the_table_cleans_it_a_dry_one_does_not():
    sk = kitchen()
    w = sk.world
    assert sk.navigate("counter0", near="sponge0").success and sk.grasp("sponge0").success
    assert sk.navigate("table0").success
    dry = wipe(sk, "sponge0", "table0", along="table0")
    assert not dry.success and "dry" in dry.reason and not w.cleaned
    w.wet.add("sponge0")            # as lying in the bucket's water would have made it (executor: wetten)
    # The plate and the bowl take the table's front: the robot moves along it to a free patch.
    result = wipe(sk, "sponge0", "table0", along="table0")
    assert result.success, result.reason
    assert result.details["strokes"] >= 2 and w.cleaned == {"table0"} and sk.holding("sponge0")
