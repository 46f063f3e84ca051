"""The backend factory: offline by default, fast path and grammars in front of a real endpoint
(the fake chat-completions server through the real openai client), and the offline backend
driving the whole AutoGPT+P loop on the simulated kitchen."""
from __future__ import annotations

import pytest
from _kitchen import OAM, kitchen_scene

from affplan_ros.core.agent.tool_loop import TaskStop
from affplan_ros.core.goals.loop import GoalLoop, GoalRequest, GoalStop
from affplan_ros.core.planning.task import build_task
from affplan_ros.llm.backends import FAST_PATH_LABEL, make_backend
from affplan_ros.llm.fake_server import FakeChatServer
from affplan_ros.llm.prompting import GoalPromptBuilder


def request(task: str) -> GoalRequest:
    scene = kitchen_scene()
    t = build_task(scene, oam=OAM)
    return GoalRequest(task=task, signature=t.signature, scene=scene, names=dict(t.names))


def endpoint_env(server) -> dict:
    return {"AFFPLAN_LLM_BASE_URL": server.base_url, "AFFPLAN_LLM_MODEL": "fake", "AFFPLAN_LLM_API_KEY_ENV": ""}


def test_no_endpoint_means_the_offline_interpreter() -> None:
    backend = make_backend(oam=OAM, environ={})
    assert backend.kind == "offline" and "offline instruction interpreter" in backend.label
    res = GoalLoop(backend.model, GoalPromptBuilder()).run(request("Bring me the banana"))
    assert res.accepted and res.goal_text == "(and (inhand banana0 human0))"
    assert res.answered_by == ["offline"] and res.prompt_tokens == 0
    no = GoalLoop(backend.model, GoalPromptBuilder()).run(request("Bring me something sparkly"))
    assert no.stop_reason is GoalStop.DECLINED and "sparkly" in no.error and no.goal is None


def test_fast_path_skips_the_endpoint_only_when_fully_sure() -> None:
    with FakeChatServer(["(:goal (and (inhand milk0 human0)))"]) as server:
        backend = make_backend(oam=OAM, environ=endpoint_env(server))
        assert backend.kind == "fast_path"
        loop = GoalLoop(backend.model, GoalPromptBuilder())
        sure = loop.run(request("Bring me the banana"))
        assert sure.accepted and sure.answered_by == [FAST_PATH_LABEL] and not server.requests
        unsure = loop.run(request("I am thirsty"))
        assert unsure.accepted and unsure.answered_by == ["fake"] and len(server.requests) == 1
        backend.close()
    with FakeChatServer(["(:goal (and (inhand banana0 human0)))"]) as server:
        backend = make_backend(oam=OAM, environ={**endpoint_env(server), "AFFPLAN_FAST_PATH": "0"})
        assert backend.kind == "endpoint"
        res = GoalLoop(backend.model, GoalPromptBuilder()).run(request("Bring me the banana"))
        assert res.answered_by == ["fake"] and len(server.requests) == 1
        backend.close()


def test_grammar_backend_sends_the_scene_grammar_with_each_goal_question() -> None:
    with FakeChatServer(["(:goal (inhand banana0 human0))"]) as server:
        backend = make_backend(oam=OAM, environ=endpoint_env(server), grammar=True, fast_path=False)
        res = GoalLoop(backend.model, GoalPromptBuilder()).run(request("Bring me the banana"))
        assert res.accepted and res.answered_by == ["fake (grammar)"]
        grammar = server.requests[0].body["grammar"]
        assert grammar.startswith('root ::= "(:goal "') and '"banana0"' in grammar and "p-inhand" in grammar
        backend.close()


@pytest.fixture(scope="module")
def semantic():
    import pyswip  # noqa: F401 - required: a broken install fails here, it never skips

    from affplan_ros.core.goals.semantics import SemanticChecker

    return SemanticChecker()


def run_loop(task: str, explored, semantic):
    import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips

    from affplan_ros.llm.loop_factory import make_tool_loop
    from affplan_ros.sim.executor import SimulatedExecutor

    executor = SimulatedExecutor(kitchen_scene(), oam=OAM)
    memory = executor.initial_memory(explored)
    loop = make_tool_loop(make_backend(oam=OAM, environ={}).model, executor, oam=OAM, semantic=semantic,
                          plan_time_limit=20.0, max_rounds=6)
    return loop.run(task, memory), executor


def test_offline_backend_explores_for_a_missing_object_then_plans(semantic) -> None:
    res, executor = run_loop("Bring me the milk from the fridge", ["table0"], semantic)
    assert res.success, res.to_dict()
    assert res.tools == ["EXPLORE", "PLAN"] and res.rounds[0].argument == "refrigerator0"
    assert all(b == "offline" for r in res.rounds for b in r.answered_by)
    assert executor.executed and res.totals()["prompt_tokens"] == 0


def test_offline_backend_declines_without_acting(semantic) -> None:
    res, executor = run_loop("Make the kitchen cosy", "all", semantic)
    assert res.stop_reason is TaskStop.DECLINED and "I do not know the words" in res.message
    assert not executor.executed and res.final_plan == []


def test_offline_tool_choice_after_a_failed_plan_plans_again_from_what_was_seen_then_says_why_it_stops() -> None:
    from affplan_ros.core.agent.tool_loop import ToolPromptView, parse_tool_answer
    from affplan_ros.core.goals.formula import Literal
    from affplan_ros.core.recovery.belief import observe_memory
    from affplan_ros.sim.executor import SimulatedExecutor

    model = make_backend(oam=OAM, environ={}).model
    memory = SimulatedExecutor(kitchen_scene(), oam=OAM).initial_memory("all")

    def choose(request: str, plans_so_far: int) -> str:
        messages = [{"role": "assistant", "content": "SELECTED TOOL: PLAN"}] * plans_so_far
        view = ToolPromptView(request, "", memory=memory)
        return model.complete_in_context(messages, view).text

    assert choose("Bring me the banana", 0) == "SELECTED TOOL: PLAN"
    # A failed execution updated the memory: a new plan starts from there, twice at most.
    assert choose("Bring me the banana", 1) == "SELECTED TOOL: PLAN"
    assert choose("Bring me the banana", 2) == "SELECTED TOOL: PLAN"
    last = choose("Bring me the banana", 3)
    assert parse_tool_answer(last).tool.value == "FAILURE" and "the plan failed 3 times" in last
    # The banana is seen gone from its bowl and found on the counter: the request that names the
    # bowl ends at once with where it is (no alternative for a class that is in the scene).
    holder = next(r.args[1] for r in memory.relations if r.args[:1] == ("banana0",))
    observe_memory(memory, [Literal("in", ("banana0", holder), negated=True),
                            Literal("on", ("banana0", holder), negated=True)])
    assert "counter0" in memory.unexplored()          # where it may be now: to be looked at again
    for loc in memory.locations.values():
        loc.explored = True
    memory.locations["counter0"].objects.append("banana0")
    answer = choose(f"Bring me the banana from the {holder.rstrip('0123456789')}", 1)
    assert parse_tool_answer(answer).tool.value == "FAILURE"
    assert "the robot knows banana0 at counter0" in answer


def test_offline_tool_choice_does_not_explore_for_a_fixture_the_map_does_not_show() -> None:
    from affplan_ros.core.agent.tool_loop import ToolPromptView
    from affplan_ros.core.knowledge.oam import OamDatabase
    from affplan_ros.sim.executor import SimulatedExecutor

    oam = OAM.merged(OamDatabase({"sink": frozenset({"contain", "liquid-contain"})}, "with-sink"))
    model = make_backend(oam=oam, environ={}).model
    memory = SimulatedExecutor(kitchen_scene(), oam=oam).initial_memory(["table0"])
    assert set(memory.unexplored()) == {"counter0", "refrigerator0"}

    def choose(request: str) -> str:
        return model.complete_in_context([], ToolPromptView(request, "", memory=memory)).text

    # Every place is on the map and none is a sink: no sink is behind the fridge's door.
    assert choose("put the cup in the sink") == "SELECTED TOOL: SUGGEST_ALTERNATIVE sink"
    # What may be in an unexplored place is still looked for first (the knife), the sink after.
    assert choose("put the knife in the sink").startswith("SELECTED TOOL: EXPLORE ")
