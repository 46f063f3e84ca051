"""The recovery loop end to end: the real openai client against the scripted local endpoint,
Fast Downward, the plan validator and the ground-truth world of a scenario."""
from __future__ import annotations

import pytest
import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
from _recovery import Scripted, answers, run_scenario, scenario

from affplan_ros.core.recovery.knowledge import KnowledgeStore
from affplan_ros.core.recovery.runner import RecoveryStop


@pytest.fixture(scope="module")
def llm():
    s = Scripted()
    yield s
    s.close()


@pytest.mark.parametrize("name", ["copal_kitchen_hands_full", "copal_barman_closed_bottle"])
def test_mid_level_repair_spares_the_high_level(llm, name) -> None:
    sc = scenario(name)
    res, ex, _ = run_scenario(sc, llm.use(name).client, repair=True)
    assert res.success and ex.goal_reached()
    assert res.mid_replans == 1 and res.high_replans == 0
    assert res.usage.calls == {"goal": 1}                      # no LLM call for the repair
    res, ex, _ = run_scenario(sc, llm.use(name).client, repair=False)
    assert res.success and ex.goal_reached()
    assert res.mid_replans == 0 and res.high_replans == 1 and res.usage.calls["goal"] == 2
    replan = llm.requests[-1].text()
    assert "execution failed" in replan and "Reason:" in replan and "Suggestion:" in replan


def test_feedback_what_is_not_enough_and_the_bound_says_so(llm) -> None:
    sc = scenario("copal_kitchen_hands_full")
    res, ex, _ = run_scenario(sc, llm.use(sc.id).client, repair=False, feedback="what", max_replans=2)
    assert not res.success and not ex.goal_reached()
    assert res.stop_reason is RecoveryStop.REPLAN_BOUND and res.high_replans == 2
    assert "2 high-level replans used up (max_replans)" in res.message
    texts = [r.text() for r in llm.requests[-2:]]
    assert all("Error: grasp(robot0, apple0, table0, table0) failed" in t for t in texts)
    assert not any("Reason:" in t or "sponge0" in t.split("execution failed")[-1] for t in texts)
    assert res.events[-1]["kind"] == "stop" and "replan_bound" in res.events[-1]["text"]


def test_out_of_reach_goes_to_the_goal_writer_or_is_avoided_by_grounding(llm) -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    res, ex, _ = run_scenario(sc, llm.use(sc.id).client, feedback="why")
    assert res.success and res.high_replans == 1 and "cup1" in res.goal
    res, ex, _ = run_scenario(sc, llm.use(sc.id).client, grounding=True)
    assert res.success and res.high_replans == 0 and res.failures == []
    assert any(e["kind"] == "grounding" and "(reachable cup0)" in e["text"] for e in res.events)


def test_lasp_learns_and_a_restart_does_not_repeat_the_failure(llm, tmp_path) -> None:
    """The ROS-free half of 'a learned precondition survives a restart': the second run opens
    the knowledge file the first wrote, as a restarted suite would, and never fails."""
    sc = scenario("lasp_store_fruit_2")
    path = tmp_path / "knowledge.json"
    res, ex, _ = run_scenario(sc, llm.use(sc.id).client, knowledge=path)
    assert res.success and ex.goal_reached() and res.refinements == 2 and len(res.failures) == 2
    assert res.learned == ["putin requires (not (closed ?in))", "open requires (not (hand_occupied ?actor))"]
    assert [u for u in ("cause", "precondition", "completeness", "translate") if res.usage.calls[u] != 2] == []
    stored = KnowledgeStore.open(path)
    assert all(p.confirmed for p in stored.preconditions)
    res2, ex2, _ = run_scenario(sc, llm.use(sc.id).client, knowledge=path)
    assert res2.success and ex2.goal_reached()
    assert res2.failures == [] and res2.refinements == 0 and res2.usage.calls == {"goal": 1}
    assert any(e["kind"] == "knowledge" and "putin requires (not (closed ?in))" in e["text"] for e in res2.events)


def test_lasp_refuses_invalid_knowledge_and_feeds_the_problem_back(llm) -> None:
    sc = scenario("lasp_store_fruit_1")
    script = dict(answers(sc.id))
    script["translate"] = ["PRECONDITION: (not (closed refrigerator0))",   # an object, not a parameter
                           "PRECONDITION: (not (closed ?in))"]
    res, ex, store = run_scenario(sc, llm.use(sc.id, script).client)
    assert res.success and res.learned == ["putin requires (not (closed ?in))"]
    correction = [r for r in llm.requests if r.last_user_text.startswith("Your answer cannot be used")]
    assert len(correction) == 1 and "not about particular objects" in correction[0].last_user_text
    learn = next(e for e in res.events if e["kind"] == "learn")
    assert learn["rejected"] and "refrigerator0" in learn["rejected"][0]


def test_lasp_property_and_object(llm, tmp_path) -> None:
    sc = scenario("lasp_heat_sandwich_2")
    res, ex, store = run_scenario(sc, llm.use(sc.id).client, knowledge=tmp_path / "k.json")
    assert res.success and ex.goal_reached()
    assert res.objects_added == ["plate0"] and store.properties[0].source == "microwave_safe"
    assert "heat_food requires (microwavable ?plate)" in res.learned
    assert any("on robot0" not in s and s.startswith("place robot0 sandwich0 plate0") for s in res.executed)


def test_lasp_gives_up_with_a_reason_the_user_sees(llm) -> None:
    sc = scenario("lasp_store_fruit_1")
    script = dict(answers(sc.id))
    script["cause"] = ["I do not know."]
    script["precondition"] = ["PRECONDITION: nothing"]
    script["completeness"] = ["YES"]
    script["translate"] = ["PRECONDITION: (nothing ?in)"]
    res, ex, _ = run_scenario(sc, llm.use(sc.id, script).client, max_replans=1)
    assert not res.success and res.refinements >= 1
    assert res.stop_reason in (RecoveryStop.REPLAN_BOUND, RecoveryStop.REFINE_BOUND)
    learn = [e for e in res.events if e["kind"] == "learn"]
    assert learn and "found nothing" in learn[0]["text"] and "unknown predicate 'nothing'" in learn[0]["text"]
    assert res.message and res.events[-1]["kind"] == "stop"


def test_llm_failure_and_invalid_task_stop_cleanly(llm) -> None:
    sc = scenario("copal_kitchen_hands_full")
    res, _, _ = run_scenario(sc, llm.use(sc.id, {}).client)   # the endpoint answers HTTP 400
    assert res.stop_reason is RecoveryStop.LLM_ERROR and "goal" in res.message
    res, _, _ = run_scenario(sc.__class__(**{**sc.__dict__, "task": "   "}), llm.use(sc.id).client)
    assert res.stop_reason is RecoveryStop.INVALID_TASK and "empty" in res.message


def test_tool_selection_loop_through_the_recovering_executor(llm) -> None:
    """The re-tool path: the AutoGPT+P loop gets the error triplet at the configured level
    from a RecoveringExecutor, and its memory learns what the failure observed."""
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.core.model.records import LocationRecord, ObjectRecord
    from affplan_ros.core.recovery.belief import Belief, Domain
    from affplan_ros.core.recovery.executive import RecoveringExecutor
    from affplan_ros.core.recovery.feedback import FeedbackLevel
    from affplan_ros.core.recovery.repair import MidLevelRepairer
    from affplan_ros.llm.loop_factory import make_tool_loop
    from affplan_ros.sim.recovery_world import ScenarioExecutor

    sc = scenario("copal_kitchen_hands_full")
    belief = sc.belief_scene()

    def memory() -> Memory:
        m = Memory()
        for n, o in belief.objects.items():
            m.objects[n] = ObjectRecord(n, o.class_name, o.instance, tuple(sorted(sc.oam.affordances_of(o.class_name)))
                                        if o.class_name in sc.oam else ())
        for n, loc in belief.locations.items():
            m.locations[n] = LocationRecord(n, True, [x for x in loc.objects if x != n])
        m.relations = list(belief.relations)
        return m

    script = {"tool": ["SELECTED TOOL: PLAN"], "goal": ["(:goal (in apple0 bowl0))"]}
    for repair, rounds in ((True, 1), (False, 2)):
        mem = memory()
        rex = RecoveringExecutor(ScenarioExecutor(sc), lambda mem=mem: Belief(mem.scene(), Domain.default(sc.oam)),
                                 MidLevelRepairer() if repair else None, FeedbackLevel.WHY)
        loop = make_tool_loop(llm.use(sc.id, script).client, rex, oam=sc.oam, plan_time_limit=20)
        result = loop.run(sc.task, mem)
        assert result.success and len(result.rounds) == rounds
        assert any(r.predicate == "in" and r.args == ("apple0", "bowl0") for r in mem.relations)
        assert not any(r.args[:1] == ("sponge0",) and r.predicate == "inhand" for r in mem.relations)
    second_tool_prompt = [r for r in llm.requests if "SELECTED TOOL" in r.text()][-1].last_user_text
    assert "Reason:" in second_tool_prompt and "sponge0" in second_tool_prompt
    assert "Suggestion:" not in second_tool_prompt                 # level why: no suggestion
