"""The person approves before the robot moves (parameter ``approval``).

Every step the suite is about to execute passes :class:`ApprovalGate`, which sits in front of
the executor, below everything a language model can influence: no tool choice, goal or answer
reaches the robot without it.

* ``none``: nothing is asked (simulation, the demo);
* ``plan``: before the first step of a new plan the person sees the goal and every step (which
  the robot does, which it asks the person to do) and says yes or no; the steps of an approved
  plan then run without asking again. A step that belongs to no approved plan (the move of an
  Explore, a repair step, a step of a replanned plan) is asked on its own;
* ``each_step``: every step is asked, one at a time.

No answer within the timeout, or nobody to ask, is a no. A no stops the task: nothing of the
refused plan moved (stop reason ``refused``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Optional, Sequence


class ApprovalMode(str, Enum):
    NONE = "none"
    PLAN = "plan"
    EACH_STEP = "each_step"

    @classmethod
    def parse(cls, text: str) -> "ApprovalMode":
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"approval must be one of {', '.join(m.value for m in cls)}, not {text!r}") from None


@dataclass(frozen=True)
class ApprovalRequest:
    """What the person is asked to approve: ``steps`` towards ``goal`` ("" for a single move)."""

    goal: str
    steps: tuple
    question: str


# (request) -> (approved, why not when not: "no answer within 120 s", "the person said no", ...)
AskApproval = Callable[[ApprovalRequest], tuple[bool, str]]


def describe_steps(steps: Sequence, person_agents: Sequence[str] = ("human0",)) -> list[str]:
    """One line per step, saying who does it: ``1. the robot: grasp apple0 from counter0``."""
    lines = []
    for i, s in enumerate(steps, 1):
        who = "you" if s.agent in person_agents else ("the robot" if s.agent else "by itself")
        lines.append(f"{i}. {who}: {' '.join((s.action, *s.args))}")
    return lines


def approval_question(goal: str, steps: Sequence, task: str, person_agents: Sequence[str] = ("human0",)) -> str:
    head = (f"For \"{task}\" I plan to reach {goal} in {len(steps)} step{'s' if len(steps) != 1 else ''}:"
            if goal else f"For \"{task}\" I would like to do this:")
    return "\n".join([head, *describe_steps(steps, person_agents), "May I go ahead? (yes/no)"])


@dataclass
class ApprovalGate:
    """Asks before steps run (see the module). ``offer`` each new plan as the planner makes it;
    ``check`` the steps about to run; ``done`` the steps that ran."""

    mode: ApprovalMode
    ask: AskApproval
    task: str = ""
    person_agents: tuple[str, ...] = ("human0",)
    refused: Optional[str] = None                     # why the person said no (the task ends)
    asked: int = 0
    _offered: Optional[tuple[str, list]] = None       # the newest plan, not yet approved
    _approved: list = field(default_factory=list)     # steps of the approved plan still to run

    def offer(self, goal: str, steps: Sequence) -> None:
        self._offered = (goal, list(steps))

    def check(self, steps: Sequence) -> Optional[str]:
        """None when ``steps`` may run now (asking the person where the mode says so), else why
        not; a no is remembered in :attr:`refused`."""
        steps = list(steps)
        if self.mode is ApprovalMode.NONE or not steps:
            return None
        if self.refused is not None:
            return self.refused
        if self.mode is ApprovalMode.PLAN:
            if self._approved[:len(steps)] == steps:
                return None
            if self._offered is not None and self._offered[1][:len(steps)] == steps:
                goal, plan = self._offered
                why = self._ask(goal, plan)
                if why is None:
                    self._approved, self._offered = list(plan), None
                return why
        return self._ask("", steps)

    def done(self, steps: Sequence) -> None:
        """``steps`` ran: an approved plan goes on from after them."""
        steps = list(steps)
        if self._approved[:len(steps)] == steps:
            del self._approved[:len(steps)]

    def _ask(self, goal: str, steps: list) -> Optional[str]:
        self.asked += 1
        request = ApprovalRequest(goal, tuple(steps), approval_question(goal, steps, self.task, self.person_agents))
        try:
            approved, why = self.ask(request)
        except Exception as exc:  # noqa: BLE001 - asking failed: that is a no
            approved, why = False, f"asking the person failed: {type(exc).__name__}: {exc}"
        if approved:
            return None
        self.refused = f"the person did not approve the {'plan' if goal else 'step'}: {why or 'no'}"
        return self.refused
