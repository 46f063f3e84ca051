"""The hardware's liquids (sim/hardware/liquids.py), without ROS: a bottle held tipped over a cup
empties into it; tipped beside it, the water is spilled; upright, or with its lid on, nothing
flows. Nothing but the physics state decides."""
from __future__ import annotations

import numpy as np
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.hardware.liquids import POUR_S, Liquids
from affplan_ros.sim.physics.world import build_world

SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncup:0\nbottle:0\nwater:0\nrobot:0\nEND-OBJECTS\nRELATIONS\n"
         "on cup:0 table:0\non bottle:0 table:0\nliquid_in water:0 bottle:0\nat robot:0 table:0\n"
         "END-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")


def _hold(world, name: str, position, tilt: float) -> None:
    """Put the free body of ``name`` at ``position``, its up axis tipped ``tilt`` rad about x."""
    import mujoco

    body = world.model.body(world.things[name].body_id)
    adr = world.model.jnt_qposadr[body.jntadr[0]]
    world.data.qpos[adr:adr + 3] = position
    world.data.qpos[adr + 3:adr + 7] = (np.cos(tilt / 2), np.sin(tilt / 2), 0.0, 0.0)
    mujoco.mj_forward(world.model, world.data)


def _run(liquids: Liquids, seconds: float) -> None:
    for _ in range(int(seconds / 0.02) + 1):
        liquids.update(liquids.world.data, 0.02)


@pytest.mark.parametrize("where, tilt, lid, ends_in", [
    ("over the cup", 1.75, False, "cup0"),
    ("beside the cup", 1.75, False, None),     # spilled
    ("over the cup", 0.3, False, "bottle0"),    # hardly tipped: stays
    ("over the cup", 1.75, True, "bottle0"),    # its lid on
])
def test_a_tipped_bottle_pours_where_its_mouth_is(where, tilt, lid, ends_in):
    world = build_world(parse_scene_text(SCENE))
    if lid:
        world.closed_lids.add("bottle0")
    litres = world.liquids["bottle0"]["water0"]
    cup = world.position("cup0")
    # The bottle's mouth (half its height along its tipped up axis) over the cup's opening, 8 cm up.
    half = 0.5 * 0.25
    mouth_offset = np.array([0.0, -np.sin(tilt), np.cos(tilt)]) * half
    aim = cup + np.array([0.0 if where == "over the cup" else 0.3, 0.0, 0.12])
    _hold(world, "bottle0", aim - mouth_offset, tilt)
    liquids = Liquids(world)
    _run(liquids, POUR_S + 0.3)
    holders = {c: l for c, contents in world.liquids.items() for n, l in contents.items() if n == "water0" and l > 0}
    if ends_in is None:
        assert holders == {} and liquids.spilled == ["bottle0"]
    else:
        assert holders == {ends_in: pytest.approx(litres)} and liquids.spilled == []
