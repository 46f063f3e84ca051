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
"""
from __future__ import annotations

import json
import time

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.core.limits import MAX_TASK_CHARS
from affplan_ros.core.memory import Memory
from affplan_ros.nodes.base import (background_log, call_service, declare, declare_agents, declare_capabilities, declare_knowledge,
                                    declare_llm, load_robot_model, make_language_backend, require, run_node, serve,
                                    WarmUp)
from affplan_ros.nodes.convert_memory import steps_to_msg
from affplan_ros.msg import Plan
from affplan_ros.srv import GetMemory, PlanTask


class PlanningNode(Node):
    def __init__(self) -> None:
        super().__init__("planning")
        self.goal_rounds = declare(self, "goal_rounds", 10, "bound on LLM answers per goal (self-correction rounds)")
        self.time_limit = declare(self, "plan_time_limit_s", 30.0, "time limit of one Fast Downward run, seconds")
        self.mode = declare(self, "plan_mode", "optimal", "optimal (minimal cost) or satisficing (faster)")
        self.semantic = declare(self, "semantic_check", True, "check goals for contradictions in Prolog")
        self.max_seconds = declare(self, "max_seconds", 120.0, "bound on one PlanTask request, seconds")
        oam_file = declare(self, "oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)")
        memory_service = declare(self, "memory_service", "get_memory", "GetMemory service of the memory node")
        self.profiles = declare_agents(self)
        self.capabilities = declare_capabilities(self)
        self.knowledge = declare_knowledge(self)
        self._knowledge_error = self.knowledge.error
        self.llm_config = declare_llm(self)
        require(self.goal_rounds >= 1, "goal_rounds must be >= 1")
        require(self.time_limit > 0, "plan_time_limit_s must be > 0")
        require(self.max_seconds > 0, "max_seconds must be > 0")
        require(self.mode in ("optimal", "satisficing"), "plan_mode must be 'optimal' or 'satisficing'")
        self._oam_file = oam_file
        self._memory = self.create_client(GetMemory, memory_service, callback_group=ReentrantCallbackGroup())
        serve(self, PlanTask, "plan_task", self._on_plan, MutuallyExclusiveCallbackGroup())
        self._llm_problem = ""
        self.goal_loop = None
        self._warm = WarmUp(self, self._warm_up)

    def _warm_up(self) -> None:
        """Load the planner, Prolog and the LLM client off the start-up path."""
        from affplan_ros.core.goal_loop import GoalLoop
        from affplan_ros.llm.prompting import GoalPromptBuilder

        self.oam, self.domain = load_robot_model(self._oam_file, self.capabilities)
        checker = None
        if self.semantic:
            from affplan_ros.core.semantic_check import SemanticChecker

            checker = SemanticChecker()
        backend, why = make_language_backend(self.llm_config, self.oam)
        self._llm_problem = why
        self.goal_loop = GoalLoop(backend.model, GoalPromptBuilder(), checker, max_rounds=self.goal_rounds) \
            if backend else None
        background_log(self, "info", f"planning: language backend: {backend.label if backend else why}")
        import affplan_ros.core.planner  # noqa: F401 - Fast Downward's modules, now rather than at the first task

    def _on_plan(self, request, response):
        from affplan_ros.core.tool_selection import clean_task

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
        got, error = call_service(self._memory, GetMemory.Request(), 10.0, wait_s=10.0, node=self, resend_silent_s=2.0)
        if got is None:
            response.success, response.message = False, f"cannot read the memory: {error}"
            return response
        try:
            memory = Memory.from_dict(json.loads(got.json))
        except ValueError as exc:
            response.success, response.message = False, f"cannot read the memory: {exc}"
            return response
        attempt = self._plan(task, request.partial, memory)
        self._fill(response, attempt, request.partial)
        self.get_logger().info(f"{'partial ' if request.partial else ''}plan for {task[:200]!r}: "
                               f"{response.message} ({time.monotonic() - t0:.1f} s)")
        return response

    def _plan(self, task: str, partial: bool, memory: Memory):
        from affplan_ros.core.capabilities import agents_for_scene
        from affplan_ros.core.task_planning import TaskPlanner
        from affplan_ros.core.tool_selection import alternatives_context

        from affplan_ros.core.recovery.session import planning_kwargs

        store = self.knowledge.current()  # read again if the tool-selection node learned meanwhile
        if self.knowledge.error != self._knowledge_error:
            self._knowledge_error = self.knowledge.error
            if self.knowledge.error:
                self.get_logger().error(f"knowledge file not used, planning without learned knowledge: "
                                        f"{self.knowledge.error}")
        domain, notes = store.apply(self.domain)
        for note in notes:
            self.get_logger().warn(note)
        scene = memory.scene()
        for rel in store.property_relations(scene):
            scene.add_relation(rel.predicate, *rel.args)
        planner = TaskPlanner(self.goal_loop, oam=self.oam, agents=agents_for_scene(scene, self.profiles),
                              mode=self.mode, time_limit=self.time_limit, build_kwargs=planning_kwargs(domain))
        attempt = planner.plan(memory.substitute(task), scene, partial=partial, context=alternatives_context(memory),
                               max_seconds=self.max_seconds)
        learned = [f"{p.action} requires {p.condition}" for p in store.preconditions]
        learned += [f"property {p.name}" for p in store.properties]
        if learned:
            attempt.message += f" (planned with learned knowledge: {'; '.join(learned)})"
        return attempt

    @staticmethod
    def _fill(response, attempt, partial: bool) -> None:
        goal = attempt.goal
        response.success = bool(attempt.ok)
        response.message = attempt.message
        response.goal = attempt.goal_text or ""
        if goal is not None:
            answered = ", ".join(dict.fromkeys(b for b in goal.answered_by if b))
            if answered:  # which backend wrote the goal, for the transcript
                response.message += f" (goal answered by: {answered})"
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
                response.plan = Plan(goal=attempt.goal_text or "", steps=steps_to_msg(result.plan, attempt.agent_costs),
                                     cost=float(result.cost or 0.0), partial=bool(partial),
                                     planner="fast-downward" + ("-opt" if result.optimal else ""))


def main(args=None) -> int:
    return run_node(PlanningNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
