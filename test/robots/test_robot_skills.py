"""Real-robot skill servers (robots/skills.py) over DDS, with the robot's drivers faked at their
protocol (fake_robot.py): the skill goals a plan produces become the right base, arm and
gripper motions, poses come from the robot config, and what the robot cannot do fails clearly."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from ros_support import printed_calls as calls

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
NS_ROS_DRIVERS = "/affplan_ros_drivers"
HERE = Path(__file__).resolve().parent
CONFIG = HERE.parent.parent / "config" / "tiago.yaml"


@pytest.fixture(scope="module")
def robot():
    from affplan_ros.launcher import NodeProcess, params_file_for

    poses = params_file_for(f"{NS}/robot_skills", {"object_poses": ["cup0 1.2 1.0 0.8", "apple0 1.4 1.0 0.8",
                                                                     "table0 1.2 1.0 0.75"]})
    proc = NodeProcess([sys.executable, str(HERE / "fake_robot.py"), "--ros-args", "-r", "__node:=robot_skills",
                        "-r", f"__ns:={NS}", "--params-file", str(CONFIG), "--params-file", poses],
                       name="robot_skills")
    yield proc
    assert proc.stop() == 0, "".join(proc.output[-60:])


def send(skill: str, server: str = "", ns: str = NS, **fields):
    from ros_support import send_skill

    return send_skill(skill, ns, server, **fields)


def test_navigate_uses_the_configured_pose(robot):
    from affplan_ros.msg import FailureObservation

    n = len(robot.output)
    assert send("Navigate", agent="robot0", from_location="counter0", to_location="table0").success
    assert calls(robot, n) == [{"driver": "nav", "x": 1.2, "y": 0.4, "yaw": 1.57}]
    res = send("Navigate", agent="robot0", to_location="garage0")
    assert not res.success and res.failure.code == FailureObservation.CODE_NOT_FOUND
    assert "garage0 has no pose in the robot config" in res.failure.why


def test_grasp_place_and_handover_move_arm_and_gripper(robot):
    from affplan_ros.msg import FailureObservation

    n = len(robot.output)
    assert send("Grasp", agent="robot0", object="cup0", support="table0", location="table0").success
    grasp = calls(robot, n)
    assert [c["driver"] for c in grasp] == ["gripper", "arm", "arm", "gripper", "arm", "gripper"]  # feel after lift
    assert grasp[0]["hand"] == "left" and grasp[0]["position"] > 0 and grasp[3]["position"] == 0.0
    assert [c["z"] for c in grasp if c["driver"] == "arm"] == [0.92, 0.8, 0.92]    # approach, grasp, lift
    assert grasp[1]["group"] == "arm_left" and grasp[1]["link"] == "gripper_left_grasping_frame"
    n = len(robot.output)
    assert send("Grasp", agent="robot0", object="apple0", support="table0", location="table0").success
    assert calls(robot, n)[0]["hand"] == "right"                                   # the other hand
    full = send("Grasp", agent="robot0", object="table0", support="table0", location="table0")
    assert not full.success and full.failure.code == FailureObservation.CODE_PRECONDITION and full.failure.recoverable
    n = len(robot.output)
    assert send("Place", agent="robot0", object="cup0", target="table0", relation="on", location="table0").success
    assert calls(robot, n)[2] == {"driver": "gripper", "hand": "left", "position": 0.08}
    assert send("Handover", giver="robot0", receiver="human0", object="apple0").success
    again = send("Handover", giver="robot0", receiver="human0", object="apple0")
    assert not again.success and "does not hold apple0" in again.failure.why


def test_pour_wipe_and_receive_move_arm_and_gripper(robot):
    from affplan_ros.msg import FailureObservation

    res = send("Pour", agent="robot0", source="cup0", target="table0", liquid="water0", location="table0")
    assert not res.success and "does not hold cup0" in res.failure.why       # nothing held: nothing moves
    n = len(robot.output)
    assert send("Handover", giver="human0", receiver="robot0", object="cup0").success   # receive_object
    got = calls(robot, n)
    assert [c["driver"] for c in got] == ["gripper", "arm", "gripper"] and got[2]["position"] == 0.0
    n = len(robot.output)
    assert send("Pour", agent="robot0", source="cup0", target="table0", liquid="water0", location="table0").success
    arm = [(c["z"], c["roll"]) for c in calls(robot, n) if c["driver"] == "arm"]
    assert arm == [(0.87, 0.0), (0.87, 1.9), (0.87, 0.0)]        # over the target, tilted, upright again
    n = len(robot.output)
    assert send("Wipe", agent="robot0", tool="cup0", surface="table0", location="table0").success
    xs = [c["x"] for c in calls(robot, n) if c["driver"] == "arm"]
    assert xs == [1.2, 1.2] + [1.35, 1.05] * 3 + [1.2]              # down, three strokes each way, up
    empty = send("Wipe", agent="robot0", tool="sponge0", surface="table0", location="table0")
    assert not empty.success and empty.failure.code == FailureObservation.CODE_PRECONDITION
    assert send("Place", agent="robot0", object="cup0", target="table0", relation="on", location="table0").success


def test_a_skill_without_motion_fails_with_advice(robot):
    from affplan_ros.msg import FailureObservation

    res = send("Skill", agent="robot0", action="heat_liquid", arguments=["pot0", "water0", "stove0", "kitchen0"])
    assert not res.success and res.failure.code == FailureObservation.CODE_INVALID
    assert "no motion for heat_liquid" in res.failure.why and "robot_capabilities" in res.failure.suggestion


def test_a_chop_brings_the_held_knife_down_onto_the_thing(robot):
    from affplan_ros.msg import FailureObservation

    res = send("Skill", agent="robot0", action="chop", arguments=["cup0", "apple0", "table0", "table0"])
    assert not res.success and res.failure.code == FailureObservation.CODE_PRECONDITION   # no knife in hand
    n = len(robot.output)
    assert send("Grasp", agent="robot0", object="cup0", support="table0", location="table0").success
    calls(robot, n)              # the grasp's lines arrive after its result: waited for before counting
    n = len(robot.output)
    assert send("Skill", agent="robot0", action="chop", arguments=["cup0", "apple0", "table0", "table0"]).success
    got = calls(robot, n)
    assert [(c["driver"], c.get("x"), c.get("z")) for c in got] == [
        ("arm", 1.4, 0.92), ("arm", 1.4, 0.8), ("arm", 1.4, 0.92), ("gripper", None, None)]   # down, up, feel
    assert send("Place", agent="robot0", object="cup0", target="table0", relation="on", location="table0").success


@pytest.mark.parametrize("robot_config", ["tiago.yaml", "armar.yaml"])
def test_every_capability_of_a_robot_config_has_a_motion(robot_config):
    """What a robot config promises (robot_capabilities), its skill backend can do."""
    import yaml

    from affplan_ros.core.knowledge.skills import SkillMap
    from affplan_ros.env import config_file
    from affplan_ros.robots.skills import RobotSkillsNode

    params = yaml.safe_load((CONFIG.parent / robot_config).read_text())["/**"]["ros__parameters"]
    skills = SkillMap.from_file(config_file("skills.yaml", ""))
    bound = {action: b.skill for action, b in skills.bindings.items()}   # unbound: the generic Skill
    missing = [cap for cap in params["robot_capabilities"] if bound.get(cap, "Skill") not in RobotSkillsNode.MOTIONS]
    assert missing == [], f"{robot_config}: no motion behind {missing}"


def test_without_moveit_the_node_says_what_to_install():
    """nav2_msgs and control_msgs are built by make setup; MoveIt cannot be installed here."""
    done = subprocess.run([sys.executable, str(HERE.parent.parent / "scripts" / "nodes" / "robot_skills"),
                           "--ros-args", "--params-file", str(CONFIG)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "MoveIt is not installed (no moveit_py): install ros-$ROS_DISTRO-moveit-py" in done.stderr


@pytest.mark.parametrize("override, said", [
    ("arm_controllers:=['/arm_right_controller/follow_joint_trajectory']",
     "arm_controllers needs one FollowJointTrajectory action per hand"),
    ("handle_lateral_m:=[0.15]", "handle_lateral_m needs one offset per hand"),
    ("handle_reach_m:=[0.5, -0.1]", "handle_reach_m needs at least one distance, each above 0"),
    ("pose_source:=camera", "pose_source"),
    ("object_poses:=['table0 1 two 0.7']", "is not 'name x y z' with numbers"),
])
def test_the_builtin_planner_and_pose_source_settings_are_checked(tmp_path, override, said):
    """A config that cannot work stops the node at start with what is wrong (exit 2)."""
    key, _, value = override.partition(":=")
    builtin = tmp_path / "builtin.yaml"
    builtin.write_text("/**/robot_skills:\n  ros__parameters:\n    arm_planner: builtin\n"
                       f"    {key}: {value}\n")
    done = subprocess.run([sys.executable, str(HERE.parent.parent / "scripts" / "nodes" / "robot_skills"),
                           "--ros-args", "--params-file", str(CONFIG), "--params-file", str(builtin)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr[-2000:]
    assert said in done.stderr and "Traceback" not in done.stderr


def test_nav2_and_gripper_drivers_speak_their_ros_actions():
    """The real Nav2Navigator and GripperActions against servers of the same action types."""
    from affplan_ros.launcher import NodeProcess, params_file_for
    from affplan_ros.msg import FailureObservation

    # What is between the fingers at each close: a cup held through its lift, then nothing (an empty
    # grasp), then a cup that is gone when the gripper feels for it after the lift.
    servers = NodeProcess([sys.executable, str(HERE / "fake_nav2.py"), "--ros-args",
                           "-p", "grip_widths:=[0.07, 0.07, 0.0, 0.07, 0.0]"], name="fake_nav2")
    # A namespace of its own: the module's robot (fake drivers) is still up beside it.
    poses = params_file_for(f"{NS_ROS_DRIVERS}/robot_skills",
                            {"object_poses": ["cup0 1.2 1.0 0.8", "table0 1.2 1.0 0.75"]})
    robot = NodeProcess([sys.executable, str(HERE / "fake_robot.py"), "--ros-drivers", "--ros-args",
                         "-r", "__node:=robot_skills", "-r", f"__ns:={NS_ROS_DRIVERS}", "--params-file", str(CONFIG),
                         "--params-file", poses],
                        name="robot_skills_ros")
    try:
        res = send("Navigate", agent="robot0", to_location="table0", ns=NS_ROS_DRIVERS)
        assert res.success, res.failure.why
        got = calls(servers, 0)
        assert got == [{"server": "navigate_to_pose", "frame": "map", "x": 1.2, "y": 0.4, "qz": 0.707}]
        res = send("Navigate", agent="robot0", to_location="x", goal_pose=[far_pose()], ns=NS_ROS_DRIVERS)
        assert not res.success and res.failure.code == FailureObservation.CODE_PHYSICAL
        assert res.failure.why == "Nav2 failed: no path to the goal"
        n = len(servers.output)
        assert send("Grasp", agent="robot0", object="cup0", support="table0", location="table0",
                    ns=NS_ROS_DRIVERS).success
        left = "/gripper_left_controller/gripper_cmd"
        assert [(c["server"], c["position"]) for c in calls(servers, n)] == [(left, 0.08), (left, 0.0), (left, 0.0)]
        # The right hand closes on nothing: an empty grasp, said by the gripper's own result.
        empty = send("Grasp", agent="robot0", object="cup0", support="table0", location="table0", ns=NS_ROS_DRIVERS)
        assert not empty.success and empty.failure.cause == FailureObservation.CAUSE_EMPTY_GRASP
        assert empty.failure.code == FailureObservation.CODE_PHYSICAL and empty.failure.recoverable
        assert "closed on nothing" in empty.failure.why
        # Held when closed, gone when felt for after the lift: it slipped, and the hand stays free.
        slipped = send("Grasp", agent="robot0", object="cup0", support="table0", location="table0",
                       ns=NS_ROS_DRIVERS)
        assert not slipped.success and slipped.failure.cause == FailureObservation.CAUSE_SLIPPED
        assert "slipped out of the right hand" in slipped.failure.why
        full = send("Place", agent="robot0", object="cup0", target="table0", relation="on", location="table0",
                    ns=NS_ROS_DRIVERS)
        assert full.success, full.failure.why       # the left hand still holds the first cup
    finally:
        robot.stop()
        servers.stop()


def far_pose():
    from geometry_msgs.msg import PoseStamped

    pose = PoseStamped()
    pose.header.frame_id = "map"
    pose.pose.position.x = 99.0
    pose.pose.orientation.w = 1.0
    return pose


def test_the_oracle_source_reads_joints_and_inner_levels_off_the_referee_message():
    """What the referee publishes of a fridge reaches the skills: its box, its hinge and the
    level its things stand on."""
    from geometry_msgs.msg import Point, Vector3

    from affplan_ros.msg import RefereeObject, RefereeObjects
    from affplan_ros.robots.poses import OraclePoses

    class Node:
        def create_subscription(self, _type, _topic, callback, _qos, callback_group=None):
            self.callback = callback

    node = Node()
    source = OraclePoses(node, wait_s=0.0)
    fridge = RefereeObject(name="refrigerator0", class_name="refrigerator", kind="furniture",
                           size=Vector3(x=0.7, y=0.7, z=1.8), open_fraction=0.0, joint_type="hinge",
                           handle=Point(x=-0.29, y=0.4, z=1.0), joint_axis=Vector3(z=-1.0), joint_open=1.9,
                           inner_levels=[0.88])
    fridge.pose.position.z, fridge.pose.orientation.w = 0.9, 1.0
    node.callback(RefereeObjects(objects=[fridge]))
    seen = source.find("refrigerator0")
    assert seen.inner_levels == pytest.approx((0.88,)) and seen.joint.type == "hinge"
    assert seen.size == pytest.approx((0.7, 0.7, 1.8)) and seen.joint.handle == pytest.approx((-0.29, 0.4, 1.0))
