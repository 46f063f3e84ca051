"""Failure observations: what failed, why, and how it could be fixed (CoPAL's feedback triplet).

Skills (simulated or real) report failures in this shape; the executor passes them up, and
recovery turns them into "Error: ..., Reason: ..., Suggestion: ..." feedback for replanning.
The codes mirror ``affplan_ros/msg/FailureObservation.msg``.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class FailureCode(IntEnum):
    NONE = 0
    PRECONDITION = 1   # a symbolic precondition did not hold; often repairable
    PHYSICAL = 2       # the world refused (out of reach, slipped)
    NOT_FOUND = 3      # a named object or location is not there
    TIMEOUT = 4
    UNAVAILABLE = 5    # no skill server answered
    CANCELED = 6
    INVALID = 7        # malformed request


@dataclass(frozen=True)
class Failure:
    code: FailureCode
    action: str            # the failed step, e.g. "grasp(cup0, table0, table0)"
    what: str
    why: str = ""
    suggestion: str = ""
    detail: str = ""
    recoverable: bool = False

    def feedback(self) -> str:
        """The triplet as CoPAL feeds it back to the planner."""
        parts = [f"Error: {self.what}"]
        if self.why:
            parts.append(f"Reason: {self.why}")
        if self.suggestion:
            parts.append(f"Suggestion: {self.suggestion}")
        return ", ".join(parts)
