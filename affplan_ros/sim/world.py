"""The simulated robot's world: ground truth that the planner does not see.

Built from a scene; changed only by executed skills. A skill goal is accepted when one of the
PDDL actions it may stand for has its preconditions true in the world (affordances and agent
capabilities included); then that action's effects are applied. Otherwise the failure says
which preconditions were false, in words (what / why / suggestion).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterable, Sequence

from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.encoding import PDDL_CONFIG
from affplan_ros.core.planning.simulate import (
    Atom,
    apply_step,
    full_condition,
    holds,
    initial_state,
    substitute,
)
from affplan_ros.core.planning.task import PlanningTask, build_task

Candidate = tuple[str, str, tuple[str, ...]]  # (pddl action, agent, args)


@dataclass(frozen=True)
class Outcome:
    success: bool
    action: str = ""                   # the PDDL action that was applied
    failure: Failure | None = None


class SimWorld:
    def __init__(self, scene: Scene, task: PlanningTask | None = None):
        self.task = task or build_task(scene)
        self.state: set[Atom] = initial_state(self.task)
        self._initial = frozenset(self.state)
        self.lock = threading.Lock()  # skill servers run concurrently (and the camera reads)
        # Preconditions with the guards the generated domain adds (the actor's capability, each
        # parameter's affordance): the world enforces the same, so a cup cannot be "opened".
        self._preconditions = {name: full_condition(cap)[0] for name, cap in self.task.capabilities.items()}

    # -- queries ---------------------------------------------------------------------------
    def holds(self, predicate: str, *args: str) -> bool:
        return (predicate, *(self.task._map(a) for a in args)) in self.state

    def reset(self) -> None:
        with self.lock:
            self.state = set(self._initial)

    # -- acting ----------------------------------------------------------------------------
    def execute(self, candidates: Sequence[Candidate]) -> Outcome:
        """Apply the first candidate whose preconditions hold; explain the first one otherwise."""
        if not candidates:
            return Outcome(False, failure=Failure(FailureCode.INVALID, "", "the skill goal matches no known action",
                                                  "its fields do not fill any capability of the domain"))
        with self.lock:
            explanations = []
            for action, agent, args in candidates:
                text = f"{action}({', '.join([agent, *args])})"
                problem = self._check(action, agent, args)
                if problem is None:
                    self.state = apply_step(self.task, self.state, action, self.task._map(agent),
                                            tuple(self.task._map(a) for a in args), check=False)
                    self._settle()
                    return Outcome(True, action)
                explanations.append((text, problem))
            text, problem = explanations[0]
            return Outcome(False, failure=self._failure(text, problem))

    def _settle(self) -> None:
        """Let the environment capabilities happen (a sponge lying in water gets wet), until
        none changes the state. Bounded: each ground event can only add facts once."""
        events = [cap for cap in self.task.capabilities.values() if cap.environment]
        for _ in range(1 + sum(len(self._groundings(cap)) for cap in events)):
            before = self.state
            for cap in events:
                for args in self._groundings(cap):
                    binding = {f"?{p.name}": a for p, a in zip(cap.parameters, args)}
                    if holds(substitute(self._preconditions[cap.name], binding), self.state):
                        self.state = apply_step(self.task, self.state, cap.name, "", args, check=False)
            if self.state == before:
                return

    def _groundings(self, cap) -> list[tuple[str, ...]]:
        """Argument tuples of ``cap`` over the objects with each parameter's affordance."""
        from itertools import product
        aff = PDDL_CONFIG["affordance_prefix"]
        domains = []
        for p in cap.parameters:
            if p.type in ("object", "location", "actor"):
                domains.append(sorted(self.task.object_types))
            else:
                domains.append(sorted(a[1] for a in self.state if a[0] == f"{aff}{p.type}"))
        return list(product(*domains))

    def _check(self, action: str, agent: str, args: Sequence[str]):
        cap = self.task.capabilities.get(action)
        if cap is None:
            return ("unknown", action)
        if len(args) != len(cap.parameters):
            return ("arity", len(cap.parameters))
        names = [agent, *args]
        unknown = [n for n in names if self.task._map(n) not in self.task.object_types]
        if unknown:
            return ("missing", unknown)
        binding = {"?actor": self.task._map(agent),
                   **{f"?{p.name}": self.task._map(a) for p, a in zip(cap.parameters, args)}}
        false = list(self._false_literals(substitute(self._preconditions[action], binding)))
        return ("false", false) if false else None

    def _false_literals(self, expr, negated: bool = False) -> Iterable[tuple[bool, tuple]]:
        """The literals that make ``expr`` false (for an ``or``, those of its first branch)."""
        head = expr[0]
        if head == "and" and not negated or head == "or" and negated:
            for e in expr[1:]:
                yield from self._false_literals(e, negated)
        elif head == "or" or head == "and":
            if holds(expr, self.state) != negated:  # the whole expression is true: nothing to blame
                return
            yield from self._false_literals(expr[1], negated)
        elif head == "not":
            yield from self._false_literals(expr[1], not negated)
        elif head == "=":
            if (expr[1] == expr[2]) == negated:
                yield (negated, tuple(expr))
        elif holds(expr, self.state) == negated:  # holds() also derives free and enclosed
            yield (negated, tuple(expr))

    def _failure(self, text: str, problem) -> Failure:
        kind, info = problem
        if kind == "unknown":
            return Failure(FailureCode.INVALID, text, f"{text} failed", f"the robot has no skill {info!r}")
        if kind == "arity":
            return Failure(FailureCode.INVALID, text, f"{text} failed", f"the action takes {info} arguments")
        if kind == "missing":
            return Failure(FailureCode.NOT_FOUND, text, f"{text} failed",
                           f"{', '.join(info)} {'is' if len(info) == 1 else 'are'} not in the world",
                           "explore to find it, or choose another object")
        reasons = [self.describe(atom, negated) for negated, atom in info]
        first_negated, first_atom = info[0]
        hint = (f"make ({' '.join(first_atom)}) false first" if first_negated
                else f"make ({' '.join(first_atom)}) true first")
        return Failure(FailureCode.PRECONDITION, text, f"{text} failed", "; ".join(reasons), hint,
                       detail=" ".join(f"({'not ' if n else ''}{' '.join(a)})" for n, a in info), recoverable=True)

    def describe(self, atom: tuple, negated: bool) -> str:
        """A false precondition in words, from the predicate's description."""
        predicate, args = atom[0], atom[1:]
        aff, can = PDDL_CONFIG["affordance_prefix"], PDDL_CONFIG["capability_prefix"]
        if predicate == "=":
            sentence = f"{args[0]} is {args[1]}"
        elif predicate.startswith(aff):
            sentence = f"{args[0]} affords {predicate[len(aff):]}"
        elif predicate.startswith(can):
            sentence = f"{args[0]} can {predicate[len(can):]}"
        else:
            definition = self.task.predicates.get(predicate)
            sentence = f"({predicate} {' '.join(args)})"
            if definition is not None and definition.description:
                sentence = definition.description
                if definition.internal and "(" in sentence:
                    # Bookkeeping predicates carry their meaning in parentheses, after a
                    # warning meant for the LLM.
                    sentence = sentence[sentence.index("(") + 1:sentence.rindex(")")]
                for (var, _type), value in zip(definition.params, args):
                    sentence = sentence.replace(f"?{var}", value)
        # A negated precondition fails because the sentence is true, and vice versa.
        return sentence if negated else f"it is not the case that {sentence}"
