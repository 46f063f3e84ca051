"""Rendered frames -> the perception node -> memory -> plan -> physical execution: the suite on
the physics world with ``perception:=true``. The apple is in the closed refrigerator, which the
robot has not looked into; Explore turns the head camera to it, the perception node (YOLO
``models/kitchen_physics.pt`` on the rendered RGB-D frames, every node its own process) sees the
closed door, the robot opens it as a plan step, the camera sees the apple inside, memory takes
that view, the planner plans with it and the MuJoCo robot hands the apple over, judged by physics.
"""
from __future__ import annotations

import json

import pytest
import yaml
from ros_support import Received
from suite_support import run_task, scripted_suite, served_client

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
SCRIPT = {
    "Give me the apple": {
        "tool": ["No apple in memory; the refrigerator is unexplored.\nSELECTED TOOL: EXPLORE refrigerator0",
                 "SELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (inhand apple0 human0)))"]},
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from affplan_ros.env import share_dir

    tmp = tmp_path_factory.mktemp("perception_physics")
    scenario = {"description": "the kitchen; the refrigerator not looked into",
                "scene": str(share_dir() / "config" / "scenarios" / "kitchen.txt"),
                "explored": ["table0", "counter0"]}
    (tmp / "kitchen.yaml").write_text(yaml.safe_dump(scenario))
    with scripted_suite(tmp, tmp / "kitchen.yaml", SCRIPT, physics=True, launch_args={"perception": "true"}):
        with served_client(NS, "perception_physics_test") as c:
            yield c


def last_view(client):
    """The newest view memory took (latched on ``observation``)."""
    from affplan_ros.msg import SceneObservation
    from affplan_ros.nodes.base import LATCHED_QOS

    with Received(client.node, SceneObservation, f"{NS}/observation", LATCHED_QOS) as views:
        views.wait(bool, 10)
        got = list(views.messages)
    assert got, "no observation on the latched topic"
    return got[-1]


def test_the_apple_seen_by_the_perception_node_in_the_opened_fridge_is_handed_over(client):
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory

    outcome, seen = run_task(client, "Give me the apple", timeout=300)
    res = outcome.result
    assert res.success, seen
    # Explore opened the door as a step, as the first view showed it closed.
    assert any(m.startswith("Explored refrigerator0: found apple0") for m in seen), seen
    actions = [s.action for s in res.final_plan.steps]
    assert "take_out" in actions and actions[-1] == "handover", actions
    # What memory took of the fridge came from the detector on rendered frames ...
    view = last_view(client)
    assert view.location == "refrigerator0" and {o.source for o in view.objects} == {"detected"}
    apple = next(o for o in view.objects if o.name == "apple0")
    assert apple.class_name == "apple" and 0.35 <= apple.confidence <= 1.0 and apple.bbox.width > 0
    assert any(r.predicate == "in" and list(r.arguments) == ["apple0", "refrigerator0"] for r in view.relations)
    # ... and the physics says the person holds the apple.
    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    assert got is not None, error
    relations = {" ".join((r.predicate, *r.args)) for r in Memory.from_dict(json.loads(got.json)).relations}
    assert "inhand apple0 human0" in relations
