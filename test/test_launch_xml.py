"""Launch files are read without the ROS 2 launch package: what they start, and what they refuse."""
from __future__ import annotations

import sys

import pytest
import yaml

from affplan_ros.launch_xml import LaunchError, parse_launch, single_process_argv
from affplan_ros.suite import launch_file


@pytest.mark.parametrize("robot", ["sim", "tiago", "armar"])
def test_each_robot_launch_file_names_real_executables_and_parameter_sections(robot):
    desc = parse_launch(launch_file(robot))
    assert {"executor", "memory", "planning", "tool_selection"} <= {n.name for n in desc.nodes}
    for node in desc.nodes:
        argv = node.argv()
        assert argv[0] == sys.executable and argv[1].endswith(f"scripts/nodes/{node.executable}")
        assert argv[argv.index("-r") + 1] == f"__node:={node.name}" and "__ns:=/affplan" in argv
        for path in node.params_files:
            sections = yaml.safe_load(open(path))
            assert "/**" in sections and f"/**/{node.name}" in sections, f"{path} has no section for {node.name}"
            assert "api_key" not in open(path).read().replace("api_key_env", "")  # keys never in files


def test_arguments_override_and_substitute(tmp_path):
    desc = parse_launch(launch_file("sim"), {"namespace": "robot1", "time_scale": "0", "scenario": "/x.yaml",
                                             "physics": "true"})
    sim = desc.node("sim_world")
    assert sim.namespace == "/robot1" and sim.params == {"scenario": "/x.yaml", "time_scale": "0", "physics": "true",
                                                         "camera_rate_hz": "2.0", "video": "", "perception": "false"}
    own = sim.ros_args()[-1]                             # the node's own parameters come last and win
    assert yaml.safe_load(open(own)) == {
        "/robot1/sim_world": {"ros__parameters": {"scenario": "/x.yaml", "time_scale": 0, "physics": True,
                                                  "camera_rate_hz": 2.0, "video": "", "perception": False}}}
    assert parse_launch(launch_file("sim")).node("sim_world").params["physics"] == "false"  # symbolic by default
    assert sim.args == ["--ros-args", "--log-level", "info"] and sim.params_files[0].endswith("config/sim.yaml")
    assert desc.args["time_scale"][0] == "0"
    with pytest.raises(LaunchError, match="has no argument"):
        parse_launch(launch_file("sim"), {"robot": "x"})


def test_the_perception_node_comes_with_the_physics_camera_only_when_asked():
    assert "perception" not in {n.name for n in parse_launch(launch_file("sim"), {"physics": "true"}).nodes}
    desc = parse_launch(launch_file("sim"), {"physics": "true", "perception": "True"})
    perception = desc.node("perception")
    own = yaml.safe_load(open(perception.params_files[0]))["/**/perception"]["ros__parameters"]
    assert own["camera_topic"] == "camera/image_raw" and own["model"] == "models/kitchen_physics.pt"
    assert ("observation", "perception/observation") in perception.remaps  # memory takes Explore's views only
    assert ("observe", "perception/observe") in perception.remaps          # Explore asks sim_world (head first)
    assert desc.node("sim_world").params["perception"] == "True"


def test_if_and_unless_take_booleans_only(tmp_path):
    launch = tmp_path / "c.launch.xml"
    launch.write_text('<launch><arg name="on" default="false"/>'
                      '<node pkg="affplan_ros" exec="memory" if="$(var on)"/>'
                      '<group unless="$(var on)"><node pkg="affplan_ros" exec="planning"/></group></launch>')
    assert [n.name for n in parse_launch(launch).nodes] == ["planning"]
    assert [n.name for n in parse_launch(launch, {"on": "1"}).nodes] == ["memory"]
    with pytest.raises(LaunchError, match="'yes' is not a boolean"):
        parse_launch(launch, {"on": "yes"})


def test_unsupported_launch_features_are_refused_by_name(tmp_path):
    bad = tmp_path / "bad.launch.xml"
    bad.write_text('<launch><include file="other.launch.xml"/></launch>')
    with pytest.raises(LaunchError, match="<include> is not supported"):
        parse_launch(bad)
    bad.write_text('<launch><node pkg="affplan_ros" exec="memory">'
                   '<param name="a" value="$(var nope)"/></node></launch>')
    with pytest.raises(LaunchError, match=r"\$\(var nope\) is not a declared argument"):
        parse_launch(bad)
    bad.write_text('<launch><node pkg="other_pkg" exec="talker"/></launch>')
    with pytest.raises(LaunchError, match="only affplan_ros"):
        parse_launch(bad).nodes[0].argv()


def test_single_process_composition_keeps_every_parameter(tmp_path):
    argv = single_process_argv(parse_launch(launch_file("sim"), {"time_scale": "0"}))
    assert argv[1:5] == ["-m", "affplan_ros.nodes.all", "--nodes", "sim_world,executor,memory,planning,tool_selection"]
    files = [argv[i + 1] for i, a in enumerate(argv) if a == "--params-file"]
    assert files[0].endswith("config/sim.yaml") and len(files) == 3          # + sim_world's and memory's own
    sim = yaml.safe_load(open(files[1]))
    assert sim == {"/affplan/sim_world": {"ros__parameters": {"scenario": sim["/affplan/sim_world"]["ros__parameters"]
                                                             ["scenario"], "time_scale": 0,
                                                             "physics": False, "camera_rate_hz": 2.0,
                                                             "video": "", "perception": False}}}


def test_a_recovery_scenario_is_also_the_robot_model_of_every_node():
    from affplan_ros.env import share_dir
    from affplan_ros.suite import scenario_params

    scenarios = share_dir() / "config" / "scenarios"
    recovery = scenarios / "recovery" / "lasp_store_fruit_1.yaml"
    assert scenario_params(recovery) == {"capabilities_file": str(recovery)}
    assert scenario_params(scenarios / "kitchen.yaml") == {}          # a plain simulated world
    assert scenario_params(scenarios / "recovery" / "answers.yaml") == {}  # not a scenario at all
    desc = parse_launch(launch_file("sim"), {"scenario": str(recovery)})
    planning = desc.node("planning")
    planning.params.update(scenario_params(recovery))                 # what start_suite does
    own = yaml.safe_load(open(planning.ros_args()[-1]))
    assert own["/affplan/planning"]["ros__parameters"]["capabilities_file"] == str(recovery)
