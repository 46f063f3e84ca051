"""The self-correction loop through the real openai client and the real fake HTTP server."""
from __future__ import annotations

import time

import pyswip  # noqa: F401 - required: a broken install fails here, it never skips
import pytest

from affplan_ros.core.goals.loop import (
    Completion,
    GoalLoop,
    GoalMode,
    GoalRequest,
    GoalStop,
    generate_goal,
)
from affplan_ros.core.goals.semantics import SemanticChecker  # noqa: E402
from affplan_ros.core.model.signature import Signature
from affplan_ros.llm import ChatClient, GoalPromptBuilder, LLMConfig
from affplan_ros.llm.fake_server import FakeChatServer, FakeReply


def sig() -> Signature:
    obj = lambda *t: frozenset(t + ("object",))  # noqa: E731
    return Signature(
        predicates={"on": ("carry", "support"), "in": ("carry", "contain"), "inhand": ("carry", "actor"),
                    "at": ("actor", "location")},
        objects={"cup0": obj("cup", "carry"), "apple0": obj("apple", "carry"),
                 "table0": obj("table", "support", "location"),
                 "bowl0": obj("bowl", "carry", "contain"), "human0": obj("human", "actor", "location"),
                 "robot0": obj("robot", "actor")},
        descriptions={"inhand": "?a1 is in the hand of ?a2"},
    )


@pytest.fixture(scope="module")
def semantic() -> SemanticChecker:
    return SemanticChecker()


def make_loop(server: FakeChatServer, semantic, **kw) -> tuple[GoalLoop, ChatClient]:
    cfg = LLMConfig(base_url=server.base_url, model="fake", api_key_env="", timeout_s=kw.pop("timeout_s", 5.0),
                    max_retries=kw.pop("max_retries", 1), backoff_initial_s=0.01, backoff_max_s=0.02)
    client = ChatClient(cfg)
    return GoalLoop(client, GoalPromptBuilder(), semantic, **kw), client


def test_wrong_goal_corrected_through_feedback(semantic) -> None:
    answers = [
        "The user wants the cup.\n(:goal (and (inhand cupp0 human0)))",  # unknown object
        "Sorry.\n```pddl\n(:goal (and (inhand cup0 human0) (on cup0 table0)))\n```",  # semantic error
        "You are right:\n(:goal (and (inhand cup0 human0)))",
    ]
    with FakeChatServer(answers) as server:
        loop, client = make_loop(server, semantic)
        result = loop.run(GoalRequest("Give me the cup", sig()))
        reqs = server.chat_requests
    assert result.stop_reason is GoalStop.ACCEPTED and result.accepted
    assert result.goal_text == "(and (inhand cup0 human0))"
    assert result.rounds == 3 and len(reqs) == 3
    assert [f.stage for f in result.feedback] == ["syntax", "semantic"]
    assert result.feedback[0].kinds == ("unknown_object",)
    # the feedback messages reached the server in the conversation
    assert "'cupp0'" in reqs[1].last_user_text and "Did you mean 'cup0'" in reqs[1].last_user_text
    assert "logical contradiction" in reqs[2].last_user_text
    # history kept, each earlier answer sent back as its goal only (not the model's reasoning)
    assert [m["content"] for m in reqs[2].messages if m["role"] == "assistant"] == [
        "(:goal (and (inhand cupp0 human0)))", "(:goal (and (inhand cup0 human0) (on cup0 table0)))"]
    assert result.prompt_tokens == client.accounting.prompt_tokens > 0
    assert result.completion_tokens == client.accounting.completion_tokens > 0
    assert result.llm_seconds > 0 and result.seconds >= result.llm_seconds


def test_bad_disjunct_is_dropped(semantic) -> None:
    answer = "(:goal (or (and (on cup0 table0) (in cup0 bowl0)) (inhand cup0 human0)))"
    with FakeChatServer([answer]) as server:
        result = make_loop(server, semantic)[0].run(GoalRequest("cup", sig()))
    assert result.accepted and result.rounds == 1
    assert result.goal_text == "(and (inhand cup0 human0))"
    assert result.raw_goal_text is not None and "or" in result.raw_goal_text


def test_bound_reached(semantic) -> None:
    with FakeChatServer(["(:goal (and (onn cup0 table0)))"], repeat_last=True) as server:
        result = make_loop(server, semantic, max_rounds=4)[0].run(GoalRequest("x", sig()))
        assert len(server.chat_requests) == 4
    assert result.stop_reason is GoalStop.BOUND_REACHED and not result.accepted
    assert result.rounds == 4 and len(result.feedback) == 4 and result.goal is None
    assert all(f.kinds == ("unknown_predicate",) for f in result.feedback)


def test_default_bound_is_ten(semantic) -> None:
    with FakeChatServer(["no idea"], repeat_last=True) as server:
        result = make_loop(server, semantic)[0].run(GoalRequest("x", sig()))
    assert result.rounds == 10 and result.stop_reason is GoalStop.BOUND_REACHED
    assert result.feedback[0].kinds == ("no_goal",)


def test_garbage_then_good(semantic) -> None:
    with FakeChatServer(["%%%% ((( garbage", "(:goal (and (on apple0 table0)))"]) as server:
        result = make_loop(server, semantic)[0].run(GoalRequest("apple on table", sig()))
        assert "did not contain a goal" in server.chat_requests[1].last_user_text
    assert result.accepted and result.rounds == 2
    assert result.feedback[0].kinds == ("no_goal",)


def test_empty_answers_stop_early(semantic) -> None:
    with FakeChatServer(["", None, "   "]) as server:
        result = make_loop(server, semantic, max_empty=3)[0].run(GoalRequest("x", sig()))
        assert "empty" in server.chat_requests[1].last_user_text
    assert result.stop_reason is GoalStop.EMPTY_ANSWERS and result.rounds == 3


def test_llm_500_stops_with_clear_error(semantic) -> None:
    with FakeChatServer([FakeReply(status=500)] * 5) as server:
        result = make_loop(server, semantic, max_retries=2)[0].run(GoalRequest("x", sig()))
        assert len(server.chat_requests) == 3  # 1 + 2 retries, then the loop stops
    assert result.stop_reason is GoalStop.LLM_ERROR and result.rounds == 0
    assert result.error is not None and "HTTP 500" in result.error


def test_llm_timeout_does_not_hang(semantic) -> None:
    with FakeChatServer([FakeReply(text="late", delay_s=30)] * 5) as server:
        loop, _ = make_loop(server, semantic, timeout_s=0.3, max_retries=1)
        t0 = time.monotonic()
        result = loop.run(GoalRequest("x", sig()))
    assert time.monotonic() - t0 < 5
    assert result.stop_reason is GoalStop.LLM_ERROR and "timed out" in (result.error or "")


def test_partial_plan_mode_limits_predicates(semantic) -> None:
    answers = ["(:goal (and (on cup0 table0) (on apple0 table0) (inhand cup0 human0)))",
               "(:goal (and (on apple0 table0)))"]
    with FakeChatServer(answers) as server:
        loop, _ = make_loop(server, semantic)
        result = loop.run(GoalRequest("Set the table for tea", sig(), mode=GoalMode.PARTIAL_PLAN, max_predicates=2))
        first = server.chat_requests[0].messages[1]["content"]
        assert "at most 2 predicates" in first
        assert "at most 2 are allowed" in server.chat_requests[1].last_user_text
    assert result.accepted and result.goal_text == "(and (on apple0 table0))"
    assert result.feedback[0].kinds == ("too_many_predicates",)


def test_time_limit_with_injected_model_and_clock(semantic) -> None:
    now = [0.0]

    class SlowModel:
        def complete(self, messages):
            now[0] += 10.0
            return Completion("(:goal (and (onn cup0 table0)))", 1, 1, 10.0)

    result = GoalLoop(SlowModel(), GoalPromptBuilder(), semantic, max_seconds=25,
                      clock=lambda: now[0]).run(GoalRequest("x", sig()))
    assert result.stop_reason is GoalStop.TIME_LIMIT and result.rounds == 3


def test_generate_goal_without_semantic_check() -> None:
    with FakeChatServer(["(:goal (and (on cup0 table0) (in cup0 bowl0)))"]) as server:
        cfg = LLMConfig(base_url=server.base_url, model="fake", api_key_env="")
        result = generate_goal(GoalRequest("x", sig()), ChatClient(cfg), GoalPromptBuilder(), None)
    assert result.accepted  # syntax only


def test_a_goal_no_plan_reaches_given_again_ends_the_loop_at_once(semantic) -> None:
    # Told that no plan reaches its goal, the model gives the same goal again: asking a third
    # time would not make it reachable (the scene lacks what it needs), so the loop stops there
    # rather than spending its whole bound on the same answer.
    same = "(:goal (and (inhand apple0 human0)))"
    solved: list = []

    def solve(dnf):
        solved.append(dnf)
        return "The goal is well formed, but no plan reaches it from the current state."

    with FakeChatServer([same, same, same, same]) as server:
        result = make_loop(server, semantic, max_rounds=10)[0].run(GoalRequest("Give me the apple", sig()),
                                                                    solve=solve)
        reqs = server.chat_requests
    assert result.stop_reason is GoalStop.REPEATED_UNREACHABLE and not result.accepted
    assert result.rounds == 2 and len(reqs) == 2 and len(solved) == 1      # planned once
    assert [f.stage for f in result.feedback] == ["planning", "planning"]
    assert result.feedback[-1].kinds == ("unsolvable", "repeated")
    assert "given again although no plan reaches it" in result.feedback[-1].message
    # Another goal after the feedback is planned as usual.
    with FakeChatServer([same, "(:goal (and (inhand cup0 human0)))"]) as server:
        result = make_loop(server, semantic)[0].run(GoalRequest("Give me something", sig()),
                                                    solve=lambda dnf: None if "cup0" in str(dnf) else "no plan")
    assert result.accepted and result.rounds == 2
