"""Syntax and typing checks of an LLM goal against a :class:`Signature`.

Each problem is a :class:`GoalIssue` with a distinct ``kind`` and a message written
for the LLM: it names the offending expression, says what was expected and suggests
a fix (close names, the predicate's parameter types, objects that fit).  The
self-correction loop feeds these messages back verbatim, so precision here is what
makes the LLM converge in few rounds.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from affplan_ros.core.goals.errors import GoalError, GoalErrorKind
from affplan_ros.core.goals.extraction import extract_goal_text
from affplan_ros.core.goals.formula import DNF, Goal, Literal, build_goal, literals, render, to_dnf
from affplan_ros.core.goals.sexpr import parse_sexprs
from affplan_ros.core.model.signature import Signature


class IssueKind:
    """Every distinct error kind the checks report (superset of :class:`GoalErrorKind`)."""

    NO_GOAL = GoalErrorKind.NO_GOAL
    UNBALANCED_PARENTHESES = GoalErrorKind.UNBALANCED_PARENTHESES
    EMPTY_GOAL = GoalErrorKind.EMPTY_GOAL
    UNSUPPORTED_CONSTRUCT = GoalErrorKind.UNSUPPORTED_CONSTRUCT
    MALFORMED = GoalErrorKind.MALFORMED
    TYPED_ARGUMENT = GoalErrorKind.TYPED_ARGUMENT
    TOO_COMPLEX = GoalErrorKind.TOO_COMPLEX
    UNKNOWN_PREDICATE = "unknown_predicate"
    UNKNOWN_OBJECT = "unknown_object"
    WRONG_ARITY = "wrong_arity"
    WRONG_TYPE = "wrong_type"
    VARIABLE = "variable"
    FORBIDDEN_PREDICATE = "forbidden_predicate"
    TOO_MANY_PREDICATES = "too_many_predicates"


@dataclass(frozen=True)
class GoalIssue:
    kind: str
    message: str


@dataclass
class SyntaxCheckResult:
    """Outcome of :func:`check_goal_text`; ``goal``/``dnf`` are set when it parsed."""

    answer: str
    goal_text: str | None = None
    goal: Goal | None = None
    dnf: DNF | None = None
    issues: list[GoalIssue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues and self.goal is not None

    def feedback(self) -> str:
        """All issues as one message, numbered when there are several."""
        if len(self.issues) == 1:
            return self.issues[0].message
        return "\n".join(f"{i}. {issue.message}" for i, issue in enumerate(self.issues, 1))


# Upper bound on listed alternatives in one message: long lists drown the actual error.
_MAX_LISTED = 12


def _fmt_list(names: Iterable[str], limit: int = _MAX_LISTED) -> str:
    names = sorted(names)
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", ... ({len(names) - limit} more)"
    return ", ".join(names)


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Close names for ``name``: case-insensitive fuzzy matches and ``name`` + index.

    ``apple`` → ``apple0``: LLMs often write the class instead of the instance, which
    pure edit distance ranks poorly when there are many objects.
    """
    cands = list(candidates)
    low = {c.lower(): c for c in cands}
    out: list[str] = []
    key = name.lower()
    if key in low:
        out.append(low[key])
    prefix = [c for c in cands if c.lower().rstrip("0123456789") == key.rstrip("0123456789") and c not in out]
    out.extend(sorted(prefix)[:n])
    for m in difflib.get_close_matches(key, list(low), n=n, cutoff=0.6):
        if low[m] not in out:
            out.append(low[m])
    return out[:n]


def _did_you_mean(options: list[str]) -> str:
    if not options:
        return ""
    if len(options) == 1:
        return f" Did you mean '{options[0]}'?"
    return " Did you mean " + ", ".join(f"'{o}'" for o in options[:-1]) + f" or '{options[-1]}'?"


def signature_text(signature: Signature, predicate: str) -> str:
    """``(on ?a1 - carry ?a2 - support)``: how the expected parameters are shown."""
    params = signature.predicates[predicate]
    return "(" + " ".join([predicate] + [f"?a{i} - {t}" for i, t in enumerate(params, 1)]) + ")"


def check_literal(lit: Literal, signature: Signature, forbidden: Iterable[str] = ()) -> list[GoalIssue]:
    """Issues of one literal: predicate, arity, variables, objects, argument types."""
    issues: list[GoalIssue] = []
    shown = lit.atom_text()
    if lit.predicate in set(forbidden):
        allowed = [p for p in signature.predicates if p not in set(forbidden)]
        return [GoalIssue(
            IssueKind.FORBIDDEN_PREDICATE,
            f"The predicate '{lit.predicate}' in {shown} must not be used in goals. "
            f"Use one of: {_fmt_list(allowed)}.",
        )]
    if lit.predicate not in signature.predicates:
        if lit.predicate.lower() in signature.objects or lit.predicate in signature.objects:
            hint = f" '{lit.predicate}' is an object; a predicate must come first, e.g. (on {lit.predicate} table0)."
        else:
            hint = _did_you_mean(suggest(lit.predicate, signature.predicates))
        return [GoalIssue(
            IssueKind.UNKNOWN_PREDICATE,
            f"The goal uses the predicate '{lit.predicate}' in {shown}, which does not exist in the domain."
            f"{hint} Available predicates: {_fmt_list(signature.predicates, 40)}.",
        )]
    params = signature.predicates[lit.predicate]
    desc = signature.descriptions.get(lit.predicate)
    if len(lit.args) != len(params):
        return [GoalIssue(
            IssueKind.WRONG_ARITY,
            f"The predicate '{lit.predicate}' takes {len(params)} argument{'s' if len(params) != 1 else ''} "
            f"{signature_text(signature, lit.predicate)}, but {shown} gives {len(lit.args)}."
            + (f" ({lit.predicate}: {desc})" if desc else ""),
        )]
    for i, (arg, ptype) in enumerate(zip(lit.args, params), 1):
        if arg.startswith("?"):
            fitting = [o for o, ts in signature.objects.items() if ptype in ts]
            issues.append(GoalIssue(
                IssueKind.VARIABLE,
                f"The goal contains the variable '{arg}' in {shown}. Goals must name concrete objects "
                f"from the scene, without '?'. Replace '{arg}' by an object of type '{ptype}' "
                f"({_fmt_list(fitting) or 'none in the scene'}); a choice between objects is written with 'or'.",
            ))
            continue
        if arg not in signature.objects:
            issues.append(GoalIssue(
                IssueKind.UNKNOWN_OBJECT,
                f"The goal uses the object '{arg}' in {shown}, which does not exist in the scene."
                f"{_did_you_mean(suggest(arg, signature.objects))}"
                f" Objects of type '{ptype}' in the scene: "
                f"{_fmt_list(o for o, ts in signature.objects.items() if ptype in ts) or 'none'}.",
            ))
            continue
        if ptype not in signature.objects[arg]:
            fitting = [o for o, ts in signature.objects.items() if ptype in ts]
            issues.append(GoalIssue(
                IssueKind.WRONG_TYPE,
                f"In {shown}, argument {i} of '{lit.predicate}' must be of type '{ptype}' "
                f"{signature_text(signature, lit.predicate)}, but '{arg}' does not have '{ptype}' "
                f"(it is: {_fmt_list(signature.objects[arg]) or 'untyped'}). "
                f"Objects with '{ptype}': {_fmt_list(fitting) or 'none in the scene'}.",
            ))
    return issues


def check_goal(goal: Goal, signature: Signature, *, forbidden_predicates: Iterable[str] = (),
               max_predicates: int | None = None) -> list[GoalIssue]:
    """Typing issues of a parsed goal (duplicates, e.g. the same unknown object twice, merged)."""
    forbidden = set(forbidden_predicates)
    lits = literals(goal)
    issues: list[GoalIssue] = []
    seen: set[GoalIssue] = set()
    for lit in lits:
        for issue in check_literal(lit, signature, forbidden):
            if issue not in seen:
                seen.add(issue)
                issues.append(issue)
    if max_predicates is not None:
        distinct = list(dict.fromkeys(l.positive() for l in lits))
        if len(distinct) > max_predicates:
            issues.append(GoalIssue(
                IssueKind.TOO_MANY_PREDICATES,
                f"The goal has {len(distinct)} predicates but at most {max_predicates} are allowed here. "
                "Keep only the most important part of the task.",
            ))
    return issues


def _structural(answer: str, predicates: Sequence[str]) -> tuple[str | None, Goal | None, GoalIssue | None]:
    """Extract + parse + build; the first structural failure as an issue."""
    try:
        text = extract_goal_text(answer, predicates)
    except GoalError as e:
        return None, None, GoalIssue(e.kind, e.message)
    try:
        items = parse_sexprs(text)
        if not items:
            raise GoalError(GoalErrorKind.EMPTY_GOAL,
                            "The goal is empty. Write at least one predicate, e.g. (:goal (and (on cup0 table0))).")
        if len(items) > 1:
            raise GoalError(GoalErrorKind.MALFORMED,
                            f"`{text.strip()}` is not one expression; wrap the goal in (and ...) or (or ...).")
        return text, build_goal(items[0]), None
    except GoalError as e:
        return text, None, GoalIssue(e.kind, e.message)


def check_goal_text(answer: str, signature: Signature, *, forbidden_predicates: Iterable[str] = (),
                    max_predicates: int | None = None, max_disjuncts: int = 4096) -> SyntaxCheckResult:
    """Extract the goal from an LLM answer and check it; never raises for bad input."""
    result = SyntaxCheckResult(answer=answer)
    text, goal, issue = _structural(answer, list(signature.predicates))
    result.goal_text = text
    if issue is not None:
        result.issues.append(issue)
        return result
    assert goal is not None
    result.goal = goal
    result.issues.extend(check_goal(goal, signature, forbidden_predicates=forbidden_predicates,
                                    max_predicates=max_predicates))
    if not result.issues:
        try:
            result.dnf = to_dnf(goal, max_disjuncts=max_disjuncts)
        except GoalError as e:
            result.issues.append(GoalIssue(e.kind, e.message))
    return result


__all__ = [
    "GoalIssue",
    "IssueKind",
    "SyntaxCheckResult",
    "check_goal",
    "check_goal_text",
    "check_literal",
    "render",
    "signature_text",
    "suggest",
]
