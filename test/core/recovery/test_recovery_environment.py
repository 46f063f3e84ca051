"""Environment properties on the running robot (issue 17.4): the environment the tool-selection
node gives LASP knows properties from memory, the OAM, the object table, the static quantities,
a knowledge base of declared properties and the world of a recovery scenario - so learning a
new property works through the loop's executor, where a bare memory scene refuses it."""
from __future__ import annotations

import pytest
from _recovery import SCENARIOS, Scripted, scenario

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.core.knowledge.objects import load_object_table
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.recovery.environment import (
    EnvironmentKnowledge,
    load_declared_properties,
    properties_from_scene,
)
from affplan_ros.core.recovery.feedback import FeedbackLevel
from affplan_ros.core.recovery.knowledge import KnowledgeStore
from affplan_ros.core.recovery.lasp import SceneEnvironment
from affplan_ros.core.recovery.quantities import load_quantities
from affplan_ros.core.recovery.runner import RecoveryConfig
from affplan_ros.core.recovery.session import LearningExecutor
from affplan_ros.llm.recovery_prompting import LaspPromptBuilder, ReplanGoalPromptBuilder
from affplan_ros.sim.recovery_world import ScenarioExecutor
from affplan_ros.sim.scenario import scenario_environment

MILK_PLAN = ["open robot0 microwave0 counter0", "grasp robot0 pot0 counter0 counter0",
             "putin robot0 pot0 microwave0 counter0", "heat_liquid robot0 milk0 pot0 microwave0 counter0"]

SCENE = """OBJECTS
counter:0
refrigerator:0
pot:0
bowl:0
apple:0
water:0
robot:0
human:0
END-OBJECTS
RELATIONS
on pot:0 counter:0
on bowl:0 counter:0
on apple:0 counter:0
liquid_in water:0 pot:0
closed refrigerator:0
clean bowl:0
at robot:0 counter:0
END-RELATIONS
LOCATIONS
counter0 counter:0 pot:0 bowl:0 apple:0
refrigerator0 refrigerator:0
END-LOCATIONS
"""


@pytest.fixture(scope="module")
def llm():
    s = Scripted()
    yield s
    s.close()


def test_properties_come_from_memory_the_oam_the_object_table_quantities_and_a_knowledge_base(tmp_path) -> None:
    scene = parse_scene_text(SCENE, "t")
    kb = tmp_path / "props.yaml"
    kb.write_text("properties:\n  dishwasher_safe: {description: '?x may go into the dishwasher', "
                  "classes: [bowl], objects: [pot0]}\n")
    q = load_quantities().with_values({"temperature": {"pot0": 80}, "mass": {"pot0": 2.6}})
    props = properties_from_scene(scene, oam=load_oam(), declared=load_declared_properties(kb), quantities=q,
                                  object_table=load_object_table())
    assert props["dishwasher_safe"].true_objects == {"bowl0", "pot0"}      # knowledge base, per class and object
    assert props["clean"].true_objects == {"bowl0"}                        # memory's one-place facts
    assert props["closed"].true_objects == {"refrigerator0"}
    assert props["heat-resistance"].true_objects == {"bowl0", "pot0"}      # the OAM
    assert props["heat-resistance"].description.startswith("?x ")
    assert props["fixed"].true_objects == {"counter0", "refrigerator0"}         # the object table
    assert {"bowl0", "pot0"} <= props["has_inner_space"].true_objects
    assert props["liquid"].true_objects == {"water0"}
    assert props["liftable"].true_objects >= {"apple0", "bowl0"} and "pot0" not in props["liftable"].true_objects
    assert props["hot"].true_objects == {"pot0"}                           # measured 80 degC
    assert all(not scene.objects[n].is_agent for p in props.values() for n in p.true_objects)


def test_bad_declared_properties_are_refused_with_the_file_named(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("properties:\n  sharp: {objects: [knife0]}\n")
    with pytest.raises(ConfigError, match="bad.yaml.*sharp.*description"):
        load_declared_properties(bad)
    bad.write_text("properties:\n  sharp: {description: cuts, classes: knife}\n")
    with pytest.raises(ConfigError, match="classes must be a list"):
        load_declared_properties(bad)


def _learner(sc, ex, store, client, environment) -> LearningExecutor:
    return LearningExecutor(ex, sc.robot_domain(), lambda: store, lambda: ex.object_scene(list(sc.truth.objects)),
                            sc.task, RecoveryConfig(feedback=FeedbackLevel.HOW, plan_time_limit=20, max_seconds=120),
                            llm=client, goal_prompter=ReplanGoalPromptBuilder(), lasp_prompter=LaspPromptBuilder(),
                            environment=environment)


def _plan(texts) -> list[PlanStep]:
    return [PlanStep(t.split()[0], tuple(t.split()[2:]), t.split()[1]) for t in texts]


@pytest.mark.parametrize("source", ["scenario", "knowledge_base"])
def test_a_new_property_is_learned_through_the_loops_executor_with_the_suites_environment(llm, tmp_path,
                                                                                          source) -> None:
    import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
    sc = scenario("lasp_heat_milk_3")
    if source == "scenario":   # capabilities_file = the scenario: what its world knows
        declared, measured = scenario_environment(SCENARIOS / "lasp_heat_milk_3.yaml")
    else:                      # a robot's knowledge base (environment_properties_file), per class
        kb = tmp_path / "props.yaml"
        kb.write_text("properties:\n  microwave_safe: {description: '?x can be heated in a microwave without "
                      "sparks or damage', classes: [bowl, cup, plate]}\n")
        declared, measured = load_declared_properties(kb), {}
    knowledge = EnvironmentKnowledge(load_quantities().with_values(measured), declared)
    ex = ScenarioExecutor(sc)
    path = tmp_path / "knowledge.json"
    store = KnowledgeStore.open(path)
    learner = _learner(sc, ex, store, llm.use(sc.id).client,
                       lambda: knowledge.environment(ex.object_scene(list(sc.truth.objects)), sc.oam,
                                                     sc.robot_domain().predicates))
    run = learner.execute(_plan(MILK_PLAN))
    assert run.success and ex.goal_reached(), learner.recoveries[0].events if learner.recoveries else run
    res = learner.recoveries[0]
    assert "heat_liquid requires (microwavable ?container)" in res.learned
    kept = KnowledgeStore.open(path).properties
    assert [(p.name, p.source) for p in kept] == [("microwavable", "microwave_safe")]
    assert "bowl" in kept[0].true_classes and "pot" not in kept[0].true_classes


def test_without_properties_the_memory_scene_alone_cannot_declare_one(llm) -> None:
    """The control: the tool-selection node's former environment (memory's scene, no properties)."""
    sc = scenario("lasp_heat_milk_3")
    ex = ScenarioExecutor(sc)
    learner = _learner(sc, ex, KnowledgeStore(None), llm.use(sc.id).client, lambda: SceneEnvironment(sc.truth))
    run = learner.execute(_plan(MILK_PLAN))
    assert not run.success and not ex.goal_reached()
    learn = [e for e in learner.recoveries[0].events if e["kind"] == "learn"]
    assert learn and "knows no property like 'microwavable'" in " ".join(learn[0]["rejected"])
