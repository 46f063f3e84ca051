"""A stand-in for MoveIt 2's Python API (``moveit.planning``), shaped as moveit_py's bindings are
(MoveItPy, PlanningComponent, MotionPlanResponse, TrajectoryExecutionManager, ExecutionStatus),
for test_moveit_driver.py: moveit_py cannot be installed here.

Its behaviour is a script: ``Script.plan_error`` (a MoveItErrorCodes value, or None to plan),
``Script.execution`` ("SUCCEEDED", "ABORTED", ... or "RUNS" to move until stopped). It records
what the driver asked of it in ``Script.calls``.
"""
from __future__ import annotations

import threading
import types
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class Script:
    plan_error: Optional[int] = None
    execution: str = "SUCCEEDED"
    calls: list = field(default_factory=list)


class ErrorCode:
    def __init__(self, val: int):
        self.val = val


class MotionPlanResponse:
    def __init__(self, code: int):
        self.error_code = ErrorCode(code)
        self.trajectory = object() if code == 1 else None

    def __bool__(self) -> bool:
        return self.error_code.val == 1


class ExecutionStatus:
    def __init__(self, status: str):
        self.status = status

    def __bool__(self) -> bool:
        return self.status == "SUCCEEDED"


class TrajectoryExecutionManager:
    def __init__(self, script: Script):
        self.script, self.last = script, ExecutionStatus("UNKNOWN")
        self.stopped = threading.Event()

    def start(self) -> None:
        self.stopped.clear()
        self.last = ExecutionStatus("RUNNING")

    def wait_for_execution(self) -> None:
        if self.script.execution == "RUNS":
            self.stopped.wait(30.0)      # an arm that moves until it is stopped
            self.last = ExecutionStatus("PREEMPTED" if self.stopped.is_set() else "TIMED_OUT")
        else:
            self.last = ExecutionStatus(self.script.execution)

    def stop_execution(self, auto_clear: bool = True) -> None:
        self.script.calls.append(("stop_execution",))
        self.stopped.set()

    def get_last_execution_status(self) -> ExecutionStatus:
        return self.last


class PlanningComponent:
    def __init__(self, group: str, script: Script):
        self.group, self.script = group, script

    def set_start_state_to_current_state(self) -> None:
        self.script.calls.append(("start_state", self.group))

    def set_goal_state(self, pose_stamped_msg=None, pose_link: str = "", **_other) -> None:
        p = pose_stamped_msg.pose.position
        self.script.calls.append(("goal", self.group, pose_link, round(p.x, 3), round(p.y, 3), round(p.z, 3)))

    def plan(self, single_plan_parameters=None) -> MotionPlanResponse:
        p = single_plan_parameters
        self.script.calls.append(("plan", self.group) if p is None else
                                 ("plan", self.group, p.max_velocity_scaling_factor, p.max_acceleration_scaling_factor))
        return MotionPlanResponse(1 if self.script.plan_error is None else self.script.plan_error)


class PlanRequestParameters:
    """moveit_py's plan parameters: read from the node's parameters under ``namespace``; MoveIt's
    defaults (scaling factors 1) here."""

    def __init__(self, moveit: "MoveItPy", namespace: str = ""):
        self.planning_pipeline, self.planner_id, self.planning_time = "ompl", "", 1.0
        self.max_velocity_scaling_factor = self.max_acceleration_scaling_factor = 1.0


class MoveItPy:
    script = Script()       # set by the test before the driver makes its MoveItPy

    def __init__(self, node_name: str = "moveit_py", **_other):
        self._manager = TrajectoryExecutionManager(self.script)

    def get_planning_component(self, group: str) -> PlanningComponent:
        return PlanningComponent(group, self.script)

    def execute(self, group_name: str, robot_trajectory, blocking: bool = True) -> ExecutionStatus:
        self.script.calls.append(("execute", group_name, blocking))
        self._manager.start()
        return ExecutionStatus("RUNNING")

    def get_trajectory_execution_manager(self) -> TrajectoryExecutionManager:
        return self._manager


def modules() -> dict[str, types.ModuleType]:
    """``moveit`` and ``moveit.planning`` as sys.modules entries."""
    planning = types.ModuleType("moveit.planning")
    planning.MoveItPy = MoveItPy
    planning.PlanningComponent = PlanningComponent
    planning.PlanRequestParameters = PlanRequestParameters
    package = types.ModuleType("moveit")
    package.planning = planning
    package.__path__ = []
    return {"moveit": package, "moveit.planning": planning}
