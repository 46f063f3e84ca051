"""planning: a task in words -> a checked PDDL goal -> a validated plan (PlanTask service).

The language backend writes the goal; syntax, type and Prolog semantic checks feed errors back
until a goal is accepted (the goal loop, bounded by ``goal_rounds``); Fast Downward plans on
the scene the memory node knows (``get_memory``; unexplored locations stay out). Nothing is
executed here. One request at a time (Prolog and the planner are serialized anyway).

Heavy modules (planner, Prolog) load in the background right after start-up, so the node is
up at once; a request that comes first waits for them.

The robot's model is ``capabilities_file`` (shared with the executor and tool selection) plus
what the suite has learned (``knowledge_file``, LASP): the file is read again whenever it
changed, so a precondition the tool-selection node learned is in the very next plan, and in
every plan after a restart.

IALP (``planning_mode``, ``grounding``; docs/recovery.md): with ``grounding`` on, the robot's
grounding service (``grounding_service``: sim_world's ground truth, or a real robot's functions)
is asked before every plan; its predicates guard the capabilities that need them and the facts
it says are false (``reachable cup0``) make those steps impossible, so no plan contains them; a
robot that does not answer means no plan (never a plan that ignores it). With ``planning_mode``
stepwise, the checked goal is reached one step at a time from the model's K candidates scored by
log-probability (core/recovery/stepwise_plan.py), only applicable ground actions taken; where it
stops short, ``stepwise_fallback`` says whether Fast Downward plans instead.
"""
from __future__ import annotations

import time

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.clients.memory import MemoryClient
from affplan_ros.core.model.limits import MAX_TASK_CHARS
from affplan_ros.core.model.memory import Memory
from affplan_ros.msg import Plan
from affplan_ros.nodes.base import (
    AGENT_PARAMS,
    CAPABILITY_PARAMS,
    ENVIRONMENT_PARAMS,
    IALP_PARAMS,
    KNOWLEDGE_PARAMS,
    LLM_PARAMS,
    WarmUp,
    agent_profiles,
    background_log,
    check_ialp_params,
    environment_knowledge,
    llm_config,
    load_capabilities,
    load_robot_model,
    make_language_backend,
    run_node,
    serve,
    watch_knowledge,
)
from affplan_ros.nodes.convert_memory import steps_to_msg
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.srv import GetMemory, Ground, PlanTask

PARAMS = (
    Param("goal_rounds", 10, "bound on LLM answers per goal (self-correction rounds)", minimum=1),
    Param("plan_time_limit_s", 30.0, "time limit of one Fast Downward run, seconds", above=0),
    Param("plan_mode", "optimal", "optimal (minimal cost) or satisficing (faster)", choices=("optimal", "satisficing")),
    Param("semantic_check", True, "check goals for contradictions in Prolog"),
    Param("max_seconds", 120.0, "bound on one PlanTask request, seconds", above=0),
    Param("oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)"),
    Param("memory_service", "get_memory", "GetMemory service of the memory node"),
)


class PlanningNode(Node):
    def __init__(self) -> None:
        super().__init__("planning")
        p = declare_params(self, PARAMS + AGENT_PARAMS + CAPABILITY_PARAMS + KNOWLEDGE_PARAMS + LLM_PARAMS
                           + ENVIRONMENT_PARAMS + IALP_PARAMS)
        check_ialp_params(p)
        self.ialp = p
        self.goal_rounds, self.time_limit, self.mode = p.goal_rounds, p.plan_time_limit_s, p.plan_mode
        self.semantic, self.max_seconds = p.semantic_check, p.max_seconds
        self.profiles = agent_profiles(p)
        self.capabilities = load_capabilities(p.capabilities_file)
        self.knowledge = watch_knowledge(self, p.knowledge_file)
        self.environment_knowledge = environment_knowledge(p)   # quantities compared by learned preconditions
        self._knowledge_error = self.knowledge.error
        self.llm_config = llm_config(p)
        self._oam_file = p.oam_file
        self._memory = MemoryClient(self, self.create_client(GetMemory, p.memory_service,
                                                            callback_group=ReentrantCallbackGroup()))
        self._grounding = None
        if p.grounding == "on":
            from affplan_ros.clients.grounding import GroundingClient

            self._grounding = GroundingClient(self, self.create_client(Ground, p.grounding_service,
                                                                      callback_group=ReentrantCallbackGroup()),
                                              timeout=p.grounding_timeout_s)
        serve(self, PlanTask, "plan_task", self._on_plan, MutuallyExclusiveCallbackGroup())
        self._llm_problem = ""
        self._backend = None
        self.goal_loop = None
        self._warm = WarmUp(self, self._warm_up)

    def _warm_up(self) -> None:
        """Load the planner, Prolog and the LLM client off the start-up path."""
        from affplan_ros.core.goals.loop import GoalLoop
        from affplan_ros.llm.prompting import GoalPromptBuilder

        self.oam, self.domain = load_robot_model(self._oam_file, self.capabilities)
        self.domain.quantities = self.environment_knowledge.quantities
        checker = None
        if self.semantic:
            from affplan_ros.core.goals.semantics import SemanticChecker

            checker = SemanticChecker()
        backend, why = make_language_backend(self.llm_config, self.oam)
        self._llm_problem, self._backend = why, backend
        self.goal_loop = GoalLoop(backend.model, GoalPromptBuilder(), checker, max_rounds=self.goal_rounds) \
            if backend else None
        background_log(self, "info", f"planning: language backend: {backend.label if backend else why}; "
                                     f"planning_mode {self.ialp.planning_mode}, grounding {self.ialp.grounding}")
        import affplan_ros.core.planning.planner  # noqa: F401 - Fast Downward's modules, now rather than at the first task

    def _on_plan(self, request, response):
        from affplan_ros.core.agent.tool_loop import clean_task

        t0 = time.monotonic()
        task, problem = clean_task(request.task, MAX_TASK_CHARS)
        if problem:  # said before anything is loaded or asked: no prompt is ever built from it
            response.success, response.message = False, f"task rejected: {problem}"
            self.get_logger().warn(response.message[:300])
            return response
        problem = self._warm.wait(60.0) or (self._llm_problem if self.goal_loop is None else "")
        if problem:
            response.success, response.message = False, f"planning is not available: {problem}"
            return response
        memory, error = self._memory.fetch()
        if memory is None:
            response.success, response.message = False, error
            return response
        facts = None
        if self._grounding is not None:
            facts, error = self._grounding.fetch()
            if facts is None:  # grounding on means no plan that ignores it
                response.success, response.message = False, f"grounding is on, but {error}"
                self.get_logger().warn(response.message)
                return response
        attempt, learned, notes, solver = self._plan(task, request.partial, memory, facts)
        self._fill(response, attempt, request.partial, solver)
        if notes:
            response.message += " | " + " | ".join(notes)
        response.learned = learned
        self.get_logger().info(f"{'partial ' if request.partial else ''}plan for {task[:200]!r}: "
                               f"{response.message} ({time.monotonic() - t0:.1f} s)")
        return response

    def _plan(self, task: str, partial: bool, memory: Memory, facts=None):
        from affplan_ros.core.agent.plan_tool import TaskPlanner
        from affplan_ros.core.agent.tool_loop import alternatives_context
        from affplan_ros.core.knowledge.capabilities import agents_for_scene
        from affplan_ros.core.recovery.session import planning_kwargs

        store = self.knowledge.current()  # read again if the tool-selection node learned meanwhile
        if self.knowledge.error != self._knowledge_error:
            self._knowledge_error = self.knowledge.error
            if self.knowledge.error:
                self.get_logger().error(f"knowledge file not used, planning without learned knowledge: "
                                        f"{self.knowledge.error}")
        from affplan_ros.core.recovery.grounding import FactGrounding
        from affplan_ros.core.recovery.problem import prepare_problem

        scene = memory.scene()

        def environment(domain):
            return self.environment_knowledge.environment(scene, self.oam, domain.predicates)

        problem = prepare_problem(self.domain, store, scene, environment,
                                  FactGrounding(facts) if facts is not None else None)
        for note in problem.notes:
            self.get_logger().warn(note)
        domain = problem.domain
        scene = domain.with_statics(problem.scene)   # learned comparisons of quantities, as static facts
        notes = []
        if problem.grounding is not None:
            notes.append(f"grounding: {problem.grounding.text()}")
            self.get_logger().info(notes[-1][:500])
        request = memory.substitute(task)
        solver = self._stepwise_solver(request) if self.ialp.planning_mode == "stepwise" else None
        planner = TaskPlanner(self.goal_loop, oam=self.oam, agents=agents_for_scene(scene, self.profiles),
                              mode=self.mode, time_limit=self.time_limit, build_kwargs=planning_kwargs(domain),
                              solver=solver)
        attempt = planner.plan(request, scene, partial=partial, context=alternatives_context(memory),
                               max_seconds=self.max_seconds)
        if solver is not None and solver.last is not None:
            notes.insert(0, solver.last.text())
        learned = [f"{p.action} requires {p.condition}" for p in store.preconditions]
        learned += [f"property {p.name}" for p in store.properties]
        return attempt, learned, notes, solver

    def _stepwise_solver(self, request: str):
        """IALP's step planner on this node's language endpoint (K samples with log-probabilities)."""
        from affplan_ros.core.recovery.stepwise_plan import StepwiseSolver
        from affplan_ros.llm.recovery_prompting import LogprobSampler, StepPromptBuilder

        client = getattr(self._backend, "client", None)
        model = LogprobSampler(client) if client is not None else None
        return StepwiseSolver(model, StepPromptBuilder(), request, k=self.ialp.stepwise_candidates,
                              fallback=self.ialp.stepwise_fallback, max_steps=self.ialp.stepwise_max_steps,
                              unavailable="" if model else "no LLM endpoint is configured (the offline "
                                                           "interpreter gives no log-probabilities)")

    @staticmethod
    def _fill(response, attempt, partial: bool, solver=None) -> None:
        goal = attempt.goal
        response.success = bool(attempt.ok)
        response.message = attempt.message
        response.goal = attempt.goal_text or ""
        if goal is not None:
            response.answered_by = list(dict.fromkeys(b for b in goal.answered_by if b))
            response.correction_rounds = len(goal.feedback)
            response.errors = [f"({fb.stage}) {fb.message.strip()}" for fb in goal.feedback]
            response.llm_seconds = float(goal.llm_seconds)
            response.check_seconds = max(0.0, float(goal.seconds - goal.llm_seconds))
            response.prompt_tokens, response.completion_tokens = int(goal.prompt_tokens), int(goal.completion_tokens)
        result = attempt.plan
        if result is not None:
            response.translate_seconds = float(result.timings.translate_s or 0.0)
            response.search_seconds = float(result.timings.search_s or 0.0)
            if result.solved:
                stepwise = solver is not None and solver.last is not None and solver.last.reached
                cost = attempt.cost_of(result.plan) if stepwise else float(result.cost or 0.0)
                response.plan = Plan(goal=attempt.goal_text or "", steps=steps_to_msg(result.plan, attempt.agent_costs),
                                     cost=float(cost), partial=bool(partial),
                                     planner="stepwise" if stepwise else "fast-downward" + ("-opt" if result.optimal
                                                                                             else ""),
                                     optimal=bool(result.optimal), lower_bound=float(result.lower_bound or 0.0))


def main(args=None) -> int:
    return run_node(PlanningNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
