"""The hardware's rules for tools (sim/hardware/tools.py), without ROS: a held knife that comes
down onto a tomato lying on a board cuts it, and not the board, nor when it only rests there or
is not held; what lies in water gets wet; a wet sponge drawn across a table's top cleans it, a dry
one or one in the air does not. Held means both pads of a robot hand on it: here the hand is
replaced by saying what it holds (``_in_hands``); everything else is the physics state."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.sim.hardware.tools import CHECK_EVERY_S, WIPE_M, Tools
from affplan_ros.sim.physics.bodies import vertical_half
from affplan_ros.sim.physics.world import build_world

SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncutting_board:0\ntomato:0\nkitchen_knife:0\nbowl:0\nsponge:0\n"
         "water:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non cutting_board:0 table:0\non tomato:0 cutting_board:0\n"
         "on kitchen_knife:0 table:0\non bowl:0 table:0\non sponge:0 table:0\nliquid_in water:0 bowl:0\n"
         "at robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")


@pytest.fixture(scope="module")
def built():
    world = build_world(parse_scene_text(SCENE))
    return world, world.data.qpos.copy()       # as built: everything settled where it lies


@pytest.fixture
def world(built):
    world, settled = built
    world.data.qpos[:] = settled
    world.data.qvel[:] = 0.0
    mujoco.mj_forward(world.model, world.data)
    for kept in (world.chopped, world.wet, world.cleaned):
        kept.clear()
    return world


def _put(world, name: str, position) -> None:
    """The free body of ``name`` at ``position`` (lying as it was built), at rest."""
    body = world.model.body(world.things[name].body_id)
    adr, dof = world.model.jnt_qposadr[body.jntadr[0]], world.model.jnt_dofadr[body.jntadr[0]]
    world.data.qpos[adr:adr + 3] = position
    world.data.qvel[dof:dof + 6] = 0.0
    mujoco.mj_forward(world.model, world.data)


def _tools(world, monkeypatch, held=()) -> Tools:
    tools = Tools(world, load_oam())
    monkeypatch.setattr(tools, "_in_hands", lambda pads: set(held))
    return tools


def _look(tools: Tools) -> None:
    tools.update(tools.world.data, CHECK_EVERY_S)


def _top(world, name: str) -> float:
    return float(world.position(name)[2] + vertical_half(world.things[name].props, world.rotation(name)))


def _knife_down_onto(world, tools, target: str) -> None:
    """The knife's middle over ``target``, 2 cm above its top, then with its bottom 2 mm into it."""
    half = vertical_half(world.things["kitchen_knife0"].props, world.rotation("kitchen_knife0"))
    x, y, _ = world.position(target)
    for bottom in (_top(world, target) + 0.02, _top(world, target) - 0.002):
        _put(world, "kitchen_knife0", (x, y, bottom + half))
        _look(tools)


@pytest.mark.parametrize("held, chopped", [(("kitchen_knife0",), {"tomato0"}), ((), set())])
def test_a_held_knife_brought_down_onto_a_tomato_cuts_it(world, monkeypatch, held, chopped):
    tools = _tools(world, monkeypatch, held)
    assert tools.blades == ["kitchen_knife0"] and "tomato0" in tools.food
    _knife_down_onto(world, tools, "tomato0")
    assert world.chopped == chopped


def test_a_knife_resting_on_a_tomato_or_cutting_the_board_cuts_nothing(world, monkeypatch):
    tools = _tools(world, monkeypatch, ("kitchen_knife0",))
    _knife_down_onto(world, tools, "tomato0")
    world.chopped.clear()
    _look(tools)                 # still there, not coming down: no second cut
    _look(tools)
    assert world.chopped == set()
    _put(world, "tomato0", (0.0, 0.0, 3.0))   # out of the way: the knife comes down onto the board
    _knife_down_onto(world, tools, "cutting_board0")
    assert world.chopped == set()


def test_what_lies_in_water_gets_wet(world, monkeypatch):
    tools = _tools(world, monkeypatch)
    _look(tools)
    assert world.wet == set()    # the sponge lies on the table
    floor = world.site(world.things["bowl0"].inner_site)[0]
    _put(world, "sponge0", floor + np.array([0.0, 0.0, 0.02]))
    _look(tools)
    assert world.wet == {"sponge0"}


@pytest.mark.parametrize("wet, height, cleaned", [(True, 0.0, {"table0"}), (False, 0.0, set()),
                                                  (True, 0.1, set())])
def test_a_wet_sponge_drawn_across_the_table_cleans_it(world, monkeypatch, wet, height, cleaned):
    tools = _tools(world, monkeypatch, ("sponge0",))
    if wet:
        world.wet.add("sponge0")
    start = world.position("sponge0") + np.array([0.0, 0.0, height - 0.001])
    steps = 12
    for k in range(steps + 1):   # to and fro, 1.5 x WIPE_M in all
        offset = (k if k <= steps // 2 else steps - k) * 0.75 * WIPE_M / (steps // 2)
        _put(world, "sponge0", start + np.array([0.0, offset, 0.0]))   # towards the table's back, clear of the bowl
        _look(tools)
    assert world.cleaned == cleaned
