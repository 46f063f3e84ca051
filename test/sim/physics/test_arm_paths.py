"""Collision-free arm paths (sim/physics/arm_paths.py): OMPL plans, the physics shows the difference."""
from __future__ import annotations

from pathlib import Path

import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.sim.physics.arm_paths import ArmPathPlanner
from affplan_ros.sim.physics.ik import top_down_rotation
from affplan_ros.sim.physics.skills import LIFT, PRE_GRASP, Skills
from affplan_ros.sim.physics.world import build_world

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def right_arm_over_the_cup() -> tuple[Skills, dict, dict]:
    """The robot in front of the bucket on the counter; the right arm is to go from its tucked
    pose to above the cup, which stands beyond the bucket on the left."""
    sk = Skills(build_world(load_scene(KITCHEN)))
    assert sk.navigate("counter0", near="bucket0").success
    start = sk.control.joints()
    grasp, yaws = sk.grasp_candidates("cup0")[0]
    pre = sk._plan_descent("r", sk._grasp_poses("r", grasp, yaws), PRE_GRASP, LIFT)[0]
    return sk, start, {**start, **pre}


def test_the_straight_move_knocks_the_bucket_the_planned_path_goes_round_it_the_same_every_time():
    sk, start, goal = right_arm_over_the_cup()
    w = sk.world
    bucket = w.position("bucket0").copy()
    planner = ArmPathPlanner(w)
    halfway = {j: start[j] + 0.5 * (goal[j] - start[j]) for j in goal}
    assert planner.collision("r", halfway) == ["bucket0"]
    assert planner.collision("r", goal) == []
    # The joints interpolated straight: the arm gets there, through the bucket (of water).
    assert sk.control.follow([goal]).ok
    assert np.linalg.norm((w.position("bucket0") - bucket)[:2]) > 0.03

    sk, start, goal = right_arm_over_the_cup()
    w = sk.world
    path = ArmPathPlanner(w).path("r", start, goal)
    assert path is not None and path.planned and len(path.waypoints) >= 2
    again = ArmPathPlanner(w).path("r", start, goal)            # repeatable: the same query, the same path
    assert again is not None and again.waypoints == path.waypoints and again.checks == path.checks
    assert path.waypoints[-1] == goal
    assert sk.control.follow(path.waypoints).ok
    assert np.linalg.norm((w.position("bucket0") - bucket)[:2]) < 0.005
    tcp = w.site("r_tcp")[0]
    assert np.linalg.norm(tcp[:2] - w.position("cup0")[:2]) < 0.03      # above the cup
    assert path.seconds < 2.0


def test_a_clear_line_is_kept_and_the_world_is_not_touched():
    sk = Skills(build_world(load_scene(KITCHEN)))
    assert sk.navigate("counter0", near="cup0").success
    w = sk.world
    start = sk.control.joints()
    grasp, yaws = sk.grasp_candidates("cup0")[0]
    side = next(s for s in ("l", "r") if sk._plan_descent(s, sk._grasp_poses(s, grasp, yaws), PRE_GRASP, LIFT))
    pre = sk._plan_descent(side, sk._grasp_poses(side, grasp, yaws), PRE_GRASP, LIFT)[0]
    qpos = w.data.qpos.copy()
    path = ArmPathPlanner(w).path(side, start, {**start, **pre})
    assert path is not None and not path.planned and path.waypoints == [{**start, **pre}]
    assert np.array_equal(w.data.qpos, qpos)          # planning ran on a scratch copy


def test_a_goal_inside_the_counter_has_no_path():
    sk = Skills(build_world(load_scene(KITCHEN)))
    assert sk.navigate("counter0", near="cup0").success
    w = sk.world
    start = sk.control.joints()
    top = w.site(w.things["counter0"].top_site)[0][2]
    spot = w.position("cup0") + np.array([0.0, -0.12, 0.0])
    spot[2] = top - 0.03                                       # the hand 3 cm into the counter top
    poses = [(s, w.rotation_to_base(top_down_rotation(yaw))) for s in ("l", "r") for yaw in (0.0, np.pi / 2)]
    goal = next(r.joints for s, rot in poses if (r := sk._solve(s, w.to_base_frame(spot), rot, start)).success)
    side = "l" if any(j.startswith("l_arm") for j in goal) else "r"
    planner = ArmPathPlanner(w)
    assert "counter0" in planner.collision(side, {**start, **goal})
    assert planner.path(side, start, {**start, **goal}) is None
