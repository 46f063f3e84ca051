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
