"""IALP's step planner without a robot (core/recovery/stepwise_plan.py, what the planning node
uses) and grounding facts that cross a process boundary (judge, FactGrounding)."""
from __future__ import annotations

from _recovery import scenario

from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.planning.planner import PlanStatus
from affplan_ros.core.recovery.belief import Belief
from affplan_ros.core.recovery.grounding import (
    CallbackGrounding,
    FactGrounding,
    ground_domain,
    judge,
    load_grounding,
)
from affplan_ros.core.recovery.stepwise import Sampled, ScoredText, StepwisePlanner
from affplan_ros.core.recovery.stepwise_plan import StepwiseSolver, plan_stepwise
from affplan_ros.llm.recovery_prompting import StepPromptBuilder

CUP1 = [[Literal("inhand", ("cup1", "human0"))]]


class Model:
    """Each call answers the next list of (text, log-probability); the last one repeats."""

    def __init__(self, *steps):
        self.steps, self.calls = list(steps), 0

    def sample(self, messages, k):
        self.calls += 1
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        return Sampled([ScoredText(t, lp) for t, lp in step][:k])


def _belief():
    sc = scenario("copal_kitchen_out_of_reach")
    return Belief(sc.belief_scene(), sc.robot_domain())


def test_the_plan_is_made_of_the_best_applicable_candidates_only() -> None:
    model = Model([("handover robot0 human0 cup1", -0.01), ("move robot0 counter0 table0", -0.5)],
                  [("grasp robot0 cup1 table0 table0", -0.1)], [("move robot0 table0 human0", -0.1)],
                  [("handover robot0 human0 cup1", -0.1)])
    out = plan_stepwise(StepwisePlanner(model, StepPromptBuilder(), 2), "bring me a cup", CUP1, _belief(),
                        max_steps=10, max_seconds=30)
    assert out.reached and out.stopped == "" and out.rejected == 1 and model.calls == 4
    assert [str(s) for s in out.steps] == ["move robot0 counter0 table0", "grasp robot0 cup1 table0 table0",
                                           "move robot0 table0 human0", "handover robot0 human0 cup1"]


def test_going_round_in_circles_stops_at_the_step_bound_and_says_so() -> None:
    model = Model([("move robot0 counter0 table0", -0.1)], [("move robot0 table0 counter0", -0.1)],
                  [("move robot0 counter0 table0", -0.1)])
    out = plan_stepwise(StepwisePlanner(model, StepPromptBuilder(), 1), "bring me a cup", CUP1, _belief(),
                        max_steps=3, max_seconds=30)
    assert not out.reached and model.calls == 3 and len(out.steps) == 3
    assert out.stopped == "3 steps chosen without reaching the goal (stepwise_max_steps)"


def test_the_solver_falls_back_or_fails_with_the_reason() -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    kwargs = sc.robot_domain().build_kwargs()
    no_lp = Model([("move robot0 counter0 table0", None)])
    planner = StepwiseSolver(no_lp, StepPromptBuilder(), "bring me a cup", k=2, fallback="planner")
    assert planner(sc.belief_scene(), CUP1, 10.0, kwargs) is None              # Fast Downward takes over
    assert planner.last.fell_back and "no log-probabilities" in planner.last.stopped
    none = StepwiseSolver(Model([("alert the cup is too hot", -0.1)]), StepPromptBuilder(), "bring me a cup",
                          fallback="none")
    got = none(sc.belief_scene(), CUP1, 10.0, kwargs)
    assert got.status is PlanStatus.ERROR and not got.plan
    assert got.message == ("stepwise planning stopped: the model asks for a person's help: the cup is too hot "
                           "(stepwise_fallback is none)")
    offline = StepwiseSolver(None, StepPromptBuilder(), "x", fallback="none", unavailable="no LLM endpoint")
    assert "no candidate model: no LLM endpoint" in offline(sc.belief_scene(), CUP1, 10.0, kwargs).message


def test_grounding_facts_answer_as_the_provider_did() -> None:
    sc = scenario("copal_kitchen_out_of_reach")
    provider = CallbackGrounding({"reachable": lambda o: o != "cup0", "graspable": lambda o: True})
    facts = judge(provider, ["cup0", "cup1", "table0"])
    assert facts.facts[("reachable", ("cup0",))] is False and facts.facts[("reachable", ("cup1",))] is True
    assert set(facts.unavailable) == {"detected", "placeable"}          # no function: said, not guessed
    domain, scene, report = ground_domain(sc.robot_domain(), sc.belief_scene(), FactGrounding(facts))
    assert report.available == ["graspable", "reachable"] and "(reachable cup0)" in report.false_facts
    assert "reachable" in domain.predicates and "detected" not in domain.predicates
    # an object the robot did not judge does not count as reachable
    gp = load_grounding()["reachable"]
    assert FactGrounding(facts).ground(gp, [("cup9",)]).true == frozenset()


def test_the_step_planner_and_its_fallback_share_the_callers_time_bound(monkeypatch) -> None:
    """The caller's ``max_seconds`` covers the step planner and Fast Downward after it together:
    a step planner that used 25 of 30 seconds leaves Fast Downward the 5 that remain, not the
    full planner limit again (a goal could take twice its bound)."""
    from _kitchen import OAM, kitchen_scene

    from affplan_ros.core.agent import plan_tool
    from affplan_ros.core.goals.loop import GoalLoop
    from affplan_ros.core.planning.planner import PlanResult
    from affplan_ros.llm.backends import make_backend
    from affplan_ros.llm.prompting import GoalPromptBuilder

    clock = [1000.0]
    monkeypatch.setattr(plan_tool.time, "monotonic", lambda: clock[0])
    limits = []

    def solver(scene, goal, limit, kwargs):
        limits.append(("stepwise", limit))
        clock[0] += limit - 5.0          # it spends all but 5 s of what it was given, then gives up
        return None

    def fast_downward(scene, goal, time_limit, **_kwargs):
        limits.append(("planner", time_limit))
        return PlanResult(PlanStatus.SOLVED, cost=0.0, optimal=True)

    monkeypatch.setattr(plan_tool, "plan_for_goal", fast_downward)
    backend = make_backend(oam=OAM, environ={})
    planner = plan_tool.TaskPlanner(GoalLoop(backend.model, GoalPromptBuilder()), oam=OAM, time_limit=30.0,
                                    solver=solver)
    planner.plan("Bring me the banana", kitchen_scene(), max_seconds=30.0)
    assert limits[0][0] == "stepwise" and limits[0][1] <= 30.0
    assert limits[1][0] == "planner" and limits[1][1] <= 5.5, limits
