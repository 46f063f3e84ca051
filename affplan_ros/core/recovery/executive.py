"""CoPAL's mid level as an :class:`~affplan_ros.core.ports.Executor` wrapper.

``RecoveringExecutor(inner, belief, ...)`` runs a validated plan one step at a time through
``inner`` (the simulated executor, or the ROS executor client on a robot). When a step fails,
the observed facts update a private copy of the belief and, with repair on, the rule table
(:mod:`.repair`) proposes steps; a proposal runs only after the plan validator accepted it.
What cannot be repaired is handed up with the failure filtered to the feedback level, so the
high level (the goal loop or the tool-selection loop) sees exactly what/why/how it is
configured to see. Bounded: at most ``max_repairs`` repairs and ``max_steps`` steps per plan.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

from affplan_ros.core.agent.execution import ExecutionResult, ExploreResult
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.ports import Executor
from affplan_ros.core.recovery.belief import Belief
from affplan_ros.core.recovery.feedback import (
    FeedbackLevel,
    at_level,
    observed_facts,
    violated_literals,
)
from affplan_ros.core.recovery.repair import MidLevelRepairer, RepairResult


@dataclass
class RecoveryExecution(ExecutionResult):
    """An ExecutionResult that also says what the mid level did."""

    executed_steps: list = field(default_factory=list)     # every step that took effect, repairs included
    repairs: list[RepairResult] = field(default_factory=list)  # successful mid-level repairs
    repair_attempts: list[RepairResult] = field(default_factory=list)  # failed ones too
    raw_failure: Optional[Failure] = None                  # the failure before filtering
    failed_step: object = None                             # the PlanStep that failed
    observed: tuple[Literal, ...] = ()                     # facts handed up (feedback level >= why)
    failures_seen: int = 0                                 # step failures, repaired ones included
    stop: str = ""                                         # why the run stopped early, if it did

    @property
    def mid_replans(self) -> int:
        return len(self.repairs)


@dataclass
class RecoveringExecutor:
    inner: Executor
    belief: Union[Belief, Callable[[], Belief]]
    repairer: Optional[MidLevelRepairer] = None          # None: repair off
    feedback: FeedbackLevel = FeedbackLevel.HOW
    goal: Optional[list] = None                          # DNF the repaired plan must still reach
    max_repairs: int = 5
    max_steps: int = 200
    # A step the belief still says is applicable failed: the model lacks something. With
    # learning on, such a failure goes up to LASP instead of being patched here.
    repair_model_gaps: bool = True
    on_event: Optional[Callable[[str, dict], None]] = None   # progress for the user (step, repair)

    def explore(self, location: str) -> ExploreResult:
        return self.inner.explore(location)

    def _belief(self) -> Belief:
        b = self.belief() if callable(self.belief) else self.belief
        return b.copy()

    def _say(self, kind: str, **data) -> None:
        if self.on_event is not None:
            self.on_event(kind, data)

    def execute(self, plan: Sequence) -> RecoveryExecution:
        belief = self._belief()
        original = list(plan)
        queue = list(plan)
        result = RecoveryExecution(True)
        done_original = 0
        while queue:
            if len(result.executed_steps) + 1 > self.max_steps:
                result.success, result.stop = False, f"step bound ({self.max_steps}) reached"
                result.failure = Failure(FailureCode.INVALID, "", "the plan ran too long",
                                         f"more than {self.max_steps} steps were executed with repairs")
                break
            step = queue.pop(0)
            run = self.inner.execute([step])
            result.outcomes.extend(run.outcomes)
            if run.success:
                result.executed_steps.append(step)
                belief.apply_steps([step])
                if done_original < len(original) and step == original[done_original]:
                    done_original += 1
                self._say("step", step=str(step), success=True)
                continue
            result.failures_seen += 1
            failure = run.failure or Failure(FailureCode.PHYSICAL, str(step), f"{step} failed")
            self._say("step", step=str(step), success=False, failure=failure.feedback())
            # The mid level sees the whole observation, whatever the feedback level above it.
            belief.observe(observed_facts(failure))
            gap = not self.repair_model_gaps and belief.applicable(step)[0]
            if self.repairer is not None and failure.code is FailureCode.PRECONDITION and not gap:
                if len(result.repairs) >= self.max_repairs:
                    result.stop = f"repair bound ({self.max_repairs}) reached"
                else:
                    t0 = time.monotonic()
                    rep = self.repairer.repair(belief, step, queue, violated_literals(failure), self.goal)
                    rep.message += f" ({time.monotonic() - t0:.2f} s)"
                    result.repair_attempts.append(rep)
                    self._say("repair", repaired=rep.repaired, message=rep.message)
                    if rep.repaired:
                        result.repairs.append(rep)
                        queue = list(rep.plan)
                        continue
            result.success = False
            result.failed_step = step
            result.raw_failure = failure
            result.failure = at_level(failure, self.feedback)
            result.observed = observed_facts(failure) if self.feedback.has_why else ()
            break
        result.steps_done = done_original
        return result
