"""The classical planner makes an LLM's action list executable (``bench plan --method llm-action-list``).

AutoGPT+P's second baseline, "the planner with an LLM action list". The model has written a list
of actions (the llm-planner's prompt and answer format); this module turns it into a plan:

1. The listed actions are taken in order, from the scene's state. An action that is no ground
   action of the domain (unknown action or object, wrong number of arguments, an argument of the
   wrong built-in type) is skipped, with that reason.
2. Where the next action's precondition holds, it is applied (kept). Where it does not, Fast
   Downward (:func:`~affplan_ros.core.planning.planner.plan_for_goal`, the planner of the goal
   method) plans from the current state to a goal that is that precondition (a *gap*, at most
   ``gap_time_limit`` seconds); the gap plan is spliced in and the action applied. A precondition
   no plan reaches (a static part false, e.g. a table has no ``carry`` affordance; the planner
   finds it unsolvable or runs out of time; the gap plan does not make it true) skips the action,
   with the reason, and the state stays as it was.
3. At most ``max_gaps`` gaps are planned; past that bound an action whose precondition does not
   hold is skipped ("gap bound reached"). At most ``max_actions`` listed actions are read.
4. At the end, where the ``goal`` does not hold, the planner plans the rest to it (the *completion*,
   at most ``completion_time_limit`` seconds); whether it was needed is recorded.

The preconditions become goals in the domain's vocabulary: the static parts (affordance and
capability guards, ``=``, facts no action changes) are decided on the current state;
``(free ?o)`` becomes "none of the things on ?o now stays on it", ``(not (enclosed ?o))`` "none of
the closed containers ?o is in now stays closed"; the rest are literals. Every loop is bounded
(list length, gaps, seconds) and the result says why it stopped.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.knowledge.capabilities import split_actor
from affplan_ros.core.planning.derived import ENCLOSED, FREE
from affplan_ros.core.planning.simulate import (
    Atom,
    SimulationError,
    apply_step,
    full_condition,
    goal_holds,
    ground_step,
    holds,
    initial_state,
    state_to_scene,
    substitute,
)
from affplan_ros.core.planning.task import PlanningTask

Step = tuple[str, tuple[str, ...]]  # (action, (actor, *args)), PDDL names
MAX_DISJUNCTS = 64


@dataclass
class ListedAction:
    """What became of one action of the list."""
    index: int                         # 1-based position in the list
    step: str                          # "grasp robot0 cup0 counter0 counter0"
    kept: bool = False
    reason: str = ""                   # why it was skipped
    inserted: list[str] = field(default_factory=list)  # the gap plan spliced in before it


@dataclass
class ActionListResult:
    steps: list[Step] = field(default_factory=list)        # the final plan
    listed: list[ListedAction] = field(default_factory=list)
    gaps: int = 0                       # gap plannings tried
    inserted_gap: int = 0               # actions the gap plans inserted
    completion: list[str] = field(default_factory=list)    # actions the completion appended
    completion_needed: bool = False     # the goal did not hold after the list
    completion_status: Optional[str] = None   # the planner's status for the completion, if needed
    stop_reason: str = ""               # why the pass over the list stopped
    planner_seconds: float = 0.0
    planner_calls: int = 0

    @property
    def kept(self) -> int:
        return sum(a.kept for a in self.listed)

    @property
    def skipped(self) -> int:
        return sum(not a.kept for a in self.listed)

    @property
    def inserted(self) -> int:
        """Every action the planner put into the plan: the gaps' and the completion's."""
        return self.inserted_gap + len(self.completion)


def fluent_predicates(task: PlanningTask) -> frozenset[str]:
    """The predicates some action's effect changes (the others are static)."""
    out: set[str] = set()

    def walk(e) -> None:
        if isinstance(e, str) or not e:
            return
        if e[0] in ("and", "not"):
            for c in e[1:]:
                walk(c)
        elif e[0] not in ("increase", "decrease"):
            out.add(e[0])

    for cap in task.capabilities.values():
        walk(full_condition(cap)[1])
    return frozenset(out)


def precondition_goal(pre, state: set[Atom], fluents: frozenset[str]) -> list[tuple[Literal, ...]]:
    """The ground precondition ``pre`` (parsed) as a DNF goal over fluents, decided on ``state``
    where it is static: ``[]`` when nothing makes it true, ``[()]`` when it holds as it is."""

    def product(parts: list[list[tuple]]) -> list[tuple]:
        acc: list[tuple] = [()]
        for p in parts:
            acc = [a + b for a in acc for b in p]
            if len(acc) > MAX_DISJUNCTS:
                raise ValueError(f"the precondition expands to more than {MAX_DISJUNCTS} alternatives")
        return acc

    def go(e, pos: bool) -> list[tuple]:
        head = e[0]
        if head == "not":
            return go(e[1], not pos)
        if head in ("and", "or"):
            parts = [go(c, pos) for c in e[1:]]
            if (head == "and") == pos:
                return product(parts)
            return [c for p in parts for c in p]
        if head == FREE and pos:      # what stands on it now comes off it
            return [tuple(Literal("on", (a[1], e[1]), True) for a in sorted(state)
                          if a[0] == "on" and len(a) == 3 and a[2] == e[1])]
        if head == ENCLOSED and not pos:  # the closed containers it is in now get opened
            return [tuple(Literal("closed", (a[2],), True) for a in sorted(state)
                          if a[0] == "in" and len(a) == 3 and a[1] == e[1] and ("closed", a[2]) in state)]
        if head in fluents and head not in (FREE, ENCLOSED):
            return [(Literal(head, tuple(e[1:]), not pos),)]
        return [()] if holds(e, state) == pos else []

    out = []
    for conj in go(pre, True):
        conj = tuple(dict.fromkeys(conj))
        if conj not in out:
            out.append(conj)
    return out


def make_executable(task: PlanningTask, steps: Sequence[Step], goal: Sequence[Sequence], *, oam=None,
                    mode: str = "optimal", gap_time_limit: float = 10.0, completion_time_limit: float = 60.0,
                    max_gaps: int = 10, max_actions: int = 100, prune: bool = True) -> ActionListResult:
    """The list ``steps`` (PDDL names) made executable on ``task`` (built from its scene) as the
    module says; ``goal``: the DNF the completion plans for (names as ``task.check_goal`` takes them)."""
    from affplan_ros.core.planning.planner import plan_for_goal

    out = ActionListResult()
    fluents = fluent_predicates(task)
    inv = {v: k for k, v in task.names.items() if k != v}
    state = initial_state(task)

    def plan_from(state: set[Atom], dnf, limit: float):
        # plan_for_goal takes scene names (it maps them to PDDL itself).
        dnf = [tuple(Literal(l.predicate, tuple(inv.get(a, a) for a in l.args), l.negated) for l in c)
               for c in dnf]
        t = time.monotonic()
        try:
            return plan_for_goal(state_to_scene(task, state), dnf, mode=mode, time_limit=limit, prune=prune,
                                 oam=oam, unknown_classes="warn")
        finally:
            out.planner_seconds += time.monotonic() - t
            out.planner_calls += 1

    def run(state: set[Atom], plan: Sequence[Step]) -> set[Atom]:
        for action, args in plan:
            cap = ground_step(task, action, args)[0]
            state = apply_step(task, state, action, *split_actor(cap, args))
        return state

    listed = list(steps)
    if len(listed) > max_actions:
        listed = listed[:max_actions]
    for n, (action, args) in enumerate(listed, 1):
        entry = ListedAction(n, " ".join((action, *args)))
        out.listed.append(entry)
        try:
            cap, _, binding = ground_step(task, action, args)
        except SimulationError as exc:
            entry.reason = f"not an action of the domain: {exc}"
            continue
        pre = substitute(full_condition(cap)[0], binding)
        gap: list[Step] = []
        if not holds(pre, state):
            try:
                goal_dnf = precondition_goal(pre, state, fluents)
            except ValueError as exc:
                entry.reason = f"precondition not planned for: {exc}"
                continue
            if not goal_dnf:
                entry.reason = "its precondition can never hold (a static part is false: an affordance, " \
                               "a capability, a fact no action changes)"
                continue
            if out.gaps >= max_gaps:
                entry.reason = f"its precondition does not hold and the gap bound ({max_gaps}) is reached"
                continue
            out.gaps += 1
            try:
                pr = plan_from(state, goal_dnf, gap_time_limit)
            except Exception as exc:  # noqa: BLE001 - the planner refused the goal: skip, say why, go on
                entry.reason = f"the planner failed on its precondition: {exc}"
                continue
            if not pr.solved:
                entry.reason = f"no plan reaches its precondition ({pr.status}: {(pr.message or '').strip()[:120]})"
                continue
            gap = [(s.action, s.pddl_args) for s in pr.plan]
            try:
                after = run(state, gap)
            except SimulationError as exc:
                entry.reason = f"the gap plan does not apply: {exc}"
                continue
            if not holds(pre, after):
                entry.reason = "the gap plan does not make its precondition true"
                continue
            state = after
        state = apply_step(task, state, action, *split_actor(cap, args))
        entry.kept, entry.inserted = True, [" ".join((a, *x)) for a, x in gap]
        out.steps.extend(gap)
        out.steps.append((action, tuple(args)))
        out.inserted_gap += len(gap)
    out.stop_reason = ("the list is empty" if not steps else
                       f"read the first {max_actions} of {len(steps)} listed actions (the bound)"
                       if len(steps) > max_actions else "every listed action handled")
    if not goal_holds(task, goal, state):
        out.completion_needed = True
        try:
            pr = plan_from(state, goal, completion_time_limit)
        except Exception as exc:  # noqa: BLE001 - reported as the completion's status
            out.completion_status = f"error: {exc}"
            return out
        out.completion_status = str(pr.status)
        if pr.solved:
            tail = [(s.action, s.pddl_args) for s in pr.plan]
            out.steps.extend(tail)
            out.completion = [" ".join((a, *x)) for a, x in tail]
    return out

