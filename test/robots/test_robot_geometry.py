"""The robot software's geometry, without ROS: kinematics on the URDF the simulated Tiago++
publishes (the same text a real robot's robot_state_publisher would), collision-free paths and
their timing, grasp poses from a thing's box and class, standing places and free spots."""
from __future__ import annotations

import math

import numpy as np
import pytest

from affplan_ros.core.knowledge.objects import load_object_table
from affplan_ros.robots.drivers import Box
from affplan_ros.robots.grasping import DOWN, TIP_CLEARANCE, grasps, tip_clearance
from affplan_ros.robots.kinematics import KinematicsError, RobotKinematics
from affplan_ros.robots.motion import Limits, joint_path, line_path, segment_collision, timed
from affplan_ros.robots.places import free_spots, line_up, standing_places, support_of
from affplan_ros.robots.poses import FixedPoses, SeenObject

TCP = "gripper_right_grasping_frame"
ARM = [f"arm_right_{i}_joint" for i in range(1, 8)]
TUCKED = dict(zip(ARM + ["torso_lift_joint"], (0.0, -1.4, 0.0, 2.2, 0.0, 0.77, 0.0, 0.3)))


def _down(yaw: float = 0.0) -> np.ndarray:
    x, y = np.array([0.0, 0.0, -1.0]), np.array([-math.sin(yaw), math.cos(yaw), 0.0])
    return np.column_stack([x, y, np.cross(x, y)])


@pytest.fixture(scope="module")
def kin():
    from affplan_ros.env import config_file
    from affplan_ros.sim.hardware.description import robot_urdf
    from affplan_ros.sim.hardware.names import HardwareNames
    from affplan_ros.sim.physics.world import build_world
    from affplan_ros.sim.world_scenario import load_scenario

    world = build_world(load_scenario(config_file("scenarios/kitchen.txt", "")).scene)
    return RobotKinematics(robot_urdf(world.model, HardwareNames.from_file(config_file("hardware/tiago.yaml", ""))))


def test_the_urdf_chain_and_an_ik_solution_that_forward_kinematics_confirms(kin):
    assert kin.chain(TCP) == ["torso_lift_joint", *ARM]
    kin.set_obstacles([])
    solution = kin.solve(TCP, (0.55, -0.2, 0.85), _down(), TUCKED, ARM)
    assert solution.ok, solution.why
    position, rotation = kin.forward({**TUCKED, **solution.joints}, TCP)
    assert np.linalg.norm(position - (0.55, -0.2, 0.85)) < 0.005
    assert np.allclose(rotation[:, 0], (0, 0, -1), atol=0.03)
    for name, value in solution.joints.items():
        lo, hi = kin.limits(name)
        assert lo <= value <= hi


def test_a_hand_pointing_down_turns_about_the_vertical_as_its_wrists_axis_says(kin):
    """A cap is turned by the wrist's roll: which way round it turns the hand seen from above is
    the sign of the roll's axis (pointing down: a positive roll turns it clockwise)."""
    kin.set_obstacles([])
    solution = kin.solve(TCP, (0.55, -0.2, 0.85), _down(), TUCKED, ARM)
    assert solution.ok, solution.why
    joints = {**TUCKED, **solution.joints}
    axis = kin.axis(joints, ARM[-1])
    assert abs(axis[2]) > 0.95 and np.linalg.norm(axis) == pytest.approx(1.0)

    def heading(q) -> float:
        across = kin.forward(q, TCP)[1][:, 1]
        return math.atan2(across[1], across[0])

    turned = heading({**joints, ARM[-1]: joints[ARM[-1]] + 0.3}) - heading(joints)
    assert math.remainder(turned, math.tau) == pytest.approx(0.3 * math.copysign(1.0, axis[2]), abs=0.02)


def test_out_of_reach_and_in_collision_are_told_apart(kin):
    kin.set_obstacles([])
    far = kin.solve(TCP, (1.5, -0.2, 0.85), _down(), TUCKED, ARM)
    assert not far.ok and "out of reach" in far.why
    kin.set_obstacles([Box("table", (0.75, 0.0, 0.37), (0.3, 0.5, 0.375))])
    low = kin.solve(TCP, (0.55, -0.2, 0.76), _down(), TUCKED, ARM)
    assert not low.ok and "obstacle/table" in low.why
    with pytest.raises(KinematicsError):
        kin.chain("no_such_link")
    with pytest.raises(KinematicsError):
        RobotKinematics("<sdf/>")


def test_a_path_around_a_wall_is_found_checked_and_timed_within_the_limits(kin):
    kin.set_obstacles([])
    goal = kin.solve(TCP, (0.55, -0.2, 0.95), _down(), TUCKED, ARM)
    assert goal.ok, goal.why
    wall = Box("wall", (0.35, -0.2, 0.9), (0.02, 0.3, 0.3))
    # Planned around the wall with 1 cm to spare (checks at discrete steps can graze a corner
    # between two of them), checked against the wall itself.
    kin.set_obstacles([Box("wall", wall.centre, tuple(h + 0.01 for h in wall.half))])
    a, b = np.array([TUCKED[n] for n in ARM]), np.array([goal.joints[n] for n in ARM])
    assert segment_collision(kin, TUCKED, ARM, a, b), "the straight line should cross the wall"
    path = joint_path(kin, TUCKED, {**TUCKED, **goal.joints}, ARM)
    assert path.waypoints is not None, path.why
    assert len(path.waypoints) > 2
    kin.set_obstacles([wall])
    for p, q in zip(path.waypoints, path.waypoints[1:]):
        assert not segment_collision(kin, TUCKED, ARM, p, q)
    limits = Limits({n: 0.8 for n in ARM}, {n: 1.5 for n in ARM})
    trajectory = timed(ARM, path.waypoints, limits)
    assert np.allclose(trajectory.positions[-1], b, atol=1e-3) and np.allclose(trajectory.positions[0], a, atol=1e-3)
    assert max(abs(v) for point in trajectory.velocities for v in point) <= 0.8 + 1e-3
    assert not any(trajectory.velocities[-1])
    assert list(trajectory.times) == sorted(trajectory.times)


def test_an_arm_resting_a_hair_past_a_stop_is_planned_from_inside_its_limits(kin):
    """OMPL refuses a start outside its bounds: the path starts where the arm is, then steps
    inside the limits, and goes round the wall from there."""
    kin.set_obstacles([])
    goal = kin.solve(TCP, (0.55, -0.2, 0.95), _down(), TUCKED, ARM)
    assert goal.ok, goal.why
    kin.set_obstacles([Box("wall", (0.35, -0.2, 0.9), (0.03, 0.31, 0.31))])
    lo, hi = kin.limits("arm_right_4_joint")
    start = {**TUCKED, "arm_right_4_joint": hi + 0.002}
    path = joint_path(kin, start, {**start, **goal.joints}, ARM)
    assert path.waypoints is not None, path.why
    assert path.waypoints[0][3] == pytest.approx(hi + 0.002) and path.waypoints[1][3] <= hi
    assert all(lo <= w[3] <= hi for w in path.waypoints[1:])


def test_a_straight_descent_keeps_the_hand_on_the_line(kin):
    kin.set_obstacles([])
    above = kin.solve(TCP, (0.55, -0.2, 0.95), _down(), TUCKED, ARM)
    start = {**TUCKED, **above.joints}
    line = line_path(kin, TCP, start, ARM, (0.55, -0.2, 0.83), _down())
    assert line.waypoints is not None, line.why
    for q in line.waypoints:
        position, _ = kin.forward({**start, **dict(zip(ARM, q))}, TCP)
        assert np.linalg.norm(position[:2] - (0.55, -0.2)) < 0.006


def test_grasps_follow_the_shape_in_the_object_table():
    table = load_object_table()
    robot = (0.0, 0.0)
    # A banana on a table at 0.75 m: from above, across its narrow side, finger tips clear of the table.
    banana = SeenObject("banana0", 0.7, 0.0, 0.77, 0.0, (0.20, 0.04, 0.04))
    top = grasps(banana, table.get("banana"), 0.09, robot, support_top=0.75)
    assert top[0].kind == "top" and top[0].width == pytest.approx(0.04)
    assert top[0].pose.pitch == pytest.approx(DOWN) and top[0].pose.z >= 0.75 + TIP_CLEARANCE - 1e-9
    closing = top[0].pose.yaw + math.pi / 2          # the fingers close along the hand's y
    assert abs(math.sin(closing)) == pytest.approx(1.0, abs=1e-6), "across the banana's y side"
    assert top[0].approach.z == pytest.approx(top[0].pose.z + 0.12)
    # A bowl is wider than the hand: held by its wall, the wall nearest the robot.
    bowl = SeenObject("bowl0", 0.7, 0.0, 0.795, 0.0, (0.20, 0.20, 0.09))
    rim = grasps(bowl, table.get("bowl"), 0.09, robot, support_top=0.75)
    assert rim and rim[0].kind == "rim" and rim[0].pose.x == pytest.approx(0.6, abs=1e-6)
    # A book lying flat is too wide from above and too thin to clear the table from the side:
    # no grasp is offered rather than one that cannot work.
    book = SeenObject("book0", 0.7, 0.0, 0.765, 0.0, (0.24, 0.17, 0.03))
    assert all(g.kind != "top" for g in grasps(book, table.get("book"), 0.09, robot, support_top=0.75))


@pytest.mark.parametrize("yaw", [0.0, 2.0])
def test_a_handled_thing_is_taken_by_its_handle_near_where_it_balances(yaw):
    """A broom's (a hammer's) box fits no gripper and its head is the heavy end: across the
    handle, the pads clear of the head, nearest the balance point first. A watering can by the
    bar over its top, at the bar's height (the object table's shape, as the world builds it)."""
    from affplan_ros.core.knowledge.objects import balance_x

    table = load_object_table()
    c, s = math.cos(yaw), math.sin(yaw)
    along = lambda g, o: c * (g.pose.x - o.x) + s * (g.pose.y - o.y)  # noqa: E731
    broom_props = table.get("broom")
    broom = SeenObject("broom0", 1.0, 0.5, 0.925, yaw, broom_props.size)
    got = grasps(broom, broom_props, 0.09, (0.0, 0.0), support_top=0.9)
    handles = [g for g in got if g.kind == "handle"]
    assert handles and got[:len(handles)] == handles, "the handle first"
    sx, length, width = broom_props.size[0], *broom_props.handle
    assert all(-sx / 2 < along(g, broom) < -sx / 2 + length - 0.015 for g in handles), "on the handle, not the head"
    assert handles[0].width == pytest.approx(width)
    offs = [abs(along(g, broom) - balance_x(broom_props)) for g in handles]
    assert offs == sorted(offs) and balance_x(broom_props) > 0.0, "the head's end balances: nearest it first"
    for g in handles:   # the hand along the handle: the fingers close across it
        assert abs(math.sin(g.pose.yaw - yaw)) == pytest.approx(0.0, abs=1e-6)
        assert g.pose.pitch == pytest.approx(DOWN) and g.pose.z >= 0.9 + tip_clearance(broom_props.size[2]) - 1e-9
    can_props = table.get("watering_can")
    can = SeenObject("watering_can0", 1.0, 0.5, 0.9 + can_props.size[2] / 2, yaw, can_props.size)
    bar = [g for g in grasps(can, can_props, 0.09, (0.0, 0.0), support_top=0.9) if g.kind == "handle"]
    assert bar and all(g.pose.z == pytest.approx(0.9 + can_props.size[2] + 0.04 + can_props.top_handle[1] / 2)
                       for g in bar), "at the bar, above the body"
    assert bar[0].width == pytest.approx(can_props.top_handle[1])


def test_standing_places_face_the_box_nearest_first_and_free_spots_avoid_what_stands_there():
    table = SeenObject("table0", 2.0, 0.0, 0.375, 0.0, (0.8, 1.2, 0.75))
    places = standing_places(table, 0.4, (0.0, 0.0))
    assert places[0].x == pytest.approx(2.0 - 0.4 - 0.4) and places[0].y == pytest.approx(0.0)
    assert math.cos(places[0].yaw) == pytest.approx(1.0), "facing the table"
    assert len(places) == 4
    cup = SeenObject("cup0", 1.75, 0.0, 0.8, 0.0, (0.08, 0.08, 0.1))
    spots = free_spots(table, 0.04, [table, cup], (1.75, 0.0))
    assert len(spots) == 8 and all(math.hypot(x - 1.75, y) >= 0.04 + 0.04 + 0.03 - 1e-9 for x, y in spots)
    distances = [math.hypot(x - 1.75, y) for x, y in spots]
    assert distances == sorted(distances) and distances[0] < 0.15, "the nearest free spots first"
    tiny = SeenObject("stool0", 2.0, 0.0, 0.2, 0.0, (0.1, 0.1, 0.4))
    assert free_spots(tiny, 0.04, [tiny, SeenObject("mug0", 2.0, 0.0, 0.45, 0.0, (0.08, 0.08, 0.1))],
                      (0.0, 0.0)) == []


def test_a_plate_with_a_sponge_on_it_still_has_room_for_an_apple_beside_it():
    """No room with the usual margins; with the tight ones, beside the sponge's long side, the
    apple's middle within the round plate and kept clear of the sponge's own box."""
    plate = SeenObject("plate0", 1.0, 0.0, 0.765, 0.0, (0.26, 0.26, 0.03))
    sponge = SeenObject("sponge0", 1.0, 0.0, 0.795, 0.0, (0.10, 0.07, 0.03))
    spots = free_spots(plate, 0.04, [plate, sponge], (0.5, 0.0), round_top=True)
    assert spots
    for x, y in spots:
        assert math.hypot(x - 1.0, y) <= 0.13 - 0.04 + 1e-9                        # on the plate
        assert math.hypot(max(abs(x - 1.0) - 0.05, 0.0), max(abs(y) - 0.035, 0.0)) >= 0.05 - 1e-9   # beside it
    full = SeenObject("pot0", 1.0, 0.0, 0.84, 0.0, (0.24, 0.24, 0.15))
    assert free_spots(plate, 0.04, [plate, full], (0.5, 0.0), round_top=True) == []


def test_what_a_thing_stands_on_and_where_to_stand_in_front_of_it():
    table = SeenObject("table0", 2.0, 0.0, 0.375, 0.0, (0.8, 1.2, 0.75))
    plate = SeenObject("plate0", 1.9, 0.3, 0.76, 0.0, (0.26, 0.26, 0.02))
    cup = SeenObject("cup0", 1.9, 0.3, 0.82, 0.0, (0.08, 0.08, 0.1))
    assert support_of(cup, [table, plate, cup]).name == "plate0", "the highest box under it"
    assert support_of(plate, [table, plate, cup]).name == "table0"
    assert support_of(table, [table, plate, cup]) is None
    # From the robot at the origin: the table's face towards it, straight in front of the cup.
    place = line_up(table, (cup.x, cup.y), 0.4, (0.0, 0.0))
    assert (place.x, place.y) == pytest.approx((2.0 - 0.4 - 0.4, 0.3))
    assert math.cos(place.yaw) == pytest.approx(1.0)


def test_the_base_stands_before_a_fridges_opening_to_work_on_what_lies_on_its_shelf():
    """A cutting board on a fridge's shelf stands on nothing the source knows as a box: the
    places round the board itself lie inside the fridge's footprint (Nav2 refused them all)."""
    from affplan_ros.robots.places import stand_target
    from affplan_ros.robots.poses import Joint

    hinge = Joint("hinge", handle=(-0.29, 0.4025, 1.0), origin=(0.35, 0.35, 0.0), axis=(0.0, 0.0, -1.0),
                  position=1.6, open=1.9)
    fridge = SeenObject("refrigerator0", 0.0, 0.0, 0.9, 0.0, (0.7, 0.7, 1.8), kind="furniture", joint=hinge,
                        inner_levels=(0.88,))
    board = SeenObject("cutting_board0", 0.0, 0.1, 0.89, 0.0, (0.35, 0.25, 0.02))
    apple = SeenObject("apple0", 0.0, 0.1, 0.94, 0.0, (0.08, 0.08, 0.08))
    table = SeenObject("table0", 2.0, 0.0, 0.375, 0.0, (0.8, 1.2, 0.75))
    plate = SeenObject("plate0", 1.9, 0.3, 0.76, 0.0, (0.26, 0.26, 0.02))
    known = [fridge, board, apple, table, plate]
    assert stand_target(board, known).name == "refrigerator0"
    assert stand_target(apple, known).name == "refrigerator0", "on the board, in the fridge"
    assert stand_target(fridge, known).name == "refrigerator0"
    assert stand_target(plate, known).name == "table0", "what it stands on, where it lies in nothing"
    assert stand_target(table, known).name == "table0", "nothing under it: itself"


def test_config_poses_are_checked():
    assert FixedPoses(["table0 1 2 0.75"]).find("table0").z == 0.75
    for bad in ("table0 1 2", "table0 1 two 3", "table0 1 2 nan"):
        with pytest.raises(ValueError):
            FixedPoses([bad])


def test_a_thing_goes_into_a_bowl_as_near_the_arm_as_its_walls_let_it():
    from affplan_ros.robots.places import spots_inside

    bowl = SeenObject("bowl0", 1.0, 0.0, 0.8, yaw=0.3, size=(0.2, 0.2, 0.08))
    near, middle = spots_inside(bowl, (0.18, 0.18, 0.06), footprint=0.035, near_xy=(0.4, 0.0))
    assert middle == (1.0, 0.0)
    # towards the reach point, kept 0.09 - 0.035 - 0.03 = 0.025 m inside along each of its axes
    assert near[0] < 1.0 and math.hypot(near[0] - 1.0, near[1]) <= 0.025 * math.sqrt(2) + 1e-9
    assert spots_inside(bowl, (0.08, 0.08, 0.06), 0.035, (0.4, 0.0)) == [(1.0, 0.0)]   # no room to spare


def test_turned_side_on_the_arm_reaches_the_middle_of_a_deep_table(kin):
    """A spot 0.36 m in from a table's front is beyond the left hand pointing down from a base
    facing the table; among the standing places round it, one turned side on reaches it."""
    from affplan_ros.robots.drivers import Pose
    from affplan_ros.robots.places import stands_around

    tcp, arm = "gripper_left_grasping_frame", ["torso_lift_joint"] + [f"arm_left_{i}_joint" for i in range(1, 8)]
    start = dict(zip(arm, (0.3, 0.0, -1.4, 0.0, 2.2, 0.0, 0.77, 0.0)))
    table = SeenObject("table0", 0.0, 0.0, 0.375, 0.0, (1.2, 0.8, 0.75))
    spot = (0.0, -0.04)     # 0.36 m in from the face at y = -0.4
    kin.set_obstacles([])

    def reaches(base: Pose) -> bool:
        hand = Pose(*spot, 0.93, base.yaw, pitch=math.pi / 2)
        to_base = np.linalg.inv(base.matrix())
        return kin.reaches(tcp, [to_base @ hand.offset(dz=0.12).matrix(), to_base @ hand.matrix()], start,
                           arm) is not None

    stands = stands_around(table, spot, 0.37, None)
    assert len({(round(p.x, 2), round(p.y, 2)) for p in stands}) >= 5 and len(stands) % 7 == 0
    facing = stands[0]
    assert (facing.x, facing.y) == pytest.approx((0.0, -0.4 - 0.37)) and math.sin(facing.yaw) == pytest.approx(1.0)
    assert not reaches(facing)
    assert any(reaches(p) for p in stands[:21] if abs(math.remainder(p.yaw - math.pi / 2, math.tau)) > 1.0)


def test_a_long_thin_knife_is_taken_low_and_also_half_way_to_either_end():
    """Thinner than the pads: the finger tips come nearer the table than for a banana; long: after
    the grasps at its middle, the grasps half way to either end, the end nearer the robot first."""
    knife = SeenObject("kitchen_knife0", 0.7, 0.0, 0.76, 0.0, (0.30, 0.04, 0.02))
    got = grasps(knife, load_object_table().get("kitchen_knife"), 0.09, (0.0, 0.0), support_top=0.75)
    tops = [g for g in got if g.kind == "top"]
    assert [round(g.pose.x, 3) for g in tops] == [0.7, 0.7, 0.625, 0.775]
    assert all(g.pose.z == pytest.approx(0.75 + tip_clearance(0.02)) for g in tops)
    assert tip_clearance(0.02) < TIP_CLEARANCE == tip_clearance(0.2)
    for g in tops:     # the fingers close across the knife (along y), whichever the grasp
        assert abs(math.sin(g.pose.yaw + math.pi / 2)) == pytest.approx(1.0, abs=1e-6)


def test_a_knife_comes_down_with_a_point_of_its_blade_over_what_it_cuts():
    from affplan_ros.robots.drivers import Pose
    from affplan_ros.robots.places import blade_over

    knife = SeenObject("kitchen_knife0", 1.0, 0.0, 0.76, 0.0, (0.30, 0.04, 0.02))
    grasp = Pose(1.0, 0.0, 0.785, math.pi / 2, pitch=math.pi / 2)     # by its middle, from above
    tomato = SeenObject("tomato0", 0.5, 1.0, 0.82, 0.0, (0.07, 0.07, 0.07))
    for base_yaw in (0.0, 1.0):
        poses = blade_over(grasp, knife, 0.025, math.pi / 2, tomato, 0.002, base_yaw)
        assert len(poses) == 4, "either half of the blade, the knife either way round"
        for pose in poses:
            assert pose.z - 0.025 == pytest.approx(tomato.top - 0.002), "its edge just below the tomato's top"
            along = pose.yaw - grasp.yaw                  # the knife's length turned as the hand
            ends = [(pose.x + k * 0.075 * math.cos(along), pose.y + k * 0.075 * math.sin(along)) for k in (1, -1)]
            assert min(math.hypot(x - 0.5, y - 1.0) for x, y in ends) == pytest.approx(0.0, abs=1e-9)


def test_a_bowl_held_by_its_rim_is_set_down_with_its_middle_on_the_spot():
    """Turned with the base a quarter turn, the hand on the rim goes round the bowl's middle."""
    from affplan_ros.robots.drivers import Pose
    from affplan_ros.robots.places import set_down_poses

    bowl = SeenObject("bowl0", 1.0, 0.0, 0.8, 0.0, (0.2, 0.2, 0.09))
    rim = Pose(0.9, 0.0, 0.82, math.pi / 2, pitch=math.pi / 2)     # the hand on the wall nearest the robot
    for base_yaw in (0.0, math.pi / 2, -1.2):
        poses = set_down_poses(rim, bowl, 0.07, math.pi / 2, (2.0, 1.0), 0.9, base_yaw)
        assert len(poses) == 4, "round: turned half round and a quarter either way too"
        for pose in poses:
            turned = pose.yaw - rim.yaw
            middle = (pose.x + math.cos(turned) * 0.1, pose.y + math.sin(turned) * 0.1)
            assert middle == pytest.approx((2.0, 1.0), abs=1e-9)
            assert pose.z == pytest.approx(0.9 + 0.07 + 0.01)
    side = Pose(1.0, 0.0, 0.8, 0.0)     # a level hand keeps its heading: one pose
    assert len(set_down_poses(side, bowl, 0.04, 0.0, (2.0, 1.0), 0.9, 0.3)) == 1


def _inside(box: Box, x: float, y: float, z: float) -> bool:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    dx, dy = x - box.centre[0], y - box.centre[1]
    local = (c * dx + s * dy, -s * dx + c * dy, z - box.centre[2])
    return all(abs(v) <= h for v, h in zip(local, box.half))


@pytest.mark.parametrize("position", [0.0, 1.6])
def test_a_fridge_is_its_walls_and_its_door_as_it_stands(position):
    """The arm keeps clear of a fridge's walls and its door's leaf, shut or open, and reaches
    into it only through its front when the door is open (a fridge's whole box left the arm no
    way in; no box at all let its paths through the walls and the open door)."""
    from affplan_ros.robots.doors import moved_to
    from affplan_ros.robots.places import cabinet_boxes, level_under, obstacles_around
    from affplan_ros.robots.poses import Joint

    # A 0.7 m fridge, its front facing +y, hinged on its +x edge, as the simulated kitchen's.
    shut = Joint("hinge", handle=(-0.29, 0.4025, 1.0), origin=(0.35, 0.35, 0.0), axis=(0.0, 0.0, -1.0),
                 position=0.0, open=1.9)
    fridge = SeenObject("refrigerator0", 0.0, 0.0, 0.9, 0.0, (0.7, 0.7, 1.8), kind="furniture",
                        joint=moved_to(shut, position), inner_levels=(0.88,))
    apple = SeenObject("apple0", 0.0, 0.05, 0.92, 0.0, (0.08, 0.08, 0.08))
    boxes = obstacles_around((0.0, 1.0), [fridge, apple], 1.5, skip=["apple0"], inside_of=apple,
                             hollow=["refrigerator0"])
    assert boxes == cabinet_boxes(fridge) and len(boxes) == 7
    assert level_under(fridge, apple) == 0.88                      # the apple stands on the shelf

    def hit(x, y, z):
        return [b.name.split()[1] for b in boxes if _inside(b, x, y, z)]

    assert hit(0.0, 0.05, 0.93) == []                            # where the apple is: room for the hand
    assert hit(0.0, 0.05, 0.87) == ["shelf"]                     # under it
    assert len({b.name for b in boxes}) == 7                      # the arm's model takes each by its name
    assert hit(0.0, -0.34, 1.0) == hit(-0.34, 0.0, 1.0) == hit(0.34, 0.0, 1.0) == ["wall"]
    assert hit(0.0, 0.0, 1.79) == ["roof"] and hit(0.0, 0.0, 0.01) == ["floor"]
    in_front = hit(0.0, 0.37, 1.0)                               # just before the opening
    swung_to = hit(0.37, 0.75, 1.0)                              # beside the hinge, 0.4 m out
    if position == 0.0:
        assert in_front == ["door"] and swung_to == []
    else:
        assert in_front == [] and swung_to == ["door"]
    with pytest.raises(ValueError, match="no hinged door"):
        cabinet_boxes(apple)


def test_a_flat_thing_is_taken_from_above_without_the_fingers_touching_its_support(kin):
    """A spoon 1.5 cm thin: the finger tips come down near the table but not into it, whichever
    way round the hand is turned (the IK ends a few millimetres off its target)."""
    from affplan_ros.robots.drivers import Pose

    kin.set_obstacles([Box("table", (0.75, 0.0, 0.37), (0.3, 0.5, 0.375))])
    spoon = SeenObject("spoon0", 0.55, -0.2, 0.745 + 0.0075, 0.4, (0.18, 0.04, 0.015))
    tops = [g for g in grasps(spoon, load_object_table().get("spoon"), 0.09, (0.0, 0.0), support_top=0.745)
            if g.kind == "top"]
    solutions = []
    for g in tops:
        assert g.pose.z - 0.03 - 0.745 >= 0.006 - 1e-9            # the tips' gap above the table
        rotation = Pose(0.0, 0.0, 0.0, g.pose.yaw, pitch=g.pose.pitch).matrix()[:3, :3]
        solutions.append(kin.solve(TCP, (g.pose.x, g.pose.y, g.pose.z), rotation, TUCKED, ARM))
    assert not [s.why for s in solutions if "in collision" in s.why]
    assert sum(s.ok for s in solutions) >= 2
    for thin in (0.005, 0.01):      # a nail, a dinner knife: the tips half way up it, below its top
        assert 0.03 + thin * 0.25 <= tip_clearance(thin) <= 0.03 + thin / 2 + 1e-9
