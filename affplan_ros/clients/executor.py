"""The executor node as the agent loop's :class:`~affplan_ros.core.ports.Executor`: ExecutePlan for
plans (behind the approval gate) and Explore as a move plus Observe."""
from __future__ import annotations

import time

from affplan_ros.action import ExecutePlan
from affplan_ros.core.agent.approval import ApprovalMode
from affplan_ros.core.agent.execution import ExecutionResult, ExploreResult, closed_container_to_open
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.msg import Plan
from affplan_ros.nodes.base import (
    FutureWait,
    ServerWatch,
    absolute_name,
    call_service,
    send_goal,
    wait_for_action,
)
from affplan_ros.nodes.convert import failure_from_msg, step_text
from affplan_ros.nodes.convert_memory import observation_from_msg, steps_to_msg
from affplan_ros.srv import Observe

# A look: the first after start may wait for the detector to load (the perception node's
# detector_wait_s, 30 s; sim_world waits 50 s for a view of its own), then a few views.
OBSERVE_TIMEOUT_S = 90.0


class RosExecutor:
    """The loop's executor: the executor node's ExecutePlan action, and Observe for Explore."""

    def __init__(self, run):  # nodes.task_run.TaskRun: the task, its node, its gate and feedback
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
            return ExecutionResult(False, 0, Failure(FailureCode.UNAVAILABLE, "execute plan",
                                                     "the plan could not start",
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
            return ExecutionResult(False, 0, Failure(FailureCode.UNAVAILABLE, "execute plan",
                                                     "the plan was interrupted",
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
        run, node = self.run, self.run.node
        here = run.memory.agent_location(node.robot)
        done: list[PlanStep] = []
        if here != location:
            move = PlanStep("move", (here or "", location), node.robot)
            moved = self.execute([move])
            if not moved.success:
                return ExploreResult(False, failure=moved.failure)
            if here:  # from an unknown place: memory learns where it is from the view
                done.append(move)
        seen = self._look(location)
        if not seen.success:
            return seen
        step, note = closed_container_to_open(seen.observation, location, node.robot)
        if step is not None:
            # A camera does not see through a door: open it (a plan step like any other, so it
            # can fail, e.g. with a full hand), then look again.
            opened = self.execute([step])
            if not opened.success:
                why = opened.failure.why if opened.failure is not None else "it did not open"
                return ExploreResult(True, seen.observation, cost=1.0, note=f"{note}: {why}", steps=tuple(done))
            done.append(step)
            again = self._look(location)
            if again.success:
                return ExploreResult(True, again.observation, cost=2.0, steps=tuple(done))
        return ExploreResult(True, seen.observation, cost=1.0, steps=tuple(done))

    def _look(self, location: str) -> ExploreResult:
        run, node = self.run, self.run.node
        got, error = call_service(node.calls["observe"], Observe.Request(location=location), OBSERVE_TIMEOUT_S,
                                  stop=run.canceled, wait_s=node.server_wait, node=node)
        if got is None or not got.success:
            code = FailureCode.UNAVAILABLE if got is None else FailureCode.NOT_FOUND
            return ExploreResult(False, failure=Failure(code, f"observe {location}", f"looking at {location} failed",
                                                        error or got.message))
        observation = observation_from_msg(got.observation)
        problems = observation.problems()
        if problems:  # what the camera node answered cannot be believed: nothing of it enters memory
            return ExploreResult(False, failure=Failure(FailureCode.INVALID, f"observe {location}",
                                                        f"the view of {location} was malformed", problems[0]))
        return ExploreResult(True, observation)
