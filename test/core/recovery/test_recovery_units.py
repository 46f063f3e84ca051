"""Recovery building blocks without an LLM: failure observations and feedback levels, the
mid-level rule table (with the real plan validator), validation and persistence of learned
knowledge, grounding providers, the scenario format and the ground-truth world."""
from __future__ import annotations

import json

import pytest
from _recovery import SCENARIOS, scenario

from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.recovery.belief import Belief, observe_memory
from affplan_ros.core.recovery.feedback import (
    FeedbackLevel,
    at_level,
    format_detail,
    parse_detail,
)
from affplan_ros.core.recovery.grounding import (
    CallbackGrounding,
    UnavailableGrounding,
    ground_domain,
)
from affplan_ros.core.recovery.knowledge import (
    EnvironmentProperty,
    KnowledgeFileError,
    KnowledgeStore,
    LearnedPrecondition,
    LearnedProperty,
    condition_problems,
    explains_failure,
    most_similar_property,
)
from affplan_ros.core.recovery.repair import (
    MidLevelRepairer,
    RepairRuleError,
    load_rules,
)
from affplan_ros.sim.recovery_world import ScenarioExecutor
from affplan_ros.sim.scenario import ScenarioError, load_scenario


def step(text: str, sc=None) -> PlanStep:
    action, agent, *args = text.split()
    return PlanStep(action, tuple(args), agent)


# -- failure observations and feedback levels ----------------------------------------------

def test_detail_round_trip_and_levels() -> None:
    violated = [Literal("hand_occupied", ("robot0",), True)]
    observed = [Literal("hand_occupied", ("robot0",)), Literal("inhand", ("sponge0", "robot0"))]
    detail = format_detail(violated, observed, "gripper force 12 N")
    parsed = parse_detail(detail)
    assert parsed.violated == tuple(violated) and parsed.observed == tuple(observed)
    assert parsed.text == "gripper force 12 N"
    f = Failure(FailureCode.PRECONDITION, "grasp", "grasp apple0 failed", "the hand holds sponge0",
                "put down sponge0 first", detail)
    assert at_level(f, FeedbackLevel.WHAT).feedback() == "Error: grasp apple0 failed"
    assert parse_detail(at_level(f, "what").detail).observed == ()       # no facts at "what"
    assert "Reason: the hand holds sponge0" in at_level(f, "why").feedback()
    assert "Suggestion" not in at_level(f, "why").feedback()
    assert at_level(f, "how").feedback().endswith("Suggestion: put down sponge0 first")
    with pytest.raises(ValueError, match="what, why, how"):
        FeedbackLevel.parse("everything")


def test_malformed_detail_is_kept_as_text() -> None:
    parsed = parse_detail("violated: (not (closed | observed: ((( | motor stalled")
    assert parsed.violated == () and parsed.observed == ()
    assert "motor stalled" in parsed.text


# -- the ground-truth world reports structured failures --------------------------------------

def test_world_failure_observation_hands_full_and_hidden_rule() -> None:
    ex = ScenarioExecutor(scenario("copal_kitchen_hands_full"))
    out = ex.world.execute([("grasp", "robot0", ("apple0", "table0", "table0"))])
    assert not out.success and out.failure.code is FailureCode.PRECONDITION
    assert "sponge0" in out.failure.why and out.failure.suggestion == "put down sponge0 first"
    d = parse_detail(out.failure.detail)
    assert Literal("hand_occupied", ("robot0",), True) in d.violated
    assert Literal("inhand", ("sponge0", "robot0")) in d.observed

    ex = ScenarioExecutor(scenario("lasp_heat_milk_3"))   # a world-only rule over a hidden property
    for s in ("open robot0 microwave0 counter0", "grasp robot0 pot0 counter0 counter0",
              "putin robot0 pot0 microwave0 counter0"):
        a, ag, *args = s.split()
        assert ex.world.execute([(a, ag, tuple(args))]).success, s
    out = ex.world.execute([("heat_liquid", "robot0", ("milk0", "pot0", "microwave0", "counter0"))])
    assert not out.success and "metal" in out.failure.why
    assert Literal("microwave_safe", ("pot0",)) in parse_detail(out.failure.detail).violated


def test_world_physical_failure_out_of_reach() -> None:
    ex = ScenarioExecutor(scenario("copal_kitchen_out_of_reach"))
    out = ex.world.execute([("grasp", "robot0", ("cup0", "counter0", "counter0"))])
    assert out.failure.code is FailureCode.PHYSICAL
    assert "out of reach" in out.failure.why and "top shelf" in out.failure.why


# -- mid-level repair ------------------------------------------------------------------------

def _belief_after(sc_name: str, facts):
    sc = scenario(sc_name)
    b = Belief(sc.belief_scene(), sc.robot_domain())
    b.observe(facts)
    return sc, b


def test_free_hand_repair_is_validated() -> None:
    sc, b = _belief_after("copal_kitchen_hands_full", [Literal("inhand", ("sponge0", "robot0"))])
    rest = [step("move robot0 table0 counter0"), step("putin robot0 apple0 bowl0 counter0")]
    rep = MidLevelRepairer().repair(b, step("grasp robot0 apple0 table0 table0"), rest,
                                    [Literal("hand_occupied", ("robot0",), True)], sc.goal_dnf)
    assert rep.repaired and rep.rule == "free_hand"
    assert [str(s) for s in rep.inserted] == ["place robot0 sponge0 table0 table0",
                                              "grasp robot0 apple0 table0 table0"]
    assert rep.plan[-1] == rest[-1]


def test_repair_keeps_an_object_the_plan_needs_later() -> None:
    """Opening the door with the apple in hand: "put it down and go on" would lose the apple
    the rest of the plan puts in; the validator refuses it and the re-grasp variant wins."""
    sc = scenario("lasp_store_fruit_1")
    b = Belief(sc.belief_scene(), sc.robot_domain())
    b.apply_steps([step("grasp robot0 apple0 table0 table0"), step("move robot0 table0 refrigerator0")])
    rep = MidLevelRepairer().repair(b, step("open robot0 refrigerator0 refrigerator0"),
                                    [step("putin robot0 apple0 refrigerator0 refrigerator0")],
                                    [Literal("hand_occupied", ("robot0",), True)], sc.goal_dnf)
    assert rep.repaired and rep.tried >= 2
    assert [s.action for s in rep.inserted] == ["place", "open", "grasp"]


def test_no_rule_and_rule_file_errors(tmp_path) -> None:
    sc, b = _belief_after("copal_kitchen_hands_full", [])
    rep = MidLevelRepairer().repair(b, step("grasp robot0 apple0 table0 table0"), [],
                                    [Literal("wet", ("sponge0",))])
    assert not rep.repaired and "no rule matches (wet sponge0)" in rep.message
    bad = tmp_path / "rules.yaml"
    bad.write_text("rules:\n  - name: broken\n    match: '(a ?x) (b ?y)'\n    variants: [{steps: [x]}]\n")
    with pytest.raises(RepairRuleError, match="rule broken: .* is not a literal"):
        load_rules(bad)
    with pytest.raises(RepairRuleError, match="unknown repair rules"):
        load_rules(enabled=["free_hand", "teleport"])
    assert [r.name for r in load_rules(enabled=["open_container"])] == ["open_container"]


def test_observed_facts_update_memory() -> None:
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.core.model.records import LocationRecord, ObjectRecord
    from affplan_ros.core.model.scene import Relation

    m = Memory()
    for n, c in (("sponge0", "sponge"), ("counter0", "counter"), ("robot0", "robot"), ("fridge0", "refrigerator")):
        m.objects[n] = ObjectRecord(n, c, 0)
    m.locations["counter0"] = LocationRecord("counter0", True, ["sponge0"])
    m.relations = [Relation("on", ("sponge0", "counter0")), Relation("opened", ("fridge0",))]
    observe_memory(m, [Literal("inhand", ("sponge0", "robot0")), Literal("closed", ("fridge0",)),
                       Literal("hand_occupied", ("robot0",)), Literal("on", ("ghost0", "counter0"))])
    rels = {(r.predicate, r.args) for r in m.relations}
    assert rels == {("inhand", ("sponge0", "robot0")), ("closed", ("fridge0",))}
    assert m.locations["counter0"].objects == []



def test_an_object_seen_gone_from_its_place_is_placeless_and_other_places_may_be_explored_again() -> None:
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.core.model.records import LocationRecord, ObjectRecord
    from affplan_ros.core.model.scene import Relation

    m = Memory()
    for n, c in (("apple0", "apple"), ("cup0", "cup"), ("refrigerator0", "refrigerator"), ("table0", "table"),
                 ("counter0", "counter")):
        m.objects[n] = ObjectRecord(n, c, 0)
    m.locations["refrigerator0"] = LocationRecord("refrigerator0", True, ["apple0"])
    m.locations["table0"] = LocationRecord("table0", True, [])
    m.locations["counter0"] = LocationRecord("counter0", True, ["cup0"])
    m.relations = [Relation("in", ("apple0", "refrigerator0")), Relation("on", ("cup0", "counter0"))]
    # Seen: the cup is still on the counter, so nothing about it changes.
    observe_memory(m, [Literal("in", ("cup0", "counter0"), negated=True)])
    assert m.locations["counter0"].objects == ["cup0"] and m.unexplored() == []
    # Seen: the apple is not in the fridge, and it is known nowhere else.
    observe_memory(m, [Literal("in", ("apple0", "refrigerator0"), negated=True)])
    assert m.locations["refrigerator0"].objects == [] and m.locations["refrigerator0"].explored
    assert sorted(m.unexplored()) == ["counter0", "table0"]
    assert ("in", ("apple0", "refrigerator0")) not in {(r.predicate, r.args) for r in m.relations}


# -- learned knowledge: validation and persistence -------------------------------------------

@pytest.fixture(scope="module")
def heat_domain():
    return scenario("lasp_heat_milk_1").robot_domain()


@pytest.mark.parametrize("condition,problem", [
    ("(aff_heat-resistance ?container)", None),
    ("(or (not (aff_close ?heater)) (closed ?heater))", None),
    ("(aff_heat-resistance cup0)", "not about particular objects"),
    ("(hot ?container)", "unknown predicate 'hot'"),
    ("(closed ?lid)", "?lid is not a parameter of heat_liquid"),
    ("(liquid_in ?container)", "takes 2 arguments"),
    ("(liquid_in ?heater ?liquid)", "wants a liquid there"),
    ("(aff_teleport ?container)", "no affordance or object class"),
    ("(exists (?x) (in ?x ?heater))", "not allowed here"),
    ("(in ?container ?heater)", "already requires"),
    ("(closed ?heater", "does not parse"),
])
def test_condition_validation(heat_domain, condition, problem) -> None:
    problems = condition_problems(heat_domain, "heat_liquid", condition)
    if problem is None:
        assert problems == []
    else:
        assert problems and problem in problems[0], problems


def test_a_condition_that_held_cannot_explain_the_failure() -> None:
    sc = scenario("lasp_store_fruit_1")
    b = Belief(sc.belief_scene(), sc.robot_domain())
    failed = step("putin robot0 apple0 refrigerator0 table0")
    assert explains_failure(b, failed, "(not (closed ?in))")[0]        # the fridge is closed
    ok, why = explains_failure(b, failed, "(aff_carry ?object)")       # the apple can be carried
    assert not ok and "holds in the state where" in why


def test_similar_property_choice() -> None:
    known = [EnvironmentProperty("microwave_safe", "?x can be heated in a microwave without sparks", frozenset()),
             EnvironmentProperty("fragile", "?x breaks when dropped", frozenset())]
    best, _ = most_similar_property("microwavable", "?c can be heated in a microwave oven", known)
    assert best.name == "microwave_safe"
    assert most_similar_property("has_rim", "?s has a raised edge", known)[0] is None


def test_knowledge_store_persists_merges_and_refuses_corrupt_files(tmp_path, heat_domain) -> None:
    path = tmp_path / "k" / "knowledge.json"
    a = KnowledgeStore.open(path)
    a.add_precondition(LearnedPrecondition("heat_liquid", "(aff_heat-resistance ?container)", "must resist heat"))
    b = KnowledgeStore.open(path)                         # another process, started later
    b.add_property(LearnedProperty("microwavable", ("c", "liquid-contain"), "safe in a microwave",
                                   "microwave_safe", ("bowl",)))
    a.add_precondition(LearnedPrecondition("heat_liquid", "(microwavable ?container)"))
    c = KnowledgeStore.open(path)
    assert len(c.preconditions) == 2 and [p.name for p in c.properties] == ["microwavable"]
    domain, notes = c.apply(heat_domain)
    assert "microwavable" in domain.predicates and notes == []
    assert "(microwavable ?container)" in domain.capabilities["heat_liquid"].precondition
    assert "must resist heat" in c.render()
    # an entry that does not fit another domain is left out, with a note, not an error
    c.preconditions.append(LearnedPrecondition("heat_liquid", "(nonsense ?container)"))
    _, notes = c.apply(heat_domain)
    assert any("nonsense" in n for n in notes)
    path.write_text("{not json")
    with pytest.raises(KnowledgeFileError, match="not overwritten"):
        KnowledgeStore.open(path)
    assert path.read_text() == "{not json"
    path.write_text(json.dumps({"version": 99}))
    with pytest.raises(KnowledgeFileError, match="version-1"):
        KnowledgeStore.open(path)


# -- grounding -------------------------------------------------------------------------------

def test_grounding_providers() -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    domain, scene = sc.robot_domain(), sc.belief_scene()
    d, s, report = ground_domain(domain, scene, UnavailableGrounding())
    assert d.capabilities == domain.capabilities and report.available == []
    assert any("MoveIt" in r for r in report.unavailable)
    d, s, report = ground_domain(domain, scene, CallbackGrounding({"reachable": lambda o: o != "cup0"}))
    assert report.available == ["reachable"] and "(reachable cup0)" in report.false_facts
    assert "(reachable ?object)" in d.capabilities["grasp"].precondition
    assert ("reachable", ("cup1",)) in {(r.predicate, r.args) for r in s.relations}
    d2, _, _ = ground_domain(d, s, CallbackGrounding({"reachable": lambda o: True}))
    assert d2.capabilities["grasp"].precondition.count("reachable") == 1   # grounding again: facts only

    def broken(o):
        raise TimeoutError("IK service did not answer")
    _, _, report = ground_domain(domain, scene, CallbackGrounding({"reachable": broken}), use=["reachable"])
    assert report.available == [] and "IK service did not answer" in report.unavailable[0]


# -- the scenario format ---------------------------------------------------------------------

def test_all_shipped_scenarios_load() -> None:
    from affplan_ros.sim.scenario import load_scenarios

    got = load_scenarios(SCENARIOS)
    assert len([s for s in got if s.set == "lasp"]) == 11 and len([s for s in got if s.set == "copal"]) >= 6
    sc = scenario("lasp_store_fruit_2")
    robot = sc.robot_domain().capabilities
    closed = "(not (closed ?in))"
    assert closed not in robot["putin"].precondition and closed in sc.capabilities["putin"].precondition


@pytest.mark.parametrize("edit,message", [
    ({"hidden": {"preconditions": [{"action": "fly", "condition": "(at ?actor ?x)"}]}}, "unknown action 'fly'"),
    ({"belief": {"unknown_objects": ["ghost0"]}}, "belief.unknown_objects: unknown objects ['ghost0']"),
    ({"goal": "(on apple0"}, "goal:"),
    ({"scene": None}, "field 'scene' is missing"),
])
def test_scenario_errors_name_the_field(tmp_path, edit, message) -> None:
    import yaml

    data = yaml.safe_load((SCENARIOS / "lasp_store_fruit_1.yaml").read_text())
    data.update(edit)
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ScenarioError) as err:
        load_scenario(p)
    assert message in str(err.value) and "bad.yaml" in str(err.value)


def test_scene_environment_offers_objects_with_what_holds_them() -> None:
    from affplan_ros.core.recovery.lasp import SceneEnvironment

    sc = scenario("lasp_heat_sandwich_2")
    env = SceneEnvironment(sc.truth)
    assert ("plate0", "plate") in env.known_objects() and ("robot0", "robot") not in env.known_objects()
    part = env.object_scene(["plate0"])
    assert set(part.objects) == {"plate0", "cupboard0"} and "cupboard0" in part.locations
    assert {(r.predicate, r.args) for r in part.relations} == {("on", ("plate0", "cupboard0"))}
    assert env.properties() == {}


def test_failure_analysis_sees_what_the_step_concerns_in_a_large_home() -> None:
    from affplan_ros.bench.scale import household_scene
    from affplan_ros.core.recovery.lasp import EXPAND_CANDIDATES, STATE_FACTS, expand_candidates, failure_state

    small = household_scene(20, 0)
    assert failure_state(small, ["robot0", "cup0"]).splitlines() == [str(r) for r in small.relations]
    home = household_scene(1000, 0)
    text = failure_state(home, ["robot0", "cup0", "table0", "table0"])
    lines = text.splitlines()
    assert len(home.relations) > 10 * STATE_FACTS and len(lines) < len(home.relations) // 4
    # the step's objects and what holds them, where the agents are, and how much was left out
    for fact in ("at robot0 counter0", "at human0 table0", "on cup0 table0"):
        assert any(fact in l for l in lines), fact
    assert lines[-1] == f"({len(home.relations) - len(lines) + 1} other facts about other things)"
    # candidates for the object expander: all up to the bound, then one per class
    few = [(f"apple{i}", "apple") for i in range(5)]
    assert expand_candidates(few) == few
    many = [(f"{c}{i}", c) for c in ("apple", "cup", "sponge") for i in range(EXPAND_CANDIDATES)]
    assert expand_candidates(many) == [("apple0", "apple"), ("cup0", "cup"), ("sponge0", "sponge")]
