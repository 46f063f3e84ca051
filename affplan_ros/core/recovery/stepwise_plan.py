"""IALP's step planner without a robot: a whole plan built one step at a time (the planning node).

Where the recovery loop (:mod:`.runner`) executes each chosen step and asks again from the
world's answer, a planning service executes nothing: each step the model's K candidates are
scored by their log-probabilities (:class:`.stepwise.StepwisePlanner`, unchanged), the best
*applicable ground action* is applied to the belief symbolically, and the next step is asked
for from the state it leads to, until the goal holds.

Bounded: at most ``max_steps`` chosen steps and ``max_seconds`` (checked before every question).
It stops and says why when the step planner falls back (no log-probabilities, no applicable
candidate), when the model answers ``alert`` or ``adjust`` (both need the robot: a planning
service cannot ask a person or look again), or at a bound. What then happens is the caller's
``fallback``: ``planner`` (Fast Downward on the same goal) or ``none`` (no plan, with the
reason). Nothing the model answers becomes a step unless the domain's validator accepts it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from affplan_ros.core.goals.formula import render_dnf
from affplan_ros.core.planning.planner import PlanResult, PlanStatus, PlanStep
from affplan_ros.core.planning.simulate import goal_holds
from affplan_ros.core.recovery.belief import Belief, Domain
from affplan_ros.core.recovery.stepwise import CandidateModel, StepPrompter, StepwisePlanner

FALLBACKS = ("planner", "none")   # what happens when the step planner stops short of the goal


@dataclass
class StepwiseOutcome:
    """One stepwise planning run: the steps, whether they reach the goal, and why it stopped."""

    steps: list[PlanStep] = field(default_factory=list)
    reached: bool = False
    stopped: str = ""                                  # why it stopped short ("" : reached)
    choices: list[tuple[str, float]] = field(default_factory=list)   # chosen text, log-probability
    rejected: int = 0                                  # candidates that were not applicable
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    fell_back: bool = False                            # the PDDL planner made the plan instead

    def text(self) -> str:
        """One line for the user: how the plan came about."""
        head = (f"stepwise: {len(self.steps)} steps chosen from the model's candidates by log-probability"
                f" ({self.rejected} inapplicable candidates refused, {self.calls} LLM calls)")
        if self.reached:
            return head
        return head + f"; stopped: {self.stopped}" + ("; the PDDL planner made the plan" if self.fell_back else "")


def plan_stepwise(stepwise: StepwisePlanner, task_text: str, goal, belief: Belief, *, max_steps: int,
                  max_seconds: float, clock: Callable[[], float] = time.monotonic) -> StepwiseOutcome:
    """Build a plan for ``goal`` (DNF in the scene's names) step by step on a copy of ``belief``."""
    t0 = clock()
    belief = belief.copy()
    out = StepwiseOutcome()
    history: list[str] = []
    goal_text = render_dnf(goal)
    for _ in range(max_steps):
        if goal_holds(belief.task(), goal):
            out.reached = True
            break
        if clock() - t0 > max_seconds:
            out.stopped = f"no plan within {max_seconds:g} s"
            break
        choice = stepwise.choose(task_text, goal_text, goal, belief, history)
        s = choice.sampled
        if s is not None:
            out.calls += s.calls
            out.prompt_tokens += s.prompt_tokens
            out.completion_tokens += s.completion_tokens
        out.rejected += sum(not c.valid for c in choice.candidates)
        if choice.fallback:
            out.stopped = choice.fallback
            break
        c = choice.chosen
        out.choices.append((c.text.strip()[:80], float(c.logprob)))
        if c.kind == "done":     # parse_candidate accepts `done` only where the goal holds
            out.reached = True
            break
        if c.kind == "alert":
            out.stopped = f"the model asks for a person's help: {c.argument}"
            break
        if c.kind == "adjust":
            out.stopped = f"the model asks to look at {c.argument} again (adjust), which needs the robot"
            break
        out.steps.append(c.step)
        belief.apply_steps([c.step])
        history.append(str(c.step))
    else:
        out.reached = goal_holds(belief.task(), goal)
        if not out.reached:
            out.stopped = f"{max_steps} steps chosen without reaching the goal (stepwise_max_steps)"
    out.seconds = clock() - t0
    return out


@dataclass
class StepwiseSolver:
    """``TaskPlanner.solver`` for IALP's step planner: a plan from the model's scored candidates.

    Returns None where the PDDL planner must make the plan (``fallback="planner"`` and the step
    planner stopped short); with ``fallback="none"`` a stop is a failed plan with the reason.
    ``last`` keeps the outcome of the latest goal for the caller's report."""

    model: Optional[CandidateModel]
    prompter: StepPrompter
    task_text: str
    k: int = 5
    fallback: str = "planner"
    max_steps: int = 30
    unavailable: str = ""               # why no candidate model exists (e.g. no LLM endpoint)
    last: Optional[StepwiseOutcome] = None

    def __post_init__(self) -> None:
        if self.fallback not in FALLBACKS:
            raise ValueError(f"stepwise fallback must be one of {', '.join(FALLBACKS)} (got {self.fallback!r})")
        if self.k < 1 or self.max_steps < 1:
            raise ValueError("stepwise planning needs k >= 1 and max_steps >= 1")

    def __call__(self, scene, goal, time_limit: float, build_kwargs: dict) -> Optional[PlanResult]:
        base = Domain.default(build_kwargs.get("oam"), build_kwargs.get("capabilities"))
        domain = Domain(base.capabilities, dict(build_kwargs.get("predicates") or base.predicates), base.oam,
                        list(build_kwargs["agents"]) if build_kwargs.get("agents") is not None else None)
        if self.model is None:
            out = StepwiseOutcome(stopped=f"no candidate model: {self.unavailable or 'none configured'}")
        else:
            out = plan_stepwise(StepwisePlanner(self.model, self.prompter, self.k), self.task_text, goal,
                                Belief(scene, domain), max_steps=self.max_steps, max_seconds=time_limit)
        self.last = out
        if out.reached:
            return PlanResult(PlanStatus.SOLVED, list(out.steps), cost=None, message=out.text())
        if self.fallback == "planner":
            out.fell_back = True
            return None
        return PlanResult(PlanStatus.ERROR, [], message=f"stepwise planning stopped: {out.stopped} "
                                                          "(stepwise_fallback is none)")
