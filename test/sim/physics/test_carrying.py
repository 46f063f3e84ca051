"""What is carried keeps clear of furniture where the base stops (skills._carried_clear); a long thing
(a broom) is carried across the front, clear of what stands about and of the person it is taken to."""
from __future__ import annotations

from math import cos, sin
from pathlib import Path

import numpy as np

from affplan_ros.core.files.scene_io import load_scene, parse_scene_text
from affplan_ros.sim.physics.handover import handover
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


def test_a_broom_is_swung_clear_carried_across_and_handed_to_the_person_it_never_touches(shared_datasets):
    """knowledge#14: complex_kitchen4's 1.2 m broom, taken from the back of the counter beside a
    paper towel and the watering can. Swung straight to the carry pose it swept both off the
    counter, and carried pointing ahead it arrived pressed into the person, the arm blocked
    holding it out. Now it goes round them, is carried level across the base's front (covered
    by a row of small discs, not one 1.3 m disc), the base stops where it keeps clear of the
    person, and the person takes it."""
    scene = load_scene(shared_datasets / "autogpt_p" / "autogpt_p" / "data" / "evaluation" / "scenes"
                       / "complex_kitchen4.txt")
    sk = Skills(build_world(scene))
    w = sk.world
    counter = {n: w.position(n) for n in ("paper_towel0", "watering_can0")}
    assert sk.navigate("counter0", near="broom0").success
    assert sk.grasp("broom0", along="counter0").success
    assert sk._tuck().ok
    for name, at in counter.items():
        assert np.linalg.norm(w.position(name) - at) < 0.01, name
    length = w.rotation_to_base(w.rotation("broom0"))[:, 0]
    assert abs(length[1]) > 0.95 and abs(length[2]) < 0.1             # across the front, level
    discs = sk._carried_discs()
    assert len(discs) > 3 and max(r for _, _, r in discs) < 0.25
    assert sk.navigate("human0").success
    assert "human0" not in w.contacts("broom0")
    result = handover(sk, "broom0", "human0")
    assert result.success, result.reason
    assert w.grips.get("broom0") == "human0"
