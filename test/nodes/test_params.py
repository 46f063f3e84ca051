"""Parameter tables (affplan_ros/nodes/params.py) on real rclpy nodes: what `ros2 param describe`
shows, read-only parameters, numbers where a float is meant, and one error naming every bad value."""
from __future__ import annotations

import sys

import pytest
from rclpy.node import Node

from affplan_ros.nodes.params import Param, declare_params

pytestmark = pytest.mark.ros

TABLE = (
    Param("max_rounds", 10, "bound on rounds", minimum=1),
    Param("timeout_s", 60.0, "time limit, seconds", above=0),
    Param("approval", "plan", "ask the person first", choices=("none", "plan", "each_step")),
    Param("frame_id", "map", "frame of the markers", nonempty=True),
    Param("scale", 1.0, "multiplies durations", minimum=0, read_only=False),
    Param("names", [], "names, any number"),
    Param("label", "robot", "no checks at all"),
)


def _node(context, name: str, *overrides: str) -> Node:
    """A node of ``context`` started with ``-p`` overrides, as on a command line."""
    args = ["--ros-args", *(a for o in overrides for a in ("-p", o))]
    return Node(name, context=context, cli_args=args, use_global_arguments=False)


def _call(client_node: Node, executor, srv_type, service: str, request):
    from ros_support import spin_until

    client = client_node.create_client(srv_type, service)
    assert spin_until(executor, client.service_is_ready, 10.0), f"no {service}"
    future = client.call_async(request)
    assert spin_until(executor, future.done, 10.0), f"no answer from {service}"
    return future.result()


def test_describe_shows_the_description_and_the_checks_in_words():
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import DescribeParameters
    from ros_support import isolated_node

    with isolated_node("params_cli") as (cli, executor):
        node = _node(cli.context, "params_describe")
        executor.add_node(node)
        try:
            values = declare_params(node, TABLE)
            names = [p.name for p in TABLE]
            reply = _call(cli, executor, DescribeParameters, "/params_describe/describe_parameters",
                          DescribeParameters.Request(names=names))
        finally:
            executor.remove_node(node)
            node.destroy_node()
    got = {d.name: d for d in reply.descriptors}
    assert [got[n].description for n in names] == [p.description for p in TABLE]
    assert {n: got[n].additional_constraints for n in names} == {
        "max_rounds": ">= 1", "timeout_s": "> 0", "approval": "one of: none, plan, each_step",
        "frame_id": "not empty", "scale": ">= 0", "names": "", "label": ""}
    assert {n: got[n].read_only for n in names} == {n: n != "scale" for n in names}
    assert got["names"].type == ParameterType.PARAMETER_STRING_ARRAY      # an empty list: a string array
    assert got["timeout_s"].dynamic_typing and not got["max_rounds"].dynamic_typing
    assert vars(values) == {"max_rounds": 10, "timeout_s": 60.0, "approval": "plan", "frame_id": "map",
                            "scale": 1.0, "names": [], "label": "robot"}


def test_read_only_parameters_refuse_a_change_and_writable_ones_keep_their_checks():
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from ros_support import isolated_node

    def double(name: str, value: float) -> Parameter:
        return Parameter(name=name, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value))

    with isolated_node("params_cli") as (cli, executor):
        node = _node(cli.context, "params_set")
        executor.add_node(node)
        try:
            declare_params(node, TABLE)
            reply = _call(cli, executor, SetParameters, "/params_set/set_parameters", SetParameters.Request(
                parameters=[double("timeout_s", 5.0), double("scale", 0.5), double("scale", -1.0)]))
            timeout, scale = node.get_parameter("timeout_s").value, node.get_parameter("scale").value
        finally:
            executor.remove_node(node)
            node.destroy_node()
    refused, accepted, bad = reply.results
    assert not refused.successful and "read-only" in refused.reason
    assert accepted.successful
    assert not bad.successful and bad.reason == "scale must be >= 0 (got -1.0)"
    assert (timeout, scale) == (60.0, 0.5)


def test_a_float_parameter_takes_an_integer_and_is_a_float():
    from ros_support import isolated_node

    with isolated_node("params_cli") as (cli, _executor):
        node = _node(cli.context, "params_int", "timeout_s:=5", "scale:=0", "names:=[a, b]")
        try:
            values = declare_params(node, TABLE)
        finally:
            node.destroy_node()
    assert values.timeout_s == 5.0 and isinstance(values.timeout_s, float)
    assert values.scale == 0.0 and isinstance(values.scale, float)
    assert values.names == ["a", "b"]


def test_every_bad_value_is_named_in_one_error():
    from ros_support import isolated_node

    with isolated_node("params_cli") as (cli, _executor):
        node = _node(cli.context, "params_bad", "max_rounds:=0", "timeout_s:=0", "approval:=sometimes",
                     "frame_id:=''", "scale:=true", "label:=7")
        try:
            with pytest.raises(ValueError) as caught:
                declare_params(node, TABLE)
        finally:
            node.destroy_node()
    assert str(caught.value) == (
        "invalid parameters: max_rounds must be >= 1 (got 0); timeout_s must be > 0 (got 0.0); "
        "approval must be one of: none, plan, each_step (got 'sometimes'); frame_id must not be empty (got ''); "
        "scale must be a number (got True); label must be a string (got 7)")


def test_a_value_of_the_wrong_type_is_named():
    from ros_support import isolated_node

    with isolated_node("params_cli") as (cli, _executor):
        node = _node(cli.context, "params_type", "max_rounds:=many", "timeout_s:=soon")
        try:
            with pytest.raises(ValueError, match=r"^invalid parameters: max_rounds must be an integer \(got 'many'\); "
                                                 r"timeout_s must be a number \(got 'soon'\)$"):
                declare_params(node, TABLE)
        finally:
            node.destroy_node()


def test_a_table_whose_default_fails_its_own_check_is_refused_at_once():
    with pytest.raises(ValueError, match=r"max_rounds must be >= 1 \(got 0\)"):
        Param("max_rounds", 0, "bound on rounds", minimum=1)
    with pytest.raises(ValueError, match="one of: a, b"):
        Param("mode", "c", "a or b", choices=("a", "b"))
    assert Param("x", 1.0, "d", minimum=0, above=-1, choices=[1.0, 2.0]).constraints() == \
        ">= 0; > -1; one of: 1.0, 2.0"


def test_a_node_with_bad_parameters_stops_at_start_up_naming_each_of_them():
    from affplan_ros.launch_xml import find_executable
    from affplan_ros.launcher import NodeProcess, NodeStartError

    args = ["-p", "step_timeout_s:=0", "-p", "server_wait_s:=2", "-p", "human_timeout_s:=-1",
            "-p", "ask_human_service:=5"]
    proc = NodeProcess([sys.executable, str(find_executable("affplan_ros", "executor")), "--ros-args",
                        "-r", "__ns:=/params_test", *args], name="executor", wait=False)
    with pytest.raises(NodeStartError) as caught:
        proc.wait_ready(30.0)
    text = str(caught.value)
    assert "exited with code 2" in text, text
    assert ("error: invalid parameters: step_timeout_s must be > 0 (got 0.0); human_timeout_s must be > 0 "
            "(got -1.0); ask_human_service must be a string (got 5)") in text, text
    assert "server_wait_s" not in text and "Traceback" not in text, text
