"""The ports of the agent loop: what it needs from the world outside the core, as protocols.

The loop (agent/tool_loop.py) and recovery are written against these; the implementations live
elsewhere: language backends in llm/ and core/interpreter/, the local planner in
agent/plan_tool.py, the simulated executor in sim/, and ROS 2 clients of the node suite in
clients/ (RemotePlanner, RosExecutor, MemoryClient).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # annotations only: the modules below import these protocols themselves
    from affplan_ros.core.agent.execution import ExecutionResult, ExploreResult
    from affplan_ros.core.agent.plan_tool import PlanAttempt
    from affplan_ros.core.goals.loop import Completion, Message
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.core.model.scene import Scene


@runtime_checkable
class ChatModel(Protocol):
    """A language backend: an endpoint through the openai client, the offline interpreter, a script."""

    def complete(self, messages: Sequence[Message]) -> Completion: ...


class Planner(Protocol):
    """The Plan / Partial Plan tool: a request in words to a checked goal and a validated plan."""

    def plan(self, request: str, scene: Optional[Scene], *, partial: bool = False, context: str = "",
             max_seconds: Optional[float] = None) -> PlanAttempt: ...


class Executor(Protocol):
    """Who carries out validated plans and looks at places (a robot, the simulated world)."""

    def explore(self, location: str) -> ExploreResult: ...

    def execute(self, plan: Sequence) -> ExecutionResult: ...   # PlanSteps of a validated plan


class MemoryStore(Protocol):
    """Where the memory is kept between tasks (the memory node)."""

    def fetch(self) -> tuple[Optional[Memory], str]: ...   # (memory, "") or (None, why not)

    def push(self, memory: Memory) -> str: ...              # "" or why it was not taken
