"""tool_selection: carries out a task given in words (ExecuteTask action, Command service).

A thin wrapper over the AutoGPT+P loop (core/agent/tool_loop.py, Algorithm 1): each round the
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
LASP asks an environment that knows what memory holds and the properties the robot's
knowledge evaluates (affordances, the object table, the static quantities with the robot's
``robot_lift_capacity_kg``, ``environment_properties_file``, a recovery scenario's world).
With ``grounding`` on, those learning replans also ask the robot's grounding service (IALP) and
take no step it says is infeasible; the planning node's own ``grounding`` does it for the plans
of the Plan tool (docs/recovery.md).

Approval (``approval``, core/agent/approval.py): before the robot moves, the person may be shown the
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

import uuid

from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.action import ExecutePlan, ExecuteTask
from affplan_ros.core.agent.approval import ApprovalMode
from affplan_ros.core.model.limits import MAX_ROUNDS, MAX_TASK_CHARS
from affplan_ros.nodes.base import (
    AGENT_PARAMS,
    CAPABILITY_PARAMS,
    ENVIRONMENT_PARAMS,
    GROUNDING_PARAMS,
    KNOWLEDGE_PARAMS,
    LLM_PARAMS,
    RESULT_KEEP_S,
    WarmUp,
    agent_profiles,
    background_log,
    environment_knowledge,
    guarded_execute,
    llm_config,
    load_capabilities,
    load_robot_model,
    make_language_backend,
    run_node,
    send_goal,
    serve,
    watch_knowledge,
)
from affplan_ros.nodes.goal_gate import OneGoalAtATime
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.nodes.task_run import TaskRun
from affplan_ros.srv import (
    AskHuman,
    Command,
    GetMemory,
    Ground,
    Observe,
    PlanTask,
    UpdateMemory,
)

# The other nodes this one calls: (key, default service name, service type).
SERVICES = (("plan", "plan_task", "PlanTask"), ("observe", "observe", "Observe"),
            ("ask_human", "ask_human", "AskHuman"), ("get_memory", "get_memory", "GetMemory"),
            ("update_memory", "update_memory", "UpdateMemory"))

PARAMS = (
    Param("robot_agent", "robot0", "the robot's name in the plans"),
    Param("max_rounds", 10, "bound on tool-selection rounds per task", minimum=1),
    Param("max_seconds", 600.0, "bound on one task, seconds", above=0),
    Param("partial_plan_on_failure", False, "when the model answers FAILURE, first run a Partial Plan if none ran "
                                            "for the request yet (AutoGPT+P's own loop)"),
    Param("explore_when_unreachable", True, "when no plan reaches the goal with what memory holds and the model "
          "answers PLAN again with nothing changed, look at a place instead (unexplored ones first, then where the "
          "robot stands, then the others; each once per task)"),
    Param("max_llm_calls", 80, "bound on the LLM calls of one task, all of them (tool choice, goals, alternatives, "
          "learning); 0 = no bound", minimum=0),
    Param("alternative_method", "affordance", "Suggest Alternative: affordance (Algorithm 2) or naive",
          choices=("affordance", "naive")),
    Param("confirm_alternatives", True, "ask the person (AskHuman) before using an alternative"),
    Param("confirm_timeout_s", 120.0, "how long to wait for the person's answer, seconds", above=0),
    Param("plan_timeout_s", 180.0, "how long to wait for the planning node, seconds", above=0),
    Param("execute_timeout_s", 900.0, "how long to wait for one plan's execution, seconds", above=0),
    Param("server_wait_s", 3.0, "how long to wait for another node to appear, seconds", above=0),
    Param("approval", "plan", "ask the person before the robot moves: none, plan (the goal and every step of each "
          "new plan, once) or each_step; no answer in approval_timeout_s is a no",
          choices=tuple(mode.value for mode in ApprovalMode)),
    Param("approval_timeout_s", 120.0, "how long to wait for the person's approval, seconds (then: not approved)",
          above=0),
    Param("oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)"),
    *(Param(f"{key}_service", default, f"{what} service") for key, default, what in SERVICES),
    Param("execute_plan_action", "execute_plan", "ExecutePlan action of the executor"),
)

# CoPAL's and LASP's settings of the loop (core/recovery).
RECOVERY_PARAMS = (
    Param("feedback_level", "how", "what a failed step tells the replanning LLM: what, why (what+why) "
          "or how (what+why+suggestion), as in CoPAL"),
    Param("repair", True, "mid-level repair of failed steps by rules, without the LLM (CoPAL)"),
    Param("repair_rules_file", "", "repair rules (YAML); '' = the built-in table"),
    Param("max_replans", 5, "bound on high-level replans while learning, per task", minimum=0),
    Param("max_refinements", 4, "bound on LASP refinements (learning attempts) per task", minimum=0),
    Param("max_repairs", 5, "bound on mid-level repairs per plan", minimum=0),
)


class ToolSelectionNode(Node):
    def __init__(self) -> None:
        super().__init__("tool_selection")
        p = declare_params(self, PARAMS + LLM_PARAMS + RECOVERY_PARAMS + AGENT_PARAMS + CAPABILITY_PARAMS
                           + KNOWLEDGE_PARAMS + ENVIRONMENT_PARAMS + GROUNDING_PARAMS)
        self.robot, self.max_rounds, self.max_seconds = p.robot_agent, p.max_rounds, p.max_seconds
        self.partial_on_failure = p.partial_plan_on_failure
        self.explore_when_unreachable, self.max_llm_calls = p.explore_when_unreachable, p.max_llm_calls
        self.method, self.confirm = p.alternative_method, p.confirm_alternatives
        self.confirm_timeout, self.plan_timeout = p.confirm_timeout_s, p.plan_timeout_s
        self.execute_timeout, self.server_wait = p.execute_timeout_s, p.server_wait_s
        self.approval, self.approval_timeout = ApprovalMode(p.approval), p.approval_timeout_s
        names = {key: getattr(p, f"{key}_service") for key, _, _ in SERVICES}
        self.execute_plan_name = p.execute_plan_action
        self.llm_config = llm_config(p)
        self.recovery = recovery_config(p)
        self.grounding = None   # IALP: learning replans avoid what the robot's grounding says is infeasible
        if p.grounding == "on":
            from affplan_ros.clients.grounding import GroundingClient

            self.recovery.grounding = True
            self.grounding = GroundingClient(self, self.create_client(Ground, p.grounding_service,
                                                                     callback_group=ReentrantCallbackGroup()),
                                             timeout=p.grounding_timeout_s)
        self.profiles = agent_profiles(p)
        self.capabilities = load_capabilities(p.capabilities_file)
        self.knowledge = watch_knowledge(self, p.knowledge_file)
        # Quantities and properties LASP may use on this robot (core/recovery/environment.py).
        self.environment_knowledge = environment_knowledge(p)

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
        # One task at a time, from its acceptance on: a second one (or a copy of this one that a
        # client sent again) is refused, not queued (Command says why).
        self._gate = OneGoalAtATime(self.get_logger(), "execute_task", lambda goal: " ".join(goal.task.split())[:200])
        self._server = ActionServer(self, ExecuteTask, "execute_task",
                                    execute_callback=guarded_execute(self, ExecuteTask, "execute_task", self._execute),
                                    goal_callback=self._gate.on_goal, handle_accepted_callback=self._gate.on_accepted,
                                    cancel_callback=lambda _g: CancelResponse.ACCEPT,
                                    callback_group=ReentrantCallbackGroup(), result_timeout=RESULT_KEEP_S)
        serve(self, Command, "command", self._on_command, ReentrantCallbackGroup())
        self.llm, self.oam, self._problem = None, None, "still starting"
        self._oam_file = p.oam_file
        self._warm = WarmUp(self, self._warm_up)

    def _warm_up(self) -> None:
        import affplan_ros.core.planning.planner  # noqa: F401 - learning replans here (Fast Downward)
        import affplan_ros.llm.loop_factory  # noqa: F401 - the loop's modules, before the first task

        self.oam, self.domain = load_robot_model(self._oam_file, self.capabilities)
        self.domain.quantities = self.environment_knowledge.quantities
        backend, self._problem = make_language_backend(self.llm_config, self.oam)
        self.llm = backend.model if backend else None
        background_log(self, "info", "tool selection: language backend: "
                               f"{backend.label if backend else self._problem}; approval: {self.approval.value}")

    # -- ExecuteTask -------------------------------------------------------------------------
    def _execute(self, goal_handle):
        from affplan_ros.core.agent.tool_loop import clean_task

        request = goal_handle.request
        try:
            task, problem = clean_task(request.task, MAX_TASK_CHARS)
            if not self._gate.holds(goal_handle):  # accepted beside another task (see nodes/goal_gate.py)
                problem = f"busy with {self._gate.current!r}; try again when it is done"
            elif not problem and request.max_rounds > MAX_ROUNDS:
                problem = f"max_rounds is {request.max_rounds}; the limit is {MAX_ROUNDS} (0 = the node's parameter)"
            if problem:
                goal_handle.abort()
                self.get_logger().warn(f"task refused: {problem}")
                return ExecuteTask.Result(stop_reason=ExecuteTask.Result.STOP_REJECTED, message=problem)
            return TaskRun(self, goal_handle, task).run()
        finally:
            self._gate.release(goal_handle)

    # -- Command -----------------------------------------------------------------------------
    def _on_command(self, request, response):
        from affplan_ros.core.agent.tool_loop import clean_task

        task, problem = clean_task(request.task, MAX_TASK_CHARS)
        if problem:
            response.accepted, response.message = False, problem
            return response
        if self._gate.current:
            response.accepted, response.message = False, f"busy with {self._gate.current!r}; try again when it is done"
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


def recovery_config(p):
    """The RECOVERY_PARAMS values -> RecoveryConfig; the feedback level and the repair rules
    file are checked here (a broken rules file stops the node at start-up, not mid-task)."""
    from affplan_ros.core.recovery.feedback import FeedbackLevel
    from affplan_ros.core.recovery.repair import RepairRuleError, load_rules
    from affplan_ros.core.recovery.runner import RecoveryConfig

    try:
        feedback = FeedbackLevel.parse(p.feedback_level)
    except ValueError as exc:
        raise ValueError(f"feedback_level: {exc}") from None
    try:
        table = load_rules(p.repair_rules_file or None)
    except RepairRuleError as exc:
        raise ValueError(f"repair_rules_file: {exc}") from None
    return RecoveryConfig(feedback=feedback, repair=bool(p.repair), rules_file=p.repair_rules_file or None,
                          rule_table=table, max_replans=int(p.max_replans), max_refinements=int(p.max_refinements),
                          max_repairs=int(p.max_repairs))


def main(args=None) -> int:
    return run_node(ToolSelectionNode, args, threads=8)


if __name__ == "__main__":
    raise SystemExit(main())
