"""The executor as the tool-selection loop sees it, and asking the human for help.

The loop never talks to a robot directly: it hands an :class:`~affplan_ros.core.ports.Executor` a location to
explore or a validated plan to run. Implementations: the simulated executor for tests and
benchmarks (``affplan_ros.sim.executor``) and, on a robot, the ROS executor node.

Plans may assign steps to a human (agents cost more, so the planner only does that when
the robot cannot act). Executing such a step means asking the person (a callback; on the
robot a service) and waiting a bounded time for the answer: :func:`ask_human`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Optional, Sequence

from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.records import Observation
from affplan_ros.core.planning.planner import PlanStep


class HumanAnswer(str, Enum):
    DONE = "done"          # the person did it
    REFUSED = "refused"    # the person said no / could not
    TIMEOUT = "timeout"    # no answer in time
    ERROR = "error"        # the callback failed


@dataclass(frozen=True)
class HumanRequest:
    """One plan step the robot asks a person to do, with a sentence to show or say."""

    agent: str
    action: str
    args: tuple[str, ...]
    text: str


# The person's side: gets the request and the seconds it may take; True/False or a HumanAnswer.
AskHuman = Callable[[HumanRequest, float], object]


def call_bounded(fn: Callable[[], object], timeout_s: float) -> tuple[bool, object, Optional[str]]:
    """Run ``fn`` in a daemon thread and wait at most ``timeout_s``: (finished, value, error).

    A callback that never returns (a person who does not answer, a dead service) cannot hang
    the caller; no signals are used, so this works inside ROS executors too."""
    box: dict[str, object] = {}
    done = threading.Event()

    def call() -> None:
        try:
            box["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - returned to the caller
            box["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            done.set()

    threading.Thread(target=call, name="bounded-call", daemon=True).start()
    if not done.wait(max(0.0, timeout_s)):
        return False, None, None
    return True, box.get("value"), box.get("error")  # type: ignore[return-value]


def ask_human(callback: Optional[AskHuman], request: HumanRequest, timeout_s: float) -> tuple[HumanAnswer, str]:
    """Ask ``callback`` and wait at most ``timeout_s``; (answer, detail)."""
    if callback is None:
        return HumanAnswer.REFUSED, "nobody to ask: no human-help callback is configured"
    finished, answer, error = call_bounded(lambda: callback(request, timeout_s), timeout_s)
    if not finished:
        return HumanAnswer.TIMEOUT, f"no answer from the person within {timeout_s:g} s"
    if error:
        return HumanAnswer.ERROR, f"asking the person failed: {error}"
    if isinstance(answer, HumanAnswer):
        return answer, ""
    return (HumanAnswer.DONE, "") if answer is True else (HumanAnswer.REFUSED, "the person declined")


@dataclass
class StepOutcome:
    step: str              # "grasp robot0 apple0 table0 table0"
    agent: str
    success: bool
    failure: Optional[Failure] = None
    human: Optional[HumanAnswer] = None  # set when a person was asked to do the step
    seconds: float = 0.0


@dataclass
class ExecutionResult:
    success: bool
    steps_done: int = 0                 # steps that took effect, from the first one
    failure: Optional[Failure] = None
    outcomes: list[StepOutcome] = field(default_factory=list)

    @property
    def message(self) -> str:
        if self.success:
            return f"all {self.steps_done} steps executed"
        return f"step {self.steps_done + 1} failed: {self.failure.feedback() if self.failure else 'unknown error'}"


@dataclass
class ExploreResult:
    success: bool
    observation: Observation = field(default_factory=Observation)
    failure: Optional[Failure] = None
    cost: float = 0.0      # cost of the moves (and of opening a closed container) made to look
    note: str = ""         # what could not be seen, and why (a closed container that stayed shut)
    # The steps done to look (the move there, opening the door): their effects are what the robot
    # did, which a camera's view may not show (where the robot stands, a door it opened).
    steps: tuple = ()


def closed_container_to_open(seen: Observation, location: str, robot: str) -> tuple[Optional[PlanStep], str]:
    """The step that lets a camera look into ``location`` when the view shows a closed container
    there (the refrigerator's door), and the note to give if that step is not taken or fails;
    (None, "") when there is nothing to open."""
    closed = any(r.predicate == "closed" and tuple(r.args) == (location,) for r in seen.relations)
    record = next((o for o in seen.objects if o.name == location), None)
    if not closed or record is None or "contain" not in record.affordances:
        return None, ""
    return PlanStep("open", (location, location), robot), f"could not look inside the closed {location}"


def human_step_text(action: str, agent: str, args: Sequence[str], description: str = "",
                    parameters: Sequence[str] = ()) -> str:
    """A plain sentence for a step a person should do, from the capability's description."""
    sentence = description
    for name, value in zip(parameters, args):
        sentence = sentence.replace(f"?{name}", value)
    if not sentence or "?" in sentence:
        sentence = f"{action} {' '.join(args)}"
    return f"{agent}, please {sentence}"


def human_failure(step: str, answer: HumanAnswer, detail: str) -> Failure:
    code = FailureCode.TIMEOUT if answer is HumanAnswer.TIMEOUT else FailureCode.PHYSICAL
    return Failure(code, step, f"the person did not do {step}", detail or answer.value,
                   "plan without this person's help or ask again", recoverable=True)
