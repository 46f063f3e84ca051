"""What is carried keeps clear of furniture where the base stops (skills._carried_clear)."""
from __future__ import annotations

from math import cos, sin
from pathlib import Path

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.physics.navigation import segment_clear
from affplan_ros.sim.physics.skills import STAND_ASIDE, Skills
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def test_a_box_carried_to_the_side_stands_clear_of_the_open_fridge_door():
    # complex_goal#10: a 30 x 22 cm box carried to the right of the base (a disc 0.4 m ahead,
    # 0.22 m to the side, 0.25 m round) scraped the open fridge door's leaf as the base arrived
    # in front of the fridge and was pushed from between the fingers. The base steps aside
    # along the front to where the box keeps clear of the leaf.
    text = KITCHEN.read_text().replace("closed refrigerator:0", "opened refrigerator:0")
    sk = Skills(build_world(parse_scene_text(text)))
    w = sk.world
    leaf = [n for n, _ in w.obstacles() if n.startswith("refrigerator0 (open)")]
    assert leaf
    goals = [w.approach_pose("refrigerator0", d) for d in STAND_ASIDE]
    touching = []
    for side_y in (-0.22, 0.22):      # the leaf is on one side or the other
        sk._carried_discs = lambda y=side_y: [(0.40, y, 0.25)]
        goal = sk._carried_clear(goals, leaf)
        assert goal is not None
        c, s = cos(goal.yaw), sin(goal.yaw)
        disc = [(c * 0.40 - s * side_y, s * 0.40 + c * side_y, 0.25)]
        assert segment_clear(w, (goal.x, goal.y), (goal.x, goal.y), 0.0, carried=disc, among=leaf) is None
        touching.append(goal is not goals[0])
    # In front of the middle, the box on the leaf's side touched it.
    assert any(touching)
    sk._carried_discs = lambda: []
    assert sk._carried_clear(goals, leaf) is None     # nothing carried: as before


def test_a_path_carrying_something_keeps_it_clear_of_the_open_door_leaf_everywhere():
    # knowledge#27: the milk carried beside the base was driven into the open fridge door's leaf:
    # the grid the path is searched on left out the leaf with the fridge (excluded as not among
    # what the carried thing keeps clear of), and only the shortened path's jumps were checked.
    import numpy as np

    from affplan_ros.sim.physics.navigation import clearance_field, plan_base_path
    from affplan_ros.sim.physics.world import BasePose

    text = KITCHEN.read_text().replace("closed refrigerator:0", "opened refrigerator:0")
    w = build_world(parse_scene_text(text))
    leaf = [n for n, _ in w.obstacles() if n.startswith("refrigerator0 (open)")]
    _, place = next(o for o in w.obstacles() if o[0] in leaf)
    field = clearance_field(w, np.array([place.x]), np.array([place.y]), only=leaf)
    assert field[0, 0] <= 0.0          # the leaf's own middle is in it
    goal = w.approach_pose("refrigerator0", 0.0)
    start = BasePose(0.0, 0.0, goal.yaw)
    for side_y in (-0.22, 0.22):
        c, s = cos(goal.yaw), sin(goal.yaw)
        disc = [(c * 0.40 - s * side_y, s * 0.40 + c * side_y, 0.2)]
        path = plan_base_path(w, start, goal, w.spec.base_radius, carried=disc, among=leaf)
        if path is None:
            continue
        points = [(start.x, start.y)] + [(p.x, p.y) for p in path[:-1]]
        for a, b in zip(points, points[1:]):
            assert segment_clear(w, a, b, 0.0, carried=disc, among=leaf) is None, (a, b, side_y)
