"""The physics world as sim_world serves skills on it (sim/physics/served.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.model.failure import Cause, FailureCode
from affplan_ros.core.recovery.feedback import observed_facts
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.served import PhysicsSkillWorld

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def test_skill_goals_run_as_motions_and_a_reset_builds_the_world_again():
    scene = load_scene(KITCHEN)
    world = PhysicsSkillWorld(lambda: PhysicsExecutor(scene))
    assert world.location_of_robot() == "counter0"
    empty = world.execute([])
    assert not empty.success and empty.failure.code == FailureCode.INVALID
    # The grasp goal's candidates (grasp or take_out): the first, the step the executor named, runs.
    held = world.execute([("grasp", "robot0", ("cup0", "counter0", "counter0")),
                          ("take_out", "robot0", ("cup0", "counter0", "counter0"))])
    assert held.success and held.action == "grasp"
    assert ("inhand", "cup0", "robot0") in world.executor.relations()
    # A goal sent to the skill server directly, not from a plan: the robot at the counter is asked
    # to take the banana out of the bowl on the table. The motion, not a precondition, refuses it.
    far = world.execute([("take_out", "robot0", ("banana0", "bowl0", "table0"))])
    assert not far.success and far.failure.code == FailureCode.PHYSICAL
    # The detail: the physical cause, after what the robot saw of the banana (not in its hand).
    assert far.failure.cause == Cause.UNREACHABLE
    assert Literal("inhand", ("banana0", "robot0"), negated=True) in observed_facts(far.failure)
    assert "m from the base centre" in far.failure.why
    before = world.executor
    world.reset()
    assert world.executor is not before and world.location_of_robot() == "counter0"
    assert ("on", "cup0", "counter0") in world.executor.relations()
    seen = world.observe("counter0")
    assert "cup0" in {o.name for o in seen.objects}
    # The camera does not see into the closed refrigerator, unless told (the initial memory).
    assert "apple0" not in {o.name for o in world.observe("refrigerator0").objects}
    assert "apple0" in {o.name for o in world.observe("refrigerator0", see_inside_closed=True).objects}
