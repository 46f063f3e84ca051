"""Handing an object to the person model and taking one from them, judged by physics
(sim/physics/handover.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene, parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.model.failure import Cause
from affplan_ros.core.planning.planner import plan_for_goal
from affplan_ros.sim.physics import handover as handover_module
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.handover import handover, receive_object
from affplan_ros.sim.physics.skills import Skills
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


def test_nothing_held_and_a_person_too_far_away_fail_with_their_causes(monkeypatch):
    world = build_world(load_scene(KITCHEN))
    sk = Skills(world)
    empty = handover(sk, "cup0", "human0")
    assert not empty.success and empty.code == Cause.NOT_HELD
    assert sk.grasp("cup0").success
    # Still at the counter, the person 0.74 m off to the side (an arm turned sideways reaches
    # them in this small kitchen): nearer than a person can be for this test's robot.
    monkeypatch.setattr(handover_module, "ROBOT_REACH", 0.5)
    far = handover(sk, "cup0", "human0")
    assert not far.success and far.code == Cause.UNREACHABLE and "human0" in far.reason
    assert far.details["distance"] > 0.6
    assert sk.holding("cup0") == "r" and not world.grips     # nothing was let go
    unknown = handover(sk, "cup0", "table0")
    assert not unknown.success and unknown.code == Cause.UNKNOWN


def test_a_plate_held_by_its_rim_is_offered_with_the_hand_turned_and_the_person_takes_it():
    # Held by its lip, the plate's middle hangs 12 cm beside the hand: kept as it is, no meeting
    # point within the person's reach is one the arm reaches (it was offered 11 cm short); with
    # the hand turned about the vertical it is.
    world = build_world(load_scene(KITCHEN))
    sk = Skills(world)
    assert sk.navigate("table0", "plate0").success and sk.grasp("plate0").success
    assert sk.navigate("human0").success
    result = handover(sk, "plate0", "human0")
    assert result.success, result.reason
    assert world.grips == {"plate0": "human0"} and sk.holding("plate0") is None
    assert np.linalg.norm(world.position("plate0") - world.person_hand("human0")) < 0.2


def test_a_knife_carried_to_the_person_stays_in_the_hand_and_is_handed_over():
    world = build_world(load_scene(KITCHEN))
    sk = Skills(world)
    assert sk.navigate("counter0", "kitchen_knife0").success and sk.grasp("kitchen_knife0").success
    assert sk.navigate("human0").success
    # Held the whole way (not knocked out of the fingers against the person as the base turned).
    side = sk.holding("kitchen_knife0")
    assert len(world.touching_geoms("kitchen_knife0", sk._pads(side))) == 2
    person = world.things["human0"].placement
    base = world.base_pose()
    assert 0.6 < np.hypot(base.x - person.x, base.y - person.y) < 0.8    # a step further off, still 'at' them
    result = handover(sk, "kitchen_knife0", "human0")
    assert result.success, result.reason
    assert world.grips == {"kitchen_knife0": "human0"}


def test_a_dropped_object_is_reported_as_slipped_not_out_of_reach():
    world = build_world(load_scene(KITCHEN))
    sk = Skills(world)
    assert sk.grasp("cup0").success and sk.navigate("human0").success
    side = sk.holding("cup0")
    sk.control.set_gripper(side, world.spec.max_aperture, 0.5)     # it falls out of the open hand
    world.step(world.steps(1.0))
    result = handover(sk, "cup0", "human0")
    assert not result.success and result.code == Cause.SLIPPED and "dropped" in result.reason
    assert sk.holding("cup0") is None and not world.grips


def test_bring_me_the_apple_from_the_closed_fridge_ends_in_the_persons_hand():
    scene = load_scene(KITCHEN)
    goal = to_dnf(parse_goal("(inhand apple0 human0)"))
    planned = plan_for_goal(scene, goal, time_limit=30)
    assert planned.solved
    plan = planned.plan
    # move, open the fridge, take the apple out, move to the person, hand it over.
    assert [s.action for s in plan][-1] == "handover" and {"open", "take_out"} <= {s.action for s in plan}
    ex = PhysicsExecutor(scene)
    assert not ex.goal_reached(goal)
    result = ex.execute(plan)
    assert result.success, result.failure
    rel = ex.relations()
    assert ("inhand", "apple0", "human0") in rel and ("inhand", "apple0", "robot0") not in rel
    assert ex.goal_reached(goal)


# -- receiving: the person holds something out, the robot takes it ------------------------------
def _person_holds(what: str) -> PhysicsExecutor:
    """The kitchen with ``what`` (on the counter in the file) in human0's hand instead."""
    text = KITCHEN.read_text().replace(f"on {what}:0 counter:0", f"inhand {what}:0 human:0")
    return PhysicsExecutor(parse_scene_text(text))


def test_a_scene_that_starts_with_the_cup_in_the_persons_hand_keeps_it_there():
    ex = _person_holds("cup")
    ex.world.step(ex.world.steps(1.0))
    rel = ex.relations()
    assert ("inhand", "cup0", "human0") in rel and ("inhand", "cup0", "robot0") not in rel
    assert not any(a[0] == "on" and a[1] == "cup0" for a in rel)
    cup = ex.world.position("cup0")
    assert cup[2] > 0.9 and not ex.world.contacts("cup0")     # in the air, held, touching nothing


def test_the_robot_takes_the_cup_the_person_holds_out_and_the_person_lets_go():
    ex = _person_holds("cup")
    sk, world = ex.skills, ex.world
    assert sk.navigate("human0").success
    result = receive_object(sk, "cup0", "human0")
    assert result.success, result.reason
    assert sk.holding("cup0") is not None and not world.grips
    # The robot's fingers hold it by themselves: it rose with the hand and stays up.
    world.step(world.steps(1.0))
    assert world.position("cup0")[2] > 0.9
    assert len(world.touching_geoms("cup0", sk._pads(sk.holding("cup0")))) == 2
    rel = ex.relations()
    assert ("inhand", "cup0", "robot0") in rel and ("inhand", "cup0", "human0") not in rel


def test_receiving_what_the_person_does_not_hold_from_too_far_or_with_full_hands_fails():
    ex = _person_holds("cup")
    sk, world = ex.skills, ex.world
    not_held = receive_object(sk, "sponge0", "human0")
    assert not not_held.success and not_held.code == Cause.NOT_HELD
    assert sk.navigate("refrigerator0").success          # 1.2 m from the person, facing the fridge
    far = receive_object(sk, "cup0", "human0")
    assert not far.success and far.code == Cause.UNREACHABLE and "human0" in far.reason
    assert far.details["distance"] > 1.0
    assert world.grips == {"cup0": "human0"} and world.position("cup0")[2] > 0.9   # the person still has it
    assert sk.navigate("human0").success
    assert sk.start_holding("sponge0").success and sk.start_holding("apple0").success
    full = receive_object(sk, "cup0", "human0")
    assert not full.success and full.code == Cause.HAND_FULL and world.grips == {"cup0": "human0"}


def test_a_planned_receive_then_place_puts_the_persons_cup_on_the_table():
    ex = _person_holds("cup")
    goal = to_dnf(parse_goal("(on cup0 table0)"))
    planned = plan_for_goal(ex.scene, goal, time_limit=30)
    assert planned.solved and "receive_object" in [s.action for s in planned.plan]
    result = ex.execute(planned.plan)
    assert result.success, result.failure
    assert ex.goal_reached(goal) and ex.world.resting_on("cup0", "table0") and not ex.world.grips


# -- two hands: a second thing is taken with the other hand --------------------------------------
def test_two_handovers_fill_both_hands_a_third_is_refused_and_either_hand_gives_back():
    ex = PhysicsExecutor(load_scene(KITCHEN))
    sk, world = ex.skills, ex.world
    assert sk.grasp("cup0").success and sk.navigate("human0").success
    first = handover(sk, "cup0", "human0")
    assert first.success, first.reason
    assert sk.start_holding("sponge0").success
    # The cup stays in the first hand, brought to the person's side; the other hand takes the sponge.
    second = handover(sk, "sponge0", "human0")
    assert second.success, second.reason
    assert world.grips == {"cup0": "human0", "sponge0": "human0"}
    assert {world.grip_hands["cup0"], world.grip_hands["sponge0"]} == {"r", "l"}
    sponge_hand = world.grip_hands["sponge0"]
    world.step(world.steps(1.0))
    for obj in ("cup0", "sponge0"):
        at = world.position(obj)
        assert np.linalg.norm(at - world.person_hand("human0", world.grip_hands[obj])) < 0.1 and at[2] > 0.7
        assert not world.contacts(obj)                  # in the air, held, touching nothing
    rel = ex.relations()
    assert {("inhand", "cup0", "human0"), ("inhand", "sponge0", "human0")} <= rel
    # Both hands full: a third thing is not offered, the robot keeps it.
    assert sk.start_holding("apple0").success
    third = handover(sk, "apple0", "human0")
    assert not third.success and third.code == Cause.HAND_FULL and "hands are full" in third.reason
    assert sk.holding("apple0") is not None and set(world.grips) == {"cup0", "sponge0"}
    # The robot takes the sponge back from the second hand; the cup stays in the first.
    back = receive_object(sk, "sponge0", "human0")
    assert back.success, back.reason
    assert world.grips == {"cup0": "human0"} and sk.holding("sponge0") is not None
    assert world.free_hand("human0") == sponge_hand and world.held_in("human0") == {world.grip_hands["cup0"]: "cup0"}


SODAS = """OBJECTS
table:0
counter:0
coke:0
7up:0
lime_soda:0
pepsi:0
sprite:0
human:0
robot:0
END-OBJECTS
RELATIONS
on coke:0 counter:0
on 7up:0 counter:0
on lime_soda:0 counter:0
on pepsi:0 counter:0
on sprite:0 counter:0
at human:0 table:0
at robot:0 counter:0
END-RELATIONS
LOCATIONS
table0 table:0
counter0 counter:0 coke:0 7up:0 lime_soda:0 pepsi:0 sprite:0
END-LOCATIONS
"""


def test_with_both_hands_full_a_hand_takes_a_second_can_beside_its_first_but_not_a_third():
    # SayCan's "bring me a fruit, a soda and a bag of chips": a person holds two cans in one hand
    # (13 cm across together); before, a third thing for two full hands always failed as hand_full.
    ex = PhysicsExecutor(parse_scene_text(SODAS))
    sk, world = ex.skills, ex.world
    assert sk.navigate("human0").success
    for can in ("coke0", "7up0", "lime_soda0", "pepsi0"):
        assert sk.start_holding(can).success
        given = handover(sk, can, "human0")
        assert given.success, (can, given.reason)
    hands = world.held_by_hand("human0")
    assert sorted(len(objs) for objs in hands.values()) == [2, 2]
    world.step(world.steps(1.0))
    rel = ex.relations()
    for objs in hands.values():
        first, second = objs
        assert not world.contacts(first) and not world.contacts(second)     # side by side, apart
        assert 0.066 < np.linalg.norm(world.position(first) - world.position(second)) < 0.1
        assert {("inhand", first, "human0"), ("inhand", second, "human0")} <= rel
    # Two cans in each hand: a fifth is not taken, the robot keeps it.
    assert sk.start_holding("sprite0").success
    fifth = handover(sk, "sprite0", "human0")
    assert not fifth.success and fifth.code == Cause.HAND_FULL and "14 cm" in fifth.reason
    assert sk.holding("sprite0") is not None and "sprite0" not in world.grips
