"""Recovery inside the node suite (issue 7 wiring): what the tool-selection and planning nodes
call, kept here so the nodes stay thin and this is testable without ROS.

* :class:`WatchedKnowledge` - the knowledge file as a node sees it: opened at start-up, opened
  again when another process (the tool-selection node learns, the planning node plans) has
  rewritten it; a malformed file is reported and the node goes on without learned knowledge.
* :func:`planning_kwargs` - the keyword arguments of ``TaskPlanner(build_kwargs=...)`` for the
  robot's model extended by what was learned.
* :class:`LearningExecutor` - the executor the AutoGPT+P loop gets: CoPAL's mid level
  (:class:`RecoveringExecutor`, one step per call of the inner executor) and, when a step
  fails although the robot's model says it should have worked (the model lacks a
  precondition), LASP through :class:`RecoveryRunner`: learn, replan, execute. Bounded: at most
  ``max_learning_runs`` learning runs per task, each bounded by its :class:`RecoveryConfig`.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

from affplan_ros.core.agent.execution import ExecutionResult, ExploreResult
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.ports import Executor
from affplan_ros.core.recovery.belief import Belief, Domain
from affplan_ros.core.recovery.executive import RecoveringExecutor, RecoveryExecution
from affplan_ros.core.recovery.feedback import observed_facts
from affplan_ros.core.recovery.knowledge import KnowledgeFileError, KnowledgeStore
from affplan_ros.core.recovery.runner import (
    RecoveryConfig,
    RecoveryResult,
    RecoveryRunner,
)


def knowledge_path(text: str) -> Optional[Path]:
    """The knowledge file a parameter names ("" or blanks: none, no learning); ``~`` expanded."""
    text = (text or "").strip()
    return Path(os.path.expanduser(text)) if text else None


class WatchedKnowledge:
    """The knowledge store of ``path``, re-read when the file changed since it was last read."""

    def __init__(self, path: Optional[Path]):
        self.path = path
        self.error = ""                  # why the file is not used (malformed), "" when fine
        self._stamp: Optional[tuple] = None
        self.store = KnowledgeStore(None)
        self.refresh()

    def _file_stamp(self) -> Optional[tuple]:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def refresh(self) -> bool:
        """Re-read the file if it changed; True when the store was (re)opened."""
        if self.path is None:
            return False
        stamp = self._file_stamp()
        if stamp == self._stamp and (stamp is not None or self.store.path is not None):
            return False
        self._stamp = stamp
        try:
            self.store = KnowledgeStore.open(self.path)
            self.error = ""
        except KnowledgeFileError as exc:
            # Keep working without learned knowledge, and never overwrite the bad file.
            self.store, self.error = KnowledgeStore(None), str(exc)
        return True

    def current(self) -> KnowledgeStore:
        self.refresh()
        return self.store

    @property
    def learning(self) -> bool:
        """Can what is learned be kept? (a file is named and it is readable)"""
        return self.path is not None and not self.error


def planning_kwargs(domain: Domain) -> dict:
    """``TaskPlanner(build_kwargs=...)`` for ``domain`` (the planner adds the OAM itself)."""
    kw = domain.build_kwargs()
    return {k: v for k, v in kw.items() if k not in ("oam", "unknown_classes")}


def learned_summary(results: Sequence[RecoveryResult]) -> str:
    """One line for the user per learning run: its stop reason, message and what it learned."""
    lines = []
    for r in results:
        line = f"recovery {r.stop_reason.value}: {r.message}"
        if r.learned:
            line += "; learned: " + "; ".join(r.learned)
        if r.objects_added:
            line += "; objects added: " + ", ".join(r.objects_added)
        lines.append(line)
    return " | ".join(lines)


class _Canceled(Exception):
    """The task was canceled while a learning run executed: it stops at once, no replanning."""


@dataclass
class _Recording:
    """The inner executor, remembering the steps that took effect and the last failure."""

    inner: Executor
    should_stop: Optional[Callable[[], bool]] = None
    steps: list = field(default_factory=list)
    last_failure: Optional[Failure] = None

    def explore(self, location: str) -> ExploreResult:
        return self.inner.explore(location)

    def execute(self, plan: Sequence) -> ExecutionResult:
        if self.should_stop is not None and self.should_stop():
            raise _Canceled()
        run = self.inner.execute(plan)
        if not run.success and run.failure is not None and run.failure.code is FailureCode.CANCELED:
            self.steps += list(plan)[:run.steps_done]
            raise _Canceled()
        self.steps += list(plan)[:run.steps_done]
        self.last_failure = None if run.success else run.failure
        return run


@dataclass
class LearningExecutor:
    """An :class:`Executor` for the tool-selection loop with CoPAL's mid level and LASP."""

    inner: Executor                          # e.g. the ExecutePlan client; called one step at a time
    domain: Domain                           # the robot's model before learned knowledge
    knowledge: Callable[[], KnowledgeStore]  # the store now (learned knowledge is saved through it)
    scene: Callable[[], Scene]               # what the robot believes now (the memory's scene)
    task: Union[str, Callable[[], str]]      # or the request as it reads now (accepted alternatives applied)
    config: RecoveryConfig = field(default_factory=RecoveryConfig)
    llm: object = None                       # ChatModel; None: no learning
    goal_prompter: object = None             # ReplanPrompter (llm/recovery_prompting)
    lasp_prompter: object = None             # LaspPrompter; None: no learning
    environment: Optional[Callable[[], object]] = None   # RecoveryEnvironment of everything perceived
    semantic: object = None
    grounding: object = None                 # GroundingProvider of the robot (config.grounding: IALP)
    max_learning_runs: int = 1
    should_stop: Optional[Callable[[], bool]] = None      # the task was canceled
    deadline: Optional[float] = None                      # time.monotonic() the whole task must end by
    on_event: Optional[Callable[[str], None]] = None      # progress in words, for the user
    recoveries: list[RecoveryResult] = field(default_factory=list)
    executed: list = field(default_factory=list)          # every step that took effect, in order
    last_run: list = field(default_factory=list)          # the steps that took effect in the last call

    def __post_init__(self):
        self.repairer = self.config.repairer()

    @property
    def learning(self) -> bool:
        return (self.config.learn and self.llm is not None and self.lasp_prompter is not None
                and self.goal_prompter is not None)

    def belief(self) -> Belief:
        domain, _notes = self.knowledge().apply(self.domain)
        return Belief(self.scene(), domain)

    def _say(self, text: str) -> None:
        if self.on_event is not None:
            self.on_event(text)

    def explore(self, location: str) -> ExploreResult:
        return self.inner.explore(location)

    def execute(self, plan: Sequence) -> RecoveryExecution:
        cfg = self.config

        def relay(kind: str, data: dict) -> None:
            if kind == "repair":
                self._say(f"mid-level repair: {data.get('message', '')}")

        rexec = RecoveringExecutor(self.inner, self.belief, self.repairer, cfg.feedback,
                                   max_repairs=cfg.max_repairs, max_steps=cfg.max_steps,
                                   repair_model_gaps=not self.learning, on_event=relay)
        run = rexec.execute(plan)
        self.executed += run.executed_steps
        self.last_run = list(run.executed_steps)
        if run.success or not self.learning or len(self.recoveries) >= self.max_learning_runs:
            return run
        belief = self.belief()
        belief.apply_steps(run.executed_steps)
        belief.observe(observed_facts(run.raw_failure))
        step, raw = run.failed_step, run.raw_failure
        if raw is None or raw.code is not FailureCode.PRECONDITION or step is None or not belief.applicable(step)[0]:
            return run  # not a gap in the robot's model: the loop above decides (re-goal, re-tool)
        self._say(f"{step} failed although the robot's model says it should work: learning what the model lacks")
        return self._learn(run, belief.scene)

    def _learn(self, run: RecoveryExecution, scene: Scene) -> RecoveryExecution:
        """LASP from the failure just seen: refine the model, replan, execute (RecoveryRunner)."""
        recorder = _Recording(self.inner, self.should_stop)
        config = self.config
        if self.deadline is not None:  # a learning run spends what is left of the task's time, no more
            config = replace(config, max_seconds=max(1.0, min(config.max_seconds, self.deadline - time.monotonic())))
        runner = RecoveryRunner(self.llm, self.goal_prompter, recorder, self.domain, self.knowledge(),
                                lasp_prompter=self.lasp_prompter,
                                environment=self.environment() if self.environment is not None else None,
                                semantic=self.semantic, grounding=self.grounding, config=config,
                                on_event=lambda ev: self._say(ev["text"]) if ev["kind"] != "stop" else None)
        try:
            task = self.task() if callable(self.task) else self.task
            res = runner.run(task, scene, failed=(run.failed_step, run.raw_failure))
        except _Canceled:
            res = None
        self.executed += recorder.steps
        self.last_run += recorder.steps
        if res is None:
            self._say("learning stopped: the task was canceled")
            return RecoveryExecution(False, steps_done=run.steps_done,
                                     failure=Failure(FailureCode.CANCELED, "",
                                                     "the task was canceled while recovering"),
                                     executed_steps=list(run.executed_steps) + recorder.steps, stop="canceled")
        self.recoveries.append(res)
        out = RecoveryExecution(res.success, steps_done=run.steps_done,
                                executed_steps=list(run.executed_steps) + recorder.steps,
                                repairs=list(run.repairs),
                                failures_seen=run.failures_seen + max(0, len(res.failures) - 1))  # it saw the first
        if not res.success:
            out.failure = Failure(FailureCode.INVALID, run.failure.action if run.failure else "",
                                  f"recovery stopped ({res.stop_reason.value})", res.message)
            if recorder.last_failure is not None:  # the last thing that happened was a failure
                out.observed = observed_facts(recorder.last_failure) if self.config.feedback.has_why else ()
        return out
