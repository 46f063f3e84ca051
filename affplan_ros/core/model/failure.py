"""Failure observations: what failed, why, and how it could be fixed (CoPAL's feedback triplet).

Skills (simulated or real) report failures in this shape; the executor passes them up, and
recovery turns them into "Error: ..., Reason: ..., Suggestion: ..." feedback for replanning.
The codes mirror ``affplan_ros/msg/FailureObservation.msg``.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Optional


class FailureCode(IntEnum):
    NONE = 0
    PRECONDITION = 1   # a symbolic precondition did not hold; often repairable
    PHYSICAL = 2       # the world refused (out of reach, slipped)
    NOT_FOUND = 3      # a named object or location is not there
    TIMEOUT = 4
    UNAVAILABLE = 5    # no skill server answered
    CANCELED = 6
    INVALID = 7        # malformed request


class Cause(str, Enum):
    """What the robot's own senses found when a motion failed (``FailureObservation.cause``).

    The code says which kind of failure it is to the executor; the cause says what a repair can
    act on (a slipped object is grasped again, no free space asks for another support). The
    values are those of the ``CAUSE_*`` constants of FailureObservation.msg.
    """

    UNREACHABLE = "unreachable"            # no arm motion reaches it from here
    BLOCKED = "blocked"                    # something is in the way of the motion
    EMPTY_GRASP = "empty_grasp"            # the gripper closed on nothing
    SLIPPED = "slipped"                    # it was held, then no longer
    NO_FREE_SPACE = "no_free_space"        # nowhere on or in the target to put it
    CONTAINER_CLOSED = "container_closed"
    TOO_LARGE = "too_large"
    NOT_HELD = "not_held"
    HAND_FULL = "hand_full"
    UNKNOWN = "unknown_object"             # a name the robot has never heard of
    NOT_ARTICULATED = "not_articulated"    # nothing there opens or closes
    NOT_FOUND = "not_found"                # not where the robot looked for it
    DID_NOT_OPEN = "did_not_open"          # the door or lid did not move as commanded
    MOTION_FAILED = "motion_failed"        # a controller or MoveIt aborted the motion
    DOOR_OPEN = "door_open"                # an appliance did not start: its door is open
    NOT_HEATED = "not_heated"              # it ran, but the container was not where it heats
    NOT_A_HEATER = "not_a_heater"          # the named appliance warms nothing


@dataclass(frozen=True)
class Failure:
    code: FailureCode
    action: str            # the failed step, e.g. "grasp(cup0, table0, table0)"
    what: str
    why: str = ""
    suggestion: str = ""
    detail: str = ""
    recoverable: bool = False
    cause: Optional[Cause] = None

    def feedback(self) -> str:
        """The triplet as CoPAL feeds it back to the planner."""
        parts = [f"Error: {self.what}"]
        if self.why:
            parts.append(f"Reason: {self.why}")
        if self.suggestion:
            parts.append(f"Suggestion: {self.suggestion}")
        return ", ".join(parts)
