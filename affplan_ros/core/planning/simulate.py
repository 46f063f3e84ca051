"""Symbolic simulation: apply a plan's effects to a task's initial state, check a DNF goal.

Success is decided as in the AutoGPT+P evaluation: the goal is in DNF (a list of
conjunctions of literals); the plan succeeds if in the final state some conjunction has all
its positive literals true and none of its negated literals true.
Literals are :class:`affplan_ros.core.goals.formula.Literal` (predicate, args, negated).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional, Sequence

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.goals.sexpr import parse_sexprs
from affplan_ros.core.knowledge.capabilities import split_actor
from affplan_ros.core.model.scene import Location, Relation, Scene
from affplan_ros.core.planning.derived import ENCLOSED, FREE, LOOSE, NOT_ON
from affplan_ros.core.planning.encoding import PDDL_CONFIG
from affplan_ros.core.planning.task import PlanningTask

Atom = tuple[str, ...]  # (predicate, arg, ...)


class SimulationError(AffplanError, ValueError):
    """A plan step is not applicable (precondition false) or unknown."""


@dataclass
class SimulationResult:
    state: frozenset[Atom]
    success: bool
    satisfied_disjunct: int | None  # index of the first satisfied conjunction


def initial_state(task: PlanningTask) -> set[Atom]:
    """The task's initial facts as atoms (a new set each call; parsed once per task: a home of
    a thousand objects has tens of thousands of them)."""
    cached = task.__dict__.get("_initial_atoms")
    if cached is None or cached[0] is not task.init:
        skip = ("(=", f"({NOT_ON} ", f"({LOOSE} ")
        # Numbers and the compiled derived predicates' bookkeeping (derived here) are left out.
        state = {tuple(fact[1:-1].split()) for fact in task.init if not fact.startswith(skip)}
        cached = (task.init, frozenset(state))
        task.__dict__["_initial_atoms"] = cached
    return set(cached[1])


class _Holders:
    """What stands on each thing and what each thing is in, kept beside a state so that the
    derived ``free`` and ``enclosed`` need not scan every fact (validating a plan in a home of a
    thousand objects scanned 60,000 facts per test)."""

    def __init__(self, state: Iterable[Atom]):
        self.on: dict[str, int] = {}
        self.inside: dict[str, set[str]] = {}
        self.update(state, ())

    def update(self, adds: Iterable[Atom], dels: Iterable[Atom]) -> None:
        for a in dels:
            if len(a) == 3 and a[0] == "on":
                self.on[a[2]] = self.on.get(a[2], 0) - 1
            elif len(a) == 3 and a[0] == "in":
                self.inside.get(a[1], set()).discard(a[2])
        for a in adds:
            if len(a) == 3 and a[0] == "on":
                self.on[a[2]] = self.on.get(a[2], 0) + 1
            elif len(a) == 3 and a[0] == "in":
                self.inside.setdefault(a[1], set()).add(a[2])


def substitute(expr, binding):
    if isinstance(expr, str):
        return binding.get(expr, expr)
    return tuple(substitute(e, binding) for e in expr)


def holds(expr, state: set[Atom], holders: Optional[_Holders] = None) -> bool:
    """Whether ``expr`` holds in ``state``; ``holders``: the state's index, if kept."""
    head = expr[0]
    if head == "and":
        return all(holds(e, state, holders) for e in expr[1:])
    if head == "or":
        return any(holds(e, state, holders) for e in expr[1:])
    if head == "not":
        return not holds(expr[1], state, holders)
    if head == "=":
        return expr[1] == expr[2]
    # Derived predicates (compiled into fluents for the planner only, derived.py).
    if head == FREE:  # nothing stands on it
        if holders is not None:
            return holders.on.get(expr[1], 0) <= 0
        return not any(a[0] == "on" and len(a) == 3 and a[2] == expr[1] for a in state)
    if head == ENCLOSED:  # inside a closed container
        if holders is not None:
            return any(("closed", c) in state for c in holders.inside.get(expr[1], ()))
        return any(a[0] == "in" and len(a) == 3 and a[1] == expr[1] and ("closed", a[2]) in state for a in state)
    return tuple(expr) in state


def _apply(expr, state: set[Atom], adds: set, dels: set, positive: bool = True) -> None:
    head = expr[0]
    if head == "and":
        for e in expr[1:]:
            _apply(e, state, adds, dels, positive)
    elif head == "not":
        _apply(expr[1], state, adds, dels, not positive)
    elif head in ("increase", "decrease"):
        return
    else:
        (adds if positive else dels).add(tuple(expr))


def apply_step(task: PlanningTask, state: set[Atom], action: str, agent: str,
               args: Sequence[str], check: bool = True) -> set[Atom]:
    cap = task.capabilities.get(action)
    if cap is None:
        raise SimulationError(f"unknown action {action!r}")
    if len(args) != len(cap.parameters):
        raise SimulationError(f"{action} takes {len(cap.parameters)} arguments, got {len(args)}")
    binding = {f"?{p.name}": a for p, a in zip(cap.parameters, args)}
    if not cap.environment:
        binding["?actor"] = agent
    if check:
        (pre,) = parse_sexprs(cap.precondition)
        if not holds(substitute(pre, binding), state):
            raise SimulationError(f"precondition of ({' '.join([action, *([agent] if agent else []), *args])}) "
                                  f"is false")
    (eff,) = parse_sexprs(cap.effect)
    adds, dels = set(), set()
    _apply(substitute(eff, binding), state, adds, dels)
    return (state - dels) | adds  # PDDL semantics: delete first, then add


def goal_satisfied(state: Iterable[Atom], goal: Sequence[Sequence]) -> int | None:
    """Index of the first satisfied conjunction of the DNF goal, or None."""
    state = set(state)
    for i, conj in enumerate(goal):
        if all((((l.predicate, *l.args) in state) != l.negated) for l in conj):
            return i
    return None


def goal_holds(task: PlanningTask, goal: Sequence[Sequence], state: Iterable[Atom] | None = None) -> bool:
    """Whether the DNF ``goal``, in the scene's names, holds in ``state`` (default: the task's
    initial state), its objects named as the task names them (``7up0`` is ``n7up0``)."""
    mapped = [[_Mapped(l, task) for l in conj] for conj in goal]
    return goal_satisfied(initial_state(task) if state is None else state, mapped) is not None


def simulate(task: PlanningTask, plan, goal: Sequence[Sequence] | None = None,
             check: bool = True) -> SimulationResult:
    """Run ``plan`` (PlanSteps) from the task's initial state and judge ``goal``."""
    state = initial_state(task)
    for step in plan:
        state = apply_step(task, state, step.action, step.agent,
                           tuple(task._map(a) for a in step.args), check)
    goal = goal if goal is not None else task.goal or []
    idx = goal_satisfied(state, [[_Mapped(l, task) for l in c] for c in goal])
    return SimulationResult(frozenset(state), idx is not None, idx)


@dataclass(frozen=True)
class _Mapped:
    lit: object
    task: PlanningTask

    @property
    def predicate(self):
        return self.lit.predicate

    @property
    def args(self):
        return self.task._map_args(self.lit.args)

    @property
    def negated(self):
        return self.lit.negated


@lru_cache(maxsize=256)
def full_condition(cap) -> tuple:
    """The parsed precondition of ``cap`` with the guards the generated domain adds
    (the actor's capability, each parameter's affordance), and the parsed effect."""
    aff, can = PDDL_CONFIG["affordance_prefix"], PDDL_CONFIG["capability_prefix"]
    guards = [] if cap.environment else [f"({can}{cap.name} ?actor)"]
    guards += [f"({aff}{p.type} ?{p.name})" for p in cap.parameters
               if p.type not in ("object", "location", "actor")]
    (pre,) = parse_sexprs(f"(and {' '.join(guards)} {cap.precondition})")
    (eff,) = parse_sexprs(cap.effect)
    return pre, eff


def _is_a(task: PlanningTask, obj: str, builtin: str) -> bool:
    t = task.object_types.get(obj)
    seen = set()
    while t is not None and t not in seen:
        if t == builtin:
            return True
        seen.add(t)
        t = task.types.get(t)
    return builtin == "object" and obj in task.object_types


def ground_step(task: PlanningTask, action: str, args: Sequence[str]):
    """``(capability, actor, binding)`` of the step ``(action, *args)`` (PDDL names, the actor
    first unless the capability is the environment's); raises :class:`SimulationError` saying why
    when the step is no ground action of the task (unknown action or object, wrong number of
    arguments, an argument of the wrong built-in type)."""
    cap = task.capabilities.get(action)
    if cap is None:
        raise SimulationError("unknown action")
    if len(args) != len(cap.parameters) + (0 if cap.environment else 1):
        raise SimulationError("wrong number of arguments")
    actor, rest = split_actor(cap, args)
    if not cap.environment and not _is_a(task, actor, "actor"):
        raise SimulationError(f"{actor} is not an actor" if actor in task.object_types else f"unknown object {actor}")
    for p, a in zip(cap.parameters, rest):
        builtin = p.type if p.type in ("location", "actor") else "object"
        if a not in task.object_types:
            raise SimulationError(f"unknown object {a}")
        if not _is_a(task, a, builtin):
            raise SimulationError(f"{a} is not a {builtin}")
    binding = {f"?{p.name}": a for p, a in zip(cap.parameters, rest)}
    if not cap.environment:
        binding["?actor"] = actor
    return cap, actor, binding


def validate_plan(task: PlanningTask, goal: Sequence[Sequence],
                  steps: Sequence[tuple[str, Sequence[str]]]) -> tuple[bool, float | None, str]:
    """Validate a plan of ``(action, (actor, *args))`` steps (PDDL names) on ``task``.

    Equivalent to a PDDL plan validator for the generated domain: each step's action must be
    a capability, its arguments objects of the parameter's built-in type, its full
    precondition (capability and affordance guards included) true in the current state; the
    effects are applied (deletes before adds); the DNF goal must hold at the end. Returns
    (ok, cost, message); cost is the sum of the actors' ``(cost ?a)`` values.
    """
    costs = {}
    for fact in task.init:
        if not fact.startswith("(= (cost "):
            continue
        parts = fact.replace("(", " ").replace(")", " ").split()
        if len(parts) == 4 and parts[0] == "=" and parts[1] == "cost":
            costs[parts[2]] = float(parts[3])
    state = initial_state(task)
    holders = _Holders(state)
    cost = 0.0
    for n, (action, args) in enumerate(steps, 1):
        text = f"step {n} ({action} {' '.join(args)})"
        try:
            cap, actor, binding = ground_step(task, action, args)
        except SimulationError as exc:
            return False, None, f"plan rejected by the validator: {text}: {exc}"
        pre, eff = full_condition(cap)
        if not holds(substitute(pre, binding), state, holders):
            return False, None, f"plan rejected by the validator: {text}: precondition is false"
        adds, dels = set(), set()
        _apply(substitute(eff, binding), state, adds, dels)
        holders.update(adds - state, dels & state - adds)
        # In place: a home of a thousand objects has 240,000 facts, and copying them per step
        # was most of validating a 40-step plan (2 s).
        state -= dels
        state |= adds
        if cap.environment:
            continue  # happens by itself: no actor, no cost
        if actor not in costs:
            return False, None, f"plan rejected by the validator: {text}: {actor} has no cost"
        cost += costs[actor]
    idx = goal_satisfied(state, [[_Mapped(l, task) for l in c] for c in goal])
    if idx is None:
        return False, None, "plan rejected by the validator: the goal does not hold after the plan"
    return True, cost, ""


def state_to_scene(task: PlanningTask, state: Iterable[Atom]) -> Scene:
    """The scene after a simulated plan: relations from the state, locations from ``located``."""
    inv = {v: k for k, v in task.names.items()}
    scene = task.scene.copy()
    keep_preds = {p for p, d in task.predicates.items() if not d.internal}
    scene.relations = sorted((Relation(a[0], tuple(inv.get(x, x) for x in a[1:]))
                              for a in state if a[0] in keep_preds),
                             key=lambda r: (r.predicate, r.args))
    members: dict[str, list[str]] = {}
    for a in state:
        if a[0] == "located":
            members.setdefault(inv.get(a[2], a[2]), []).append(inv.get(a[1], a[1]))
    scene.locations = {n: Location(n, tuple(sorted(members.get(n, [])))) for n in task.scene.locations}
    return scene
