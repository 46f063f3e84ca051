"""sim_hardware over DDS: the physics world publishes a Tiago++'s clock, joint states, frames,
description and head camera (its image where /tf says the camera is), and its grippers answer
control_msgs' GripperCommand from the physics; the real robot's skill server, driving those
grippers, fails a grasp that closes on nothing as an empty grasp. The referee reports where the
cup and the table are."""
from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.ros]

ROOT = Path(__file__).resolve().parents[3]
ROBOTS = ROOT / "test" / "robots"
CONFIG = ROOT / "config" / "tiago.yaml"
NS = "/affplan_hw"
CAMERA_SIZE = (320, 240)
OPTICAL = "head_front_camera_rgb_optical_frame"
SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncup:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non cup:0 table:0\n"
         "at robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")


@pytest.fixture(scope="module")
def hardware(tmp_path_factory):
    from affplan_ros.launcher import NodeProcess

    scene = tmp_path_factory.mktemp("hw") / "scene.txt"
    scene.write_text(SCENE)
    proc = NodeProcess([sys.executable, str(ROOT / "scripts" / "nodes" / "sim_hardware"), "--ros-args",
                        "-p", f"scenario:={scene}", "-p", "real_time_factor:=2.0", "-p", "camera_rate_hz:=2.0",
                        "-p", f"camera_width:={CAMERA_SIZE[0]}", "-p", f"camera_height:={CAMERA_SIZE[1]}",
                        "-p", "referee_rate_hz:=10.0"], name="sim_hardware")
    yield proc
    assert proc.stop() == 0, "".join(proc.output[-40:])


@pytest.fixture(scope="module")
def client(hardware):
    from ros_support import nodes_in_process

    with nodes_in_process([], "hw_client") as (node,):
        yield node


def test_it_publishes_a_tiagos_clock_joints_frames_and_description(client):
    from ros_support import Received
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    from affplan_ros.nodes.base import LATCHED_QOS
    from affplan_ros.nodes.sim_hardware import TF_STATIC_QOS

    with Received(client, String, "/robot_description", LATCHED_QOS) as description, \
            Received(client, JointState, "/joint_states", 10) as joints, \
            Received(client, TFMessage, "/tf_static", TF_STATIC_QOS) as static, \
            Received(client, TFMessage, "/tf", 100) as tf, \
            Received(client, Clock, "/clock", 10) as clock:
        assert description.wait(lambda m: m, 20.0), "no /robot_description"
        assert joints.wait(lambda m: m, 20.0) and static.wait(lambda m: m, 20.0) and tf.wait(lambda m: m, 20.0)
        assert clock.wait(lambda m: len(m) >= 20, 20.0)
    urdf = ET.fromstring(description.messages[0].data)
    movable = {j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"}
    state = joints.messages[-1]
    assert set(state.name) == movable and "arm_right_4_joint" in movable and "head_2_joint" in movable
    assert len(state.position) == len(state.velocity) == len(state.effort) == len(state.name)
    pairs = {(t.header.frame_id, t.child_frame_id) for m in static.messages for t in m.transforms}
    assert {("map", "odom"), ("base_footprint", "base_link"),
            ("head_front_camera_link", "head_front_camera_rgb_optical_frame")} <= pairs
    moving = {(t.header.frame_id, t.child_frame_id) for t in tf.messages[-1].transforms}
    assert ("odom", "base_footprint") in moving and ("torso_lift_link", "head_1_link") in moving
    # Simulated time: it moves forward, and the joint states are stamped in it.
    times = [m.clock.sec + m.clock.nanosec * 1e-9 for m in clock.messages]
    assert times == sorted(times) and times[-1] > times[0]
    stamp = state.header.stamp.sec + state.header.stamp.nanosec * 1e-9
    assert 0 < stamp < times[-1] + 1.0


# The two tests below look at the table from where the scene puts the robot: they run before the
# navigation test drives it away.
def test_the_head_camera_shows_the_table_where_tf_and_camera_info_say(client):
    """Colour and depth as Tiago's driver publishes them (a best-effort reader takes them), stamped
    in simulated time, in the optical frame; the table's top centre, from the referee, projected
    through /tf, /tf_static and camera_info, lands where the depth image sees it."""
    from rclpy.qos import qos_profile_sensor_data
    from ros_support import Received
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import CameraInfo, Image
    from tf2_msgs.msg import TFMessage

    from affplan_ros.msg import RefereeObjects
    from affplan_ros.nodes.base import RELIABLE_SENSOR_QOS
    from affplan_ros.nodes.sim_hardware import TF_STATIC_QOS

    tilt = 0.75            # the head looks down onto the table (at home it looks over it)
    _move_head(client, 0.0, tilt)
    with Received(client, Clock, "/clock", 10) as clock:
        assert clock.wait(lambda m: m, 10.0)
    moved = _seconds(clock.messages[-1].clock)     # a frame stamped later shows the head where it went
    with Received(client, Image, "/head_front_camera/rgb/image_raw", qos_profile_sensor_data) as rgb, \
            Received(client, Image, "/head_front_camera/depth_registered/image_raw", RELIABLE_SENSOR_QOS) as depth, \
            Received(client, CameraInfo, "/head_front_camera/rgb/camera_info", RELIABLE_SENSOR_QOS) as info, \
            Received(client, TFMessage, "/tf_static", TF_STATIC_QOS) as static, \
            Received(client, TFMessage, "/tf", 100) as tf, \
            Received(client, RefereeObjects, "/referee/objects", 10) as referee:
        def after(messages):
            return [m for m in messages if _seconds(m.header.stamp) > moved]

        assert depth.wait(lambda m: after(m), 20.0), "no depth image after the head moved"
        stamp = _seconds(after(depth.messages)[0].header.stamp)
        # Best effort: a large image may lose a fragment over UDP, so not necessarily this one.
        assert rgb.wait(lambda m: after(m), 20.0), "no colour image reached a best-effort reader"
        assert info.wait(lambda m: any(_seconds(x.header.stamp) == stamp for x in m), 10.0)
        assert tf.wait(lambda m: any(_seconds(x.transforms[0].header.stamp) >= stamp for x in m), 10.0)
        assert static.wait(lambda m: m, 10.0) and referee.wait(lambda m: m, 10.0)
    image = after(rgb.messages)[0]
    ranges = next(m for m in depth.messages if _seconds(m.header.stamp) == stamp)
    intrinsics = next(m for m in info.messages if _seconds(m.header.stamp) == stamp)
    width, height = CAMERA_SIZE
    assert (image.encoding, image.width, image.height, image.step) == ("rgb8", width, height, 3 * width)
    assert (ranges.encoding, ranges.width, ranges.height) == ("32FC1", width, height)
    assert image.header.frame_id == ranges.header.frame_id == intrinsics.header.frame_id == OPTICAL
    assert (intrinsics.width, intrinsics.height, intrinsics.distortion_model) == (width, height, "plumb_bob")
    assert list(intrinsics.d) == [0.0] * 5 and list(intrinsics.p)[:3] == list(intrinsics.k)[:3]
    # Simulated time: the stamp is a /clock time, not the wall clock's.
    assert 0 < stamp < _seconds(clock.messages[-1].clock) + 5.0
    # The optical frame in the map, from /tf (the moving links, the message nearest the frame's
    # stamp) and /tf_static, as tf2 would compose them.
    moving = min(tf.messages, key=lambda m: abs(_seconds(m.transforms[0].header.stamp) - stamp))
    camera = _chain({t.child_frame_id: t for m in static.messages for t in m.transforms}
                    | {t.child_frame_id: t for t in moving.transforms}, OPTICAL, "map")
    table = next(o for o in referee.messages[-1].objects if o.name == "table0")
    top = np.array([table.pose.position.x, table.pose.position.y, table.pose.position.z + table.size.z / 2])
    x, y, z = (np.linalg.inv(camera) @ np.append(top, 1.0))[:3]     # in the optical frame
    k = np.array(intrinsics.k).reshape(3, 3)
    u, v = k[0, 0] * x / z + k[0, 2], k[1, 1] * y / z + k[1, 2]
    assert 0 <= u < width and 0 <= v < height, f"the table's top centre is out of view at ({u:.0f}, {v:.0f})"
    seen = np.frombuffer(bytes(ranges.data), dtype=np.float32).reshape(height, width)[int(round(v)), int(round(u))]
    assert seen == pytest.approx(z, abs=0.03), f"depth {seen:.3f} m at ({u:.0f}, {v:.0f}), the table is {z:.3f} m away"


def test_the_referee_reports_the_cup_on_the_table(client):
    from ros_support import Received

    from affplan_ros.msg import RefereeObjects

    with Received(client, RefereeObjects, "/referee/objects", 10) as referee:
        assert referee.wait(lambda m: len(m) >= 2, 10.0)
    first, last = referee.messages[-2:]
    assert last.header.frame_id == "map" and _seconds(last.header.stamp) > _seconds(first.header.stamp)
    things = {o.name: o for o in last.objects}
    assert set(things) == {"table0", "cup0"}      # the robot is on /tf, not here
    table, cup = things["table0"], things["cup0"]
    assert (table.kind, table.class_name, cup.kind, cup.class_name) == ("furniture", "table", "object", "cup")
    assert (cup.size.x, cup.size.y, cup.size.z) == pytest.approx((0.08, 0.08, 0.1))
    top = table.pose.position.z + table.size.z / 2
    assert top == pytest.approx(0.75, abs=0.01)
    assert cup.pose.position.z == pytest.approx(top + cup.size.z / 2, abs=0.01)
    assert abs(cup.pose.position.x - table.pose.position.x) < table.size.x / 2
    assert abs(cup.pose.position.y - table.pose.position.y) < table.size.x / 2
    assert table.open_fraction == cup.open_fraction == -1.0


def test_the_real_robot_drivers_navigate_and_feel_an_empty_grasp_on_the_hardware(client):
    """robot_skills with the real Nav2 and gripper drivers (the arm faked at its protocol) against
    the hardware's NavigateToPose and GripperCommand: the base drives where it is sent and the
    odometry says it arrived, a goal inside the table has no path, and the hand that closes where
    no cup is says so through its own result."""
    from ros_support import Received, printed_calls, send_skill
    from tf2_msgs.msg import TFMessage

    from affplan_ros.launcher import NodeProcess, params_file_for
    from affplan_ros.msg import FailureObservation

    poses = params_file_for(f"{NS}/robot_skills", {"object_poses": ["cup0 -0.6 1.4 0.8"]})
    robot = NodeProcess([sys.executable, str(ROBOTS / "fake_robot.py"), "--ros-drivers", "--ros-args",
                         "-r", "__node:=robot_skills", "-r", f"__ns:={NS}", "--params-file", str(CONFIG),
                         "--params-file", poses], name="robot_skills_hw")
    try:
        went = send_skill("Navigate", NS, agent="robot0", to_location="aside", goal_pose=[_pose(-0.3, 0.3, 2.0)])
        assert went.success, went.failure.why
        with Received(client, TFMessage, "/tf", 100) as tf:
            assert tf.wait(lambda m: m, 10.0)
        odom = next(t.transform for t in tf.messages[-1].transforms if t.child_frame_id == "base_footprint")
        assert (odom.translation.x, odom.translation.y) == pytest.approx((-0.3, 0.3), abs=0.05)
        into = send_skill("Navigate", NS, agent="robot0", to_location="table0", goal_pose=[_pose(-0.6, 1.6, 0.0)])
        assert not into.success and into.failure.why.startswith("Nav2 failed: no path to the goal")
        assert into.failure.cause == FailureObservation.CAUSE_BLOCKED
        empty = send_skill("Grasp", NS, agent="robot0", object="cup0", support="table0", location="table0")
        assert not empty.success and empty.failure.cause == FailureObservation.CAUSE_EMPTY_GRASP, empty.failure
        assert "the left gripper closed on nothing where cup0 should be" in empty.failure.why
        assert [c["driver"] for c in printed_calls(robot, 0)] == ["arm", "arm"]   # approach, descend; then grip
    finally:
        robot.stop()


def _seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def _matrix(transform) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    t, q = transform.translation, transform.rotation
    m = np.eye(4)
    m[:3, :3] = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix()
    m[:3, 3] = [t.x, t.y, t.z]
    return m


def _chain(by_child: dict, frame: str, root: str) -> np.ndarray:
    """``frame``'s pose in ``root`` from transforms by their child frame (parent <- child each)."""
    pose = np.eye(4)
    while frame != root:
        t = by_child[frame]
        pose = _matrix(t.transform) @ pose
        frame = t.header.frame_id
    return pose


def _move_head(client, pan: float, tilt: float) -> None:
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from affplan_ros.nodes.base import ActionClient, FutureWait

    action = ActionClient(client, FollowJointTrajectory, "/head_controller/follow_joint_trajectory")
    try:
        assert action.wait_for_server(timeout_sec=20.0)
        point = JointTrajectoryPoint(positions=[pan, tilt], time_from_start=Duration(sec=1))
        goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=["head_1_joint", "head_2_joint"],
                                                                     points=[point]))
        sent = FutureWait(action.send_goal_async(goal))
        assert sent.until(time.monotonic() + 10.0) == "done" and sent.future.result().accepted
        done = FutureWait(sent.future.result().get_result_async())
        assert done.until(time.monotonic() + 30.0) == "done"
        assert done.future.result().result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    finally:
        action.destroy()


def _pose(x: float, y: float, yaw: float):
    import math

    from geometry_msgs.msg import PoseStamped

    pose = PoseStamped()
    pose.header.frame_id = "map"
    pose.pose.position.x, pose.pose.position.y = x, y
    pose.pose.orientation.z, pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return pose


def test_the_head_follows_a_joint_trajectory_and_a_bad_goal_is_refused(client):
    """FollowJointTrajectory on the head controller: the joints the trajectory ends at are those
    /joint_states then report; a goal naming joints the controller does not drive is refused."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from ros_support import Received
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from affplan_ros.nodes.base import ActionClient, FutureWait

    action = ActionClient(client, FollowJointTrajectory, "/head_controller/follow_joint_trajectory")
    assert action.wait_for_server(timeout_sec=20.0)

    def goal(joints, positions):
        point = JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=1))
        return FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=joints, points=[point]))

    sent = FutureWait(action.send_goal_async(goal(["head_2_joint", "head_1_joint"], [0.3, -0.4])))
    assert sent.until(time.monotonic() + 10.0) == "done"
    handle = sent.future.result()
    assert handle.accepted
    done = FutureWait(handle.get_result_async())
    assert done.until(time.monotonic() + 30.0) == "done"
    result = done.future.result().result
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    with Received(client, JointState, "/joint_states", 10) as joints:
        assert joints.wait(lambda m: m, 10.0)
    state = dict(zip(joints.messages[-1].name, joints.messages[-1].position))
    assert state["head_1_joint"] == pytest.approx(-0.4, abs=0.05)
    assert state["head_2_joint"] == pytest.approx(0.3, abs=0.05)
    refused = FutureWait(action.send_goal_async(goal(["arm_right_1_joint"], [0.0])))
    assert refused.until(time.monotonic() + 10.0) == "done" and not refused.future.result().accepted
    action.destroy()


def test_the_base_follows_a_given_path_and_stops_where_the_table_holds_it(client):
    """Nav2's FollowPath: the base driven along the poses as given (a door's arc), the odometry
    at the path's end; a path through the table ends short of it, and a NaN pose is refused."""
    from nav2_msgs.action import FollowPath
    from ros_support import Received
    from tf2_msgs.msg import TFMessage

    from affplan_ros.nodes.base import ActionClient, FutureWait

    def run(poses):
        goal = FollowPath.Goal()
        goal.path.header.frame_id = "map"
        goal.path.poses = poses
        sent = FutureWait(action.send_goal_async(goal))
        assert sent.until(time.monotonic() + 10.0) == "done"
        handle = sent.future.result()
        if not handle.accepted:
            return None
        done = FutureWait(handle.get_result_async())
        assert done.until(time.monotonic() + 60.0) == "done"
        return done.future.result().result

    action = ActionClient(client, FollowPath, "/follow_path")
    try:
        assert action.wait_for_server(timeout_sec=20.0)
        with Received(client, TFMessage, "/tf", 100) as tf:
            assert tf.wait(lambda m: m, 10.0)
        start = next(t.transform for t in tf.messages[-1].transforms if t.child_frame_id == "base_footprint")
        x0, y0 = start.translation.x, start.translation.y
        arc = [_pose(x0 + 0.3 * (1 - np.cos(a)), y0 - 0.3 * np.sin(a), -a) for a in np.linspace(0.0, 0.8, 9)]
        done = run(arc)
        assert done.error_code == FollowPath.Result.NONE, done.error_msg
        with Received(client, TFMessage, "/tf", 100) as tf:
            assert tf.wait(lambda m: m, 10.0)
        odom = next(t.transform for t in tf.messages[-1].transforms if t.child_frame_id == "base_footprint")
        assert (odom.translation.x, odom.translation.y) == pytest.approx((arc[-1].pose.position.x,
                                                                          arc[-1].pose.position.y), abs=0.05)
        table = -0.6, 1.4    # the scene's table: its middle, where the base cannot go
        into = run([_pose(odom.translation.x + (table[0] - odom.translation.x) * k / 8,
                          odom.translation.y + (table[1] - odom.translation.y) * k / 8, 0.0) for k in range(9)])
        assert into.error_code == FollowPath.Result.FAILED_TO_MAKE_PROGRESS and "in the way" in into.error_msg
        bad = _pose(0.0, 0.0, 0.0)
        bad.pose.position.y = float("nan")
        assert run([bad]) is None
    finally:
        action.destroy()


def test_gripper_and_navigation_goals_that_are_not_numbers_are_refused(client):
    """A NaN would reach the physics as a set-point and break the world: refused at the door,
    and the hardware keeps serving."""
    from control_msgs.action import GripperCommand
    from nav2_msgs.action import NavigateToPose

    from affplan_ros.nodes.base import ActionClient, FutureWait

    def answer(action, goal):
        sent = FutureWait(action.send_goal_async(goal))
        assert sent.until(time.monotonic() + 10.0) == "done"
        return sent.future.result()

    gripper = ActionClient(client, GripperCommand, "/gripper_right_controller/gripper_cmd")
    nav = ActionClient(client, NavigateToPose, "/navigate_to_pose")
    assert gripper.wait_for_server(timeout_sec=20.0) and nav.wait_for_server(timeout_sec=20.0)
    bad_grip = GripperCommand.Goal()
    bad_grip.command.position, bad_grip.command.max_effort = float("nan"), 40.0
    assert not answer(gripper, bad_grip).accepted
    bad_nav = NavigateToPose.Goal(pose=_pose(0.0, 0.0, 0.0))
    bad_nav.pose.pose.position.x = float("inf")
    assert not answer(nav, bad_nav).accepted
    good = GripperCommand.Goal()
    good.command.position, good.command.max_effort = 0.09, 40.0
    handle = answer(gripper, good)
    assert handle.accepted
    done = FutureWait(handle.get_result_async())
    assert done.until(time.monotonic() + 20.0) == "done"
    assert done.future.result().result.position == pytest.approx(0.09, abs=0.004)
    gripper.destroy()
    nav.destroy()
