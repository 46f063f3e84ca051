"""Cutting and wiping with a held tool, judged by physics (sim/physics/tools.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.model.failure import Cause
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.skills import Skills
from affplan_ros.sim.physics.tools import chop, wipe
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"



def kitchen(**replace: str) -> Skills:
    text = KITCHEN.read_text()
    for old, new in replace.items():
        text = text.replace(old, new)
    return Skills(build_world(parse_scene_text(text)))


CUCUMBER_ON_THE_BOARD = {"banana:0\n": "banana:0\ncucumber:0\n",
                         "on cutting_board:0 counter:0": "on cutting_board:0 counter:0\non cucumber:0 cutting_board:0",
                         "counter0 counter:0": "counter0 counter:0 cucumber:0"}


def test_the_knife_comes_down_on_the_cucumber_lying_on_the_board():
    sk = kitchen(**CUCUMBER_ON_THE_BOARD)
    w = sk.world
    assert w.resting_on("cucumber0", "cutting_board0")
    nothing = chop(sk, "kitchen_knife0", "cucumber0", "cutting_board0")
    assert not nothing.success and nothing.code == Cause.NOT_HELD and not w.chopped
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


def test_the_sponge_wipes_with_its_face_level_and_a_light_press(monkeypatch):
    """Leaning with the hand to reach, the sponge met the table with one edge; driven 2 cm into
    it, it was pushed up and turned between the pads. It wipes level now, pressed a centimetre
    below where it first touched, and stays where the pads hold it."""
    sk = kitchen()
    w = sk.world
    assert sk.navigate("counter0", near="sponge0").success and sk.grasp("sponge0").success
    assert sk.navigate("table0").success
    w.wet.add("sponge0")
    side = sk.holding("sponge0")

    def in_hand() -> np.ndarray:
        tcp, rot, _ = w.site(f"{side}_tcp")
        return rot.T @ (w.position("sponge0") - tcp)

    held_at, tilts = in_hand(), []
    follow = sk.control.follow

    def watched(*args, **kwargs):
        out = follow(*args, **kwargs)
        if "table0" in w.contacts("sponge0"):
            tilts.append(float(w.rotation("sponge0")[2, 2]))
        return out

    monkeypatch.setattr(sk.control, "follow", watched)
    result = wipe(sk, "sponge0", "table0", along="table0")
    assert result.success and result.details["strokes"] == 3, result.reason
    assert tilts and min(tilts) > 0.98                       # its face on the table, not an edge
    assert np.linalg.norm(in_hand() - held_at) < 0.005       # not pushed along the pads


def test_a_planned_chop_step_runs_the_motion_and_the_goal_is_read_from_the_physics():
    text = KITCHEN.read_text()
    for old, new in CUCUMBER_ON_THE_BOARD.items():
        text = text.replace(old, new)
    ex = PhysicsExecutor(parse_scene_text(text))
    goal = to_dnf(parse_goal("(chopped cucumber0)"))
    chop_step = PlanStep("chop", ("kitchen_knife0", "cucumber0", "cutting_board0", "counter0"), "robot0")
    empty_handed = ex.execute([chop_step])
    assert not empty_handed.success and empty_handed.failure.cause == Cause.NOT_HELD
    assert not ex.goal_reached(goal)
    grasp = PlanStep("grasp", ("kitchen_knife0", "counter0", "counter0"), "robot0")
    result = ex.execute([grasp, chop_step])
    assert result.success, result.failure
    assert ex.goal_reached(goal) and ("inhand", "kitchen_knife0", "robot0") in ex.relations()
