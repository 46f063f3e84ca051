"""The memory node on its own: initial memory from a scenario, observations merged, bad updates
refused without loss, persistence across its own restart, reset."""
from __future__ import annotations

import json
import time

import pytest

pytestmark = pytest.mark.ros

NS = "/affplan"


def start_memory(persist):
    from affplan_ros.env import share_dir
    from affplan_ros.launcher import NodeProcess, node_argv

    scenario = share_dir() / "config" / "scenarios" / "kitchen.yaml"
    return NodeProcess(node_argv("memory", NS, {"scenario": str(scenario), "persist_file": str(persist)},
                                 params_file=str(share_dir() / "config" / "sim.yaml")), name="memory")


def get(client):
    from affplan_ros.srv import GetMemory

    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    assert got is not None, error
    return json.loads(got.json), got.memory


def test_memory_merges_persists_and_resets(tmp_path):
    from affplan_ros.msg import Relation, SceneObject, SceneObservation
    from affplan_ros.nodes.base import LATCHED_QOS
    from affplan_ros.srv import ResetMemory, UpdateMemory
    from affplan_ros.task_client import SuiteClient

    persist = tmp_path / "memory.json"
    proc = start_memory(persist)
    try:
        with SuiteClient(NS, "memory_test") as client:
            data, snapshot = get(client)
            names = {o["name"] for o in data["objects"]}
            assert "cup0" in names and "apple0" not in names            # the fridge is unexplored
            assert {l.name: l.explored for l in snapshot.locations}["refrigerator0"] is False
            assert [l.pose[0].pose.position.x for l in snapshot.locations if l.name == "counter0"] == [2.0]

            # perception (here: the test) sees the apple in the fridge
            pub = client.node.create_publisher(SceneObservation, f"{NS}/observation", LATCHED_QOS)
            pub.publish(SceneObservation(location="refrigerator0", objects=[
                SceneObject(name="apple0", class_name="apple", instance=0, affordances=["grasp", "consumable"]),
                SceneObject(name="refrigerator0", class_name="refrigerator", instance=0)],
                relations=[Relation(predicate="in", arguments=["apple0", "refrigerator0"])]))
            deadline = time.monotonic() + 10
            while "apple0" not in {o["name"] for o in get(client)[0]["objects"]} and time.monotonic() < deadline:
                time.sleep(0.1)
            data, _ = get(client)
            assert ["in", "apple0", "refrigerator0"] in data["relations"]
            assert {l["name"]: l["explored"] for l in data["locations"]}["refrigerator0"] is True

            bad, _ = client.call(UpdateMemory, "update_memory", UpdateMemory.Request(memory_json="{not json"))
            assert not bad.success and "not JSON" in bad.message
            bad, _ = client.call(UpdateMemory, "update_memory", UpdateMemory.Request(memory_json='{"objects": [{}]}'))
            assert not bad.success and "malformed memory data" in bad.message
            ok, _ = client.call(UpdateMemory, "update_memory", UpdateMemory.Request(instruction="Bring me the apple"))
            assert ok.success
            # a relation added as an assumption is marked so; added again as a fact, it is one
            closed = Relation(predicate="closed", arguments=["refrigerator0"])
            for assumed in (True, False):
                closed.assumed = assumed
                ok, _ = client.call(UpdateMemory, "update_memory", UpdateMemory.Request(add_relations=[closed]))
                data, snapshot = get(client)
                assert ok.success and ["closed", "refrigerator0"] in data["relations"]
                assert (["closed", "refrigerator0"] in data["assumed"]) is assumed
                assert [r.assumed for r in snapshot.relations if list(r.arguments) == ["refrigerator0"]
                        and r.predicate == "closed"] == [assumed]
            before, _ = get(client)
            assert (before["instructions"] == ["Bring me the apple"]
                    and "apple0" in {o["name"] for o in before["objects"]})
            client.node.destroy_publisher(pub)

        assert proc.stop() == 0, "".join(proc.output[-60:])
        proc = start_memory(persist)                     # memory itself restarts: reloaded from the file
        with SuiteClient(NS, "memory_test2") as client:
            assert get(client)[0] == before
            reset, _ = client.call(ResetMemory, "reset_memory", ResetMemory.Request(keep_instructions=True))
            assert reset.success
            after, _ = get(client)
            assert "apple0" not in {o["name"] for o in after["objects"]}
            assert after["instructions"] == ["Bring me the apple"]
    finally:
        proc.stop()
