"""The simulated robot's hardware, without ROS: its URDF describes the physics' robot (a forward
kinematics of the URDF lands where the physics has the gripper), its frames and joint states are
read from the physics, and its gripper controller tells an empty hand from a held object."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.hardware.description import robot_urdf
from affplan_ros.sim.hardware.grippers import GripperController
from affplan_ros.sim.hardware.names import HardwareNames, HardwareNamesError
from affplan_ros.sim.hardware.state import RobotState
from affplan_ros.sim.physics.world import build_world

ROOT = Path(__file__).resolve().parents[3]
NAMES = ROOT / "config" / "hardware" / "tiago.yaml"
# The smallest world with a robot: one table, one cup on it.
SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncup:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non cup:0 table:0\n"
         "at robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")


@pytest.fixture(scope="module")
def world():
    return build_world(parse_scene_text(SCENE))


@pytest.fixture(scope="module")
def names():
    return HardwareNames.from_file(NAMES)


def _pose(origin: ET.Element | None) -> np.ndarray:
    t = np.eye(4)
    if origin is not None:
        t[:3, :3] = Rotation.from_euler("xyz", [float(v) for v in origin.get("rpy", "0 0 0").split()]).as_matrix()
        t[:3, 3] = [float(v) for v in origin.get("xyz", "0 0 0").split()]
    return t


def urdf_fk(urdf: str, joints: dict[str, float], frame: str, root: str = "base_footprint") -> np.ndarray:
    """``frame`` in ``root`` from the URDF alone and the joints' values (what a robot's tf does)."""
    joints_by_child = {j.find("child").get("link"): j for j in ET.fromstring(urdf).iter("joint")}
    t = np.eye(4)
    link = frame
    while link != root:
        j = joints_by_child[link]
        motion = np.eye(4)
        axis = np.array([float(v) for v in (j.find("axis").get("xyz") if j.find("axis") is not None
                                             else "1 0 0").split()])
        q = joints.get(j.get("name"), 0.0)
        if j.get("type") == "revolute":
            motion[:3, :3] = Rotation.from_rotvec(axis * q).as_matrix()
        elif j.get("type") == "prismatic":
            motion[:3, 3] = axis * q
        t = _pose(j.find("origin")) @ motion @ t
        link = j.find("parent").get("link")
    return t


def physics_in_base(world, site: str) -> np.ndarray:
    d, m = world.data, world.model
    base = m.body("base").id
    t_base, t_site = np.eye(4), np.eye(4)
    t_base[:3, :3], t_base[:3, 3] = d.xmat[base].reshape(3, 3), d.xpos[base]
    t_site[:3, :3], t_site[:3, 3] = d.site_xmat[m.site(site).id].reshape(3, 3), d.site_xpos[m.site(site).id]
    return np.linalg.inv(t_base) @ t_site


def test_the_urdf_names_every_joint_with_the_physics_limits(world, names):
    urdf = robot_urdf(world.model, names)
    root = ET.fromstring(urdf)
    movable = {j.get("name"): j for j in root.iter("joint") if j.get("type") != "fixed"}
    assert set(movable) == set(names.joints.values())
    elbow = movable["arm_right_4_joint"].find("limit")
    lo, hi = world.model.jnt_range[world.model.joint("r_arm_4").id]
    assert (float(elbow.get("lower")), float(elbow.get("upper"))) == pytest.approx((lo, hi), abs=1e-5)
    assert movable["torso_lift_joint"].get("type") == "prismatic"
    links = {link.get("name") for link in root.iter("link")}
    assert {"base_footprint", "base_link", "gripper_right_grasping_frame", "head_front_camera_link",
            "head_front_camera_rgb_optical_frame"} <= links
    # Every joint's parent and child is a link, and every link but the root is some joint's child.
    children = [j.find("child").get("link") for j in root.iter("joint")]
    assert sorted(children) == sorted(links - {"base_footprint"})


def test_forward_kinematics_of_the_urdf_land_on_the_physics_gripper(world, names):
    """Move the arm away from home, then the URDF with the joint states must put each hand's
    grasping frame where the physics has it: origins, axes and rpy all count."""
    urdf = robot_urdf(world.model, names)
    state = RobotState(world.model, names)
    d, m = world.data, world.model
    for side in ("r", "l"):
        for i, q in enumerate((0.4, -0.6, 0.7, 1.1, -0.5, 0.6, 0.3), start=1):
            d.qpos[m.joint(f"{side}_arm_{i}").qposadr[0]] = q
    d.qpos[m.joint("torso_lift").qposadr[0]] = 0.2
    mujoco.mj_forward(m, d)
    readings = state.joints(d)
    joints = dict(zip(readings.names, readings.positions))
    for site, frame in (("r_tcp", "gripper_right_grasping_frame"), ("l_tcp", "gripper_left_grasping_frame")):
        fk, truth = urdf_fk(urdf, joints, frame), physics_in_base(world, site)
        assert np.allclose(fk[:3, 3], truth[:3, 3], atol=1e-4), (frame, fk[:3, 3], truth[:3, 3])
        assert np.allclose(fk[:3, :3], truth[:3, :3], atol=1e-4), frame


def test_the_camera_optical_frame_looks_where_the_physics_camera_looks(world, names):
    urdf = robot_urdf(world.model, names)
    d, m = world.data, world.model
    d.qpos[m.joint("head_pan").qposadr[0]], d.qpos[m.joint("head_tilt").qposadr[0]] = 0.5, 0.4
    mujoco.mj_forward(m, d)
    readings = RobotState(m, names).joints(d)
    fk = urdf_fk(urdf, dict(zip(readings.names, readings.positions)), "head_front_camera_rgb_optical_frame")
    base = m.body("base").id
    cam = m.camera("head_camera").id
    r_base = d.xmat[base].reshape(3, 3)
    looks = r_base.T @ (-d.cam_xmat[cam].reshape(3, 3)[:, 2])     # a MuJoCo camera looks along its -z
    assert np.allclose(fk[:3, 2], looks, atol=1e-4)                # an optical frame along its +z
    assert np.allclose(fk[:3, 3], r_base.T @ (d.cam_xpos[cam] - d.xpos[base]), atol=1e-4)


def test_odometry_and_links_follow_the_physics(world, names):
    state = RobotState(world.model, names)
    odom = state.odometry(world.data)
    base = world.base_pose()
    assert (odom.parent, odom.child) == ("odom", "base_footprint")
    assert odom.position[:2] == pytest.approx((base.x, base.y), abs=1e-6)
    assert 2 * np.arctan2(odom.quaternion[2], odom.quaternion[3]) == pytest.approx(base.yaw, abs=1e-6)
    links = {(f.parent, f.child) for f in state.links(world.data)}
    assert ("base_link", "torso_lift_link") in links and ("arm_right_6_link", "arm_right_7_link") in links


def test_the_gripper_closes_to_its_limit_on_nothing_and_opens_to_its_stroke(world, names):
    gripper = GripperController(world.model, ("r_finger_a", "r_finger_b"), world.spec.finger_stroke)

    def run(position: float):
        gripper.command(position, 40.0, world.data)
        return _until_done(world, gripper)

    closed = run(0.0)
    assert closed.reached_goal and not closed.stalled and closed.position < 0.002
    opened = run(0.09)
    assert opened.reached_goal and opened.position == pytest.approx(0.09, abs=0.004)
    half = run(0.05)
    assert half.reached_goal and half.position == pytest.approx(0.05, abs=0.004)


def test_names_that_the_model_lacks_are_refused(world, tmp_path):
    bad = tmp_path / "names.yaml"
    bad.write_text(NAMES.read_text().replace("r_arm_4: arm_right_4_joint", "r_arm_9: arm_right_4_joint"))
    with pytest.raises(HardwareNamesError, match="joint r_arm_9"):
        RobotState(world.model, HardwareNames.from_file(bad))
    with pytest.raises(HardwareNamesError, match="missing or malformed"):
        (tmp_path / "empty.yaml").write_text("joints: {}\n")
        HardwareNames.from_file(tmp_path / "empty.yaml")


def _until_done(world, controller, seconds: float = 20.0):
    """Step the physics with ``controller`` updated every 10 ms (as sim_hardware's loop does) until
    its command ends; its outcome."""
    step = world.steps(0.01)
    for _ in range(int(seconds / 0.01)):
        controller.update(world.data, step * world.model.opt.timestep)
        world.step(step)
        outcome = controller.wait(0.0)
        if outcome is not None:
            return outcome
    raise AssertionError(f"the command did not end within {seconds:g} simulated seconds")


def _follow(world, controller, points, **tolerances):
    controller.command(list(controller.names), points, world.data, **tolerances)
    return _until_done(world, controller)


def _arm(world, names):
    from affplan_ros.sim.hardware.trajectories import TrajectoryController

    spec = next(c for c in names.trajectory_controllers if c.name == "arm_right")
    return TrajectoryController(world.model, spec.joints, [names.joints[j] for j in spec.joints])


def test_a_joint_trajectory_is_followed_to_its_goal(world, names):
    from affplan_ros.sim.hardware.trajectories import TrajectoryError, TrajectoryPoint

    arm = _arm(world, names)
    d, m = world.data, world.model
    now = [float(d.qpos[m.joint(f"r_arm_{i}").qposadr[0]]) for i in range(1, 8)]
    goal = tuple(q + dq for q, dq in zip(now, (0.3, 0.2, -0.2, -0.3, 0.2, -0.2, 0.3)))
    mid = tuple((a + b) / 2 for a, b in zip(now, goal))
    outcome = _follow(world, arm, [TrajectoryPoint(1.0, mid), TrajectoryPoint(2.0, goal)])
    assert outcome.error == TrajectoryError.SUCCESSFUL, outcome.text
    reached = [float(d.qpos[m.joint(f"r_arm_{i}").qposadr[0]]) for i in range(1, 8)]
    assert np.allclose(reached, goal, atol=0.05)


def test_a_goal_the_joint_cannot_reach_and_a_lagging_path_abort_with_their_codes(world, names):
    from affplan_ros.sim.hardware.trajectories import TrajectoryError, TrajectoryPoint

    arm = _arm(world, names)
    d, m = world.data, world.model
    now = [float(d.qpos[m.joint(f"r_arm_{i}").qposadr[0]]) for i in range(1, 8)]
    elbow_top = float(m.jnt_range[m.joint("r_arm_4").id][1])
    beyond = tuple(now[:3]) + (elbow_top + 0.5,) + tuple(now[4:])      # past the elbow's limit
    outcome = _follow(world, arm, [TrajectoryPoint(1.0, beyond)])
    assert outcome.error == TrajectoryError.GOAL_TOLERANCE_VIOLATED and "arm_right_4_joint" in outcome.text
    now = [float(d.qpos[m.joint(f"r_arm_{i}").qposadr[0]]) for i in range(1, 8)]
    fast = tuple(q - 0.8 for q in now[:1]) + tuple(now[1:])
    outcome = _follow(world, arm, [TrajectoryPoint(0.1, fast)], path_tolerance={"arm_right_1_joint": 0.02})
    assert outcome.error == TrajectoryError.PATH_TOLERANCE_VIOLATED and "arm_right_1_joint" in outcome.text


def test_trajectory_goals_that_name_other_joints_or_go_back_in_time_are_refused(world, names):
    from affplan_ros.sim.hardware.trajectories import TrajectoryError, TrajectoryPoint

    arm = _arm(world, names)
    seven = tuple([0.0] * 7)
    assert arm.problem(["arm_right_1_joint"], [TrajectoryPoint(1.0, (0.0,))]).error == TrajectoryError.INVALID_JOINTS
    backwards = [TrajectoryPoint(2.0, seven), TrajectoryPoint(1.0, seven)]
    assert arm.problem(list(arm.names), backwards).error == TrajectoryError.INVALID_GOAL
    assert arm.problem(list(arm.names), [TrajectoryPoint(1.0, seven[:6])]).error == TrajectoryError.INVALID_GOAL
    assert arm.problem(list(reversed(arm.names)), [TrajectoryPoint(1.0, seven)]) is None    # any order


def test_the_base_drives_a_path_and_stops_short_of_what_is_in_its_way(names):
    from affplan_ros.sim.hardware.base import BaseController
    from affplan_ros.sim.physics.navigation import plan_base_path
    from affplan_ros.sim.physics.world import BasePose

    world = build_world(parse_scene_text(SCENE))
    base = BaseController(world.model, world.spec.base_speed, world.spec.base_yaw_rate)
    start = world.base_pose()
    goal = BasePose(start.x + 0.3, start.y - 0.6, start.yaw + 0.5)      # back from the table, turned
    path = plan_base_path(world, start, goal, world.spec.base_radius + 0.05)
    assert path is not None
    base.drive(path, world.data)
    arrived = _until_done(world, base)
    pose = world.base_pose()
    assert arrived.arrived and abs(pose.x - goal.x) < 0.04 and abs(pose.y - goal.y) < 0.04
    assert base.remaining(world.data) < 0.05
    # Straight through the table (no planner): the base is stopped by it, and says so.
    table = world.things["table0"].placement
    base.drive([BasePose(table.x, table.y, pose.yaw)], world.data)
    blocked = _until_done(world, base)
    assert not blocked.arrived and "something is in the way" in blocked.text
