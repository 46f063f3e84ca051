"""Handing an object to the person model, judged by physics (sim/physics/handover.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.handover import handover
from affplan_ros.sim.physics.skills import FailureCode, Skills
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def test_the_person_takes_the_cup_and_holds_it_after_the_robot_lets_go():
    world = build_world(load_scene(KITCHEN))
    sk = Skills(world)
    assert sk.grasp("cup0").success and sk.navigate("human0").success
    result = handover(sk, "cup0", "human0")
    assert result.success, result.reason
    assert sk.holding("cup0") is None and world.grips == {"cup0": "human0"}
    # Held by the person's hand, in the air: not on the floor, not in the robot's fingers.
    world.step(world.steps(1.0))
    cup = world.position("cup0")
    assert np.linalg.norm(cup - world.person_hand("human0")) < 0.1 and cup[2] > 0.8
    assert not world.touching_geoms("cup0", sk._pads("r")) and not world.touching_geoms("cup0", sk._pads("l"))


def test_nothing_held_and_a_person_too_far_away_fail_with_their_causes():
    world = build_world(load_scene(KITCHEN))
    sk = Skills(world)
    empty = handover(sk, "cup0", "human0")
    assert not empty.success and empty.code == FailureCode.NOT_HELD
    assert sk.grasp("cup0").success
    far = handover(sk, "cup0", "human0")       # still at the counter, facing it, the person beside
    assert not far.success and far.code == FailureCode.UNREACHABLE and "human0" in far.reason
    assert far.details["distance"] > 0.6
    assert sk.holding("cup0") == "r" and not world.grips     # nothing was let go
    unknown = handover(sk, "cup0", "table0")
    assert not unknown.success and unknown.code == FailureCode.UNKNOWN


def test_bring_me_the_apple_from_the_closed_fridge_ends_in_the_persons_hand():
    ex = PhysicsExecutor(load_scene(KITCHEN))
    plan = [PlanStep(a, tuple(args), agent) for a, agent, *args in (s.split() for s in (
        "move robot0 counter0 refrigerator0", "open robot0 refrigerator0 refrigerator0",
        "take_out robot0 apple0 refrigerator0 refrigerator0", "move robot0 refrigerator0 human0",
        "handover robot0 human0 apple0"))]
    result = ex.execute(plan)
    assert result.success, result.failure
    rel = ex.relations()
    assert ("inhand", "apple0", "human0") in rel and ("inhand", "apple0", "robot0") not in rel
    assert ex.goal_reached([[_literal("inhand", "apple0", "human0")]])


def _literal(predicate, *args):
    from affplan_ros.core.goals.formula import Literal

    return Literal(predicate, tuple(args), False)
