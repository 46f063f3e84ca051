"""The recovery loop for one task: goal -> plan -> execute, repair, learn, replan. Bounded.

::

    goal (LLM, checked)  ->  plan (Fast Downward on the belief and the learned domain)
      ->  execute step by step (RecoveringExecutor: mid-level repair, no LLM)
      ->  success: done (learned knowledge confirmed)
      ->  failure, and the robot's model says the step should have worked (the domain lacks
          something) and learning is on: LASP refines the domain, replans
      ->  other failures: high-level replanning - the goal LLM is asked again with the error
          triplet at the configured feedback level (what / why / how)

Bounds: ``max_replans`` high-level replans (CoPAL, default 5), ``max_refinements`` LASP
refinements, ``max_repairs`` mid-level repairs per plan, ``max_steps`` executed steps,
``max_seconds`` wall time (checked between phases; no signals). Every stop has a
:class:`RecoveryStop` and a message for the user; every phase is an event in ``events``.

``mode="stepwise"`` replaces full plans by IALP's step planner (:mod:`.stepwise`) and falls
back to the planner when the endpoint returns no log-probabilities.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Optional, Sequence

from affplan_ros.core.agent.plan_tool import scene_relations_text, to_scene_names
from affplan_ros.core.agent.tool_loop import clean_task
from affplan_ros.core.goals.loop import (
    ChatModelError,
    GoalLoop,
    GoalPrompter,
    GoalRequest,
    Message,
    SemanticCheck,
)
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.simulate import goal_holds
from affplan_ros.core.ports import ChatModel, Executor
from affplan_ros.core.recovery.belief import Belief, Domain
from affplan_ros.core.recovery.executive import RecoveringExecutor, RecoveryExecution
from affplan_ros.core.recovery.feedback import FeedbackLevel, at_level, feedback_text
from affplan_ros.core.recovery.grounding import (
    GroundingProvider,
)
from affplan_ros.core.recovery.knowledge import KnowledgeStore, property_relations
from affplan_ros.core.recovery.lasp import (
    FailureContext,
    Lasp,
    LaspPrompter,
    LLMUsage,
    PlanAttemptResult,
    RecoveryEnvironment,
    Refinement,
    failure_state,
    schema_text,
)
from affplan_ros.core.recovery.problem import ground_scene, prepare_problem
from affplan_ros.core.recovery.repair import MidLevelRepairer, load_rules
from affplan_ros.core.recovery.stepwise import (
    CandidateModel,
    StepPrompter,
    StepwisePlanner,
)


class RecoveryStop(str, Enum):
    COMPLETED = "completed"            # the last plan ran to its end
    INVALID_TASK = "invalid_task"
    NO_GOAL = "no_goal"                # the goal loop accepted no goal
    NO_PLAN = "no_plan"                # no plan, and no replan left
    REPLAN_BOUND = "replan_bound"      # max_replans high-level replans used up
    REFINE_BOUND = "refine_bound"      # max_refinements LASP refinements used up
    STEP_BOUND = "step_bound"
    TIME_LIMIT = "time_limit"
    LLM_ERROR = "llm_error"
    ALERT = "alert"                    # the step planner asked for a person's help
    NEEDS_OBJECT = "needs_object"      # learned, but no object the robot knows makes a plan: it must find one


class ReplanPrompter(GoalPrompter):
    def replan_section(self, goal: str, feedback: str) -> str: ...


@dataclass
class RecoveryConfig:
    feedback: FeedbackLevel = FeedbackLevel.HOW
    repair: bool = True
    learn: bool = True
    mode: str = "plan"                  # plan | stepwise
    grounding: bool = False             # add IALP's grounding predicates (from the provider)
    max_replans: int = 5
    max_refinements: int = 4
    max_repairs: int = 5
    max_steps: int = 60
    max_seconds: float = 600.0
    plan_time_limit: float = 30.0
    goal_rounds: int = 10
    # A robot knows only what it perceived: keep a valid refinement that has no plan only because
    # no known object fits, and stop with NEEDS_OBJECT (the caller explores). Off: drop it (LASP).
    keep_when_objects_unseen: bool = False
    stepwise_k: int = 5
    rules_file: Optional[str] = None
    rules: Optional[Sequence[str]] = None   # enabled rule names (None: all)
    rule_table: Optional[Sequence] = None   # the rules already read (a node reads its file once, at start-up)

    def repairer(self) -> Optional[MidLevelRepairer]:
        """CoPAL's mid level as configured; None when repair is off."""
        if not self.repair:
            return None
        return MidLevelRepairer(list(self.rule_table) if self.rule_table is not None
                                else load_rules(self.rules_file, self.rules))


@dataclass
class RecoveryResult:
    stop_reason: RecoveryStop
    message: str = ""
    goal: Optional[str] = None
    plans: list[list[str]] = field(default_factory=list)
    executed: list[str] = field(default_factory=list)
    first_plan_executable: Optional[bool] = None   # ran without any failure (no repair needed)
    failures: list[str] = field(default_factory=list)       # each failure as the high level saw it
    raw_failures: list[str] = field(default_factory=list)   # and in full
    mid_replans: int = 0
    high_replans: int = 0
    refinements: int = 0
    learned: list[str] = field(default_factory=list)
    objects_added: list[str] = field(default_factory=list)
    stepwise_steps: int = 0
    fallback: str = ""
    usage: LLMUsage = field(default_factory=LLMUsage)
    events: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    plan_seconds: float = 0.0

    @property
    def success(self) -> bool:
        return self.stop_reason is RecoveryStop.COMPLETED

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("usage", "stop_reason")}
        d["stop_reason"] = self.stop_reason.value
        d["success"] = self.success
        d["usage"] = self.usage.to_dict()
        return d


@dataclass
class FeedbackPrompter:
    """A goal prompter whose first question also carries the execution feedback."""

    base: ReplanPrompter
    section: str

    def initial_messages(self, request: GoalRequest) -> list[Message]:
        msgs = list(self.base.initial_messages(request))
        msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"].rstrip() + "\n\n" + self.section.strip()}
        return msgs

    def correction_message(self, request: GoalRequest, feedback: str) -> str:
        return self.base.correction_message(request, feedback)


class _Stop(Exception):
    def __init__(self, reason: RecoveryStop, message: str):
        super().__init__(message)
        self.reason, self.message = reason, message


@dataclass
class RecoveryRunner:
    llm: ChatModel
    goal_prompter: ReplanPrompter
    executor: Executor
    domain: Domain                                    # the robot's model before learned knowledge
    knowledge: KnowledgeStore = field(default_factory=KnowledgeStore)
    lasp_prompter: Optional[LaspPrompter] = None      # None: no learning
    environment: Optional[RecoveryEnvironment] = None
    grounding: Optional[GroundingProvider] = None
    semantic: Optional[SemanticCheck] = None
    step_model: Optional[CandidateModel] = None       # stepwise mode
    step_prompter: Optional[StepPrompter] = None
    config: RecoveryConfig = field(default_factory=RecoveryConfig)
    on_event: Optional[Callable[[dict], None]] = None
    clock: Callable[[], float] = time.monotonic

    # -- helpers ---------------------------------------------------------------------------
    def _event(self, res: RecoveryResult, kind: str, text: str, **data) -> None:
        ev = {"t": round(self.clock() - self._t0, 3), "kind": kind, "text": text, **data}
        res.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)

    def _check_time(self) -> None:
        if self.clock() - self._t0 > self.config.max_seconds:
            raise _Stop(RecoveryStop.TIME_LIMIT, f"no result within {self.config.max_seconds:g} s")

    def _ground(self, domain: Domain, scene: Scene, res: RecoveryResult) -> tuple[Domain, Scene]:
        if not self.config.grounding:
            return domain, scene
        domain, scene, report = ground_scene(domain, scene, self.grounding)
        self._event(res, "grounding", report.text())
        return domain, scene

    def _complete(self, belief: Belief, added: Sequence[str], props, res: RecoveryResult) -> None:
        """Facts of objects added to the problem: learned properties, grounding predicates."""
        env = self.environment.properties() if self.environment is not None else {}
        for rel in property_relations(props, belief.scene.subset(added), env):
            belief.scene.add_relation(rel.predicate, *rel.args)
        belief.domain, belief.scene = self._ground(belief.domain, belief.scene, res)

    def _goal(self, task: str, belief: Belief, res: RecoveryResult, feedback: str = "") -> list:
        t = belief.task()
        prompter = self.goal_prompter if not feedback else FeedbackPrompter(
            self.goal_prompter, self.goal_prompter.replan_section(res.goal or "(none)", feedback))
        loop = GoalLoop(self.llm, prompter, self.semantic, max_rounds=self.config.goal_rounds,
                        max_seconds=max(1.0, self.config.max_seconds - (self.clock() - self._t0)))
        # With the scene, the goal prompt lists what the request concerns in a large home (llm/focus.py).
        g = loop.run(GoalRequest(task=task, signature=t.signature,
                                 scene_text=scene_relations_text(belief.scene, t.names),
                                 scene=belief.scene, names=dict(t.names)))
        res.usage.add("goal", _Usage(g.prompt_tokens, g.completion_tokens, g.llm_seconds), calls=g.rounds)
        if not g.accepted:
            if g.stop_reason.value == "llm_error":
                raise _Stop(RecoveryStop.LLM_ERROR, f"the LLM failed while writing the goal: {g.error}")
            last = g.feedback[-1].message if g.feedback else ""
            raise _Stop(RecoveryStop.NO_GOAL, f"no goal was accepted ({g.stop_reason.value} after {g.rounds} "
                                            f"rounds){': ' + last if last else ''}")
        res.goal = g.goal_text
        self._event(res, "goal", f"goal {g.goal_text}" + (" (after execution feedback)" if feedback else ""),
                    rounds=g.rounds)
        return to_scene_names(g.dnf, t.names)

    def _plan(self, domain: Domain, belief: Belief, dnf, res: RecoveryResult) -> PlanAttemptResult:
        self._check_time()
        t0 = self.clock()
        left = self.config.max_seconds - (t0 - self._t0)
        pr = domain.plan(belief.scene, dnf, time_limit=max(1.0, min(self.config.plan_time_limit, left)))
        res.plan_seconds += self.clock() - t0
        return PlanAttemptResult(pr.solved, list(pr.plan), pr.status, pr.message, pr)

    # -- the loop --------------------------------------------------------------------------
    def run(self, task: str, scene: Scene, failed: Optional[tuple] = None) -> RecoveryResult:
        """Carry out ``task`` from ``scene`` (what the robot believes now). ``failed``: a
        (PlanStep, Failure) that has just happened (e.g. in the tool-selection loop's plan):
        learning starts from it instead of failing the same step again."""

        self._t0 = self.clock()
        res = RecoveryResult(RecoveryStop.COMPLETED)
        text, problem = clean_task(task, 2000)
        if problem:
            res.stop_reason, res.message = RecoveryStop.INVALID_TASK, problem
            return res
        try:
            self._run(text, scene, res, failed)
        except _Stop as stop:
            res.stop_reason, res.message = stop.reason, stop.message
        except ChatModelError as exc:
            res.stop_reason, res.message = RecoveryStop.LLM_ERROR, f"the LLM failed: {exc}"
        res.seconds = self.clock() - self._t0
        self._event(res, "stop", f"{res.stop_reason.value}: {res.message}")
        if res.success and res.learned:
            self.knowledge.confirm(p.key for p in self.knowledge.preconditions
                                   if f"{p.action} requires {p.condition}" in res.learned)
        return res

    def _run(self, task: str, scene: Scene, res: RecoveryResult, failed: Optional[tuple] = None) -> None:
        cfg = self.config
        problem = prepare_problem(self.domain, self.knowledge, scene, lambda _domain: self.environment,
                                  self.grounding if cfg.grounding else None)
        res.notes += problem.notes
        if self.knowledge.preconditions or self.knowledge.properties:
            self._event(res, "knowledge", "planning with learned knowledge:\n" + self.knowledge.render())
        domain, scene = problem.domain, problem.scene
        if problem.grounding is not None:
            self._event(res, "grounding", problem.grounding.text())
        belief = Belief(scene, domain)
        lasp = (Lasp(self.llm, self.lasp_prompter, self.knowledge, self.environment, max_seconds=cfg.max_seconds,
                     keep_when_objects_unseen=cfg.keep_when_objects_unseen,
                     complete_objects=lambda b, added, props: self._complete(b, added, props, res))
                if cfg.learn and self.lasp_prompter is not None else None)
        repairer = cfg.repairer()
        dnf = self._goal(task, belief, res)
        failures: list[Failure] = []
        pending: Optional[PlanAttemptResult] = None
        stepwise = (StepwisePlanner(self.step_model, self.step_prompter, cfg.stepwise_k)
                    if cfg.mode == "stepwise" and self.step_model is not None and self.step_prompter is not None
                    else None)
        if cfg.mode == "stepwise" and stepwise is None:
            res.fallback = "stepwise mode needs a candidate model and prompts; planning with the PDDL planner"
            self._event(res, "fallback", res.fallback)
        history: list[str] = []
        if failed is not None and lasp is not None:
            step, raw = failed
            failures.append(at_level(raw, cfg.feedback))
            res.raw_failures.append(raw.feedback())
            res.failures.append(failures[-1].feedback())
            self._event(res, "failure", f"{step} had failed: {res.failures[-1]}")
            if raw.code is FailureCode.PRECONDITION and belief.applicable(step)[0]:
                got = self._refine(lasp, task, step, raw, domain, belief, dnf, res)
                if got is not None:
                    domain, belief, pending = got

        while True:
            self._check_time()
            if len(res.executed) >= cfg.max_steps:
                raise _Stop(RecoveryStop.STEP_BOUND, f"{cfg.max_steps} steps executed without finishing the task")
            rexec = RecoveringExecutor(self.executor, belief, repairer, cfg.feedback, goal=dnf,
                                       max_repairs=cfg.max_repairs, max_steps=cfg.max_steps - len(res.executed),
                                       repair_model_gaps=lasp is None)
            if stepwise is not None and not res.fallback:
                done = self._stepwise_step(stepwise, task, dnf, belief, rexec, res, history)
                if done is True:
                    return
                if done is None:  # fell back to the planner: go on below
                    continue
                run = done
                plan_steps = []
            else:
                attempt = pending or self._plan(domain, belief, dnf, res)
                pending = None
                if not attempt.solved and lasp is not None and attempt.status == "unsolvable":

                    tmp = Refinement(False)
                    # called right away (dnf does not change meanwhile); bound explicitly all the same
                    attempt = lasp.plan_with_expansion(domain, belief,
                                                       lambda d, b, dnf=dnf: self._plan(d, b, dnf, res),
                                                       task, res.goal or "", tmp)
                    res.usage.merge(tmp.usage)
                    res.objects_added += tmp.objects_added
                    if tmp.objects_added:
                        self._event(res, "objects", f"object expander added {', '.join(tmp.objects_added)}")
                if not attempt.solved:
                    msg = f"no plan for {res.goal} ({attempt.status}): {attempt.message}"
                    self._event(res, "plan", msg)
                    failures.append(Failure(FailureCode.INVALID, "", msg))
                    dnf = self._replan(task, belief, failures, res, RecoveryStop.NO_PLAN, msg)
                    continue
                plan_steps = list(attempt.plan)
                res.plans.append([str(s) for s in plan_steps])
                self._event(res, "plan", "plan: " + ("; ".join(map(str, plan_steps)) or "nothing to do"))
                run = rexec.execute(plan_steps)
            res.mid_replans += len(run.repairs)
            for rep in run.repairs:
                self._event(res, "repair", rep.message, rule=rep.rule)
            res.executed += [str(s) for s in run.executed_steps]
            belief.apply_steps(run.executed_steps)
            if stepwise is None or res.fallback:
                if res.first_plan_executable is None:
                    res.first_plan_executable = run.success and run.failures_seen == 0
            if run.success:
                if stepwise is not None and not res.fallback:
                    continue
                res.message = f"the plan ran to its end ({len(res.executed)} steps executed)"
                return
            raw = run.raw_failure or run.failure
            res.raw_failures.append(raw.feedback() if raw else "unknown failure")
            res.failures.append(run.failure.feedback() if run.failure else "unknown failure")
            failures.append(run.failure)
            self._event(res, "failure", res.failures[-1])
            if cfg.feedback.has_why and run.observed:
                rep = belief.observe(run.observed)
                if rep.applied:
                    self._event(res, "observed", "belief updated: " + ", ".join(rep.applied))
            step = run.failed_step
            history.append(f"{step} FAILED: {res.failures[-1]}")
            if stepwise is not None and not res.fallback:
                # IALP replans every step anyway: the failure goes into the next step's prompt.
                if res.high_replans >= cfg.max_replans:
                    raise _Stop(RecoveryStop.REPLAN_BOUND, f"{res.high_replans} failed steps (max_replans); "
                                                         f"the last: {res.failures[-1]}")
                res.high_replans += 1
                continue
            if (lasp is not None and raw is not None and raw.code is FailureCode.PRECONDITION and step is not None
                    and belief.applicable(step)[0]):
                got = self._refine(lasp, task, step, raw, domain, belief, dnf, res)
                if got is not None:
                    domain, belief, pending = got
                    continue
                msg = res.events[-1]["text"]
                dnf = self._replan(task, belief, failures, res, RecoveryStop.REFINE_BOUND
                                   if res.refinements >= cfg.max_refinements else RecoveryStop.REPLAN_BOUND, msg)
                continue
            dnf = self._replan(task, belief, failures, res, RecoveryStop.REPLAN_BOUND,
                               f"the last failure: {res.failures[-1]}")

    def _replan(self, task: str, belief: Belief, failures: Sequence[Failure], res: RecoveryResult,
                reason: RecoveryStop, why: str) -> list:
        if res.high_replans >= self.config.max_replans:
            raise _Stop(reason, f"{res.high_replans} high-level replans used up (max_replans); {why}")
        res.high_replans += 1
        text = feedback_text(failures, self.config.feedback)
        self._event(res, "replan", f"high-level replan {res.high_replans}/{self.config.max_replans} with "
                                   f"feedback ({self.config.feedback.value}):\n{text}")
        return self._goal(task, belief, res, feedback=text)

    def _refine(self, lasp: Lasp, task: str, step, raw: Failure, domain: Domain, belief: Belief, dnf,
                res: RecoveryResult):
        cfg = self.config
        if res.refinements >= cfg.max_refinements:
            self._event(res, "learn", f"no refinement: {cfg.max_refinements} refinements used up (max_refinements)")
            return None
        res.refinements += 1
        ctx = FailureContext(task, str(step), step.action, schema_text(domain, step.action),
                             at_level(raw, cfg.feedback).feedback(), failure_state(belief.scene, step.args))
        ref = lasp.refine(ctx, step, domain, belief, lambda d, b: self._plan(d, b, dnf, res), res.goal or "")
        res.usage.merge(ref.usage)
        res.objects_added += ref.objects_added
        if not ref.ok and ref.needs_object:
            learned = [f"{i.action} requires {i.condition}" for i in ref.learned]
            learned += [f"new property {p.name} (values from {p.source})" for p in ref.properties]
            res.learned += learned
            self._event(res, "learn", f"LASP refinement {res.refinements} learned: " + "; ".join(learned)
                        + "; no plan with the objects the robot knows", causes=ref.causes, rejected=ref.rejected)
            raise _Stop(RecoveryStop.NEEDS_OBJECT, f"learned {'; '.join(learned)}, but no object the robot knows "
                                                   "makes a plan with it: what the task needs must be found first "
                                                   "(explore)")
        if not ref.ok:
            self._event(res, "learn", f"LASP refinement {res.refinements} found nothing: {ref.stop_reason}"
                        + (f"; rejected: {' | '.join(ref.rejected)}" if ref.rejected else ""),
                        causes=ref.causes, rejected=ref.rejected)
            return None
        learned = [f"{i.action} requires {i.condition}" for i in ref.learned]
        learned += [f"new property {p.name} (values from {p.source})" for p in ref.properties]
        res.learned += learned
        self._event(res, "learn", f"LASP refinement {res.refinements} learned: " + "; ".join(learned)
                    + (f"; objects added: {', '.join(ref.objects_added)}" if ref.objects_added else ""),
                    causes=ref.causes, rejected=ref.rejected)
        return ref.domain, ref.belief, ref.plan

    def _stepwise_step(self, stepwise: StepwisePlanner, task: str, dnf, belief: Belief, rexec, res, history):
        """One IALP step: True when the goal holds, None after falling back, else the run."""
        if goal_holds(belief.task(), dnf):
            res.message = f"the goal holds ({res.stepwise_steps} steps chosen step by step)"
            return True
        choice = stepwise.choose(task, res.goal or "", dnf, belief, history)
        s = choice.sampled
        if s is not None:
            res.usage.add("step", _Usage(s.prompt_tokens, s.completion_tokens, s.seconds), calls=s.calls)
        scores = [(c.text.strip()[:60], c.logprob, c.kind if c.valid else f"invalid: {c.problem}")
                  for c in choice.candidates]
        if choice.fallback:
            res.fallback = choice.fallback
            self._event(res, "fallback", f"step planner: {choice.fallback}; the PDDL planner takes over",
                        candidates=scores)
            return None
        c = choice.chosen
        res.stepwise_steps += 1
        self._event(res, "step_choice", f"chose {c.text.strip()!r} (log-probability {c.logprob:.3f})",
                    candidates=scores)
        if c.kind == "alert":
            raise _Stop(RecoveryStop.ALERT, f"the step planner asks for help: {c.argument}")
        if c.kind == "done":
            return True
        if c.kind == "adjust":
            history.append(f"adjust {c.argument}")
            domain, scene = self._ground(belief.domain, belief.scene, res)
            belief.domain, belief.scene = domain, scene

            return RecoveryExecution(True)
        run = rexec.execute([c.step])
        if run.success:
            history.append(str(c.step))
        return run


@dataclass(frozen=True)
class _Usage:
    prompt_tokens: int
    completion_tokens: int
    seconds: float
