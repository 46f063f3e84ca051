"""Base paths on the occupancy grid (sim/physics/navigation.py): more room kept from named obstacles."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.sim.physics.navigation import plan_base_path, segment_clear
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"
RADIUS = 0.34   # m: the base and its tucked hands, as skills.navigate keeps clear


def _closest(world, path, start, name: str) -> float:
    """The least distance (m) of the straight segments of ``path`` from ``name``'s footprint."""
    place = world.things[name].placement
    points = [(start.x, start.y)] + [(p.x, p.y) for p in path]
    best = np.inf
    for a, b in zip(points, points[1:]):
        t = np.linspace(0.0, 1.0, 200)
        best = min(best, float(place.distance(a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])).min()))
    return best


def test_a_path_keeps_the_wider_berth_asked_for_from_a_person_and_the_goal_stays_reachable():
    world = build_world(load_scene(KITCHEN))
    start, goal = world.approach_pose("counter0"), world.approach_pose("table0")
    plain = plan_base_path(world, start, goal, RADIUS)
    wide = plan_base_path(world, start, goal, RADIUS, wider={"human0": 0.15})
    assert plain is not None and wide is not None
    assert (wide[-1].x, wide[-1].y) == (goal.x, goal.y)
    # The plain path passes the person closer than the wider berth; the other one does not.
    assert _closest(world, plain, start, "human0") < RADIUS + 0.15 - 0.02
    assert _closest(world, wide, start, "human0") >= RADIUS + 0.15 - 0.02
    assert segment_clear(world, (start.x, start.y), (goal.x, goal.y), RADIUS, wider={"human0": 0.15}) == "human0"
