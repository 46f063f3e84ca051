"""Wiring of the AutoGPT+P loop with this package's prompts: one place that builds it."""
from __future__ import annotations

from typing import Optional

from affplan_ros.core.agent.alternatives import AlternativeMethod, AlternativeSuggester
from affplan_ros.core.agent.plan_tool import TaskPlanner
from affplan_ros.core.agent.tool_loop import ConfirmAlternative, ToolSelectionLoop
from affplan_ros.core.goals.loop import GoalLoop
from affplan_ros.core.ports import ChatModel
from affplan_ros.llm.prompting import GoalPromptBuilder
from affplan_ros.llm.tool_prompting import AlternativePromptBuilder, ToolPromptBuilder


def make_alternative_suggester(llm: ChatModel, oam, *, method: str = "affordance",
                               max_corrections: int = 3) -> AlternativeSuggester:
    from affplan_ros.core.knowledge.affordances import load_affordances

    return AlternativeSuggester(llm, AlternativePromptBuilder(), oam, load_affordances(),
                                AlternativeMethod(method), max_corrections)


def make_tool_loop(llm: ChatModel, executor, *, oam=None, semantic=None, confirm: Optional[ConfirmAlternative] = None,
                   method: str = "affordance", max_rounds: int = 10, goal_rounds: int = 10,
                   plan_time_limit: float = 30.0, max_seconds: Optional[float] = None,
                   agents=None, confirm_timeout_s: float = 120.0, planner=None,
                   partial_plan_on_failure: bool = False, **hooks) -> ToolSelectionLoop:
    """A :class:`ToolSelectionLoop` whose tool choice, goals and alternatives all come from
    ``llm``; ``semantic``: a ``SemanticChecker`` (None: syntax and type checks only).
    ``planner``: something with :meth:`TaskPlanner.plan` (the tool-selection node passes one
    that calls the planning node); ``hooks``: ``should_stop`` and ``observer`` of the loop."""
    if planner is None:
        goal_loop = GoalLoop(llm, GoalPromptBuilder(), semantic, max_rounds=goal_rounds)
        planner = TaskPlanner(goal_loop, oam=oam, agents=agents, time_limit=plan_time_limit)
    return ToolSelectionLoop(llm, ToolPromptBuilder(), planner, executor,
                             alternatives=make_alternative_suggester(llm, oam, method=method),
                             confirm=confirm, confirm_timeout_s=confirm_timeout_s, oam=oam,
                             max_rounds=max_rounds, max_seconds=max_seconds,
                             partial_plan_on_failure=partial_plan_on_failure, **hooks)
