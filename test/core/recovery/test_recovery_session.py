"""The recovery wiring the nodes use (core/recovery/session.py), without ROS: the knowledge file
as a node watches it, the planner's keyword arguments, and the loop's executor that repairs at
mid level and learns a missing precondition (real openai client on the scripted local
endpoint, Fast Downward, the scenario's ground-truth world)."""
from __future__ import annotations

import json
import os

import pytest
from _recovery import Scripted, scenario

from affplan_ros.core.model.failure import FailureCode
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.recovery.feedback import FeedbackLevel
from affplan_ros.core.recovery.knowledge import KnowledgeStore, LearnedPrecondition
from affplan_ros.core.recovery.lasp import SceneEnvironment
from affplan_ros.core.recovery.runner import RecoveryConfig
from affplan_ros.core.recovery.session import (
    LearningExecutor,
    WatchedKnowledge,
    knowledge_path,
    learned_summary,
    planning_kwargs,
)
from affplan_ros.llm.recovery_prompting import (
    LaspPromptBuilder,
    ReplanGoalPromptBuilder,
)
from affplan_ros.sim.recovery_world import ScenarioExecutor

PUTIN = LearnedPrecondition("putin", "(not (closed ?in))")


def test_knowledge_path_is_optional_and_expands_home() -> None:
    assert knowledge_path("") is None and knowledge_path("  ") is None
    assert str(knowledge_path("~/k.json")) == os.path.join(os.path.expanduser("~"), "k.json")


def test_watched_knowledge_rereads_a_changed_file_and_survives_a_malformed_one(tmp_path) -> None:
    path = tmp_path / "knowledge.json"
    watched = WatchedKnowledge(path)                  # no file yet: nothing learned, learning possible
    assert watched.learning and not watched.current().preconditions
    KnowledgeStore.open(path).add_precondition(PUTIN)  # another process learns
    assert [p.key for p in watched.current().preconditions] == [PUTIN.key]
    path.write_text("{not json")
    assert watched.current().preconditions == [] and "cannot read the knowledge file" in watched.error
    assert not watched.learning and path.read_text() == "{not json"   # never overwritten
    path.write_text(json.dumps({"version": 1, "preconditions": [], "properties": []}))
    watched.current()
    assert watched.error == "" and watched.learning
    assert not WatchedKnowledge(None).learning


def test_planning_kwargs_carry_the_learned_precondition() -> None:
    sc = scenario("lasp_store_fruit_1")
    store = KnowledgeStore(None, [PUTIN])
    domain, notes = store.apply(sc.robot_domain())
    kw = planning_kwargs(domain)
    assert not notes and set(kw) == {"capabilities", "predicates"}
    assert "(closed ?in)" in str(kw["capabilities"]["putin"].precondition)
    assert "(closed ?in)" not in str(planning_kwargs(sc.robot_domain())["capabilities"]["putin"].precondition)


@pytest.fixture(scope="module")
def llm():
    s = Scripted()
    yield s
    s.close()


def _executor(sc, ex, store, client, **kw) -> LearningExecutor:
    return LearningExecutor(ex, sc.robot_domain(), lambda: store, lambda: ex.object_scene(list(sc.truth.objects)),
                            sc.task, RecoveryConfig(feedback=FeedbackLevel.HOW, plan_time_limit=20, max_seconds=120),
                            llm=client, goal_prompter=ReplanGoalPromptBuilder(), lasp_prompter=LaspPromptBuilder(),
                            environment=lambda: SceneEnvironment(sc.truth), **kw)


def _plan(*texts: str) -> list[PlanStep]:
    return [PlanStep(t.split()[0], tuple(t.split()[2:]), t.split()[1]) for t in texts]


def test_a_model_gap_is_learned_saved_and_the_task_completed(llm, tmp_path) -> None:
    import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
    sc = scenario("lasp_store_fruit_1")
    ex = ScenarioExecutor(sc)
    path = tmp_path / "knowledge.json"
    store = KnowledgeStore.open(path)
    said: list[str] = []
    learner = _executor(sc, ex, store, llm.use(sc.id).client, on_event=said.append)
    plan = _plan("grasp robot0 apple0 table0 table0", "move robot0 table0 refrigerator0",
                 "putin robot0 apple0 refrigerator0 refrigerator0")
    run = learner.execute(plan)
    assert run.success and ex.goal_reached(), said
    res = learner.recoveries[0]
    assert res.learned == ["putin requires (not (closed ?in))"]
    assert len(res.failures) == 1 and run.failures_seen == 1   # learned from the first failure: putin failed once
    assert ([s.action for s in run.executed_steps][:2] == ["grasp", "move"]
            and "open" in [s.action for s in run.executed_steps])
    assert any("learning what the model lacks" in m for m in said)
    assert [p.key for p in KnowledgeStore.open(path).preconditions] == [PUTIN.key]
    assert "learned: putin requires (not (closed ?in))" in learned_summary(learner.recoveries)
    # At most one learning run per task: a second gap is handed up as it is.
    again = _executor(sc, ScenarioExecutor(sc), KnowledgeStore(None), llm.use(sc.id).client, max_learning_runs=0)
    failed = again.execute(plan)
    assert not failed.success and failed.raw_failure.code is FailureCode.PRECONDITION and not again.recoveries


def test_without_learning_a_failure_is_only_handed_up(tmp_path) -> None:
    sc = scenario("lasp_store_fruit_1")
    ex = ScenarioExecutor(sc)
    learner = _executor(sc, ex, KnowledgeStore(None), None)
    assert not learner.learning
    run = learner.execute(_plan("grasp robot0 apple0 table0 table0", "move robot0 table0 refrigerator0",
                                "putin robot0 apple0 refrigerator0 refrigerator0"))
    assert not run.success and not learner.recoveries and "refrigerator0" in run.failure.feedback()


def test_a_cancel_during_learning_stops_it_at_once(llm, tmp_path) -> None:
    import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
    sc = scenario("lasp_store_fruit_1")
    ex = ScenarioExecutor(sc)
    canceled = {"now": False}
    real = ex.execute

    def execute(plan):  # the person cancels when putin has failed once
        run = real(plan)
        canceled["now"] = canceled["now"] or not run.success
        return run

    ex.execute = execute
    learner = _executor(sc, ex, KnowledgeStore(None), llm.use(sc.id).client, should_stop=lambda: canceled["now"])
    run = learner.execute(_plan("grasp robot0 apple0 table0 table0", "move robot0 table0 refrigerator0",
                                "putin robot0 apple0 refrigerator0 refrigerator0"))
    assert not run.success and run.failure.code is FailureCode.CANCELED and run.stop == "canceled"
    assert not learner.recoveries and [s.action for s in run.executed_steps] == ["grasp", "move"]


def test_learning_reads_the_request_as_it_is_now_and_spends_only_the_tasks_time_left(monkeypatch) -> None:
    """An alternative accepted before the failure is in the request the learning run replans;
    the run gets what is left of the task's time, not a fresh budget."""
    import time

    from affplan_ros.core.recovery import session
    from affplan_ros.core.recovery.runner import RecoveryResult, RecoveryStop

    seen = {}

    class Runner:
        def __init__(self, *args, config, **kw):
            seen["max_seconds"] = config.max_seconds

        def run(self, task, scene, failed=None):
            seen["task"] = task
            return RecoveryResult(RecoveryStop.TIME_LIMIT, "stopped")

    monkeypatch.setattr(session, "RecoveryRunner", Runner)
    sc = scenario("lasp_store_fruit_1")
    request = {"text": "put the apple into the fridge"}
    learner = _executor(sc, ScenarioExecutor(sc), KnowledgeStore(None), object(), deadline=time.monotonic() + 30)
    learner.task = lambda: request["text"]
    request["text"] = "put the banana into the fridge"      # e.g. apple -> banana accepted meanwhile
    run = learner.execute(_plan("grasp robot0 apple0 table0 table0", "move robot0 table0 refrigerator0",
                                "putin robot0 apple0 refrigerator0 refrigerator0"))
    assert seen["task"] == "put the banana into the fridge" and not run.success
    assert 25 < seen["max_seconds"] <= 30                      # not the config's 120 s


def test_a_valid_refinement_without_a_known_object_is_kept_and_says_the_robot_must_find_one(llm, tmp_path) -> None:
    """On a robot the environment is what it has perceived: the plate LASP's refinement needs is
    in the cupboard, unseen. The refinement (it explains the failure) is kept, saved, and the
    learning run stops with ``needs_object`` (the tool loop then explores), rather than being
    dropped and replanned in vain to the refinement bound."""
    import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
    sc = scenario("lasp_heat_sandwich_2")
    ex = ScenarioExecutor(sc)
    seen = lambda: ex.object_scene([n for n in sc.truth.objects if n != "plate0"])  # noqa: E731
    path = tmp_path / "knowledge.json"
    store = KnowledgeStore.open(path)
    client = llm.use(sc.id).client
    learner = LearningExecutor(ex, sc.robot_domain(), lambda: store, seen, sc.task,
                               RecoveryConfig(feedback=FeedbackLevel.HOW, plan_time_limit=20, max_seconds=120,
                                              keep_when_objects_unseen=True),
                               llm=client, goal_prompter=ReplanGoalPromptBuilder(), lasp_prompter=LaspPromptBuilder(),
                               environment=lambda: SceneEnvironment(seen(), ex.properties()))
    plan = _plan("open robot0 microwave0 counter0", "grasp robot0 sandwich0 tray0 counter0",
                 "putin robot0 sandwich0 microwave0 counter0", "grasp robot0 tray0 counter0 counter0",
                 "putin robot0 tray0 microwave0 counter0", "take_out robot0 sandwich0 microwave0 counter0",
                 "place robot0 sandwich0 tray0 counter0", "heat_food robot0 sandwich0 tray0 microwave0 counter0")
    run = learner.execute(plan)
    res = learner.recoveries[0]
    assert not run.success and res.stop_reason.value == "needs_object", res.message
    assert res.learned == ["heat_food requires (microwavable ?plate)",
                           "new property microwavable (values from microwave_safe)"]
    assert "must be found first (explore)" in res.message and "needs_object" in run.failure.feedback()
    assert res.high_replans == 0 and res.usage.total_calls <= 7        # goal, cause ... expand: no replans in vain
    kept = KnowledgeStore.open(path)
    assert [p.key for p in kept.preconditions] == [("heat_food", "(microwavable ?plate)")]
    assert [(p.name, p.source) for p in kept.properties] == [("microwavable", "microwave_safe")]
