"""tool_selection: carries out a task given in words (ExecuteTask action, Command service).

A thin wrapper over the AutoGPT+P loop (core/tool_selection.py, Algorithm 1): each round the
language backend picks a tool and the other nodes are the tools:

* Plan / Partial Plan -> the planning node (PlanTask), then the executor (ExecutePlan);
* Explore <location>   -> the executor moves the robot (a one-step ExecutePlan), then the camera
                          (Observe: perception, or the simulated world) reports what is there;
* Suggest Alternative  -> Algorithm 2 here, the person confirms through AskHuman;
* memory               -> the memory node: read at the start, the working copy pushed back after
                          every round (UpdateMemory.memory_json), so nothing is lost if this node
                          restarts between tasks.

Recovery (issue 7, core/recovery/session.py): plans run one step at a time through CoPAL's
mid level (``repair``, ``repair_rules_file``), failures go up at ``feedback_level`` (what / why /
how); when a step fails although the robot's model says it should work, LASP learns the
missing precondition (``knowledge_file``), replans and finishes the task, and the learned
knowledge is kept for the next task and every restart (the planning node reads the file).

Approval (``approval``, core/approval.py): before the robot moves, the person may be shown the
goal and the plan through AskHuman and must say yes; a no ends the task (``refused``) with
nothing of that plan executed. The gate sits in front of the executor client, so nothing the
language model answers can pass it.

Feedback goes out per round and per plan step; cancel stops the loop and the executor. All
calls to other nodes are asynchronous, made from the action's thread while other threads of
the MultiThreadedExecutor take the responses (clients live in a callback group of their own).
Every goal and request is checked first (task text, bounds); an unexpected error ends the goal
with its reason, never the node.
"""
from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
import uuid
from typing import Optional

from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.action import ExecutePlan, ExecuteTask
from affplan_ros.core.approval import ApprovalGate, ApprovalMode, ApprovalRequest
from affplan_ros.core.execution import ExecutionResult, ExploreResult
from affplan_ros.core.failure import Failure, FailureCode
from affplan_ros.core.limits import MAX_ROUNDS, MAX_TASK_CHARS
from affplan_ros.core.memory import Memory
from affplan_ros.msg import Plan
from affplan_ros.nodes.base import (FutureWait, absolute_name, background_log, call_service, declare, declare_agents, declare_capabilities,
                                    declare_knowledge, declare_llm, guarded_execute, load_robot_model,
                                    make_language_backend, require, run_node, send_goal, serve, ServerWatch,
                                    wait_for_action, WarmUp)
from affplan_ros.nodes.convert import failure_from_msg, step_text
from affplan_ros.nodes.convert_memory import observation_from_msg, steps_from_msg, steps_to_msg
from affplan_ros.srv import AskHuman, Command, GetMemory, Observe, PlanTask, UpdateMemory

# core StopReason -> ExecuteTask.stop_reason (the action's documented words)
STOP_REASONS = {"completed": "done", "no_tool": "failed", "bound_reached": "bound", "time_limit": "bound",
                "llm_error": "error", "invalid_task": "rejected", "canceled": "canceled",
                "declined": "rejected"}  # the offline interpreter did not understand the task
YES = ("yes", "y", "ok", "okay", "sure")


class ToolSelectionNode(Node):
    def __init__(self) -> None:
        super().__init__("tool_selection")
        self.robot = declare(self, "robot_agent", "robot0", "the robot's name in the plans")
        self.max_rounds = declare(self, "max_rounds", 10, "bound on tool-selection rounds per task")
        self.max_seconds = declare(self, "max_seconds", 600.0, "bound on one task, seconds")
        self.method = declare(self, "alternative_method", "affordance", "Suggest Alternative: affordance (Algorithm 2) or naive")
        self.confirm = declare(self, "confirm_alternatives", True, "ask the person (AskHuman) before using an alternative")
        self.confirm_timeout = declare(self, "confirm_timeout_s", 120.0, "how long to wait for the person's answer, seconds")
        self.plan_timeout = declare(self, "plan_timeout_s", 180.0, "how long to wait for the planning node, seconds")
        self.execute_timeout = declare(self, "execute_timeout_s", 900.0, "how long to wait for one plan's execution, seconds")
        self.server_wait = declare(self, "server_wait_s", 3.0, "how long to wait for another node to appear, seconds")
        approval = declare(self, "approval", "plan", "ask the person before the robot moves: none, plan (the goal and "
                           "every step of each new plan, once) or each_step; no answer in approval_timeout_s is a no")
        self.approval_timeout = declare(self, "approval_timeout_s", 120.0, "how long to wait for the person's approval, "
                                        "seconds (then: not approved)")
        oam_file = declare(self, "oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)")
        names = {key: declare(self, f"{key}_service", default, f"{what} service")
                 for key, default, what in (("plan", "plan_task", "PlanTask"), ("observe", "observe", "Observe"),
                                            ("ask_human", "ask_human", "AskHuman"), ("get_memory", "get_memory", "GetMemory"),
                                            ("update_memory", "update_memory", "UpdateMemory"))}
        self.execute_plan_name = declare(self, "execute_plan_action", "execute_plan", "ExecutePlan action of the executor")
        self.llm_config = declare_llm(self)
        self.recovery = declare_recovery(self)
        self.profiles = declare_agents(self)
        self.capabilities = declare_capabilities(self)
        self.knowledge = declare_knowledge(self)
        require(self.max_rounds >= 1, "max_rounds must be >= 1")
        require(self.max_seconds > 0, "max_seconds must be > 0")
        require(self.method in ("affordance", "naive"), "alternative_method must be 'affordance' or 'naive'")
        for key in ("confirm_timeout", "plan_timeout", "execute_timeout", "server_wait", "approval_timeout"):
            require(getattr(self, key) > 0, f"{key}_s must be > 0")
        self.approval = ApprovalMode.parse(approval)

        clients = ReentrantCallbackGroup()  # responses arrive while the task's thread waits
        self.calls = {
            "plan": self.create_client(PlanTask, names["plan"], callback_group=clients),
            "observe": self.create_client(Observe, names["observe"], callback_group=clients),
            "ask_human": self.create_client(AskHuman, names["ask_human"], callback_group=clients),
            "get_memory": self.create_client(GetMemory, names["get_memory"], callback_group=clients),
            "update_memory": self.create_client(UpdateMemory, names["update_memory"], callback_group=clients),
        }
        self.execute_plan = ActionClient(self, ExecutePlan, self.execute_plan_name, callback_group=clients)
        self._self_client = ActionClient(self, ExecuteTask, "execute_task", callback_group=clients)
        self._busy = threading.Lock()
        self.current_task = ""
        self._server = ActionServer(self, ExecuteTask, "execute_task",
                                    execute_callback=guarded_execute(self, ExecuteTask, "execute_task", self._execute),
                                    goal_callback=self._on_goal, cancel_callback=lambda _g: CancelResponse.ACCEPT,
                                    callback_group=ReentrantCallbackGroup())
        serve(self, Command, "command", self._on_command, ReentrantCallbackGroup())
        self.llm, self.oam, self._problem = None, None, "still starting"
        self._oam_file = oam_file
        self._warm = WarmUp(self, self._warm_up)

    def _warm_up(self) -> None:
        import affplan_ros.core.planner  # noqa: F401 - learning replans here (Fast Downward)
        import affplan_ros.llm.loop_factory  # noqa: F401 - the loop's modules, before the first task

        self.oam, self.domain = load_robot_model(self._oam_file, self.capabilities)
        backend, self._problem = make_language_backend(self.llm_config, self.oam)
        self.llm = backend.model if backend else None
        background_log(self, "info", f"tool selection: language backend: {backend.label if backend else self._problem}; "
                               f"approval: {self.approval.value}")

    # -- ExecuteTask -------------------------------------------------------------------------
    def _on_goal(self, goal) -> GoalResponse:
        # One task at a time, from its acceptance on: a second one (or a copy of this one that a
        # client sent again) is refused, not queued (Command says why). _execute releases.
        if not self._busy.acquire(blocking=False):
            self.get_logger().warn(f"refused {goal.task[:100]!r}: busy with {self.current_task[:100]!r}")
            return GoalResponse.REJECT
        self.current_task = " ".join(goal.task.split())[:200]
        return GoalResponse.ACCEPT

    def _execute(self, goal_handle):
        from affplan_ros.core.tool_selection import clean_task

        request = goal_handle.request
        try:
            task, problem = clean_task(request.task, MAX_TASK_CHARS)
            if not problem and request.max_rounds > MAX_ROUNDS:
                problem = f"max_rounds is {request.max_rounds}; the limit is {MAX_ROUNDS} (0 = the node's parameter)"
            if problem:
                goal_handle.abort()
                self.get_logger().warn(f"task refused: {problem}")
                return ExecuteTask.Result(stop_reason="rejected", message=problem)
            return TaskRun(self, goal_handle, task).run()
        finally:
            self.current_task = ""
            self._busy.release()

    # -- Command -----------------------------------------------------------------------------
    def _on_command(self, request, response):
        from affplan_ros.core.tool_selection import clean_task

        task, problem = clean_task(request.task, MAX_TASK_CHARS)
        if problem:
            response.accepted, response.message = False, problem
            return response
        if self._busy.locked():
            response.accepted, response.message = False, f"busy with {self.current_task!r}; try again when it is done"
            return response
        if not self._self_client.wait_for_server(timeout_sec=self.server_wait):
            response.accepted, response.message = False, "the ExecuteTask server of this node is not reachable"
            return response
        handle, _ = send_goal(self._self_client, ExecuteTask.Goal(task=task), timeout=10.0)
        if handle is None or not handle.accepted:
            response.accepted, response.message = False, "the task was not accepted (busy?)"
            return response
        response.accepted = True
        response.task_id = uuid.UUID(bytes=bytes(handle.goal_id.uuid)).hex
        response.message = (f"started; follow it on {self.resolve_topic_name('execute_task')}/_action/feedback "
                            "or cancel it through the ExecuteTask action")
        return response


def declare_recovery(node: Node):
    """CoPAL's and LASP's settings of the loop (core/recovery), declared and validated."""
    from affplan_ros.core.recovery.feedback import FeedbackLevel
    from affplan_ros.core.recovery.repair import RepairRuleError, load_rules
    from affplan_ros.core.recovery.runner import RecoveryConfig

    level = declare(node, "feedback_level", "how", "what a failed step tells the replanning LLM: what, why (what+why) "
                    "or how (what+why+suggestion), as in CoPAL")
    repair = declare(node, "repair", True, "mid-level repair of failed steps by rules, without the LLM (CoPAL)")
    rules_file = declare(node, "repair_rules_file", "", "repair rules (YAML); '' = the built-in table")
    max_replans = declare(node, "max_replans", 5, "bound on high-level replans while learning, per task")
    max_refinements = declare(node, "max_refinements", 4, "bound on LASP refinements (learning attempts) per task")
    max_repairs = declare(node, "max_repairs", 5, "bound on mid-level repairs per plan")
    try:
        feedback = FeedbackLevel.parse(level)
    except ValueError as exc:
        raise ValueError(f"feedback_level: {exc}") from None
    for name, value in (("max_replans", max_replans), ("max_refinements", max_refinements), ("max_repairs", max_repairs)):
        require(value >= 0, f"{name} must be >= 0")
    try:
        table = load_rules(rules_file or None)  # read once: a broken file stops the node at start-up, not mid-task
    except RepairRuleError as exc:
        raise ValueError(f"repair_rules_file: {exc}") from None
    return RecoveryConfig(feedback=feedback, repair=bool(repair), rules_file=rules_file or None, rule_table=table,
                          max_replans=int(max_replans), max_refinements=int(max_refinements),
                          max_repairs=int(max_repairs))


class TaskRun:
    """One task: the loop with the other nodes as its tools, and the feedback it publishes."""

    def __init__(self, node: ToolSelectionNode, goal_handle, task: str):
        self.node, self.gh = node, goal_handle
        self.task = task            # the request, cleaned (control characters out, length checked)
        self.memory = Memory()
        self.fb = ExecuteTask.Feedback(current_step=-1)
        self.last_plan = Plan()
        self.steps_run = 0          # steps executed of the current plan, for "step k/n"
        self.t0 = time.monotonic()  # the task's start (run() sets it again)
        self.log = node.get_logger()
        self.gate = ApprovalGate(node.approval, self.ask_approval, task)

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
        got, error = call_service(self.node.calls["get_memory"], GetMemory.Request(), 10.0,
                                  wait_s=self.node.server_wait, node=self.node, resend_silent_s=2.0)
        if got is None:
            return f"cannot read the memory: {error}"
        try:
            fresh = Memory.from_dict(json.loads(got.json))
        except ValueError as exc:
            return f"cannot read the memory: {exc}"
        self.memory.__dict__.update(fresh.__dict__)  # in place: the loop holds this object
        return ""

    def sync_memory(self) -> str:
        """Push the working copy to the memory node, then take back what it merged meanwhile."""
        request = UpdateMemory.Request(memory_json=json.dumps(self.memory.to_dict()))
        # The whole working copy, merged by stamps: sending it twice changes nothing.
        got, error = call_service(self.node.calls["update_memory"], request, 10.0, wait_s=self.node.server_wait,
                                  node=self.node, resend_silent_s=2.0)
        if got is None or not got.success:
            problem = error or got.message
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
            return self.finish(False, "error", f"cannot start the task: {problem}", t0)
        if request.plan_only:
            return self.plan_only(self.task, t0)
        from affplan_ros.llm.loop_factory import make_tool_loop

        learner = self.learning_executor(self.task)
        loop = make_tool_loop(node.llm, learner, oam=node.oam, method=node.method,
                              confirm=self.confirm if node.confirm else None, confirm_timeout_s=node.confirm_timeout,
                              max_rounds=int(request.max_rounds or node.max_rounds), max_seconds=node.max_seconds,
                              planner=RemotePlanner(self), should_stop=self.stopping, observer=self.on_round)
        result = loop.run(self.task, self.memory)
        self.sync_memory()
        totals = result.totals()
        for rec in learner.recoveries:  # the learning runs' LLM use counts too
            totals["llm_calls"] += rec.usage.total_calls
            totals["prompt_tokens"] += sum(rec.usage.prompt_tokens.values())
            totals["completion_tokens"] += sum(rec.usage.completion_tokens.values())
        backends = ", ".join(dict.fromkeys(b for r in result.rounds for b in r.answered_by if b))
        message = result.message + (f" (answered by: {backends})" if backends else "")
        if learner.recoveries:
            from affplan_ros.core.recovery.session import learned_summary

            message += " | " + learned_summary(learner.recoveries)
        final = self.last_plan if result.final_plan else Plan()
        if result.final_plan and learner.recoveries and learner.recoveries[-1].success:
            final = Plan(goal=self.fb.goal, steps=steps_to_msg(learner.last_run), planner="recovery")
        stop_reason = STOP_REASONS.get(result.stop_reason.value, "error")
        if self.gate.refused is not None and not result.success:
            stop_reason, message = "refused", f"{self.gate.refused}; nothing of it was executed"
        res = ExecuteTask.Result(success=result.success, final_plan=final,
                                 message=message, stop_reason=stop_reason,
                                 rounds=len(result.rounds), llm_calls=totals["llm_calls"],
                                 prompt_tokens=totals["prompt_tokens"], completion_tokens=totals["completion_tokens"],
                                 seconds=time.monotonic() - t0)
        return self.close(res)

    def learning_executor(self, task: str):
        """The loop's executor: the ExecutePlan client, step by step, with mid-level repair and
        learning (core/recovery/session.py)."""
        from affplan_ros.core.capabilities import agents_for_scene
        from affplan_ros.core.recovery.lasp import SceneEnvironment
        from affplan_ros.core.recovery.session import LearningExecutor
        from affplan_ros.llm.recovery_prompting import LaspPromptBuilder, ReplanGoalPromptBuilder

        node = self.node
        domain = node.domain.copy()
        domain.agents = agents_for_scene(self.memory.scene(), node.profiles)
        if node.knowledge.refresh() and node.knowledge.error:
            self.log.error(f"knowledge file not used, nothing is learned: {node.knowledge.error}")
        config = dataclasses.replace(node.recovery, learn=node.knowledge.learning,
                                     max_seconds=max(1.0, node.max_seconds))
        # The request as it reads when learning starts (an alternative may have been accepted by then).
        return LearningExecutor(RosExecutor(self), domain, node.knowledge.current, self.memory.scene,
                                lambda: self.memory.substitute(task), config, llm=node.llm,
                                deadline=self.t0 + node.max_seconds,
                                goal_prompter=ReplanGoalPromptBuilder(), lasp_prompter=LaspPromptBuilder(),
                                environment=lambda: SceneEnvironment(self.memory.scene()),
                                on_event=lambda text: self.say(text), should_stop=self.stopping)

    def finish(self, success: bool, reason: str, message: str, t0: float, plan: Optional[Plan] = None) -> ExecuteTask.Result:
        return self.close(ExecuteTask.Result(success=success, stop_reason=reason, message=message,
                                             final_plan=plan or Plan(), seconds=time.monotonic() - t0))

    def close(self, res: ExecuteTask.Result) -> ExecuteTask.Result:
        if res.stop_reason == "refused":
            self.gh.abort()
        elif res.stop_reason == "canceled" or (self.canceled() and not res.success):
            res.stop_reason = "canceled"
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
        res = ExecuteTask.Result(success=attempt.ok, stop_reason="done" if attempt.ok else "failed",
                                 message=attempt.message, final_plan=plan, seconds=time.monotonic() - t0)
        if attempt.goal is not None:
            g = attempt.goal
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


class RemotePlanner:
    """The loop's Plan / Partial Plan tool: the planning node's PlanTask service."""

    def __init__(self, run: TaskRun):
        self.run = run

    def plan(self, request: str, scene, *, partial: bool = False, context: str = "", max_seconds=None):
        from affplan_ros.core.goal_loop import GoalLoopResult, StopReason
        from affplan_ros.core.planner import PlanResult
        from affplan_ros.core.task_planning import PlanAttempt

        run, node = self.run, self.run.node
        if scene is not None:  # within the loop: the planning node must see the latest memory
            run.sync_memory()
        timeout = node.plan_timeout if max_seconds is None else max(1.0, min(node.plan_timeout, max_seconds))
        got, error = call_service(node.calls["plan"], PlanTask.Request(task=request, partial=partial), timeout,
                                  stop=run.canceled, wait_s=node.server_wait, node=node)
        if got is None:
            return PlanAttempt(False, f"the planning node did not answer: {error}")
        for error_text in got.errors:
            run.say(f"goal rejected {error_text}")
        rounds = len(got.errors) + (1 if got.goal else 0)
        answered = re.search(r"\(goal answered by: ([^)]*)\)$", got.message)
        goal = GoalLoopResult(StopReason.ACCEPTED if got.goal else StopReason.BOUND_REACHED, goal_text=got.goal or None,
                              rounds=rounds, prompt_tokens=got.prompt_tokens, completion_tokens=got.completion_tokens,
                              llm_seconds=got.llm_seconds,
                              answered_by=answered.group(1).split(", ") if answered else [])
        steps = steps_from_msg(got.plan)
        result = PlanResult("solved" if got.success else "unsolvable", steps, got.plan.cost if got.success else None)
        if got.success:
            run.last_plan, run.steps_run = got.plan, 0
            run.gate.offer(got.goal, steps)
            learned = re.search(r"\(planned with learned knowledge: (.*?)\)(?= \(goal answered by|$)", got.message)
            run.say(f"goal {got.goal}; plan of {len(steps)} steps, cost {got.plan.cost:g}: "
                    + "; ".join(step_text(s) for s in got.plan.steps)
                    + (f" (with learned knowledge: {learned.group(1)})" if learned else ""), goal=got.goal, plan=got.plan)
        return PlanAttempt(got.success, got.message, goal=goal, plan=result, goal_text=got.goal or None,
                           agent_costs={s.agent: s.cost for s in got.plan.steps})


class RosExecutor:
    """The loop's executor: the executor node's ExecutePlan action, and Observe for Explore."""

    def __init__(self, run: TaskRun):
        self.run = run

    def execute(self, steps) -> ExecutionResult:
        steps = list(steps)
        if self.run.gate.mode is ApprovalMode.EACH_STEP and len(steps) > 1:  # asked one at a time, as they come
            done = 0
            for step in steps:
                one = self.execute([step])
                done += one.steps_done
                if not one.success:
                    return ExecutionResult(False, done, one.failure)
            return ExecutionResult(True, done)
        refused = self.run.gate.check(steps)
        if refused is not None:
            return ExecutionResult(False, 0, Failure(FailureCode.CANCELED, "execute plan", "nothing was executed",
                                                     refused))
        result = self._send(steps)
        self.run.gate.done(steps[:result.steps_done])
        return result

    def _send(self, steps) -> ExecutionResult:
        run, node = self.run, self.run.node
        name = absolute_name(node, node.execute_plan_name)
        if not wait_for_action(node, node.execute_plan, name, node.server_wait):
            return ExecutionResult(False, 0, Failure(FailureCode.UNAVAILABLE, "execute plan", "the plan could not start",
                                                     f"no executor answers at {name}", "start the executor node"))
        plan = Plan(goal=run.fb.goal, steps=steps_to_msg(steps))
        # Recovery sends one step at a time: number the steps within the current plan.
        first = run.steps_run
        total = max(len(run.last_plan.steps), first + len(plan.steps))

        def relay(msg) -> None:
            fb = msg.feedback
            detail = fb.message if fb.status == "failed" else step_text(fb.step)
            index = first + fb.current_step
            run.say(f"step {index + 1}/{total} {fb.status}: {detail}", current_step=index, step_status=fb.status)

        # Generous: on a loaded machine the goal response can take seconds; a lost one must not hang.
        handle, answered = send_goal(node.execute_plan, ExecutePlan.Goal(plan=plan), feedback_callback=relay,
                                     timeout=30.0, stop=run.canceled)
        if answered != "done" or not handle.accepted:
            what, why = {"done": ("the executor refused the plan", "it is busy with another plan"),
                         "stopped": ("the plan did not start", "the task was canceled")}.get(
                answered, ("the plan did not start", f"the executor at {name} did not answer the goal within 30 s"))
            code = FailureCode.CANCELED if answered == "stopped" else FailureCode.UNAVAILABLE
            return ExecutionResult(False, 0, Failure(code, "execute plan", what, why))
        finished = FutureWait(handle.get_result_async())
        executor = ServerWatch(node, name)
        outcome = finished.until(time.monotonic() + node.execute_timeout, lambda: run.canceled() or executor.gone())
        if outcome == "stopped" and not run.canceled():
            return ExecutionResult(False, 0, Failure(FailureCode.UNAVAILABLE, "execute plan", "the plan was interrupted",
                                                     f"the executor at {name} stopped while it ran the plan (it "
                                                     "exited or was restarted); where the robot got to is unknown"))
        if outcome != "done":
            # Cancel the executor too, and wait for it to stop: the world is left as the last
            # finished step made it (skills apply their effect only at the end).
            FutureWait(handle.cancel_goal_async()).until(time.monotonic() + 5.0)
            finished.until(time.monotonic() + 15.0)
            why = "the task was canceled" if outcome == "stopped" else f"no result within {node.execute_timeout:g} s"
            res = finished.future.result().result if finished.future.done() else None
            return ExecutionResult(False, res.steps_done if res else 0,
                                   Failure(FailureCode.CANCELED if outcome == "stopped" else FailureCode.TIMEOUT,
                                           "execute plan", "the plan was stopped", why))
        res = finished.future.result().result
        run.steps_run += res.steps_done
        return ExecutionResult(res.success, res.steps_done, failure_from_msg(res.failure))

    def explore(self, location: str) -> ExploreResult:
        from affplan_ros.core.planner import PlanStep

        run, node = self.run, self.run.node
        here = run.memory.agent_location(node.robot)
        if here != location:
            moved = self.execute([PlanStep("move", (here or "", location), node.robot)])
            if not moved.success:
                return ExploreResult(False, failure=moved.failure)
        got, error = call_service(node.calls["observe"], Observe.Request(location=location), 30.0,
                                  stop=run.canceled, wait_s=node.server_wait, node=node)
        if got is None or not got.success:
            return ExploreResult(False, failure=Failure(FailureCode.UNAVAILABLE if got is None else FailureCode.NOT_FOUND,
                                                        f"observe {location}", f"looking at {location} failed",
                                                        error or got.message))
        observation = observation_from_msg(got.observation)
        problems = observation.problems()
        if problems:  # what the camera node answered cannot be believed: nothing of it enters memory
            return ExploreResult(False, failure=Failure(FailureCode.INVALID, f"observe {location}",
                                                        f"the view of {location} was malformed", problems[0]))
        return ExploreResult(True, observation, cost=1.0)


def main(args=None) -> int:
    return run_node(ToolSelectionNode, args, threads=8)


if __name__ == "__main__":
    raise SystemExit(main())
