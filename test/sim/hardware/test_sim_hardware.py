"""sim_hardware over DDS: the physics world publishes a Tiago++'s clock, joint states, frames and
description, and its grippers answer control_msgs' GripperCommand from the physics; the real
robot's skill server, driving those grippers, fails a grasp that closes on nothing as an empty
grasp."""
from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ros]

ROOT = Path(__file__).resolve().parents[3]
ROBOTS = ROOT / "test" / "robots"
CONFIG = ROOT / "config" / "tiago.yaml"
NS = "/affplan_hw"
SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncup:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non cup:0 table:0\n"
         "at robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")


@pytest.fixture(scope="module")
def hardware(tmp_path_factory):
    from affplan_ros.launcher import NodeProcess

    scene = tmp_path_factory.mktemp("hw") / "scene.txt"
    scene.write_text(SCENE)
    proc = NodeProcess([sys.executable, str(ROOT / "scripts" / "nodes" / "sim_hardware"), "--ros-args",
                        "-p", f"scenario:={scene}", "-p", "real_time_factor:=2.0"], name="sim_hardware")
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
