"""IALP's step planner: candidates scored by the endpoint's token log-probabilities (the fake
server's ``logprobs`` through the real openai client), validated against the domain, and the
fallback to the PDDL planner."""
from __future__ import annotations

import pytest
import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
from _recovery import Scripted, client_for, run_scenario, scenario

from affplan_ros.core.recovery.belief import Belief
from affplan_ros.core.recovery.runner import RecoveryStop
from affplan_ros.core.recovery.stepwise import StepwisePlanner
from affplan_ros.llm.fake_server import FakeChatServer, FakeChoice, FakeReply
from affplan_ros.llm.recovery_prompting import LogprobSampler, StepPromptBuilder


def choice(text: str, *logprobs: float) -> FakeChoice:
    words = text.split()
    return FakeChoice(text, [(w, lp) for w, lp in zip(words, logprobs)])


def test_the_valid_candidate_with_the_highest_summed_logprob_is_chosen() -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    belief = Belief(sc.belief_scene(), sc.robot_domain())
    reply = FakeReply(choices=[
        choice("handover robot0 human0 cup1", -0.01, -0.01),          # best score, not applicable
        choice("move robot0 counter0 table0", -0.2, -0.3),            # -0.5 in two tokens
        choice("grasp robot0 cup0 counter0 counter0", -0.45),          # -0.45: the best valid one
        choice("fly robot0 moon0", -0.05),                             # not an action
    ])
    with FakeChatServer([reply]) as server:
        planner = StepwisePlanner(LogprobSampler(client_for(server)), StepPromptBuilder(), k=4)
        got = planner.choose(sc.task, "(inhand cup1 human0)", sc.goal_dnf, belief, [])
        body = server.chat_requests[0].body
    assert body["logprobs"] is True and body["n"] == 4
    assert got.fallback == "" and got.chosen.kind == "action"
    assert str(got.chosen.step) == "grasp robot0 cup0 counter0 counter0"
    assert got.chosen.logprob == pytest.approx(-0.45)
    problems = {c.text.split()[0]: c.problem for c in got.candidates if not c.valid}
    assert "not applicable now" in problems["handover"] and "not an action" in problems["fly"]


def test_no_logprobs_falls_back_to_the_planner() -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    llm = Scripted()
    try:
        script = {"goal": ["(:goal (inhand cup1 human0))"],
                  "step": [{"candidates": [["grasp robot0 cup0 counter0 counter0", -0.1]], "logprobs": False}]}
        res, ex, _ = run_scenario(sc, llm.use(sc.id, script).client, mode="stepwise")
    finally:
        llm.close()
    assert "no log-probabilities" in res.fallback and res.stepwise_steps == 0
    assert res.success and ex.goal_reached() and len(res.plans) == 1   # the PDDL planner took over
    assert any(e["kind"] == "fallback" for e in res.events)


def test_stepwise_run_recovers_from_a_failed_step() -> None:
    """The shipped answers: the best first candidate grasps the unreachable cup and fails; the
    failure (with its reason) goes into the next step's prompt, which picks the other cup."""
    sc = scenario("copal_kitchen_out_of_reach")
    llm = Scripted()
    try:
        res, ex, _ = run_scenario(sc, llm.use(sc.id).client, mode="stepwise", feedback="why")
        step_prompts = [r for r in llm.requests if r.last_user_text.startswith("Next action")]
    finally:
        llm.close()
    assert res.success and ex.goal_reached() and res.fallback == ""
    assert res.executed == ["move robot0 counter0 table0", "grasp robot0 cup1 table0 table0",
                            "move robot0 table0 human0", "handover robot0 human0 cup1"]
    assert len(res.failures) == 1 and "out of reach" in res.failures[0]
    assert "FAILED" in step_prompts[1].last_user_text and all(r.body.get("logprobs") for r in step_prompts)


def test_alert_stops_and_says_why() -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    llm = Scripted()
    try:
        script = {"goal": ["(:goal (inhand cup0 human0))"],
                  "step": [{"candidates": [["alert I cannot reach any cup", -0.1], ["done", -0.2]]}]}
        res, _, _ = run_scenario(sc, llm.use(sc.id, script).client, mode="stepwise")
    finally:
        llm.close()
    assert res.stop_reason is RecoveryStop.ALERT and "I cannot reach any cup" in res.message
    assert res.executed == []                      # "done" is refused while the goal does not hold


def test_an_endpoint_that_ignores_n_is_asked_k_times() -> None:
    replies = [FakeReply(choices=[choice(t, lp)]) for t, lp in
               (("done", -2.0), ("move robot0 counter0 table0", -0.5), ("adjust cup0", -1.0))]
    with FakeChatServer(replies) as server:
        got = LogprobSampler(client_for(server)).sample([{"role": "user", "content": "next?"}], 3)
    assert got.calls == 3 and [c.logprob for c in got.candidates] == [-2.0, -0.5, -1.0]
