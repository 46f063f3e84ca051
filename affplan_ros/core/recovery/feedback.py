"""The structured part of a failure observation, and CoPAL's feedback levels.

A skill failure (:class:`~affplan_ros.core.model.failure.Failure`) says what failed, why and how it
could be fixed in words. For the machine it may also carry, in ``detail`` (a free-text field
of the FailureObservation message, so nothing changes on the wire):

    violated: (not (hand_occupied robot0)) | observed: (hand_occupied robot0) (inhand sponge0 robot0)

* ``violated`` - the precondition literals of the step that were false in the world (ground,
  PDDL names). Mid-level repair rules match on them.
* ``observed`` - facts the skill saw that explain it (the true value of each violated literal
  and what is related, e.g. what the full hand holds). They correct the robot's belief when
  the feedback level includes *why*.

Anything after the structured sections is kept as free text. A skill that reports no
structure still works: no rule matches it, and it goes to the high level in words.

Feedback levels (CoPAL's comparison): ``what`` hands up only "Error: ...", ``why`` adds
"Reason: ..." and the observed facts, ``how`` adds "Suggestion: ...".
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Sequence

from affplan_ros.core.goals.errors import GoalError
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.goals.sexpr import parse_sexprs
from affplan_ros.core.model.failure import Failure


class FeedbackLevel(str, Enum):
    WHAT = "what"
    WHY = "why"
    HOW = "how"

    @property
    def has_why(self) -> bool:
        return self is not FeedbackLevel.WHAT

    @property
    def has_how(self) -> bool:
        return self is FeedbackLevel.HOW

    @classmethod
    def parse(cls, text: str) -> "FeedbackLevel":
        if isinstance(text, cls):
            return text
        try:
            return cls(str(text).strip().lower())
        except ValueError:
            raise ValueError(f"feedback level must be one of what, why, how; not {text!r}") from None


def literal_text(lit: Literal) -> str:
    atom = lit.atom_text()
    return f"(not {atom})" if lit.negated else atom


def literals_from_sexpr(expr) -> list[Literal]:
    """A ground literal or a conjunction of them -> Literals; ValueError on anything else."""
    if isinstance(expr, str) or not expr:
        raise ValueError(f"not a literal: {expr!r}")
    head = expr[0]
    if head == "and":
        return [l for e in expr[1:] for l in literals_from_sexpr(e)]
    if head == "not":
        if len(expr) != 2:
            raise ValueError(f"'not' takes one atom: {expr!r}")
        (inner,) = literals_from_sexpr(expr[1])
        return [inner.negate()]
    if not all(isinstance(a, str) for a in expr):
        raise ValueError(f"not an atom: {expr!r}")
    return [Literal(str(head), tuple(expr[1:]))]


def parse_literals(text: str) -> list[Literal]:
    """``(a x) (not (b y))`` -> Literals; ValueError with the reason on malformed text."""
    try:
        exprs = parse_sexprs(text or "")
    except GoalError as exc:
        raise ValueError(str(exc)) from exc
    return [l for e in exprs for l in literals_from_sexpr(e)]


@dataclass(frozen=True)
class StructuredDetail:
    violated: tuple[Literal, ...] = ()
    observed: tuple[Literal, ...] = ()
    text: str = ""


_SECTION = re.compile(r"(violated|observed)\s*:", re.IGNORECASE)


def format_detail(violated: Iterable[Literal] = (), observed: Iterable[Literal] = (), text: str = "") -> str:
    parts = []
    violated, observed = list(violated), list(observed)
    if violated:
        parts.append("violated: " + " ".join(literal_text(l) for l in violated))
    if observed:
        parts.append("observed: " + " ".join(literal_text(l) for l in observed))
    if text:
        parts.append(text)
    return " | ".join(parts)


def parse_detail(detail: str) -> StructuredDetail:
    """The structured sections of ``Failure.detail``; malformed sections are kept as text
    (a skill's free text must never break recovery)."""
    violated: list[Literal] = []
    observed: list[Literal] = []
    rest: list[str] = []
    for part in (detail or "").split(" | "):
        m = _SECTION.match(part.strip())
        if not m:
            if part.strip():
                rest.append(part.strip())
            continue
        try:
            lits = parse_literals(part.strip()[m.end():])
        except ValueError:
            rest.append(part.strip())
            continue
        (violated if m.group(1).lower() == "violated" else observed).extend(lits)
    return StructuredDetail(tuple(violated), tuple(observed), " | ".join(rest))


def observed_facts(failure: Failure | None) -> tuple[Literal, ...]:
    return parse_detail(failure.detail).observed if failure is not None else ()


def violated_literals(failure: Failure | None) -> tuple[Literal, ...]:
    return parse_detail(failure.detail).violated if failure is not None else ()


def at_level(failure: Failure, level: FeedbackLevel) -> Failure:
    """The failure as the high level may see it: ``what`` keeps only what failed; ``why``
    adds the reason and the observed facts; ``how`` the suggestion too."""
    level = FeedbackLevel.parse(level)
    if level is FeedbackLevel.HOW:
        return failure
    if level is FeedbackLevel.WHY:
        return dataclasses.replace(failure, suggestion="")
    return dataclasses.replace(failure, why="", suggestion="", detail="")


def feedback_text(failures: Sequence[Failure], level: FeedbackLevel) -> str:
    """Numbered "Error: ..., Reason: ..., Suggestion: ..." lines, one per failure."""
    return "\n".join(f"{i}. {at_level(f, level).feedback()}" for i, f in enumerate(failures, 1))
