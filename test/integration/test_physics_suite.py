"""The suite end to end on the physics world (sim_world ``physics:=true``): every node its own
process, tasks sent through the ExecuteTask action, a scripted LLM on the local chat server, and
each plan step a motion of the MuJoCo robot that the physics, not the planner, judges; the
head camera renders RGB-D frames from the same world at 2 Hz.

The world is config/scenarios/kitchen.txt (the apple in the closed refrigerator, the cup on the
counter, the person at the table, the robot at the counter) with a second apple on top of the
refrigerator, 1.84 m up: out of the arm's reach.
"""
from __future__ import annotations

import json
import time
from contextlib import ExitStack

import numpy as np
import pytest
from ros_support import Received
from suite_support import reset_suite, run_task, scripted_suite, served_client

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
SCRIPT = {
    "Give me the apple": {
        "tool": ["The apple is in the refrigerator.\nSELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (inhand apple0 human0)))"]},
    "Give me some fruit": {
        "tool": ["The other apple is on the fridge.\nSELECTED TOOL: PLAN",
                 "The other apple is out of reach; the apple will do.\nSELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (inhand apple1 human0)))", "(:goal (and (inhand apple0 human0)))"]},
    "Put the cup on the table": {
        "tool": ["SELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (on cup0 table0)))"]},
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    from affplan_ros.env import share_dir

    tmp = tmp_path_factory.mktemp("physics_suite")
    kitchen = (share_dir() / "config" / "scenarios" / "kitchen.txt").read_text()
    kitchen = (kitchen.replace("apple:0\n", "apple:0\napple:1\n", 1)
               .replace("in apple:0 refrigerator:0", "in apple:0 refrigerator:0\non apple:1 refrigerator:0")
               .replace("refrigerator0 refrigerator:0 apple:0", "refrigerator0 refrigerator:0 apple:0 apple:1"))
    (tmp / "kitchen.txt").write_text(kitchen)
    with scripted_suite(tmp, tmp / "kitchen.txt", SCRIPT, physics=True) as (started, _env):
        yield started


@pytest.fixture(scope="module")
def client(suite):
    with served_client(NS, "physics_e2e_test") as c:
        yield c


@pytest.fixture(autouse=True)
def fresh_world(client, suite):
    """The scenario's physics world (built again) and memory before every test."""
    reset_suite(client, suite)


def looked_at(client, location: str):
    """What the physics world's camera sees at ``location`` (the robot must stand there)."""
    from affplan_ros.srv import Observe

    got, error = client.call(Observe, "observe", Observe.Request(location=location))
    assert got is not None and got.success, (error, got and got.message)
    return {" ".join((r.predicate, *r.arguments)) for r in got.observation.relations}, \
        {o.name for o in got.observation.objects}


def relations_in_memory(client) -> set[str]:
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory

    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    assert got is not None, error
    return {" ".join((r.predicate, *r.args)) for r in Memory.from_dict(json.loads(got.json)).relations}


def test_a_multi_step_kitchen_task_moves_the_cup_physically(client):
    outcome, seen = run_task(client, "Put the cup on the table")
    res = outcome.result
    assert res.success, seen
    assert [s.action for s in res.final_plan.steps] == ["grasp", "move", "place"]
    # The physics camera at the table sees the cup resting there: read from contacts, not effects.
    seen_rel, objects = looked_at(client, "table0")
    assert "on cup0 table0" in seen_rel and "cup0" in objects
    assert "on cup0 table0" in relations_in_memory(client)


def test_the_closed_door_is_opened_before_the_apple_inside_is_taken_and_handed_over(client):
    outcome, seen = run_task(client, "Give me the apple")
    res = outcome.result
    assert res.success, seen
    actions = [s.action for s in res.final_plan.steps]
    assert actions.index("open") < actions.index("take_out") and actions[-1] == "handover"
    # Each step succeeded because the physics said so (the handover: the person's hand holds it).
    assert sum(m.startswith("step ") and " succeeded:" in m for m in seen) == len(actions)
    assert "inhand apple0 human0" in relations_in_memory(client)


def test_an_object_out_of_reach_fails_the_grasp_physically_and_the_next_round_takes_another(client):
    outcome, seen = run_task(client, "Give me some fruit")
    res = outcome.result
    assert res.success, seen
    # Round 1: the grasp of the orange on top of the fridge fails as the physics finds it ...
    failed = [m for m in seen if " failed: " in m and "apple1" in m]
    assert failed and "unreachable" in failed[0] and "1.84 m high" in failed[0], seen
    # ... round 2 plans with that feedback for the apple, which the robot hands over.
    assert res.rounds == 2 and [s.action for s in res.final_plan.steps][-1] == "handover"
    assert "inhand apple0 human0" in relations_in_memory(client)
    assert "on apple1 refrigerator0" in relations_in_memory(client)


def test_a_world_reset_undoes_the_physics(client):
    from std_srvs.srv import Trigger

    outcome, seen = run_task(client, "Put the cup on the table")
    assert outcome.result.success, seen
    world, error = client.call(Trigger, "reset_world", Trigger.Request())
    assert world is not None and world.success, error
    seen_rel, objects = looked_at(client, "counter0")  # the robot is back where the scenario starts
    assert "on cup0 counter0" in seen_rel and "cup0" in objects


def test_the_head_camera_publishes_rgb_depth_and_intrinsics(client):
    """What a real RGB-D driver publishes, rendered from the physics (sensor QoS, 2 Hz)."""
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import CameraInfo, Image

    from affplan_ros.nodes.base import SENSOR_QOS

    topics = {"rgb": (Image, "camera/image_raw"), "depth": (Image, "camera/depth/image_raw"),
              "info": (CameraInfo, "camera/camera_info"), "pose": (PoseStamped, "camera/pose")}
    with ExitStack() as stack:
        streams = {key: stack.enter_context(Received(client.node, t, f"{NS}/{topic}", SENSOR_QOS))
                   for key, (t, topic) in topics.items()}
        deadline = time.monotonic() + 20
        for stream in streams.values():   # each wait ends when its second frame arrives
            stream.wait(lambda msgs: len(msgs) >= 2, max(0.0, deadline - time.monotonic()))
        got = {key: list(stream.messages) for key, stream in streams.items()}
    assert all(len(v) >= 2 for v in got.values()), {k: len(v) for k, v in got.items()}
    rgb, depth, info = got["rgb"][-1], got["depth"][-1], got["info"][-1]
    assert (rgb.encoding, rgb.width, rgb.height) == ("rgb8", 320, 240) and len(rgb.data) == 320 * 240 * 3
    assert depth.encoding == "32FC1" and (depth.width, depth.height) == (320, 240)
    assert info.width == 320 and info.k[0] > 0 and info.k[2] == pytest.approx(159.5)
    assert rgb.header.frame_id == depth.header.frame_id == info.header.frame_id == "head_camera_optical"
    # The camera is on the robot's head, at a Tiago's height, looking at the world.
    assert 1.0 < got["pose"][-1].pose.position.z < 1.6
    arr = np.frombuffer(bytes(depth.data), dtype=np.float32)
    assert np.isfinite(arr).all() and 0.05 < float(np.median(arr)) < 10.0
