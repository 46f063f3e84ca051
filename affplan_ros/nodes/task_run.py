"""One task of the tool-selection node: the AutoGPT+P loop with the other nodes as its tools
(clients/), the approval gate in front of the executor, and the feedback it publishes."""
from __future__ import annotations

import dataclasses
import time
from typing import Optional

from affplan_ros.action import ExecuteTask
from affplan_ros.clients.executor import RosExecutor
from affplan_ros.clients.memory import MemoryClient
from affplan_ros.clients.planner import RemotePlanner
from affplan_ros.core.agent.approval import ApprovalGate, ApprovalRequest
from affplan_ros.core.model.memory import Memory
from affplan_ros.core.ports import MemoryStore
from affplan_ros.msg import Plan
from affplan_ros.nodes.base import call_service
from affplan_ros.nodes.convert_memory import steps_to_msg
from affplan_ros.srv import AskHuman

# core TaskStop -> ExecuteTask.stop_reason (the action's documented words)
TaskResult = ExecuteTask.Result
STOP_REASONS = {"completed": TaskResult.STOP_DONE, "no_tool": TaskResult.STOP_FAILED,
                "bound_reached": TaskResult.STOP_BOUND, "time_limit": TaskResult.STOP_BOUND,
                "llm_error": TaskResult.STOP_ERROR, "invalid_task": TaskResult.STOP_REJECTED,
                "canceled": TaskResult.STOP_CANCELED, "answered": TaskResult.STOP_ANSWERED,
                "declined": TaskResult.STOP_REJECTED,
                "llm_call_limit": TaskResult.STOP_BOUND}  # the offline interpreter did not understand the task
YES = ("yes", "y", "ok", "okay", "sure")


class TaskRun:
    """One task: the loop with the other nodes as its tools, and the feedback it publishes."""

    def __init__(self, node, goal_handle, task: str):  # node: the ToolSelectionNode
        self.node, self.gh = node, goal_handle
        self.task = task            # the request, cleaned (control characters out, length checked)
        self.memory = Memory()
        self.fb = ExecuteTask.Feedback(current_step=-1)
        self.last_plan = Plan()
        self.steps_run = 0          # steps executed of the current plan, for "step k/n"
        self.t0 = time.monotonic()  # the task's start (run() sets it again)
        self.log = node.get_logger()
        self.gate = ApprovalGate(node.approval, self.ask_approval, task)
        self.memory_client: MemoryStore = MemoryClient(node, node.calls["get_memory"], node.calls["update_memory"],
                                                       node.server_wait)

    # -- helpers ------------------------------------------------------------------------------
    def canceled(self) -> bool:
        return self.gh.is_cancel_requested

    def stopping(self) -> bool:
        """The task must stop: canceled, or the person did not approve what was about to move."""
        return self.gh.is_cancel_requested or self.gate.refused is not None

    def say(self, message: str, **fields) -> None:
        for key, value in fields.items():
            setattr(self.fb, key, value)
        self.fb.message = message
        self.gh.publish_feedback(self.fb)

    def fetch_memory(self) -> str:
        """Read the memory node's memory into the working copy ("" or why not)."""
        fresh, error = self.memory_client.fetch()
        if fresh is not None:
            self.memory.__dict__.update(fresh.__dict__)  # in place: the loop holds this object
        return error

    def sync_memory(self) -> str:
        """Push the working copy to the memory node, then take back what it merged meanwhile."""
        problem = self.memory_client.push(self.memory)
        if problem:
            self.log.error(f"memory not updated: {problem}")
            return problem
        return self.fetch_memory()

    # -- the task -----------------------------------------------------------------------------
    def run(self) -> ExecuteTask.Result:
        t0 = self.t0 = time.monotonic()
        request = self.gh.request
        node = self.node
        warm_error = node._warm.wait(60.0)
        self.log.info(f"task {self.task[:200]!r}")
        problem = self.fetch_memory() or warm_error or (node._problem if node.llm is None else "")
        if problem:
            return self.finish(False, TaskResult.STOP_ERROR, f"cannot start the task: {problem}", t0)
        if request.plan_only:
            return self.plan_only(self.task, t0)
        from affplan_ros.core.agent.tool_loop import BudgetedChatModel
        from affplan_ros.llm.loop_factory import make_tool_loop

        limit = int(node.max_llm_calls) or None   # 0: no bound
        holder: list = []                         # the loop, once built: the budget counts its calls too
        budget = BudgetedChatModel(node.llm, limit, lambda: holder[0].llm_calls_used() if holder else 0)
        learner = self.learning_executor(self.task, budget)
        loop = make_tool_loop(node.llm, learner, oam=node.oam, method=node.method,
                              confirm=self.confirm if node.confirm else None, confirm_timeout_s=node.confirm_timeout,
                              max_rounds=int(request.max_rounds or node.max_rounds), max_seconds=node.max_seconds,
                              partial_plan_on_failure=node.partial_on_failure,
                              planner=RemotePlanner(self), should_stop=self.stopping, observer=self.on_round,
                              capabilities=node.capabilities,
                              explore_when_unreachable=node.explore_when_unreachable, max_llm_calls=limit,
                              llm_calls_elsewhere=lambda: budget.calls)
        holder.append(loop)
        result = loop.run(self.task, self.memory)
        self.sync_memory()
        totals = result.totals()
        for rec in learner.recoveries:  # the learning runs' LLM use counts too
            totals["llm_calls"] += rec.usage.total_calls
            totals["prompt_tokens"] += sum(rec.usage.prompt_tokens.values())
            totals["completion_tokens"] += sum(rec.usage.completion_tokens.values())
        message = result.message
        if learner.recoveries:
            from affplan_ros.core.recovery.session import learned_summary

            message += " | " + learned_summary(learner.recoveries)
        final = self.last_plan if result.final_plan else Plan()
        if result.final_plan and learner.recoveries and learner.recoveries[-1].success:
            final = Plan(goal=self.fb.goal, steps=steps_to_msg(learner.last_run), planner="recovery")
        stop_reason = STOP_REASONS.get(result.stop_reason.value, TaskResult.STOP_ERROR)
        if self.gate.refused is not None and not result.success:
            stop_reason, message = TaskResult.STOP_REFUSED, f"{self.gate.refused}; nothing of it was executed"
        res = ExecuteTask.Result(success=result.success, final_plan=final,
                                 message=message, stop_reason=stop_reason, answer=result.answer,
                                 answered_by=list(dict.fromkeys(b for r in result.rounds for b in r.answered_by if b)),
                                 learned=[item for rec in learner.recoveries for item in rec.learned],
                                 rounds=len(result.rounds), llm_calls=totals["llm_calls"],
                                 prompt_tokens=totals["prompt_tokens"], completion_tokens=totals["completion_tokens"],
                                 seconds=time.monotonic() - t0)
        return self.close(res)

    def learning_executor(self, task: str, llm=None):
        """The loop's executor: the ExecutePlan client, step by step, with mid-level repair and
        learning (core/recovery/session.py)."""
        from affplan_ros.core.knowledge.capabilities import agents_for_scene
        from affplan_ros.core.recovery.session import LearningExecutor
        from affplan_ros.llm.recovery_prompting import (
            LaspPromptBuilder,
            ReplanGoalPromptBuilder,
        )

        node = self.node
        domain = node.domain.copy()
        domain.agents = agents_for_scene(self.memory.scene(), node.profiles)
        if node.knowledge.refresh() and node.knowledge.error:
            self.log.error(f"knowledge file not used, nothing is learned: {node.knowledge.error}")
        # The robot knows only what it perceived: a valid refinement with no plan for want of an
        # object is kept, and the loop explores (tool_loop: explore_when_unreachable).
        config = dataclasses.replace(node.recovery, learn=node.knowledge.learning,
                                     max_seconds=max(1.0, node.max_seconds), keep_when_objects_unseen=True)
        # The request as it reads when learning starts (an alternative may have been accepted by then).
        return LearningExecutor(RosExecutor(self), domain, node.knowledge.current, self.memory.scene,
                                lambda: self.memory.substitute(task), config, llm=llm or node.llm,
                                deadline=self.t0 + node.max_seconds,
                                goal_prompter=ReplanGoalPromptBuilder(), lasp_prompter=LaspPromptBuilder(),
                                environment=self.learning_environment,
                                grounding=self.grounding(),
                                on_event=lambda text: self.say(text), should_stop=self.stopping)

    def learning_environment(self):
        """What LASP may ask when it learns (core/recovery/environment.py): everything memory
        holds, after a look where the robot stands (an object the plan did not use may be
        there: the object expander takes it from here), and the properties the robot's
        knowledge evaluates. A look that fails leaves memory as it was."""
        from affplan_ros.clients.executor import RosExecutor

        node = self.node
        here = self.memory.agent_location(node.robot)
        if here:
            seen = RosExecutor(self)._look(here)
            if seen.success and seen.observation is not None:
                before = set(self.memory.objects)
                self.memory.merge(seen.observation)
                added = sorted(set(self.memory.objects) - before)
                if added:
                    self.say(f"looked around {here} while learning: {', '.join(added)}")
        return node.environment_knowledge.environment(self.memory.scene(), node.oam, node.domain.predicates)

    def grounding(self):
        """The robot's grounding for the learning runs (parameter ``grounding``), or None."""
        if self.node.grounding is None:
            return None
        from affplan_ros.clients.grounding import LiveGrounding

        return LiveGrounding(self.node.grounding)

    def finish(self, success: bool, reason: str, message: str, t0: float,
               plan: Optional[Plan] = None) -> ExecuteTask.Result:
        return self.close(ExecuteTask.Result(success=success, stop_reason=reason, message=message,
                                             final_plan=plan or Plan(), seconds=time.monotonic() - t0))

    def close(self, res: ExecuteTask.Result) -> ExecuteTask.Result:
        if res.stop_reason == TaskResult.STOP_REFUSED:
            self.gh.abort()
        elif res.stop_reason == TaskResult.STOP_CANCELED or (self.canceled() and not res.success):
            res.stop_reason = TaskResult.STOP_CANCELED
            self.gh.canceled()
        elif res.success:
            self.gh.succeed()
        else:
            self.gh.abort()
        self.log.info(f"task {'succeeded' if res.success else res.stop_reason}: {res.message}")
        return res

    def plan_only(self, task: str, t0: float) -> ExecuteTask.Result:
        """Plan the whole task once and report; nothing moves and memory does not change."""
        attempt = RemotePlanner(self).plan(task, None, partial=False)
        plan = self.last_plan if attempt.ok else Plan()
        stop_reason = TaskResult.STOP_DONE if attempt.ok else TaskResult.STOP_FAILED
        res = ExecuteTask.Result(success=attempt.ok, stop_reason=stop_reason,
                                 message=attempt.message, final_plan=plan, seconds=time.monotonic() - t0)
        if attempt.goal is not None:
            g = attempt.goal
            res.answered_by = list(dict.fromkeys(b for b in g.answered_by if b))
            res.llm_calls, res.prompt_tokens, res.completion_tokens = g.rounds, g.prompt_tokens, g.completion_tokens
        return self.close(res)

    def on_round(self, event: str, rec) -> None:
        tool = (rec.tool or "").lower()
        if event == "selected":
            self.say(f"round {rec.round}: {rec.tool}{' ' + rec.argument if rec.argument else ''}", round=rec.round,
                     tool=tool, tool_argument=rec.argument or "", current_step=-1, step_status="")
            return
        self.say(rec.result or rec.error or "", goal=rec.goal or self.fb.goal)
        self.sync_memory()

    def confirm(self, missing: str, alternative: str) -> bool:
        question = (f"There is no {missing} here. May I use the {alternative} instead? (task: {self.task})")
        self.say(f"asking the person: {question}")
        timeout = self.node.confirm_timeout
        request = AskHuman.Request(question=question, options=["yes", "no"], timeout_s=float(timeout),
                                   purpose=AskHuman.Request.PURPOSE_ALTERNATIVE)
        got, error = call_service(self.node.calls["ask_human"], request, timeout + 1.0, stop=self.canceled,
                                  wait_s=self.node.server_wait, node=self.node)
        if got is None:
            raise RuntimeError(f"nobody to ask: {error}")
        accepted = got.answered and got.answer.strip().lower() in YES
        self.say(f"the person {'accepted' if accepted else 'did not accept'} {alternative} for {missing}")
        return accepted

    def ask_approval(self, request: ApprovalRequest) -> tuple[bool, str]:
        """The approval gate's question, through AskHuman: (approved, why not)."""
        self.say(f"asking the person: {request.question}")
        timeout = self.node.approval_timeout
        plan = Plan(goal=request.goal, steps=steps_to_msg(request.steps))
        ask = AskHuman.Request(question=request.question, options=["yes", "no"], timeout_s=float(timeout),
                               purpose=AskHuman.Request.PURPOSE_APPROVE_PLAN, plan=[plan])
        got, error = call_service(self.node.calls["ask_human"], ask, timeout + 1.0, stop=self.canceled,
                                  wait_s=self.node.server_wait, node=self.node)
        if got is None:
            why = error if "canceled" in error else f"nobody answered ({error})"
        elif not got.answered:
            why = f"no answer within {timeout:g} s"
        elif got.answer.strip().lower() not in YES:
            why = f"the person answered {got.answer.strip()[:40]!r}"
        else:
            self.say("the person approved")
            return True, ""
        self.say(f"not approved: {why}")
        return False, why
