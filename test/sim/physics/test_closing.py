"""The look ahead of closing.py leaves the world's state exactly as it was."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.sim.physics.closing import joint_at
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def test_a_look_ahead_at_another_door_angle_is_undone_exactly():
    world = build_world(load_scene(KITCHEN))
    joint = world.things["refrigerator0"].joint
    before = world.data.qpos.copy(), world.data.geom_xpos.copy(), world.data.time
    with joint_at(world, joint, 1.0):
        assert abs(world.qpos(joint) - 1.0) < 1e-9
        assert any(name == "refrigerator0 (open)" for name, _ in world.obstacles())
    assert np.array_equal(world.data.qpos, before[0])
    assert np.array_equal(world.data.geom_xpos, before[1])
    assert world.data.time == before[2]
