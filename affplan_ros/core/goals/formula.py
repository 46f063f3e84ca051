"""PDDL goals written by an LLM: the goal AST, DNF, rendering (extraction from text: extraction.py).

The LLM answers in free text (prose, markdown fences, ``(:goal ...)`` wrappers, and
in the original AutoGPT+P data even a bare ``and (on spoon0 table0)``).  This module
turns such text into a small AST (and/or/not over :class:`Literal`), converts it to
disjunctive normal form (the semantic check and the planner work per disjunct), and
renders goals back to PDDL.

Every failure raises :class:`GoalError` with a machine-readable ``kind`` and an
actionable message, because the message is fed back to the LLM verbatim.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

from affplan_ros.core.goals.errors import GoalError, GoalErrorKind
from affplan_ros.core.goals.sexpr import SExpr, render_sexpr

# ---------------------------------------------------------------------------
# Goal AST


@dataclass(frozen=True)
class Literal:
    """A (possibly negated) ground atom such as ``(on cup0 table0)``."""

    predicate: str
    args: tuple[str, ...] = ()
    negated: bool = False

    def positive(self) -> "Literal":
        return Literal(self.predicate, self.args, False)

    def negate(self) -> "Literal":
        return Literal(self.predicate, self.args, not self.negated)

    def atom_text(self) -> str:
        return "(" + " ".join((self.predicate, *self.args)) + ")"

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class And:
    children: tuple["Goal", ...]


@dataclass(frozen=True)
class Or:
    children: tuple["Goal", ...]


@dataclass(frozen=True)
class Not:
    child: "Goal"


Goal = Union[Literal, And, Or, Not]
Conjunction = tuple[Literal, ...]
DNF = list[Conjunction]

CONNECTIVES = ("and", "or", "not")
# Constructs the planner does not accept in goals (no quantifiers/ADL-implications/
# numeric fluents/equality): each gets an explicit message instead of "unknown predicate".
_UNSUPPORTED_ADVICE = {
    "exists": "Name the concrete objects instead; a choice between objects is written with 'or', "
              "e.g. (or (inhand apple0 human0) (inhand banana0 human0)).",
    "forall": "List every object explicitly inside 'and', e.g. (and (in nail0 box0) (in nail1 box0)).",
    "imply": "Rewrite (imply A B) as (or (not A) B), or state only the desired result.",
    "implies": "Rewrite (implies A B) as (or (not A) B), or state only the desired result.",
    "when": "Conditional goals are not supported; state only the desired result.",
    "if": "Conditional goals are not supported; state only the desired result.",
    "preference": "Preferences are not supported; state only the required result.",
    "at-end": "Temporal goals are not supported.",
    "at end": "Temporal goals are not supported.",
    "always": "Temporal goals are not supported.",
    "sometime": "Temporal goals are not supported.",
    "either": "Types are not written in goals; use object names only.",
}
_NUMERIC_HEADS = {"=", "<", ">", "<=", ">=", "increase", "decrease", "assign", "+", "-", "*", "/",
                  "scale-up", "scale-down", "total-cost"}


def _unsupported(head: str, expr: SExpr) -> GoalError:
    text = render_sexpr(expr)
    if head in _NUMERIC_HEADS:
        return GoalError(
            GoalErrorKind.UNSUPPORTED_CONSTRUCT,
            f"The goal uses '{head}' in `{text}`: numeric conditions, costs and equality are not "
            "supported in goals. Use only and, or, not and the domain's predicates with objects "
            "from the scene.",
        )
    return GoalError(
        GoalErrorKind.UNSUPPORTED_CONSTRUCT,
        f"The goal uses '{head}' in `{text}`, which is not supported. "
        + _UNSUPPORTED_ADVICE.get(head, "")
        + " Use only and, or, not and the domain's predicates with objects from the scene.",
    )


def is_unsupported_head(head: str) -> bool:
    return head.lower() in _UNSUPPORTED_ADVICE or head.lower() in _NUMERIC_HEADS


MAX_GOAL_DEPTH = 64  # nesting of a goal; deeper ones are refused before the recursive passes overflow


def _depth(expr: SExpr) -> int:
    deepest, todo = 0, [(expr, 1)]
    while todo:
        e, d = todo.pop()
        if not isinstance(e, str):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in e)
    return deepest


def build_goal(expr: SExpr) -> Goal:
    """Turn an s-expression into a goal AST.

    Keywords are case-insensitive (LLMs write ``OR``); predicate and object names are kept
    as written and checked against the signature later.  ``(not <atom>)`` becomes a
    negated :class:`Literal` directly so that the AST has one spelling per goal.
    """
    depth = _depth(expr)
    if depth > MAX_GOAL_DEPTH:
        raise GoalError(
            GoalErrorKind.TOO_COMPLEX,
            f"The goal nests {depth} levels of parentheses (at most {MAX_GOAL_DEPTH}); write it as one "
            "(and ...) or (or ...) of predicates, e.g. (and (on cup0 table0) (in apple0 bowl0)).",
        )
    return _build_goal(expr)


def _build_goal(expr: SExpr) -> Goal:
    if isinstance(expr, str):
        raise GoalError(
            GoalErrorKind.MALFORMED,
            f"`{expr}` is not a goal: write predicates in parentheses, e.g. (on cup0 table0).",
        )
    if not expr:
        raise GoalError(GoalErrorKind.EMPTY_GOAL,
                        "The goal contains empty parentheses `()`; write a predicate such as (on cup0 table0).")
    head = expr[0]
    if not isinstance(head, str):
        raise GoalError(
            GoalErrorKind.MALFORMED,
            f"`{render_sexpr(expr)}` starts with a parenthesis; an expression must start with "
            "and/or/not or a predicate name, e.g. (and (on cup0 table0)).",
        )
    low = head.lower()
    if low in ("and", "or"):
        if len(expr) == 1:
            raise GoalError(
                GoalErrorKind.EMPTY_GOAL,
                f"`({head})` contains nothing: '{low}' needs at least one predicate, "
                "e.g. (and (on cup0 table0)).",
            )
        children = tuple(_build_goal(c) for c in expr[1:])
        return And(children) if low == "and" else Or(children)
    if low == "not":
        if len(expr) != 2:
            raise GoalError(
                GoalErrorKind.MALFORMED,
                f"`{render_sexpr(expr)}`: 'not' takes exactly one expression, e.g. (not (on cup0 table0)).",
            )
        child = _build_goal(expr[1])
        if isinstance(child, Literal) and not child.negated:
            return child.negate()
        return Not(child)
    if is_unsupported_head(low):
        raise _unsupported(low, expr)
    args = expr[1:]
    for i, a in enumerate(args):
        if not isinstance(a, str):
            inner = a[0] if a and isinstance(a[0], str) else ""
            if inner and is_unsupported_head(inner):
                raise _unsupported(inner.lower(), a)
            raise GoalError(
                GoalErrorKind.MALFORMED,
                f"In `{render_sexpr(expr)}` the argument `{render_sexpr(a)}` is an expression; "
                f"arguments of '{head}' must be object names, e.g. ({head} cup0 table0). "
                "Combine predicates with and/or/not instead of nesting them.",
            )
        if a == "-" or (a.startswith("-") and len(a) > 1 and i > 0):
            raise GoalError(
                GoalErrorKind.TYPED_ARGUMENT,
                f"`{render_sexpr(expr)}` contains a type annotation ('- type'); goals name objects "
                f"only, without types, e.g. ({head} {' '.join(x for x in args[:i] if isinstance(x, str))}).",
            )
    if head.startswith("?"):
        raise GoalError(GoalErrorKind.MALFORMED,
                        f"`{render_sexpr(expr)}` starts with the variable '{head}'; it must start with a predicate.")
    return Literal(head, tuple(args))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Rendering


def render(goal: Goal) -> str:
    """PDDL text of a goal; ``parse_goal(render(g)) == g``."""
    if isinstance(goal, Literal):
        atom = goal.atom_text()
        return f"(not {atom})" if goal.negated else atom
    if isinstance(goal, And):
        return "(and " + " ".join(render(c) for c in goal.children) + ")"
    if isinstance(goal, Or):
        return "(or " + " ".join(render(c) for c in goal.children) + ")"
    if isinstance(goal, Not):
        return "(not " + render(goal.child) + ")"
    raise TypeError(f"not a goal: {goal!r}")


def render_dnf(dnf: Sequence[Conjunction]) -> str:
    """PDDL text of a DNF: ``(and ...)`` for one disjunct, ``(or (and ...) ...)`` otherwise."""
    conj = ["(and " + " ".join(render(lit) for lit in c) + ")" if c else "(and)" for c in dnf]
    if len(conj) == 1:
        return conj[0]
    return "(or " + " ".join(conj) + ")"


def literals(goal: Goal) -> list[Literal]:
    """All literals in the goal, in order of appearance (negations as written)."""
    if isinstance(goal, Literal):
        return [goal]
    if isinstance(goal, Not):
        return literals(goal.child)
    return [lit for c in goal.children for lit in literals(c)]


# ---------------------------------------------------------------------------
# Negation normal form and DNF


def to_nnf(goal: Goal, negate: bool = False) -> Goal:
    """Push negations down to the atoms (de Morgan); no Not node remains."""
    if isinstance(goal, Literal):
        return goal.negate() if negate else goal
    if isinstance(goal, Not):
        return to_nnf(goal.child, not negate)
    children = tuple(to_nnf(c, negate) for c in goal.children)
    if isinstance(goal, And):
        return Or(children) if negate else And(children)
    return And(children) if negate else Or(children)


def to_dnf(goal: Goal, max_disjuncts: int = 4096) -> DNF:
    """Disjunctive normal form: a list of conjunctions of literals.

    Duplicate literals inside a conjunction and duplicate conjunctions are removed
    (order of first appearance kept, so rendering is stable).  Distribution can blow up
    exponentially; beyond ``max_disjuncts`` a :class:`GoalError` asks for a simpler goal.
    """

    def go(g: Goal) -> DNF:
        if isinstance(g, Literal):
            return [(g,)]
        if isinstance(g, Or):
            out: DNF = []
            for c in g.children:
                out.extend(go(c))
                _guard(len(out))
            return out
        if isinstance(g, And):
            acc: DNF = [()]
            for c in g.children:
                sub = go(c)
                _guard(len(acc) * len(sub))
                acc = [a + b for a in acc for b in sub]
            return acc
        raise TypeError(f"unexpected node after NNF: {g!r}")

    def _guard(n: int) -> None:
        if n > max_disjuncts:
            raise GoalError(
                GoalErrorKind.TOO_COMPLEX,
                f"The goal expands to more than {max_disjuncts} alternatives; write a simpler goal "
                "with fewer nested 'or' expressions.",
            )

    result: DNF = []
    seen: set[Conjunction] = set()
    for conj in go(to_nnf(goal)):
        dedup = tuple(dict.fromkeys(conj))
        if dedup not in seen:
            seen.add(dedup)
            result.append(dedup)
    return result


def dnf_to_goal(dnf: Sequence[Conjunction]) -> Goal:
    """Goal AST of a DNF (``Or`` of ``And``; a single disjunct becomes an ``And``)."""
    conj = [And(tuple(c)) for c in dnf]
    return conj[0] if len(conj) == 1 else Or(tuple(conj))
