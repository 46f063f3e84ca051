"""Core types <-> ROS messages. The only place that knows both sides."""
from __future__ import annotations

from typing import Iterable, Mapping

from affplan_ros.core.failure import Failure, FailureCode
from affplan_ros.msg import FailureObservation, Plan, PlanStep


def step_to_msg(index: int, action: str, args: Iterable[str], agent: str, cost: float = 0.0) -> PlanStep:
    return PlanStep(index=index, action=action, arguments=list(args), agent=agent, cost=float(cost))


def step_text(step: PlanStep) -> str:
    return f"{step.action}({', '.join([*([step.agent] if step.agent else []), *step.arguments])})"


def plan_to_msg(steps: Iterable, goal: str = "", cost: float = 0.0, planner: str = "", partial: bool = False) -> Plan:
    """``steps``: objects with ``action``, ``args`` and ``agent`` (core PlanStep)."""
    msgs = [step_to_msg(i, s.action, s.args, s.agent, getattr(s, "cost", 0.0)) for i, s in enumerate(steps)]
    return Plan(goal=goal, steps=msgs, cost=float(cost), planner=planner, partial=partial)


def failure_to_msg(failure: Failure | None) -> FailureObservation:
    if failure is None:
        return FailureObservation(code=FailureObservation.CODE_NONE)
    return FailureObservation(code=int(failure.code), action=failure.action, what=failure.what, why=failure.why,
                              suggestion=failure.suggestion, detail=failure.detail, recoverable=failure.recoverable)


def failure_from_msg(msg: FailureObservation) -> Failure | None:
    if msg.code == FailureObservation.CODE_NONE:
        return None
    return Failure(FailureCode(msg.code), msg.action, msg.what, msg.why, msg.suggestion, msg.detail, msg.recoverable)


def fill_message(msg, values: Mapping[str, object]):
    """Set the named fields of ``msg``; a name the message lacks is a configuration error."""
    fields = msg.get_fields_and_field_types()
    for name, value in values.items():
        if name not in fields:
            raise ValueError(f"{type(msg).__name__} has no field {name!r} (check config/skills.yaml)")
        setattr(msg, name, value)
    return msg


def message_fields(msg) -> dict[str, object]:
    """The string and string-list fields of a message as a plain dict (poses left out)."""
    out: dict[str, object] = {}
    for name, type_name in msg.get_fields_and_field_types().items():
        if type_name == "string" or type_name == "sequence<string>":
            value = getattr(msg, name)
            out[name] = list(value) if isinstance(value, list) else value
    return out
