"""The referee and the head camera of the simulated hardware, without ROS: the referee's boxes are
where the physics has the things (a cup's centre half its height above the table's top), doors
and lids say how far they are open, a liquid goes with its container; the camera renders a copy
of the state, so the physics may move on while a frame renders."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.hardware.camera import FrameSchedule, SnapshotCamera
from affplan_ros.sim.hardware.referee import NOT_ARTICULATED, referee_records
from affplan_ros.sim.physics.camera import HeadCamera
from affplan_ros.sim.physics.world import build_world

SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncup:0\nbottle:0\nrefrigerator:0\nbowl:0\nwater:0\nhuman:0\n"
         "robot:0\nEND-OBJECTS\nRELATIONS\non cup:0 table:0\non bottle:0 table:0\nclosed bottle:0\n"
         "on bowl:0 table:0\nliquid_in water:0 bowl:0\nclosed refrigerator:0\nat human:0 table:0\n"
         "at robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nrefrigerator:0\nEND-LOCATIONS\n")


@pytest.fixture(scope="module")
def world():
    return build_world(parse_scene_text(SCENE))


def _by_name(world) -> dict:
    return {r.name: r for r in referee_records(world)}


def test_a_cup_on_the_table_is_centred_half_its_height_above_the_top(world):
    records = _by_name(world)
    assert set(records) == {"table0", "cup0", "bottle0", "refrigerator0", "bowl0", "water0", "human0"}  # no robot
    table, cup = records["table0"], records["cup0"]
    assert (table.kind, cup.kind, cup.class_name) == ("furniture", "object", "cup")
    assert table.size == pytest.approx((1.2, 0.8, 0.75)) and cup.size == pytest.approx((0.08, 0.08, 0.1))
    top = table.position[2] + table.size[2] / 2
    assert top == pytest.approx(world.site("table0/top")[0][2], abs=1e-6)    # the box reaches the top surface
    assert cup.position[2] == pytest.approx(top + cup.size[2] / 2, abs=0.005)
    assert cup.position == pytest.approx(tuple(world.position("cup0")), abs=1e-9)   # the body's origin is its centre
    # On the table, not beside it: inside its footprint (a table turned by its yaw).
    yaw = 2 * np.arctan2(table.quaternion[2], table.quaternion[3])
    offset = np.array(cup.position[:2]) - np.array(table.position[:2])
    local = np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]]) @ offset
    assert np.all(np.abs(local) < np.array(table.size[:2]) / 2)
    assert table.open_fraction == cup.open_fraction == NOT_ARTICULATED


def test_doors_and_lids_say_how_far_they_are_open_and_a_liquid_goes_with_its_container(world):
    fridge = world.things["refrigerator0"]
    records = _by_name(world)
    assert records["refrigerator0"].open_fraction == pytest.approx(0.0, abs=0.01)
    assert records["bottle0"].open_fraction == 0.0           # its cap on (the scene closes it)
    adr = world.model.joint(fridge.joint).qposadr[0]
    saved = world.data.qpos[adr]
    try:
        world.data.qpos[adr] = 0.5 * fridge.joint_open
        world.closed_lids.discard("bottle0")
        records = _by_name(world)
        assert records["refrigerator0"].open_fraction == pytest.approx(0.5)
        assert records["bottle0"].open_fraction == 1.0
    finally:
        world.data.qpos[adr] = saved
        world.closed_lids.add("bottle0")
    water, bowl = records["water0"], records["bowl0"]
    assert water.kind == "liquid" and (water.position, water.size) == (bowl.position, bowl.size)
    held = world.liquids.pop("bowl0")
    try:
        assert "water0" not in _by_name(world)     # poured out: nowhere to report it
    finally:
        world.liquids["bowl0"] = held


def test_a_door_says_where_its_handle_and_hinge_are_and_the_handle_turns_with_it(world):
    """What the robot needs to open it: the handle on the leaf, a point on the hinge's axis and
    the axis it opens about; opened, the handle has swung round that axis."""
    fridge = world.things["refrigerator0"]
    joint = _by_name(world)["refrigerator0"].joint
    assert joint.type == "hinge" and joint.back_handle is None and joint.open == pytest.approx(fridge.joint_open)
    assert joint.position == pytest.approx(0.0, abs=0.01)
    assert joint.handle == pytest.approx(tuple(world.site(fridge.handle_site)[0]), abs=1e-9)
    assert abs(joint.axis[2]) == pytest.approx(1.0)            # an upright hinge
    adr = world.model.joint(fridge.joint).qposadr[0]
    saved = world.data.qpos[adr]
    try:
        world.data.qpos[adr] = 1.0
        mujoco.mj_forward(world.model, world.data)
        opened = _by_name(world)["refrigerator0"].joint
    finally:
        world.data.qpos[adr] = saved
        mujoco.mj_forward(world.model, world.data)
    h0, h1, o = (np.array(v[:2]) for v in (joint.handle, opened.handle, joint.origin))
    assert np.linalg.norm(h1 - o) == pytest.approx(np.linalg.norm(h0 - o), abs=1e-6)   # round the hinge ...
    turned = np.arctan2(*(h1 - o)[::-1]) - np.arctan2(*(h0 - o)[::-1])
    assert np.remainder(turned * np.sign(joint.axis[2]) + np.pi, 2 * np.pi) - np.pi == pytest.approx(1.0, abs=1e-6)
    assert _by_name(world)["table0"].joint is None


def test_a_fridge_says_where_things_stand_inside_it(world):
    """Its inner level is the surface things kept in it stand on (the shelf of a tall cabinet,
    not its floor under it); a table and a cup have none."""
    records = _by_name(world)
    (level,) = records["refrigerator0"].inner_levels
    assert level == pytest.approx(world.site("refrigerator0/inner")[0][2], abs=1e-6)
    assert records["refrigerator0"].position[2] - records["refrigerator0"].size[2] / 2 + 0.3 < level < 1.2
    assert records["table0"].inner_levels == records["cup0"].inner_levels == ()


def test_a_person_is_the_box_round_their_body_and_a_tipped_object_turns_its_box(world):
    person = _by_name(world)["human0"]
    # human_xml: a capsule of radius 0.22 from 0.25 m to 1.5 m above the floor.
    assert person.kind == "agent"
    assert person.size == pytest.approx((0.44, 0.44, 1.25 + 0.44), abs=1e-6)
    assert person.position[2] == pytest.approx(0.25 - 0.22 + person.size[2] / 2, abs=1e-6)
    cup = world.things["cup0"]
    adr = world.model.jnt_qposadr[world.model.body_jntadr[cup.body_id]]
    saved = world.data.qpos[adr:adr + 7].copy()
    try:
        world.data.qpos[adr + 3:adr + 7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]   # on its side
        mujoco.mj_kinematics(world.model, world.data)
        x, y, z, w = _by_name(world)["cup0"].quaternion
        assert (w, x) == pytest.approx((np.cos(np.pi / 4), np.sin(np.pi / 4)), abs=1e-9)
    finally:
        world.data.qpos[adr:adr + 7] = saved
        mujoco.mj_kinematics(world.model, world.data)


def test_the_camera_renders_the_copied_state_while_the_physics_moves_on(world):
    snapshot = SnapshotCamera(world, 96, 72)
    direct = HeadCamera(world, 96, 72)
    try:
        mujoco.mj_forward(world.model, world.data)
        taken = snapshot.copy_state()
        before = direct.render()
        pan = world.model.joint("head_pan").qposadr[0]
        saved = world.data.qpos[pan]
        world.data.qpos[pan] = saved + 0.6         # the head turns after the copy was taken
        mujoco.mj_forward(world.model, world.data)
        frame = snapshot.render()
        world.data.qpos[pan] = saved
        mujoco.mj_forward(world.model, world.data)
    finally:
        snapshot.close()
        direct.close()
    assert frame.sim_time == taken == before.sim_time
    assert np.array_equal(frame.rgb, before.rgb) and np.allclose(frame.depth, before.depth)
    assert np.allclose(frame.position, before.position) and np.allclose(frame.rotation, before.rotation)


def test_frames_are_due_every_period_of_simulated_time_and_a_late_one_is_not_made_up():
    s = FrameSchedule(0.5)
    assert s.is_due(0.0)
    s.taken(0.1)
    assert not s.is_due(0.5) and s.is_due(0.6)
    assert s.wait_s(0.5, real_time_factor=1.0) == pytest.approx(0.1)
    assert s.wait_s(0.5, real_time_factor=0.0) == pytest.approx(0.002)   # as fast as it goes: look again soon
    assert s.wait_s(0.0, real_time_factor=0.1) == pytest.approx(0.1)      # at most 0.1 s: a stop is noticed
    s.taken(0.6)
    assert s.due == pytest.approx(1.1)              # on time: on the grid
    s.taken(2.3)                                    # rendering fell behind: due at once, nothing queued
    assert s.is_due(2.3) and not s.is_due(2.2)
    s.taken(2.3)
    assert s.due == pytest.approx(2.8)
