"""executor: runs a plan step by step through the skill action servers (ExecutePlan action).

Each step becomes a goal of the skill action named in ``config/skills.yaml``; the step's
outcome (or a structured failure: what / why / suggestion) is reported as feedback. One plan
runs at a time; cancel stops the running skill too. Steps have a time limit, and a skill
server that does not answer fails the step with a clear message instead of hanging.

A step the plan gives a person (agent ``human0``) is put to them through the ``ask_human``
service (AskHuman: served by ``affplan ask`` at the terminal, or a UI) and waits at most
``human_timeout_s``. With ``apply_human_steps`` (the simulated world) the step then goes to
the skill server too, so the simulated world learns what the person did.
"""
from __future__ import annotations

import time

from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.action import ExecutePlan
from affplan_ros.core.agent.execution import HumanAnswer, human_failure, human_step_text
from affplan_ros.core.knowledge.capabilities import parameter_names
from affplan_ros.core.knowledge.skills import SkillMap, SkillMapError
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.limits import MAX_PLAN_STEPS, check_timeout
from affplan_ros.env import config_file
from affplan_ros.interfaces import interface_types
from affplan_ros.msg import PlanStep
from affplan_ros.nodes.base import (
    CAPABILITY_PARAMS,
    RESULT_KEEP_S,
    FutureWait,
    ServerWatch,
    absolute_name,
    call_service,
    guarded_execute,
    load_capabilities,
    run_node,
)
from affplan_ros.nodes.convert import (
    failure_from_msg,
    failure_to_msg,
    fill_message,
    step_text,
)
from affplan_ros.nodes.convert_memory import is_human, plan_step_problem
from affplan_ros.nodes.goal_gate import OneGoalAtATime
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.srv import AskHuman

YES = ("yes", "y", "done", "ok", "okay")

PARAMS = (
    Param("skills_file", "", "PDDL action -> skill action mapping (default: config/skills.yaml)"),
    Param("step_timeout_s", 60.0, "time limit of one plan step, seconds", above=0),
    Param("server_wait_s", 5.0, "how long to wait for a skill server to appear, seconds", minimum=0),
    Param("human_timeout_s", 120.0, "how long a person may take for a step the plan gives them, seconds", above=0),
    Param("apply_human_steps", False, "after a person did a step, also send it to the skill server (true for the "
          "simulated world, which must learn what the person did)"),
    Param("ask_human_service", "ask_human", "AskHuman service that reaches the person"),
)


class ExecutorNode(Node):
    def __init__(self) -> None:
        super().__init__("executor")
        p = declare_params(self, PARAMS + CAPABILITY_PARAMS)
        self.step_timeout, self.server_wait, self.human_timeout = p.step_timeout_s, p.server_wait_s, p.human_timeout_s
        self.apply_human_steps = p.apply_human_steps

        try:
            self.skill_map = SkillMap.from_file(config_file("skills.yaml", p.skills_file))
            capabilities = load_capabilities(p.capabilities_file)
            self.parameters = parameter_names(capabilities)
            self.capabilities = capabilities
            # Environment capabilities (e.g. wetten) happen by themselves: no skill runs them.
            self.environment = {name for name, cap in capabilities.items() if cap.environment}
        except (OSError, SkillMapError) as exc:
            raise ValueError(f"cannot load the skill mapping or capabilities: {exc}") from exc

        # Skill clients live in their own group so that their responses are processed while the
        # ExecutePlan callback (in another group) waits on them.
        self._client_group = ReentrantCallbackGroup()
        self._action_types = interface_types("action")
        self._skill_seen: set[str] = set()   # skill types whose server this node has used
        self._skill_clients = {
            skill: ActionClient(self, self._action_types[skill], self.skill_map.server(skill),
                                callback_group=self._client_group)
            for skill in self.skill_map.skill_types()
        }
        self._ask_human = self.create_client(AskHuman, p.ask_human_service, callback_group=self._client_group)
        # One plan at a time, from its acceptance on: a second plan (or a copy of this one that a
        # client sent again) is rejected, never queued to run after it.
        self._gate = OneGoalAtATime(self.get_logger(), "execute_plan",
                                    lambda goal: f"a plan of {len(goal.plan.steps)} step(s)")
        self._server = ActionServer(
            self, ExecutePlan, "execute_plan",
            execute_callback=guarded_execute(self, ExecutePlan, "execute_plan", self._execute),
            goal_callback=self._gate.on_goal, handle_accepted_callback=self._gate.on_accepted,
            cancel_callback=lambda _g: CancelResponse.ACCEPT, result_timeout=RESULT_KEEP_S,
            # Reentrant: the cancel request must be served while the plan runs.
            callback_group=ReentrantCallbackGroup())
        self.get_logger().info(f"executor ready: {len(self._skill_clients)} skill types, "
                               f"step limit {self.step_timeout:.0f} s")

    def _execute(self, goal_handle):
        try:
            # Accepted beside another plan (see nodes/goal_gate.py): refused like a bad plan.
            problem = ("another plan is running" if not self._gate.holds(goal_handle)
                       else self._plan_problem(goal_handle.request))
            if problem:
                goal_handle.abort()
                self.get_logger().warn(f"plan rejected: {problem}")
                return ExecutePlan.Result(message=f"plan rejected: {problem}", failure=failure_to_msg(
                    Failure(FailureCode.INVALID, "execute plan", "the plan was rejected", problem)))
            return self._run_plan(goal_handle)
        finally:
            self._gate.release(goal_handle)

    def _plan_problem(self, request) -> str:
        """Why the ExecutePlan goal cannot run ("" when it can): nothing moves for a bad plan."""
        steps = request.plan.steps
        if len(steps) > MAX_PLAN_STEPS:
            return f"{len(steps)} steps; the limit is {MAX_PLAN_STEPS}"
        try:
            check_timeout(request.step_timeout_s, "step_timeout_s")
        except ValueError as exc:
            return str(exc)
        for i, step in enumerate(steps):
            problem = plan_step_problem(step)
            if not problem and step.action not in self.environment and step.action not in self.capabilities:
                problem = f"unknown action {step.action!r}"
            if not problem and not step.agent and step.action not in self.environment:
                problem = f"{step.action} needs an agent"
            if problem:
                return f"step {i + 1} ({step_text(step)[:80]}): {problem}"
        return ""

    def _run_plan(self, goal_handle):
        plan = goal_handle.request.plan
        timeout = goal_handle.request.step_timeout_s or self.step_timeout
        result = ExecutePlan.Result()
        for i, step in enumerate(plan.steps):
            self._feedback(goal_handle, i, step, "running", f"step {i + 1}/{len(plan.steps)}: {step_text(step)}")
            if step.action in self.environment:
                # Nothing to command: the world brings the effect about (the next step's
                # preconditions will say if it did not).
                result.executed.append(step)
                result.steps_done += 1
                self._feedback(goal_handle, i, step, "succeeded", f"happens by itself: {step_text(step)}")
                continue
            if is_human(step.agent):
                failure = self._ask_person(goal_handle, step)
                if failure is None and self.apply_human_steps:
                    failure = self._run_step(goal_handle, step, timeout)
            else:
                failure = self._run_step(goal_handle, step, timeout)
            if failure is None:
                result.executed.append(step)
                result.steps_done += 1
                self._feedback(goal_handle, i, step, "succeeded", f"done: {step_text(step)}")
                continue
            result.failure = failure_to_msg(failure)
            result.message = failure.feedback()
            self._feedback(goal_handle, i, step, "failed", result.message)
            if failure.code == FailureCode.CANCELED:
                goal_handle.canceled()
            else:
                goal_handle.abort()
            self.get_logger().warn(f"plan stopped at step {i + 1}: {result.message}")
            return result
        result.success = True
        result.message = f"all {len(plan.steps)} steps succeeded"
        goal_handle.succeed()
        return result

    def _feedback(self, goal_handle, index: int, step: PlanStep, status: str, message: str) -> None:
        goal_handle.publish_feedback(ExecutePlan.Feedback(current_step=index, step=step, status=status,
                                                          message=message))

    def _run_step(self, goal_handle, step: PlanStep, timeout: float) -> Failure | None:
        text = step_text(step)
        try:
            call = self.skill_map.goal_for(step.action, step.agent, list(step.arguments),
                                           self.parameters.get(step.action, list(step.arguments)))
            goal = fill_message(self._action_types[call.skill].Goal(), {**call.goal, "step": step})
        except (SkillMapError, ValueError) as exc:
            return Failure(FailureCode.INVALID, text, f"cannot execute {text}", str(exc))
        client = self._skill_clients[call.skill]
        if not client.wait_for_server(timeout_sec=self.server_wait):
            return Failure(FailureCode.UNAVAILABLE, text, f"{text} could not start",
                           f"no skill server answers at {absolute_name(self, call.server)}",
                           "start the robot's skill servers (or the simulated world) and retry")
        if call.skill not in self._skill_seen:
            # Seen for the first time: the server may not have discovered us yet, and a goal it
            # never receives is lost without a word (a step then timed out in a fresh-clone run).
            # A goal is never sent twice (a robot would do the step twice): the server gets a moment.
            time.sleep(1.0)
            self._skill_seen.add(call.skill)
        deadline = time.monotonic() + timeout
        cancel_requested = lambda: goal_handle.is_cancel_requested  # noqa: E731
        sent = FutureWait(client.send_goal_async(goal))
        if sent.until(deadline, cancel_requested) != "done":
            return self._stopped(text, cancel_requested(), timeout)
        handle = sent.future.result()
        if not handle.accepted:
            return Failure(FailureCode.INVALID, text, f"{text} was refused", "the skill server rejected the goal")
        finished = FutureWait(handle.get_result_async())
        server = ServerWatch(self, absolute_name(self, call.server))
        outcome = finished.until(deadline, lambda: cancel_requested() or server.gone())
        if outcome == "stopped" and not cancel_requested():
            return Failure(FailureCode.UNAVAILABLE, text, f"{text} was interrupted",
                           f"the skill server {absolute_name(self, call.server)} stopped during the step",
                           "check the robot (or the simulated world): the step may be half done")
        if outcome != "done":
            FutureWait(handle.cancel_goal_async()).until(time.monotonic() + 5.0)
            return self._stopped(text, outcome == "stopped", timeout)
        skill_result = finished.future.result().result
        if skill_result.success:
            return None
        return failure_from_msg(skill_result.failure) or Failure(FailureCode.PHYSICAL, text, f"{text} failed")

    def _ask_person(self, goal_handle, step: PlanStep) -> Failure | None:
        """Ask the person to do ``step``; None once they say it is done."""
        cap = self.capabilities.get(step.action)
        question = human_step_text(step.action, step.agent, list(step.arguments), cap.description if cap else "",
                                   [p.name for p in cap.parameters] if cap else ())
        text = step_text(step)
        self.get_logger().info(f"asking the person: {question}")
        request = AskHuman.Request(question=question, options=["done", "no"], timeout_s=float(self.human_timeout),
                                   purpose=AskHuman.Request.PURPOSE_STEP)
        response, error = call_service(self._ask_human, request, self.human_timeout + 1.0,
                                       stop=lambda: goal_handle.is_cancel_requested, wait_s=self.server_wait,
                                       node=self)
        if response is None:
            if goal_handle.is_cancel_requested:
                return Failure(FailureCode.CANCELED, text, f"{text} was canceled", "the plan was canceled")
            answer = HumanAnswer.TIMEOUT if "no answer within" in error else HumanAnswer.ERROR
            detail = f"nobody to ask: {error}" if answer is HumanAnswer.ERROR else error
            return human_failure(text, answer, detail)
        if not response.answered:
            return human_failure(text, HumanAnswer.TIMEOUT,
                                 f"no answer from the person within {self.human_timeout:g} s")
        if response.answer.strip().lower() not in YES:
            return human_failure(text, HumanAnswer.REFUSED, f"the person answered {response.answer!r}")
        return None

    @staticmethod
    def _stopped(text: str, canceled: bool, timeout: float) -> Failure:
        if canceled:
            return Failure(FailureCode.CANCELED, text, f"{text} was canceled", "the plan was canceled")
        return Failure(FailureCode.TIMEOUT, text, f"{text} did not finish", f"no result within {timeout:.0f} s",
                       "check the robot, or raise step_timeout_s")


def main(args=None) -> int:
    return run_node(ExecutorNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
