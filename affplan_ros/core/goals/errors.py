"""What is wrong with a goal: an error kind the loop can act on and a message fed back to the LLM verbatim."""
from __future__ import annotations

from affplan_ros.core.errors import AffplanError

# ---------------------------------------------------------------------------
# Errors


class GoalErrorKind:
    """Kinds of structural failures (string constants so they serialise trivially)."""

    NO_GOAL = "no_goal"
    UNBALANCED_PARENTHESES = "unbalanced_parentheses"
    EMPTY_GOAL = "empty_goal"
    UNSUPPORTED_CONSTRUCT = "unsupported_construct"
    MALFORMED = "malformed"
    TYPED_ARGUMENT = "typed_argument"
    TOO_COMPLEX = "too_complex"


class GoalError(AffplanError, ValueError):
    """A goal could not be extracted/parsed/built; ``message`` is meant for the LLM."""

    def __init__(self, kind: str, message: str, position: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.position = position
