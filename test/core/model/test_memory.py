"""Memory and the simulated executor: what the robot knows vs. the ground truth."""
from __future__ import annotations

import json
import threading
import time

import pytest
from _kitchen import OAM, kitchen_scene

from affplan_ros.core.agent.execution import HumanAnswer, HumanRequest, ask_human
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.knowledge.capabilities import Agent
from affplan_ros.core.model.failure import FailureCode
from affplan_ros.core.model.memory import Memory
from affplan_ros.core.model.records import ObjectRecord, Observation, Source, Stamp
from affplan_ros.core.model.scene import Relation
from affplan_ros.core.planning.planner import PlanStep
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
    # The camera cannot see through the closed door: Explore opens it (the move and the door).
    assert got.success and got.cost == 2.0 and ex.location_of_robot() == "refrigerator0"
    seen = {o.name for o in got.observation.objects}
    assert {"refrigerator0", "milk0"} <= seen and "apple0" not in seen
    mem.merge(got.observation)
    assert mem.agent_location("robot0") == "refrigerator0"   # one place at a time
    assert sum(r.predicate == "at" and r.args[0] == "robot0" for r in mem.relations) == 1
    assert Relation("in", ("milk0", "refrigerator0")) in mem.relations
    assert Relation("opened", ("refrigerator0",)) in mem.relations
    assert Relation("closed", ("refrigerator0",)) not in mem.relations
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


def test_an_assumption_does_not_replace_what_the_robot_knows() -> None:
    mem = Memory()
    fridge = ObjectRecord("refrigerator0", "refrigerator", 0, ("open", "close"))
    opened, closed = Relation("opened", ("refrigerator0",)), Relation("closed", ("refrigerator0",))
    mem.add_relation(opened)  # the robot opened it
    mem.merge(Observation((fridge,), (closed,), "refrigerator0", assumed=(closed,)))
    assert opened in mem.relations and closed not in mem.relations and mem.assumed == set()
    # Seen closed (not assumed): the view wins.
    mem.merge(Observation((fridge,), (closed,), "refrigerator0"))
    assert closed in mem.relations and opened not in mem.relations


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


def test_apply_steps_knows_the_robots_own_actions() -> None:
    """A robot model with an action the built-in set lacks (a recovery scenario's heat_food):
    memory follows its effects when given that model, instead of failing on the action."""
    import dataclasses

    from affplan_ros.core.knowledge.capabilities import load_capabilities
    from affplan_ros.core.planning.simulate import SimulationError

    caps = load_capabilities()
    chill = dataclasses.replace(caps["open"], name="chill", description="chill ?object", precondition="(and)",
                                effect="(and (clean ?object))")
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory("table0")
    step = PlanStep("chill", ("refrigerator0", "refrigerator0"), "robot0")
    with pytest.raises(SimulationError, match="unknown action 'chill'"):
        mem.apply_steps([step], oam=OAM)
    mem.apply_steps([step], oam=OAM, capabilities={**caps, "chill": chill})
    assert Relation("clean", ("refrigerator0",)) in mem.relations


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


# -- state never goes back in time --------------------------------------------------------------

def _counter_view(stamp: float) -> Observation:
    """What a camera at the counter saw at ``stamp``: the apple on the counter."""
    apple = ObjectRecord("apple0", "apple", 0, tuple(sorted(OAM.affordances_of("apple"))))
    counter = ObjectRecord("counter0", "counter", 0, tuple(sorted(OAM.affordances_of("counter"))))
    return Observation((apple, counter), (Relation("on", ("apple0", "counter0")),), "counter0", stamp=stamp)


def _apple_handed_over() -> tuple[Memory, float]:
    """A memory in which the robot explored the counter, then handed the apple to the person."""
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory(["table0", "counter0"])
    taken = time.time() - 100
    mem.stamp_all(Stamp(taken - 10, Source.INITIAL))  # as the memory node stamps its initial memory
    mem.apply_steps([PlanStep("move", ("table0", "counter0"), "robot0"),
                     PlanStep("grasp", ("apple0", "counter0", "counter0"), "robot0"),
                     PlanStep("move", ("counter0", "table0"), "robot0"),
                     PlanStep("handover", ("human0", "apple0"), "robot0")], oam=OAM, at=taken + 5)
    assert Relation("inhand", ("apple0", "human0")) in mem.relations
    return mem, taken


def test_an_old_observation_does_not_undo_a_newer_step() -> None:
    mem, taken = _apple_handed_over()
    kept = mem.merge(_counter_view(taken))           # the view from before the plan, delivered late
    assert kept == ["apple0", "counter0"]
    assert Relation("inhand", ("apple0", "human0")) in mem.relations
    assert Relation("on", ("apple0", "counter0")) not in mem.relations
    assert mem.stamp_of("apple0").source is Source.STEP and mem.stamp_of("apple0").time == taken + 5
    assert mem.fact_stamps[Relation("inhand", ("apple0", "human0"))].source is Source.STEP
    # A view taken after the plan is newer: it wins (the person put the apple back).
    mem.merge(_counter_view(taken + 10))
    assert Relation("on", ("apple0", "counter0")) in mem.relations
    assert Relation("inhand", ("apple0", "human0")) not in mem.relations
    assert mem.fact_stamps[Relation("on", ("apple0", "counter0"))] == Stamp(taken + 10, Source.OBSERVATION)


def test_a_step_of_the_person_is_stamped_as_theirs() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory("all")
    at = time.time() + 1
    mem.apply_steps([PlanStep("move", ("table0", "refrigerator0"), "human0")], oam=OAM, at=at)
    assert mem.stamp_of("human0") == Stamp(at, Source.PERSON)
    assert mem.fact_stamps[Relation("at", ("human0", "refrigerator0"))] == Stamp(at, Source.PERSON)


def test_an_old_observation_does_not_take_away_what_a_newer_step_put_somewhere() -> None:
    # The table was seen with the cup at t=10; the robot put the banana there at t=20. The old
    # view, delivered late, lists no banana: the banana is not taken for gone.
    mem = Memory()
    table = ObjectRecord("table0", "table", 0, ("support",))
    cup, banana = ObjectRecord("cup0", "cup", 0, ("carry",)), ObjectRecord("banana0", "banana", 0, ("carry",))
    mem.merge(Observation((table, cup), (Relation("on", ("cup0", "table0")),), "table0", stamp=5.0))
    mem.objects["banana0"] = banana
    mem.locations["table0"].objects.append("banana0")
    mem.add_relation(Relation("on", ("banana0", "table0")), Stamp(20.0, Source.STEP))
    mem.merge(Observation((table, cup), (Relation("on", ("cup0", "table0")),), "table0", stamp=10.0))
    assert Relation("on", ("banana0", "table0")) in mem.relations and "banana0" in mem.locations["table0"].objects
    # A newer view without the banana: it is gone from there.
    mem.merge(Observation((table, cup), (Relation("on", ("cup0", "table0")),), "table0", stamp=30.0))
    assert Relation("on", ("banana0", "table0")) not in mem.relations
    assert "banana0" not in mem.locations["table0"].objects


def test_what_is_in_a_closed_container_is_not_gone_for_not_being_seen() -> None:
    mem = Memory()
    fridge = ObjectRecord("refrigerator0", "refrigerator", 0, ("open", "close", "contain"))
    milk = ObjectRecord("milk0", "milk", 0, ("carry",))
    water, bottle = ObjectRecord("water0", "water", 0, ("liquid",)), ObjectRecord("bottle0", "bottle", 0, ("carry",))
    inside = (Relation("in", ("milk0", "refrigerator0")), Relation("in", ("bottle0", "refrigerator0")),
              Relation("liquid_in", ("water0", "bottle0")), Relation("opened", ("refrigerator0",)))
    mem.merge(Observation((fridge, milk, bottle, water), inside, "refrigerator0", stamp=1.0))
    assert set(mem.locations["refrigerator0"].objects) == {"milk0", "bottle0", "water0"}
    closed = Relation("closed", ("refrigerator0",))
    # The door is shut: the camera sees only the fridge; milk, bottle and the water in it stay.
    mem.merge(Observation((fridge,), (closed,), "refrigerator0", stamp=2.0))
    assert {"milk0", "bottle0", "water0"} <= set(mem.locations["refrigerator0"].objects)
    assert Relation("in", ("milk0", "refrigerator0")) in mem.relations
    assert Relation("liquid_in", ("water0", "bottle0")) in mem.relations
    # Open and empty: gone.
    mem.merge(Observation((fridge,), (Relation("opened", ("refrigerator0",)),), "refrigerator0", stamp=3.0))
    assert (mem.locations["refrigerator0"].objects == []
            and Relation("in", ("milk0", "refrigerator0")) not in mem.relations)


def test_reconcile_keeps_the_newer_belief_per_object() -> None:
    mem, taken = _apple_handed_over()
    node = Memory.from_dict(mem.to_dict())      # the memory node's copy
    work = Memory.from_dict(mem.to_dict())      # a copy tool selection works on
    # Meanwhile the node hears of the cup (newer than anything the copy knows about it) ...
    node.merge(Observation((ObjectRecord("cup0", "cup", 0, ("carry",)),),
                           (Relation("on", ("cup0", "counter0")),), None, stamp=taken + 20))
    # ... and gets the old counter view late, which it keeps out.
    node.merge(_counter_view(taken))
    # The copy's robot moved on afterwards and the request history grew.
    work.set_agent_location("robot0", "counter0", Stamp(taken + 30, Source.STEP))
    work.record_instruction("bring me the apple")
    out = node.reconcile(work)
    assert Relation("on", ("cup0", "counter0")) in out.relations       # the node's newer cup
    assert Relation("on", ("cup0", "table0")) not in out.relations
    assert out.agent_location("robot0") == "counter0"                  # the copy's newer robot
    assert Relation("inhand", ("apple0", "human0")) in out.relations   # nobody went back in time
    assert out.instructions == ["bring me the apple"]
    assert out.stamp_of("robot0") == Stamp(taken + 30, Source.STEP)
    assert out.stamp_of("cup0").time == taken + 20
    # Reconciling is the same whichever side comes back with an unchanged copy.
    assert node.reconcile(Memory.from_dict(node.to_dict())).to_dict() == node.to_dict()


def test_stamps_survive_json_and_bad_data_is_named() -> None:
    mem, taken = _apple_handed_over()
    back = Memory.from_dict(json.loads(json.dumps(mem.to_dict())))
    assert back.to_dict() == mem.to_dict() and back.stamp_of("apple0") == mem.stamp_of("apple0")
    # Data written by hand (no stamps): every belief gets the default stamp.
    plain = {k: v for k, v in mem.to_dict().items() if not k.endswith("_stamps")}
    now = Stamp(taken + 100, Source.UPDATE)
    assert Memory.from_dict(plain, default=now).stamp_of("apple0") == now
    bad = [(None, "must be an object"), ([], "must be an object"), ({"substitutions": [1]}, "substitutions"),
           ({"relations": [["at", "robot0"]]}, "at takes 2 arguments"),
           ({"relations": [["floats", "cup0"]]}, "unknown predicate"),
           ({"relations": [["on", "cúp0", "table0"]]}, "not a name"),
           ({"objects": [{"name": "cup0", "class_name": "cup", "instance": True}]}, "whole number"),
           ({"objects": [{"name": "cup0"}]}, "missing"), ({"relation": []}, "unknown field"),
           ({"locations": [{"name": "table0", "explored": "yes"}]}, "true or false"),
           ({"object_stamps": {"cup0": [1.0, "magic"]}}, "unknown source"),
           ({"relations": [], "fact_stamps": {"on cup0 table0": [1.0, "step"]}}, "not among the relations"),
           ({"last_plan": {"tool": 1, "task": "", "goal": None, "steps": []}}, "last_plan.tool"),
           ({"objects": [{}] * 6000}, "limit")]
    for data, why in bad:
        with pytest.raises(ValueError, match=why):
            Memory.from_dict(data)


def test_an_at_relation_of_one_argument_is_an_observation_problem_not_a_crash() -> None:
    obs = Observation((ObjectRecord("robot0", "robot", 0),), (Relation("at", ("robot0",)),), "table0")
    assert any("at takes 2 arguments" in p for p in obs.problems())
    mem = Memory()
    mem.merge(obs)  # a caller that did not check: the memory still answers
    assert mem.agent_location("robot0") is None


def test_the_task_history_keeps_the_newest_requests() -> None:
    from affplan_ros.core.model.limits import MAX_INSTRUCTIONS

    mem = Memory()
    for i in range(MAX_INSTRUCTIONS + 50):
        mem.record_instruction(f"task {i}")
    assert len(mem.instructions) == MAX_INSTRUCTIONS and mem.instructions[-1] == f"task {MAX_INSTRUCTIONS + 49}"
    assert mem.instructions[0] == "task 50"


def test_after_a_reset_nothing_seen_before_it_comes_back() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    mem = ex.initial_memory("table0")
    before_reset = time.time() - 5
    fridge_view = ex.observe("refrigerator0", see_inside_closed=True)  # as if the door were open
    mem.stamp_all(Stamp(time.time(), Source.INITIAL))   # what ResetMemory does
    assert mem.merge(Observation(fridge_view.objects, fridge_view.relations, "refrigerator0", stamp=before_reset))
    assert "milk0" not in mem.objects and not mem.locations["refrigerator0"].explored
    assert Memory.from_dict(json.loads(json.dumps(mem.to_dict()))).since == mem.since
    mem.merge(Observation(fridge_view.objects, fridge_view.relations, "refrigerator0", stamp=time.time() + 0.01))
    assert "milk0" in mem.objects and mem.locations["refrigerator0"].explored
