"""IALP's step planner: K candidate next actions from the LLM, scored by log-probability.

Each step the LLM is asked for the next action; K answers are sampled (``n`` choices, or
repeated calls where an endpoint ignores ``n``), each scored by the sum of its tokens'
log-probabilities (the endpoint's ``logprobs``). Every candidate is parsed and validated
against the domain: only an *applicable ground action* of the robot's model (full
precondition, affordance and capability guards included, on the current belief) can be
chosen - an LLM candidate that is not is never executed. The best valid candidate runs, and
the next step is asked for from the new state (replanning every step). Two special answers,
as in IALP: ``adjust <object>`` (re-ground the object: look again, reposition) and ``alert
<message>`` (stop and ask a person). When the endpoint returns no log-probabilities, or no
candidate is valid, the caller falls back to the PDDL planner.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Protocol, Sequence

from affplan_ros.core.goals.loop import Message
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.planning.simulate import goal_holds, validate_plan
from affplan_ros.core.recovery.belief import Belief


@dataclass(frozen=True)
class ScoredText:
    text: str
    logprob: Optional[float]     # summed token log-probabilities; None: the endpoint gave none


@dataclass
class Sampled:
    candidates: list[ScoredText]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    calls: int = 1


class CandidateModel(Protocol):
    def sample(self, messages: Sequence[Message], k: int) -> Sampled: ...


class StepPrompter(Protocol):
    def system(self) -> str: ...

    def step(self, task: str, goal: str, state: str, actions: str, objects: str, history: str) -> str: ...


@dataclass
class Candidate:
    text: str
    logprob: Optional[float]
    kind: str = "invalid"              # action | adjust | alert | done | invalid
    step: Optional[PlanStep] = None
    argument: str = ""
    problem: str = ""

    @property
    def valid(self) -> bool:
        return self.kind != "invalid"


@dataclass
class StepChoice:
    chosen: Optional[Candidate]
    candidates: list[Candidate] = field(default_factory=list)
    fallback: str = ""                 # why the PDDL planner must take over ("" : no fallback)
    sampled: Optional[Sampled] = None


_LINE_PREFIX = re.compile(r"^\s*(?:next\s+action|action|answer)\s*:\s*", re.IGNORECASE)


def _normalize(text: str) -> str:
    lines = [l for l in (text or "").splitlines() if l.strip()]
    line = _LINE_PREFIX.sub("", lines[0]) if lines else ""
    return " ".join(line.replace("(", " ").replace(")", " ").replace(",", " ").strip("`. ").split())


def parse_candidate(text: str, logprob: Optional[float], belief: Belief, goal=None, task=None) -> Candidate:
    """The candidate as an applicable ground action (or adjust / alert / done), or invalid with why."""
    words = _normalize(text).split()
    c = Candidate(text, logprob)
    if not words:
        c.problem = "empty answer"
        return c
    head = words[0].lower()
    task = task or belief.task()
    if head == "alert":
        c.kind, c.argument = "alert", " ".join(words[1:]) or "the robot needs help"
        return c
    if head == "adjust":
        if len(words) != 2 or task._map(words[1]) not in task.object_types:
            c.problem = "adjust takes one object of the scene"
            return c
        c.kind, c.argument = "adjust", words[1]
        return c
    if head == "done":
        if goal and not goal_holds(task, goal):
            c.problem = "the goal does not hold yet"
            return c
        c.kind = "done"
        return c
    cap = task.capabilities.get(words[0])
    if cap is None:
        c.problem = f"{words[0]!r} is not an action of the domain"
        return c
    args = tuple(words[1:])
    need = len(cap.parameters) + (0 if cap.environment else 1)
    if len(args) != need:
        c.problem = f"{cap.name} takes {need} arguments (actor first), got {len(args)}"
        return c
    ok, _cost, msg = validate_plan(task, [[]], [(cap.name, tuple(task._map(a) for a in args))])
    if not ok:
        c.problem = msg.replace("plan rejected by the validator: ", "not applicable now: ")
        return c
    agent, params = task.step_parts(cap.name, args)
    c.kind, c.step = "action", PlanStep(cap.name, tuple(params), agent)
    return c


def actions_text(belief: Belief) -> str:
    lines = []
    for cap in belief.domain.capabilities.values():
        if cap.environment:
            continue
        params = " ".join(["?actor"] + [f"?{p.name}" for p in cap.parameters])
        lines.append(f"{cap.name} {params} : {cap.description}")
    return "\n".join(lines)


@dataclass
class StepwisePlanner:
    model: CandidateModel
    prompter: StepPrompter
    k: int = 5

    def choose(self, task_text: str, goal_text: str, goal, belief: Belief, history: Sequence[str]) -> StepChoice:
        task = belief.task()
        state = "\n".join(str(r) for r in belief.scene.relations)
        objects = ", ".join(sorted(belief.scene.objects))
        user = self.prompter.step(task_text, goal_text, state, actions_text(belief), objects,
                                  "\n".join(history) or "(nothing yet)")
        messages = [{"role": "system", "content": self.prompter.system()}, {"role": "user", "content": user}]
        sampled = self.model.sample(messages, self.k)
        seen: dict[str, Candidate] = {}
        for s in sampled.candidates:
            c = parse_candidate(s.text, s.logprob, belief, goal, task)
            key = _normalize(s.text).lower()
            old = seen.get(key)
            if old is None or (c.logprob is not None and (old.logprob is None or c.logprob > old.logprob)):
                seen[key] = c
        cands = list(seen.values())
        out = StepChoice(None, cands, sampled=sampled)
        stopped = getattr(sampled, "stopped", "")  # why fewer than k came back (llm/recovery_prompting)
        if not sampled.candidates:
            out.fallback = "the endpoint returned no candidates" + (f" ({stopped})" if stopped else "")
        elif all(c.logprob is None for c in cands):
            out.fallback = "the endpoint returned no log-probabilities"
        else:
            valid = [c for c in cands if c.valid and c.logprob is not None]
            if not valid:
                out.fallback = ("no candidate is an applicable action: "
                                + "; ".join(f"{_normalize(c.text)!r}: {c.problem}" for c in cands))
            else:
                out.chosen = max(valid, key=lambda c: c.logprob)  # first of equals wins
        return out
