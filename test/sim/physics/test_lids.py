"""A bottle's cap turned by the hand, judged by physics (sim/physics/lids.py)."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.lids import turn_lid
from affplan_ros.sim.physics.relations import Anchors, read_relations
from affplan_ros.sim.physics.skills import Skills
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def kitchen_with_a_closed_bottle():
    text = (KITCHEN.read_text().replace("cup:0\n", "cup:0\nbottle:0\n", 1)
            .replace("on cup:0 counter:0", "on cup:0 counter:0\non bottle:0 counter:0\nclosed bottle:0")
            .replace("counter0 counter:0 cup:0", "counter0 counter:0 cup:0 bottle:0"))
    scene = parse_scene_text(text)
    world = build_world(scene)
    return scene, world, Skills(world)


def test_the_cap_comes_off_and_goes_back_on_with_the_bottle_left_standing():
    scene, w, sk = kitchen_with_a_closed_bottle()
    anchors = Anchors.of(scene)
    assert ("closed", "bottle0") in read_relations(w, sk, scene, anchors)
    assert sk.navigate("counter0", near="bottle0").success
    where = w.position("bottle0").copy()
    opened = turn_lid(sk, "bottle0", True)
    assert opened.success, opened.reason
    assert ("opened", "bottle0") in read_relations(w, sk, scene, anchors)
    assert w.rotation("bottle0")[2, 2] > 0.9 and abs(w.position("bottle0")[0] - where[0]) < 0.03
    assert all(held is None for held in sk.held.values())        # the hand let go of the cap
    closed = turn_lid(sk, "bottle0", False)
    assert closed.success, closed.reason
    assert ("closed", "bottle0") in read_relations(w, sk, scene, anchors)


def test_a_held_bottle_and_a_cup_without_a_lid_are_refused():
    _, w, sk = kitchen_with_a_closed_bottle()
    assert sk.navigate("counter0", near="bottle0").success and sk.grasp("bottle0").success
    held = turn_lid(sk, "bottle0", True)
    assert not held.success and held.code == Cause.HAND_FULL and "bottle0" in w.closed_lids
    cup = turn_lid(sk, "cup0", True)
    assert not cup.success and cup.code == Cause.NOT_ARTICULATED
