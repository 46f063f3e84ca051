"""A simulated world with hidden rules, and an executor on it, for the recovery scenarios.

:class:`ScenarioWorld` is the :class:`~affplan_ros.sim.world.SimWorld` of a scenario's ground
truth, with what the robot's domain lacks: the full capabilities (preconditions the robot's
model misses are still enforced), world-only rules that may use hidden object properties,
and the ground truth of IALP's grounding predicates (objects out of reach, too big to grasp,
undetected, supports without room). A failed step reports a structured observation
(:mod:`affplan_ros.core.recovery.feedback`): what failed, why in words, a suggestion, and in
``detail`` the violated literals and the observed facts.

:class:`ScenarioExecutor` is the simulated executor on such a world; it also answers what
recovery may ask the environment: its objects, their relations, the object properties it
knows (LASP), and the grounding predicates (IALP).
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.simulate import state_to_scene, substitute
from affplan_ros.core.planning.task import build_task
from affplan_ros.core.recovery.belief import parse_condition
from affplan_ros.core.recovery.feedback import format_detail
from affplan_ros.core.recovery.grounding import (
    GroundingAnswer,
    GroundingPredicate,
    load_grounding,
)
from affplan_ros.core.recovery.knowledge import EnvironmentProperty
from affplan_ros.core.recovery.lasp import object_scene
from affplan_ros.core.recovery.quantities import comparison_relations, compile_condition
from affplan_ros.sim.executor import SimulatedExecutor, always_help
from affplan_ros.sim.scenario import Scenario
from affplan_ros.sim.world import SimWorld

# How to fix a violated literal, per predicate (the "how" of the feedback). {0}, {1}: its args.
_SUGGEST = {
    (True, "hand_occupied"): "put down what {0} holds first",
    (False, "inhand"): "pick up {0} first",
    (True, "closed"): "open {0} first",
    (False, "opened"): "open {0} first",
    (False, "closed"): "close {0} first",
    (False, "at"): "go to {1} first",
    (False, "on"): "put {0} on {1} first",
    (False, "in"): "put {0} into {1} first",
}
_RELATED = ("on", "in", "liquid_in", "closed", "opened")


class ScenarioWorld(SimWorld):
    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        task = build_task(scenario.truth, oam=scenario.oam, capabilities=scenario.capabilities,
                          unknown_classes="warn")
        super().__init__(scenario.truth, task)
        for prop in scenario.properties.values():
            self.state |= {(prop.name, o) for o in prop.true}
        # Hidden rules that compare static quantities hold here as static facts (quantities.py).
        self._rules = []
        for r in scenario.world_rules():
            expr, comps = compile_condition(parse_condition(r.condition))
            if comps:
                for rel in comparison_relations(comps, scenario.truth, scenario.quantities):
                    self.state.add((rel.predicate, *(self.task._map(a) for a in rel.args)))
            self._rules.append((r, expr))
        self._initial = frozenset(self.state)
        self._grounding = load_grounding()

    # -- ground truth of the grounding predicates -----------------------------------------
    def grounding_truth(self, predicate: str, obj: str) -> bool:
        return obj not in self.scenario.grounding_false.get(predicate, {})

    def grounding_reason(self, predicate: str, obj: str) -> str:
        return self.scenario.grounding_false.get(predicate, {}).get(obj, "")

    # -- checks ----------------------------------------------------------------------------
    def _binding(self, action: str, agent: str, args: Sequence[str]) -> dict:
        cap = self.task.capabilities[action]
        b = {f"?{p.name}": self.task._map(a) for p, a in zip(cap.parameters, args)}
        if agent:
            b["?actor"] = self.task._map(agent)
        return b

    def _check(self, action: str, agent: str, args: Sequence[str]):
        problem = super()._check(action, agent, args)
        if problem is not None and problem[0] == "false":
            # A precondition the robot's model lacks but this world's capabilities keep: say it
            # in the scenario's words when it gives them.
            binding = self._binding(action, agent, args)
            for rule in self.scenario.hidden:
                if rule.action == action and rule.in_domain:
                    ground = tuple(substitute(parse_condition(rule.condition), binding))
                    if any(_as_expr(n, a) == ground for n, a in problem[1]):
                        return ("hidden", rule, problem[1], binding)
        if problem is not None:
            return problem
        binding = self._binding(action, agent, args)
        for gp in self._grounding.values():
            guard = gp.guards.get(action)
            if guard is None:
                continue
            atom = substitute(parse_condition(guard), binding)
            if not self.grounding_truth(atom[0], atom[1]):
                return ("physical", gp, tuple(atom))
        for rule, cond in self._rules:
            if rule.action != action:
                continue
            false = list(self._false_literals(substitute(cond, binding)))
            if false:
                return ("hidden", rule, false, binding)
        return None

    # -- failures ----------------------------------------------------------------------------
    def _measured(self, text: str) -> str:
        """``{mass melon0}`` in a rule's words -> the world's value (``4.5 kg``)."""
        q = self.scenario.quantities

        def value(m) -> str:
            obj = self.scenario.truth.objects.get(m.group(2))
            x = None if q is None or obj is None else q.value(m.group(1), m.group(2), obj.class_name)
            return m.group(0) if x is None else f"{x:g} {q.defs[m.group(1)].unit}"

        return _MEASURE.sub(value, text)

    def _observed(self, violated: Iterable[tuple[bool, tuple]]) -> list[Literal]:
        """The truth of each violated literal, and what is related (placements, doors)."""
        out: list[Literal] = []
        for negated, atom in violated:
            if atom[0] == "=":
                continue
            out.append(Literal(atom[0], tuple(atom[1:]), negated=not negated))
            for x in atom[1:]:
                for a in sorted(self.state):
                    if (a[0] in _RELATED and a[1] == x) or (a[0] == "inhand" and x in a[1:]):
                        lit = Literal(a[0], tuple(a[1:]))
                        if lit not in out:
                            out.append(lit)
        return out

    def _held(self, agent: str) -> list[str]:
        return sorted(a[1] for a in self.state if a[0] == "inhand" and a[2] == agent)

    def _why(self, violated) -> str:
        parts = []
        for negated, atom in violated:
            text = self.describe(atom, negated)
            if atom[0] == "hand_occupied":
                held = self._held(atom[1])
                if held:
                    text += f" ({atom[1]} holds {', '.join(held)})"
            if atom[0] == "inhand" and not negated:
                where = [f"it is {a[0]} {a[2]}" for a in sorted(self.state) if a[0] in ("on", "in") and a[1] == atom[1]]
                if where:
                    text += f" ({'; '.join(where)})"
            parts.append(text)
        return "; ".join(parts)

    def _how(self, violated) -> str:
        for negated, atom in violated:
            tmpl = _SUGGEST.get((negated, atom[0]))
            if tmpl:
                args = list(atom[1:])
                if atom[0] == "hand_occupied":
                    held = self._held(atom[1])
                    return f"put down {held[0]} first" if held else tmpl.format(*args)
                return tmpl.format(*args)
        return ""

    def _failure(self, text: str, problem) -> Failure:
        kind = problem[0]
        if kind == "false":
            violated = problem[1]
            return Failure(FailureCode.PRECONDITION, text, f"{text} failed", self._why(violated),
                           self._how(violated), format_detail(_lits(violated), self._observed(violated)),
                           recoverable=True)
        if kind == "physical":
            gp, atom = problem[1], problem[2]
            reason = self.grounding_reason(atom[0], atom[1])
            why = gp.failure_text(*atom[1:]) + (f": {reason}" if reason else "")
            return Failure(FailureCode.PHYSICAL, text, f"{text} failed", why,
                           f"use another object instead of {atom[1]}, or ask a person for help",
                           format_detail([Literal(atom[0], atom[1:])], [Literal(atom[0], atom[1:], True)]))
        if kind == "hidden":
            rule, violated, binding = problem[1], problem[2], problem[3]
            fill = lambda s: self._measured(_fill(s, binding))  # noqa: E731
            why = fill(rule.why) if rule.why else self._why(violated)
            how = fill(rule.suggestion) if rule.suggestion else self._how(violated)
            return Failure(FailureCode.PRECONDITION, text, f"{text} failed", why, how,
                           format_detail(_lits(violated), self._observed(violated)), recoverable=rule.in_domain)
        return super()._failure(text, problem)


_MEASURE = re.compile(r"\{([a-z][a-z0-9_]*) ([^{}\s]+)\}")


def _as_expr(negated: bool, atom: tuple) -> tuple:
    return ("not", tuple(atom)) if negated else tuple(atom)


def _lits(violated) -> list[Literal]:
    return [Literal(a[0], tuple(a[1:]), negated) for negated, a in violated]


def _fill(text: str, binding: dict) -> str:
    for var in sorted(binding, key=len, reverse=True):
        text = text.replace(var, binding[var])
    return text


class ScenarioExecutor(SimulatedExecutor):
    """The simulated executor on a :class:`ScenarioWorld`; also the recovery environment and
    the grounding provider of the scenario."""

    def __init__(self, scenario: Scenario, *, ask_human=always_help, human_timeout_s: float = 30.0):
        super().__init__(scenario.truth, oam=scenario.oam, ask_human=ask_human, human_timeout_s=human_timeout_s)
        self.scenario = scenario
        self.world = ScenarioWorld(scenario)
        self.task = self.world.task
        self._affs = {n: self.task.signature.objects.get(self.task._map(n), frozenset())
                      for n in scenario.truth.objects}
        self._costs = {a.name: float(a.cost) for a in self.task.agents}

    # -- RecoveryEnvironment ------------------------------------------------------------------
    def known_objects(self) -> list[tuple[str, str]]:
        return [(n, o.class_name) for n, o in sorted(self.scenario.truth.objects.items()) if not o.is_agent]

    def object_scene(self, names: Sequence[str]) -> Scene:
        """The objects as they are now, with what holds them and the locations they are at."""
        return object_scene(state_to_scene(self.task, self.world.state), names)

    def properties(self) -> dict[str, EnvironmentProperty]:
        return {p.name: EnvironmentProperty(p.name, p.description, p.true) for p in self.scenario.properties.values()}

    # -- GroundingProvider --------------------------------------------------------------------
    def ground(self, predicate: GroundingPredicate, candidates) -> GroundingAnswer:
        return GroundingAnswer(predicate.name, True,
                               frozenset(tuple(c) for c in candidates
                                         if self.world.grounding_truth(predicate.name, c[0])))

    def goal_reached(self, dnf=None) -> bool:
        return super().goal_reached(dnf if dnf is not None else self.scenario.goal_dnf)

    def state_atoms(self) -> set:
        return set(self.world.state)
