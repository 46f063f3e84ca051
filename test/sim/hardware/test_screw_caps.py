"""The hardware's screw caps (sim/hardware/lids.py), without ROS: a cap comes off when one robot
hand's pads hold the bottle at its top and the hand turns anticlockwise far enough, goes on turned
clockwise, and stays as it is where the pads let go, the hand is lower, or the bottle turns with
the hand. The bottle is the physics world's; where the hand is and what its pads touch is set
here (a hand that grips is the gripper tests' matter)."""
from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.hardware.lids import CHECK_EVERY_S, TURN_RAD, Lids
from affplan_ros.sim.physics.world import build_world

SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\nbottle:0\nrobot:0\nEND-OBJECTS\nRELATIONS\n"
         "on bottle:0 table:0\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")


def _turn(world, lids: Lids, radians: float, *, pads: int = 2, below_top: float = 0.02, drag: float = 0.0) -> None:
    """The left hand at the bottle's top, pointing down, turned ``radians`` about the vertical in
    small steps, ``pads`` of its pads on the bottle; ``drag``: m the bottle moves along."""
    top = lids._top("bottle0")
    centre = world.position("bottle0")
    pad_ids = lids._pads["l"]
    steps = 20
    body = world.model.body(world.things["bottle0"].body_id)
    adr = world.model.jnt_qposadr[body.jntadr[0]]
    for i in range(steps + 1):
        yaw = radians * i / steps
        down = np.array([0.0, 0.0, -1.0])
        across = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
        rot = np.column_stack([down, across, np.cross(down, across)])
        here = np.array([centre[0], centre[1], top - below_top])
        world.site = lambda name, _h=here, _r=rot: (_h, _r, np.zeros(3)) if name == "l_tcp" else \
            (np.zeros(3), np.eye(3), np.zeros(3))
        world.touching_geoms = lambda name, geoms: set(list(pad_ids)[:pads]) if name == "bottle0" and \
            set(geoms) == set(pad_ids) else set()
        world.data.qpos[adr] = centre[0] + drag * i / steps
        mujoco.mj_forward(world.model, world.data)
        lids.update(world.data, CHECK_EVERY_S)


@pytest.mark.parametrize("turn, pads, below_top, drag, closed_after", [
    (1.4, 2, 0.02, 0.0, False),           # held by its cap, turned anticlockwise: off
    (TURN_RAD * 0.8, 2, 0.02, 0.0, True),  # not far enough
    (1.4, 1, 0.02, 0.0, True),            # one pad only: not held
    (1.4, 2, 0.08, 0.0, True),            # held by its body, not its cap
    (1.4, 2, 0.02, 0.1, True),            # the bottle dragged round with the hand
])
def test_a_cap_comes_off_only_held_at_the_top_and_turned_far_enough(turn, pads, below_top, drag, closed_after):
    world = build_world(parse_scene_text(SCENE))
    world.closed_lids.add("bottle0")
    lids = Lids(world)
    assert lids.capped == ["bottle0"]
    _turn(world, lids, turn, pads=pads, below_top=below_top, drag=drag)
    assert ("bottle0" in world.closed_lids) == closed_after


def test_turned_clockwise_the_cap_goes_on_again():
    world = build_world(parse_scene_text(SCENE))
    world.closed_lids.discard("bottle0")
    lids = Lids(world)
    _turn(world, lids, -1.4)
    assert "bottle0" in world.closed_lids
