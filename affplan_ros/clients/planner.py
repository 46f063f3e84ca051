"""The planning node as the agent loop's :class:`~affplan_ros.core.ports.Planner` (PlanTask)."""
from __future__ import annotations

from affplan_ros.core.agent.plan_tool import PlanAttempt
from affplan_ros.core.goals.loop import GoalLoopResult, GoalStop
from affplan_ros.core.planning.planner import PlanResult, PlanStatus
from affplan_ros.nodes.base import call_service
from affplan_ros.nodes.convert import step_text
from affplan_ros.nodes.convert_memory import steps_from_msg
from affplan_ros.srv import PlanTask


class RemotePlanner:
    """The loop's Plan / Partial Plan tool: the planning node's PlanTask service."""

    def __init__(self, run):  # nodes.task_run.TaskRun: the task, its node and its feedback
        self.run = run

    def plan(self, request: str, scene, *, partial: bool = False, context: str = "", max_seconds=None):
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
        goal = GoalLoopResult(GoalStop.ACCEPTED if got.goal else GoalStop.BOUND_REACHED, goal_text=got.goal or None,
                              rounds=rounds, prompt_tokens=got.prompt_tokens, completion_tokens=got.completion_tokens,
                              llm_seconds=got.llm_seconds,
                              answered_by=list(got.answered_by))
        steps = steps_from_msg(got.plan)
        result = PlanResult(PlanStatus.SOLVED if got.success else PlanStatus.UNSOLVABLE, steps,
                            got.plan.cost if got.success else None)
        if got.success:
            run.last_plan, run.steps_run = got.plan, 0
            run.gate.offer(got.goal, steps)
            run.say(f"goal {got.goal}; plan of {len(steps)} steps, cost {got.plan.cost:g}{_optimality(got.plan)}: "
                    + "; ".join(step_text(s) for s in got.plan.steps)
                    + (f" (with learned knowledge: {'; '.join(got.learned)})" if got.learned else ""),
                    goal=got.goal, plan=got.plan)
        # The planning node prefixes each fed-back error with its stage; "(planning)": well formed, no plan.
        unreachable = not got.success and any(e.startswith("(planning)") for e in got.errors)
        return PlanAttempt(got.success, got.message, goal=goal, plan=result, goal_text=got.goal or None,
                           agent_costs={s.agent: s.cost for s in got.plan.steps}, unreachable=unreachable)


def _optimality(plan) -> str:
    """What is known of a plan's cost beside the optimum: nothing to add when it is optimal or
    no optimal search ran (a Partial Plan, satisficing mode)."""
    if plan.optimal or not plan.planner.startswith("fast-downward"):
        return ""
    return f" (not proven optimal; no plan costs less than {plan.lower_bound:g})" if plan.lower_bound else ""
