"""The real robot's skill server on the simulated Tiago++'s hardware: robot_skills with its
built-in arm planner (IK, OMPL and TOPP-RA on /robot_description, sent to the FollowJointTrajectory
controllers), the real Nav2 and GripperCommand drivers, and the oracle pose source (the
simulator's referee: simulation only). The physics judges, through the referee."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCENE = ("SCENE-DESCRIPTION\nOBJECTS\ntable:0\napple:0\ncup:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non apple:0 table:0\n"
         "on cup:0 table:0\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable:0\nEND-LOCATIONS\n")
SKILLS = ROOT / "scripts" / "nodes" / "robot_skills"
NS = "/affplan_arm"


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    from affplan_ros.launcher import NodeProcess

    folder = tmp_path_factory.mktemp("arm")
    scene = folder / "scene.txt"
    scene.write_text(SCENE)
    # The Tiago++ config, with the built-in planner and the simulator's referee for poses; no base
    # poses: the robot finds where to stand from the table's box.
    sim = folder / "tiago_sim.yaml"
    sim.write_text("/**:\n  ros__parameters:\n    use_sim_time: true\n    locations: ['']\n"
                   "/**/robot_skills:\n  ros__parameters:\n    arm_planner: builtin\n    pose_source: oracle\n")
    hardware = NodeProcess([sys.executable, str(ROOT / "scripts" / "nodes" / "sim_hardware"), "--ros-args",
                            "-p", f"scenario:={scene}", "-p", "real_time_factor:=3.0", "-p", "camera_rate_hz:=0.0"],
                           name="sim_hardware")
    skills = NodeProcess([sys.executable, str(SKILLS), "--ros-args", "-r", f"__ns:={NS}",
                          "--params-file", str(ROOT / "config" / "tiago.yaml"), "--params-file", str(sim)],
                         name="robot_skills")
    yield hardware
    assert skills.stop() == 0, "".join(skills.output[-60:])
    assert hardware.stop() == 0, "".join(hardware.output[-40:])


def _referee(timeout: float = 10.0) -> dict:
    from ros_support import Received, nodes_in_process

    from affplan_ros.msg import RefereeObjects

    with nodes_in_process([], "referee_reader") as (node,):
        with Received(node, RefereeObjects, "/referee/objects", 10) as got:
            assert got.wait(lambda m: m, timeout), "no referee"
        return {o.name: o for o in got.messages[-1].objects}


def test_it_stands_at_the_table_grasps_the_apple_and_the_cup_and_puts_the_apple_back(robot):
    """No base pose for the table in the config: the robot stands in front of the face of its box
    nearest to it. Each hand takes one thing (a sphere, a cylinder) as the planner works it out."""
    from ros_support import send_skill

    result = send_skill("Navigate", NS, timeout=120.0, to_location="table0")
    assert result.success, (result.failure.what, result.failure.why)
    before = _referee()
    table_top = before["table0"].pose.position.z + before["table0"].size.z / 2
    result = send_skill("Grasp", NS, timeout=240.0, object="apple0", support="table0", hand="right")
    assert result.success, (result.failure.what, result.failure.why)
    lifted = _referee()["apple0"].pose.position.z
    assert lifted > before["apple0"].pose.position.z + 0.05, "the apple did not rise with the hand"
    result = send_skill("Grasp", NS, timeout=240.0, object="cup0", support="table0", hand="left")
    assert result.success, (result.failure.what, result.failure.why)
    assert _referee()["cup0"].pose.position.z > before["cup0"].pose.position.z + 0.05, "the cup stayed"
    result = send_skill("Place", NS, timeout=240.0, object="apple0", target="table0", relation="on")
    assert result.success, (result.failure.what, result.failure.why)
    after = _referee()["apple0"]
    assert abs(after.pose.position.z - after.size.z / 2 - table_top) < 0.02, "the apple is not on the table"


def test_a_thing_no_source_knows_is_not_found_and_nothing_moves(robot):
    from ros_support import send_skill

    result = send_skill("Grasp", NS, timeout=60.0, object="banana0", support="table0", hand="right")
    assert not result.success and result.failure.code == 3, result.failure   # NOT_FOUND
    assert "banana0" in result.failure.why
