"""Faults injected into the physics world (sim/physics/faults.py): the world changes, the executor finds out."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.model.failure import Cause, FailureCode
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.recovery.feedback import observed_facts
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.faults import FaultKind, FaultyExecutor

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def steps(*texts: str) -> list[PlanStep]:
    return [PlanStep(t.split()[0], tuple(t.split()[2:]), t.split()[1]) for t in texts]


def faulty(kind: FaultKind, **kw) -> FaultyExecutor:
    return FaultyExecutor(PhysicsExecutor(load_scene(KITCHEN)), kind, seed=1, **kw)


def test_a_moved_cup_is_not_where_the_plan_grasps_it_and_rests_where_it_was_put():
    fx = faulty(FaultKind.MOVED, avoid=frozenset({"counter0"}))
    run = fx.execute(steps("grasp robot0 cup0 counter0 counter0"))
    assert fx.fired == "cup0 put on table0" and fx.fired_step.startswith("grasp")
    assert not run.success and run.failure.code == FailureCode.NOT_FOUND and fx.failures_after == 1
    assert ("on", "cup0", "table0") in fx.relations()
    # Standing at the counter the robot sees that the cup is not on it (not where it is now).
    seen = {(f.predicate, f.args, f.negated) for f in observed_facts(run.failure)}
    assert ("on", ("cup0", "counter0"), True) in seen and not any(not n for _, _, n in seen)


def test_with_no_other_place_the_object_moves_along_its_own_surface_within_easy_reach():
    fx = faulty(FaultKind.MOVED, avoid=frozenset({"table0"}))
    before = fx.world.position("cup0").copy()
    fx.fired = fx._move("cup0")            # (fired: execute below does not move it again)
    assert fx.fired == "cup0 put on counter0"
    assert ("on", "cup0", "counter0") in fx.relations()
    assert np.hypot(*(fx.world.position("cup0") - before)[:2]) > 0.2
    # Still at the place the plan names, near its front: the grasp lines up with where it is now.
    run = fx.execute(steps("grasp robot0 cup0 counter0 counter0"))
    assert run.success and ("inhand", "cup0", "robot0") in fx.relations()


def test_a_removed_knife_is_out_of_the_room():
    fx = faulty(FaultKind.REMOVED)
    run = fx.execute(steps("grasp robot0 kitchen_knife0 counter0 counter0"))
    assert not run.success and run.failure.code == FailureCode.NOT_FOUND
    assert not any(a[0] in ("on", "in") and a[1] == "kitchen_knife0" for a in fx.relations())


def test_a_stuck_door_fails_the_first_open_only_and_the_robot_stands_ready_to_try_again():
    fx = faulty(FaultKind.DOOR_BLOCKED)
    w = fx.world
    jid = w.model.joint(w.things["refrigerator0"].joint).id
    saved = w.model.jnt_range[jid].copy()
    run = fx.execute(steps("move robot0 counter0 refrigerator0", "open robot0 refrigerator0 refrigerator0"))
    assert fx.fired and "refrigerator0" in fx.fired
    assert not run.success and run.steps_done == 1 and w.is_closed("refrigerator0")
    assert np.array_equal(w.model.jnt_range[jid], saved)
    # The failed pull dragged the base round the hinge; the executor brought it back in front.
    assert fx.location_of_robot() == "refrigerator0"
    again = fx.execute(steps("open robot0 refrigerator0 refrigerator0"))
    assert again.success and w.is_open("refrigerator0")


def test_a_grip_that_gives_way_on_the_drive_leaves_the_cup_behind():
    fx = faulty(FaultKind.SLIPPED)
    run = fx.execute(steps("grasp robot0 cup0 counter0 counter0", "move robot0 counter0 table0",
                           "place robot0 cup0 table0 table0"))
    assert fx.fired and fx.fired.startswith("cup0 slips") and fx.fired_step.startswith("move")
    assert not run.success and run.steps_done == 2 and fx.failures_after == 1
    assert ("inhand", "cup0", "robot0") not in fx.relations()
    assert ("on", "cup0", "table0") not in fx.relations()
    # The failure says what the robot saw: the cup is not in its hand (for the memory), and why.
    seen = {(f.predicate, f.args, f.negated) for f in observed_facts(run.failure)}
    assert ("inhand", ("cup0", "robot0"), True) in seen
    assert run.failure.cause == Cause.SLIPPED
