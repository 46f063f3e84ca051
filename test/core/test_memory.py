"""Memory and the simulated executor: what the robot knows vs. the ground truth."""
from __future__ import annotations

import json
import threading
import time

import pytest

from _kitchen import OAM, kitchen_scene
from affplan_ros.core.capabilities import Agent
from affplan_ros.core.execution import HumanAnswer, HumanRequest, ask_human
from affplan_ros.core.failure import FailureCode
from affplan_ros.core.goal import parse_goal, to_dnf
from affplan_ros.core.memory import Memory, ObjectRecord, Observation
from affplan_ros.core.planner import PlanStep
from affplan_ros.core.scene import Relation
from affplan_ros.sim.executor import SimulatedExecutor


def test_initial_memory_knows_only_the_explored_place() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory("table0")
    assert {"cup0", "banana0", "board0", "human0", "robot0"} <= set(mem.objects)
    assert "apple0" not in mem.objects and "milk0" not in mem.objects
    assert mem.explored() == ["table0"] and set(mem.unexplored()) == {"counter0", "refrigerator0"}
    assert mem.agent_location("robot0") == "table0"
    assert mem.objects["cup0"].affordances == tuple(sorted(OAM.affordances_of("cup")))
    scene = mem.scene()  # the planning view: no unexplored place, nothing from there
    assert set(scene.locations) == {"table0"} and "counter0" not in scene.objects
    assert all("counter0" not in r.args for r in scene.relations)
    text = mem.render()
    assert "Unexplored locations: counter0, refrigerator0" in text and "on cup0 table0" in text
    assert "apple0" not in text


def test_explore_moves_the_robot_and_reveals_objects() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory("table0")
    got = ex.explore("refrigerator0")
    assert got.success and got.cost == 1.0 and ex.location_of_robot() == "refrigerator0"
    seen = {o.name for o in got.observation.objects}
    assert {"refrigerator0", "milk0"} <= seen and "apple0" not in seen
    mem.merge(got.observation)
    assert mem.agent_location("robot0") == "refrigerator0"   # one place at a time
    assert sum(r.predicate == "at" and r.args[0] == "robot0" for r in mem.relations) == 1
    assert Relation("in", ("milk0", "refrigerator0")) in mem.relations
    assert Relation("closed", ("refrigerator0",)) in mem.relations
    assert mem.locations["refrigerator0"].explored and "milk0" in mem.locations["refrigerator0"].objects
    bad = ex.explore("garage0")
    assert not bad.success and bad.failure.code is FailureCode.NOT_FOUND


def test_merge_replaces_stale_beliefs() -> None:
    mem = Memory()
    mem.add_location("table0", explored=True)
    cup = ObjectRecord("cup0", "cup", 0, ("carry",))
    mem.merge(Observation((cup,), (Relation("on", ("cup0", "table0")),), "table0"))
    assert mem.locations["table0"].objects == ["cup0"]
    # The cup is seen at the counter now: it left the table, the old relation is gone.
    mem.merge(Observation((cup,), (Relation("on", ("cup0", "counter0")),), "counter0"))
    assert mem.locations["table0"].objects == [] and mem.locations["counter0"].objects == ["cup0"]
    assert mem.relations == [Relation("on", ("cup0", "counter0"))]


def test_assumptions_stay_marked_until_seen_or_changed() -> None:
    mem = Memory()
    fridge = ObjectRecord("refrigerator0", "refrigerator", 0, ("open", "close"))
    milk = ObjectRecord("milk0", "milk", 0, ("carry",))
    closed, inside = Relation("closed", ("refrigerator0",)), Relation("in", ("milk0", "refrigerator0"))
    mem.merge(Observation((fridge, milk), (closed, inside), "refrigerator0", assumed=(closed,)))
    assert mem.assumed == {closed} and "closed refrigerator0 (assumed), in milk0 refrigerator0" in mem.render()
    data = json.loads(json.dumps(mem.to_dict()))
    assert data["assumed"] == [["closed", "refrigerator0"]] and Memory.from_dict(data).assumed == {closed}
    # Seen closed now: a fact.
    mem.merge(Observation((fridge,), (closed,), None))
    assert mem.assumed == set() and closed in mem.relations
    # Assumed again, then a step changes it: gone with the relation.
    mem.merge(Observation((fridge,), (closed,), None, assumed=(closed,)))
    mem.relations.append(Relation("at", ("robot0", "refrigerator0")))
    mem.objects["robot0"] = ObjectRecord("robot0", "robot", 0, ())
    mem.apply_steps([PlanStep("open", ("refrigerator0", "refrigerator0"), "robot0")], oam=OAM)
    assert closed not in mem.relations and mem.assumed == set()


def test_json_round_trip_and_bad_data() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory(["table0", "counter0"])
    mem.record_instruction("give me the apple")
    mem.accept_substitution("glass", "cup")
    mem.reject_substitution("glass", "banana")
    data = json.loads(json.dumps(mem.to_dict()))
    back = Memory.from_dict(data)
    assert back.to_dict() == mem.to_dict()
    assert back.render() == mem.render()
    with pytest.raises(ValueError, match="malformed memory data"):
        Memory.from_dict({"objects": [{"name": "cup0"}]})


def test_substitute_rewrites_the_request() -> None:
    mem = Memory(substitutions={"kitchen_knife": "dinner_knife", "apple": "banana"})
    assert mem.substitute("Cut the pineapple with the kitchen knife, then the Apple") == \
        "Cut the pineapple with the dinner_knife, then the banana"


def test_apply_steps_follows_the_plan_effects() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory("table0")
    steps = [PlanStep("grasp", ("cup0", "table0", "table0"), "robot0"),
             PlanStep("handover", ("human0", "cup0"), "robot0")]
    mem.apply_steps(steps, oam=OAM)
    assert Relation("inhand", ("cup0", "human0")) in mem.relations
    assert Relation("on", ("cup0", "table0")) not in mem.relations
    assert "cup0" not in mem.locations["table0"].objects


def test_execute_checks_ground_truth_and_counts_cost() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    ok = ex.execute([PlanStep("grasp", ("banana0", "table0", "table0"), "robot0"),
                     PlanStep("move", ("table0", "human0"), "robot0"),
                     PlanStep("handover", ("human0", "banana0"), "robot0")])
    assert ok.success and ok.steps_done == 3 and ex.plan_cost == 3.0
    assert ex.goal_reached(to_dnf(parse_goal("(inhand banana0 human0)")))
    # The apple is on the counter, the robot at the table: the world refuses, the step says why.
    bad = ex.execute([PlanStep("grasp", ("apple0", "counter0", "counter0"), "robot0")])
    assert not bad.success and bad.steps_done == 0 and bad.failure.code is FailureCode.PRECONDITION
    assert "robot0 is at the location counter0" in bad.failure.why


def _human_scene_executor(ask, timeout: float) -> SimulatedExecutor:
    agents = [Agent("robot0", "robot", 1, frozenset({"grasp", "place", "move", "handover"})),
              Agent("human0", "human", 100, None)]
    return SimulatedExecutor(kitchen_scene(), oam=OAM, agents=agents, ask_human=ask, human_timeout_s=timeout)


def test_human_steps_ask_the_person() -> None:
    asked: list[HumanRequest] = []
    ex = _human_scene_executor(lambda req, t: asked.append(req) or True, 2.0)
    res = ex.execute([PlanStep("move", ("table0", "refrigerator0"), "human0"),
                      PlanStep("open", ("refrigerator0", "refrigerator0"), "human0")])
    assert res.success and [o.human for o in res.outcomes] == [HumanAnswer.DONE, HumanAnswer.DONE]
    assert asked[1].text.startswith("human0, please open refrigerator0")
    assert ex.goal_reached(to_dnf(parse_goal("(opened refrigerator0)")))
    assert ex.plan_cost == 200.0


def test_human_timeout_and_refusal_fail_the_step_without_hanging() -> None:
    release = threading.Event()
    ex = _human_scene_executor(lambda req, t: release.wait(30), 0.3)
    t0 = time.monotonic()
    res = ex.execute([PlanStep("move", ("table0", "counter0"), "human0")])
    release.set()
    assert time.monotonic() - t0 < 2.0
    assert not res.success and res.outcomes[0].human is HumanAnswer.TIMEOUT
    assert res.failure.code is FailureCode.TIMEOUT and "within 0.3 s" in res.failure.why
    assert not ex.goal_reached(to_dnf(parse_goal("(at human0 counter0)")))  # nothing happened
    answer, detail = ask_human(lambda r, t: False, HumanRequest("human0", "open", (), "x"), 1.0)
    assert answer is HumanAnswer.REFUSED
    answer, detail = ask_human(lambda r, t: 1 / 0, HumanRequest("human0", "open", (), "x"), 1.0)
    assert answer is HumanAnswer.ERROR and "ZeroDivisionError" in detail
    assert ask_human(None, HumanRequest("human0", "open", (), "x"), 1.0)[0] is HumanAnswer.REFUSED
