"""A Plan that finds no plan reaching the goal (the goal needs an object memory lacks): the loop
looks at places instead of planning again in vain (``explore_when_unreachable``), and every
task's LLM calls stay within ``max_llm_calls`` (learning inside the executor included). Fast:
a stub model and a stub planner over the simulated kitchen."""
from __future__ import annotations

import pytest
from _kitchen import OAM, kitchen_scene

from affplan_ros.core.agent.plan_tool import PlanAttempt
from affplan_ros.core.agent.tool_loop import BudgetedChatModel, TaskStop, next_place
from affplan_ros.core.goals.loop import ChatModelError, Completion
from affplan_ros.core.planning.planner import PlanResult, PlanStatus
from affplan_ros.llm.loop_factory import make_tool_loop
from affplan_ros.sim.executor import SimulatedExecutor


class Model:
    """Answers every question with the next of ``answers`` (the last one again when they run out)."""

    def __init__(self, answers):
        self.answers, self.calls = list(answers), 0

    def complete(self, messages):
        self.calls += 1
        return Completion(self.answers[min(self.calls, len(self.answers)) - 1], 10, 5, 0.0, "stub")


class NeedsApple:
    """The planning node as the loop sees it: one goal call per Plan; no plan reaches the goal
    until the apple is in memory, then the empty plan (the goal is the test's, not the kitchen's)."""

    def __init__(self):
        self.calls = 0

    def plan(self, request, scene, *, partial=False, context="", max_seconds=None):
        from affplan_ros.core.goals.loop import GoalLoopResult, GoalStop

        self.calls += 1
        if "apple0" not in scene.objects:
            goal = GoalLoopResult(GoalStop.REPEATED_UNREACHABLE, rounds=2)
            return PlanAttempt(False, "no goal was accepted (repeated_unreachable after 2 rounds; 2 well-formed "
                                      "goal(s) no plan reaches)", goal=goal, unreachable=True)
        goal = GoalLoopResult(GoalStop.ACCEPTED, goal_text="(holds)", rounds=1)
        return PlanAttempt(True, "plan", goal=goal, goal_text="(holds)",
                           plan=PlanResult(PlanStatus.SOLVED, [], 0.0))


def run(memory_explored, answers, **kw):
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    memory = ex.initial_memory(memory_explored)
    model, planner = Model(answers), NeedsApple()
    loop = make_tool_loop(model, ex, oam=OAM, planner=planner, **kw)
    return loop.run("Give me the apple", memory), memory, model, planner


def test_plan_again_with_nothing_changed_explores_an_unexplored_place_first() -> None:
    res, memory, model, planner = run("table0", ["SELECTED TOOL: PLAN"], explore_when_unreachable=True)
    assert res.stop_reason is TaskStop.COMPLETED, res.message
    assert [(r.tool, r.argument, r.fallback) for r in res.rounds] == [
        ("PLAN", None, False), ("EXPLORE", "counter0", True), ("PLAN", None, False)]
    assert "planning again would fail the same way: looked at counter0 instead" in res.rounds[1].result
    assert "apple0" in res.rounds[1].result and "apple0" in memory.objects
    assert planner.calls == 2 and model.calls == 3
    assert res.totals()["llm_calls"] == 3 + 2 + 1   # tool choices, then the planner's goal rounds


def test_a_place_explored_before_is_looked_at_again_the_robots_own_first() -> None:
    # Memory says every place was explored, but it lacks the apple on the counter (it was added
    # since, or not noticed): the robot looks where it stands, then at the other places.
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    memory = ex.initial_memory(["table0", "refrigerator0"])
    memory.add_location("counter0", explored=True)
    assert not memory.unexplored() and "apple0" not in memory.objects
    model, planner = Model(["SELECTED TOOL: PLAN"]), NeedsApple()
    loop = make_tool_loop(model, ex, oam=OAM, planner=planner, explore_when_unreachable=True)
    res = loop.run("Give me the apple", memory)
    assert res.stop_reason is TaskStop.COMPLETED, res.message
    assert [r.argument for r in res.rounds if r.tool == "EXPLORE"] == ["table0", "counter0"]
    assert planner.calls == 2      # no Plan in vain while looking


def test_every_place_looked_at_the_repeated_plan_is_refused_once_then_the_task_stops() -> None:
    ex = SimulatedExecutor(kitchen_scene(without=("apple:0",)), oam=OAM)
    memory = ex.initial_memory("all")
    model, planner = Model(["SELECTED TOOL: PLAN"]), NeedsApple()
    loop = make_tool_loop(model, ex, oam=OAM, planner=planner, explore_when_unreachable=True, max_rounds=20)
    res = loop.run("Give me the apple", memory)
    assert res.stop_reason is TaskStop.NO_TOOL
    assert [r.argument for r in res.rounds if r.tool == "EXPLORE"] == ["table0", "counter0", "refrigerator0"]
    assert res.rounds[-2].error_kind == "plan_unchanged" and "SUGGEST_ALTERNATIVE" in res.rounds[-2].error
    assert "every place was looked at in this task (table0, counter0, refrigerator0)" in res.message
    assert planner.calls == 1 and len(res.rounds) == 6


def test_off_the_loop_plans_again_as_the_paper_does() -> None:
    res, _, model, planner = run("table0", ["SELECTED TOOL: PLAN"], max_rounds=3)
    assert res.stop_reason is TaskStop.BOUND_REACHED and planner.calls == 3
    assert res.totals()["llm_calls"] == 3 * (1 + 2)


def test_the_tasks_llm_calls_stop_at_max_llm_calls_and_the_stop_says_so() -> None:
    elsewhere = [0]
    res, _, model, planner = run("table0", ["SELECTED TOOL: PLAN"], max_rounds=50, max_llm_calls=10,
                                 llm_calls_elsewhere=lambda: elsewhere[0])
    assert res.stop_reason is TaskStop.LLM_CALL_LIMIT and not res.success
    # 3 rounds of 1 + 2, then the 10th call chooses the tool and the Plan does not run
    assert "LLM call limit is used up (10 calls, max_llm_calls 10) before PLAN could run" in res.message
    assert res.totals()["llm_calls"] == 10 and planner.calls == 3
    elsewhere[0] = 9     # calls made elsewhere (learning) count too: one round fits
    res, _, model, planner = run("table0", ["SELECTED TOOL: PLAN"], max_rounds=50, max_llm_calls=10,
                                 llm_calls_elsewhere=lambda: elsewhere[0])
    assert res.stop_reason is TaskStop.LLM_CALL_LIMIT and len(res.rounds) == 1
    assert "before PLAN could run" in res.message and planner.calls == 0   # no planning past the limit


def test_a_budgeted_model_refuses_calls_past_the_limit() -> None:
    used = [0]
    inner = Model(["a", "b", "c"])
    budget = BudgetedChatModel(inner, 2, lambda: used[0] + budget.calls)
    assert budget.complete([]).text == "a" and budget.complete([]).text == "b"
    with pytest.raises(ChatModelError, match="LLM call limit is used up"):
        budget.complete([])
    assert inner.calls == 2 and budget.calls == 2
    assert BudgetedChatModel(inner, None, lambda: 10**6).complete([]).text == "c"   # None: no limit


def test_next_place_order() -> None:
    ex = SimulatedExecutor(kitchen_scene(), oam=OAM)
    memory = ex.initial_memory("counter0")
    assert next_place(memory, [], "robot0") == "table0"            # unexplored, in memory's order
    memory = ex.initial_memory("all")
    assert next_place(memory, [], "robot0") == "table0"            # where the robot stands
    assert next_place(memory, ["table0"], "robot0") == "counter0"
    assert next_place(memory, ["table0", "counter0", "refrigerator0"], "robot0") is None
