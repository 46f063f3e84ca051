"""CoPAL's mid-level repair: rule-based, rules as data, every repair re-validated. No LLM.

A rule (``core/recovery/data/repair_rules.yaml``) matches a violated precondition literal of the failed
step, binds variables from the belief (a small conjunctive query over its atoms, static
affordance facts included), and proposes steps inserted around the failed step or replacing
it. Each proposal is checked with the symbolic plan validator on the belief: the repaired
rest of the plan must be applicable step by step and still reach the goal (when known). The
first proposal that passes wins; rule and variant order is the preference.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Optional, Sequence, Union

import yaml

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.planning.simulate import Atom, initial_state, validate_plan
from affplan_ros.core.recovery.belief import Belief, parse_condition
from affplan_ros.core.recovery.feedback import literal_text, literals_from_sexpr

DATA_DIR = Path(__file__).resolve().parent / "data"

DEFAULT_RULES = DATA_DIR / "repair_rules.yaml"
STEP = "$step"


class RepairRuleError(ConfigError):
    """The rules file is malformed (names the rule and what is wrong)."""


@dataclass(frozen=True)
class Variant:
    where: tuple[Literal, ...]
    steps: tuple[tuple[str, ...], ...]   # each: (action, *args) with ?variables, or ("$step",)


@dataclass(frozen=True)
class RepairRule:
    name: str
    error: str                 # the error class in CoPAL's words ("all hands full")
    description: str
    match: Literal
    where: tuple[Literal, ...]
    variants: tuple[Variant, ...]


def _lits(items: Sequence[str], where: str) -> tuple[Literal, ...]:
    out = []
    for text in items or ():
        try:
            out += literals_from_sexpr(parse_condition(str(text)))
        except ValueError as exc:
            raise RepairRuleError(f"{where}: {text!r} is not a literal: {exc}") from exc
    return tuple(out)


def load_rules(path: Union[str, Path, None] = None, enabled: Optional[Iterable[str]] = None) -> list[RepairRule]:
    """The rules of ``path`` (default: the built-in table); ``enabled``: only these names."""
    path = Path(path) if path else DEFAULT_RULES
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RepairRuleError(f"cannot read repair rules {path}: {exc}") from exc
    rules = []
    for i, d in enumerate(data.get("rules") or []):
        name = str(d.get("name") or f"rule{i}")
        where = f"{path}: rule {name}"
        match = _lits([d.get("match", "")], where)
        if len(match) != 1:
            raise RepairRuleError(f"{where}: `match` must be exactly one literal")
        variants = []
        for v in d.get("variants") or []:
            steps = tuple(tuple(str(s).split()) for s in v.get("steps") or [])
            if not steps:
                raise RepairRuleError(f"{where}: a variant without steps")
            variants.append(Variant(_lits(v.get("where") or [], where), steps))
        if not variants:
            raise RepairRuleError(f"{where}: no variants")
        rules.append(RepairRule(name, str(d.get("error", name)), str(d.get("description", "")), match[0],
                                _lits(d.get("where") or [], where), tuple(variants)))
    if enabled is not None:
        enabled = set(enabled)
        unknown = enabled - {r.name for r in rules}
        if unknown:
            raise RepairRuleError(f"unknown repair rules {sorted(unknown)}; {path} has "
                                  f"{', '.join(r.name for r in rules)}")
        rules = [r for r in rules if r.name in enabled]
    return rules


# -- matching ------------------------------------------------------------------------------

def _unify(pattern: Literal, lit: Literal, binding: Mapping[str, str]) -> Optional[dict[str, str]]:
    if pattern.predicate != lit.predicate or pattern.negated != lit.negated or len(pattern.args) != len(lit.args):
        return None
    out = dict(binding)
    for p, a in zip(pattern.args, lit.args):
        if p.startswith("?"):
            if out.setdefault(p, a) != a:
                return None
        elif p != a:
            return None
    return out


def solutions(query: Sequence[Literal], state: set[Atom], binding: Mapping[str, str],
              limit: int = 50) -> Iterator[dict[str, str]]:
    """Bindings under which every literal of ``query`` holds in ``state`` (positive literals
    first bind, then negated ones and equalities filter). At most ``limit``."""
    pos = [q for q in query if not q.negated and q.predicate != "="]
    rest = [q for q in query if q.negated or q.predicate == "="]
    by_pred: dict[str, list[Atom]] = {}
    for a in state:
        by_pred.setdefault(a[0], []).append(a)
    count = [0]

    def check(b: dict[str, str]) -> bool:
        for q in rest:
            args = [b.get(x, x) for x in q.args]
            if any(x.startswith("?") for x in args):
                return False  # an unbound variable in a filter: the rule is written wrong
            truth = args[0] == args[1] if q.predicate == "=" else (q.predicate, *args) in state
            if truth == q.negated:
                return False
        return True

    def go(i: int, b: dict[str, str]) -> Iterator[dict[str, str]]:
        if count[0] >= limit:
            return
        if i == len(pos):
            if check(b):
                count[0] += 1
                yield b
            return
        q = pos[i]
        for atom in sorted(by_pred.get(q.predicate, ())):
            nb = _unify(q, Literal(atom[0], atom[1:]), b)
            if nb is not None:
                yield from go(i + 1, nb)

    yield from go(0, dict(binding))


# -- repairing -----------------------------------------------------------------------------

@dataclass
class RepairResult:
    repaired: bool
    rule: str = ""
    error: str = ""                                       # the rule's error class
    inserted: list[PlanStep] = field(default_factory=list)  # the proposal, failed step included
    plan: list[PlanStep] = field(default_factory=list)      # the repaired rest of the plan
    tried: int = 0                                        # proposals validated
    message: str = ""


def step_binding(belief_task, step: PlanStep) -> dict[str, str]:
    cap = belief_task.capabilities.get(step.action)
    b = {}
    if cap is not None:
        if step.agent:
            b["?step_actor"] = step.agent
        for p, a in zip(cap.parameters, step.args):
            b[f"?step_{p.name}"] = a
    return b


@dataclass
class MidLevelRepairer:
    """Applies the rule table; ``max_proposals`` bounds validator calls per failure."""

    rules: list[RepairRule] = field(default_factory=load_rules)
    max_proposals: int = 40

    def repair(self, belief: Belief, failed: PlanStep, rest: Sequence[PlanStep],
               violated: Sequence[Literal], goal=None) -> RepairResult:
        """Repair the failed step (``rest``: the steps after it) from the belief, which must
        already hold what the failure observed. ``goal``: DNF to keep reaching (None: only
        check that every step is applicable)."""
        out = RepairResult(False)
        if not violated:
            out.message = "the failure names no violated precondition; no rule applies"
            return out
        task = belief.task()
        state = initial_state(task)
        check_goal = goal if goal else [[]]
        base = step_binding(task, failed)
        matched = []
        for rule in self.rules:
            for lit in violated:
                b = _unify(rule.match, lit, base)
                if b is None:
                    continue
                matched.append(rule.name)
                for b0 in solutions(rule.where, state, b, self.max_proposals):
                    for var in rule.variants:
                        for b1 in solutions(var.where, state, b0, self.max_proposals):
                            if out.tried >= self.max_proposals:
                                out.message = f"no valid repair among {out.tried} proposals (bound reached)"
                                return out
                            proposal = self._instantiate(var.steps, b1, failed, task)
                            if proposal is None:
                                continue
                            plan = proposal + list(rest)
                            out.tried += 1
                            ok, _cost, _msg = validate_plan(task, check_goal, [
                                (s.action, tuple(task._map(a) for a in s.pddl_args)) for s in plan])
                            if ok:
                                out.repaired, out.rule, out.error = True, rule.name, rule.error
                                out.inserted, out.plan = proposal, plan
                                out.message = (f"mid-level repair ({rule.error}): "
                                               + "; ".join(map(str, proposal)))
                                return out
        violated_text = " ".join(literal_text(l) for l in violated)
        out.message = (f"no rule matches {violated_text}" if not matched else
                       f"rules {', '.join(dict.fromkeys(matched))} match {violated_text} but none of their "
                       f"{out.tried} proposals passes the plan validator")
        return out

    @staticmethod
    def _instantiate(templates, b: Mapping[str, str], failed: PlanStep, task) -> Optional[list[PlanStep]]:
        steps = []
        has_step = any(t == (STEP,) for t in templates)
        for t in templates:
            if t == (STEP,):
                steps.append(failed)
                continue
            args = [b.get(x, x) for x in t[1:]]
            if any(a.startswith("?") for a in args) or t[0] not in task.capabilities:
                return None
            try:
                agent, params = task.step_parts(t[0], args)
            except ValueError:
                return None
            steps.append(PlanStep(t[0], tuple(params), agent))
        if not has_step and steps == [failed]:
            return None
        return steps
