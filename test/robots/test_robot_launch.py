"""The Tiago++ and ARMAR launch files: their task-level nodes start with the robot's config and
talk (robot_skills needs Nav2 and MoveIt, which are tested with stand-ins in test_robot_skills.py)."""
from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


@pytest.mark.parametrize("robot", ["tiago", "armar"])
def test_task_level_nodes_come_up_with_the_robot_config(robot):
    from affplan_ros.srv import GetMemory, PlanTask
    from affplan_ros.suite import start_suite
    from affplan_ros.task_client import SuiteClient

    env = {"AFFPLAN_LLM_BASE_URL": ""}  # the offline instruction interpreter writes the goal
    nodes = ("executor", "memory", "planning", "perception", "tool_selection")
    # knowledge_file "": what this machine learned earlier must not change the plans checked here
    with start_suite(robot, env=env, nodes=nodes, shared_params={"knowledge_file": ""}) as suite:
        assert [p.name for p in suite.processes] == list(nodes)
        with SuiteClient("/affplan", f"{robot}_test") as client:
            # perception watches the robot's camera (the Explore tool's `observe` comes from it)
            from rcl_interfaces.srv import GetParameters

            # 30 s: the node loads its detector (torch) in the background just then, on 2 cores
            got, error = client.call(GetParameters, "perception/get_parameters",
                                     GetParameters.Request(names=["camera_topic", "observe_timeout_s"]), timeout=30)
            assert got is not None, error
            camera = {"tiago": "/head_front_camera/rgb/image_raw", "armar": "/armar/head/rgb/image_raw"}[robot]
            assert [v.string_value for v in got.values[:1]] == [camera] and got.values[1].double_value == 10.0
            # shared_params win over the parameter file (which names ~/.affplan/knowledge-<robot>.json)
            got, error = client.call(GetParameters, "planning/get_parameters",
                                     GetParameters.Request(names=["knowledge_file"]))
            assert got is not None and got.values[0].string_value == "", error
            got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
            assert got is not None, error
            memory = json.loads(got.json)
            assert {l["name"] for l in memory["locations"]} == {"table0", "counter0", "refrigerator0"}
            assert (["at", "robot0", "counter0"] in memory["relations"]
                    and ["at", "human0", "table0"] in memory["relations"])
            assert {l.name: l.pose[0].pose.position.x for l in got.memory.locations}["table0"] == 1.2
            # planning works on what the robot config tells the memory
            plan, error = client.call(PlanTask, "plan_task", PlanTask.Request(task="go to the table"), timeout=120)
            assert plan is not None and plan.success, (error, plan)
            # which backend wrote the goal is a field of the response; the message is words only
            assert list(plan.answered_by) == ["offline"] and "answered by" not in plan.message, plan
            assert [(s.action, s.agent, list(s.arguments)) for s in plan.plan.steps] == [
                ("move", "robot0", ["counter0", "table0"])]
            # proven optimal, as typed fields: the bound is the cost itself
            assert plan.plan.optimal and plan.plan.lower_bound == plan.plan.cost == 1.0, plan.plan
