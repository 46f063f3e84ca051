"""IALP's grounding predicates computed by the physics world, and plans that respect them."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import pytest

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.recovery.belief import Domain
from affplan_ros.core.recovery.grounding import ground_domain, load_grounding
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.grounding import PhysicsGrounding

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


@pytest.fixture(scope="module")
def kitchen():
    scene = load_scene(KITCHEN)
    return scene, PhysicsExecutor(scene)


def truth(executor, predicate: str) -> set[str]:
    names = [(n,) for n in executor.scene.objects if n not in ("robot0", "human0")]
    answer = PhysicsGrounding(executor).ground(load_grounding()[predicate], names)
    assert answer.available, answer.reason
    return {args[0] for args in answer.true}


def test_each_predicate_is_read_from_the_geometry(kitchen):
    _, ex = kitchen
    graspable = truth(ex, "graspable")
    # Narrower than the 9 cm gripper, taken by its wall (the bowl's rim, the plate's lip), or flat
    # and taken by its edge (the 25 cm cutting board, edge_grasp.py): yes; furniture: no.
    assert {"cup0", "apple0", "sponge0", "kitchen_knife0", "bowl0", "plate0", "cutting_board0"} <= graspable
    assert not graspable & {"table0", "refrigerator0"}
    # The camera does not see into the closed fridge; everything else in the kitchen is in view.
    detected = truth(ex, "detected")
    assert "apple0" not in detected and {"cup0", "banana0", "refrigerator0"} <= detected
    reachable = truth(ex, "reachable")
    assert {"cup0", "apple0", "refrigerator0"} <= reachable     # the fridge: its handle
    placeable = truth(ex, "placeable")
    assert {"table0", "counter0"} <= placeable and "cup0" not in placeable


def test_a_covered_object_is_not_graspable_until_what_is_on_it_is_gone():
    text = KITCHEN.read_text().replace("on cup:0 counter:0", "on cup:0 cutting_board:0")
    from affplan_ros.core.files.scene_io import parse_scene_text

    ex = PhysicsExecutor(parse_scene_text(text))
    assert ("on", "cup0", "cutting_board0") in ex.relations()
    assert "cutting_board0" not in truth(ex, "graspable")


def test_the_grounded_domain_plans_no_step_the_physics_would_refuse():
    """The cup stands on the cutting board: the physics refuses to grasp the board (covered).
    Without grounding the planner has the robot grasp it; with the physics' grounding (read once,
    before planning) there is no such plan. The cup, which the gripper takes, is planned as before."""
    from affplan_ros.core.files.scene_io import parse_scene_text

    scene = parse_scene_text(KITCHEN.read_text().replace("on cup:0 counter:0", "on cup:0 cutting_board:0"))
    ex = PhysicsExecutor(scene)
    plain = Domain.default()
    naive = plain.plan(scene, to_dnf(parse_goal("(on cutting_board0 table0)")), time_limit=30)
    assert naive.solved and any(s.action == "grasp" and "cutting_board0" in s.args for s in naive.plan)
    domain, grounded, report = ground_domain(plain, scene, PhysicsGrounding(ex))
    assert set(report.available) == {"detected", "graspable", "reachable", "placeable"}
    assert "(graspable cutting_board0)" in report.text()          # said among what is not feasible
    board = domain.plan(grounded, to_dnf(parse_goal("(on cutting_board0 table0)")), time_limit=30)
    assert not board.solved
    cup = domain.plan(grounded, to_dnf(parse_goal("(on cup0 table0)")), time_limit=30)
    assert cup.solved and any(s.action == "grasp" and s.agent == "robot0" for s in cup.plan)
