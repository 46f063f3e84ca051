"""Core memory, observation and plan types <-> ROS messages (the task-level half of convert.py).

Kept apart from ``convert.py`` so the skill-level conversions stay small; like it, this is the
only place that knows both sides for what it converts.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

from affplan_ros.core.model.limits import MAX_STEP_ARGUMENTS, name_problem
from affplan_ros.core.model.memory import Memory
from affplan_ros.core.model.records import ObjectRecord, Observation, Stamp
from affplan_ros.core.model.scene import Relation as CoreRelation
from affplan_ros.core.model.scene import class_of
from affplan_ros.msg import (
    AgentState,
    Location,
    MemorySnapshot,
    Plan,
    PlanStep,
    Relation,
    SceneObject,
    SceneObservation,
    Substitution,
)


def is_human(agent: str) -> bool:
    return class_of(agent) == "human"


# -- plans -----------------------------------------------------------------------------------

def plan_step_problem(step: PlanStep) -> str:
    """Why a PlanStep message cannot be a step of a plan ("" when it can)."""
    if len(step.arguments) > MAX_STEP_ARGUMENTS:
        return f"{len(step.arguments)} arguments; the limit is {MAX_STEP_ARGUMENTS}"
    problem = name_problem(step.action, "action")
    if not problem and step.agent:
        problem = name_problem(step.agent, "agent")
    for a in step.arguments:
        problem = problem or name_problem(a, f"argument of {step.action}")
    return problem


def steps_from_msg(plan: Plan) -> list:
    """PlanStep messages -> core plan steps (``core.planner.PlanStep``)."""
    from affplan_ros.core.planning.planner import (
        PlanStep as CorePlanStep,  # the planner's modules load only here
    )

    return [CorePlanStep(s.action, tuple(s.arguments), s.agent) for s in plan.steps]


def steps_to_msg(steps: Sequence, costs: Optional[Mapping[str, float]] = None) -> list[PlanStep]:
    """Core plan steps -> PlanStep messages; ``costs``: what each agent's step costs."""
    costs = costs or {}
    return [PlanStep(index=i, action=s.action, arguments=list(s.args), agent=s.agent,
                     cost=float(costs.get(s.agent, 0.0))) for i, s in enumerate(steps)]


def parse_step_text(text: str, agents: Sequence[str]):
    """``"grasp robot0 apple0 table0 table0"`` (``str(PlanStep)``) -> PlanStep; the second word
    is the agent when it names one (environment steps such as ``wetten`` have none)."""
    from affplan_ros.core.planning.planner import PlanStep as CorePlanStep

    words = text.split()
    if len(words) > 1 and words[1] in agents:
        return CorePlanStep(words[0], tuple(words[2:]), words[1])
    return CorePlanStep(words[0] if words else "", tuple(words[1:]), "")


# -- observations ----------------------------------------------------------------------------

def relation_to_msg(r: CoreRelation, assumed: bool = False, stamp: Optional[Stamp] = None) -> Relation:
    msg = Relation(predicate=r.predicate, arguments=list(r.args), confidence=1.0, assumed=assumed)
    if stamp is not None:
        msg.stamp.sec = int(stamp.time)
        msg.stamp.nanosec = int((stamp.time - int(stamp.time)) * 1e9)
        msg.source = stamp.source.value
    return msg


def relation_from_msg(r: Relation) -> CoreRelation:
    return CoreRelation(r.predicate, tuple(r.arguments))


def observation_from_msg(msg: SceneObservation, stamp: Optional[float] = None) -> Observation:
    """A SceneObservation (perception, the simulated camera) as the memory merges it, taken at
    ``stamp`` (default: the header's stamp; None when that is zero). Not checked: see
    ``Observation.problems``."""
    if stamp is None:
        taken = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        stamp = taken or None
    objects = tuple(ObjectRecord(o.name, o.class_name or class_of(o.name), int(o.instance),
                                 tuple(sorted(o.affordances))) for o in msg.objects)
    relations = list(msg.relations)
    return Observation(objects, tuple(relation_from_msg(r) for r in relations), msg.location or None,
                       assumed=tuple(relation_from_msg(r) for r in relations if r.assumed), stamp=stamp)


def scene_object_msg(record: ObjectRecord, location: str = "", source: str = "memory") -> SceneObject:
    return SceneObject(name=record.name, class_name=record.class_name, instance=int(record.instance),
                       affordances=list(record.affordances), location=location, confidence=1.0, source=source)


# -- memory ----------------------------------------------------------------------------------

def object_locations(memory: Memory) -> dict[str, str]:
    """Where each object was last seen (the location lists), agents where ``at`` puts them."""
    where = {o: name for name, loc in memory.locations.items() for o in loc.objects}
    for agent in memory.agents:
        here = memory.agent_location(agent)
        if here:
            where[agent] = here
    return where


def memory_to_msg(memory: Memory, poses: Optional[Mapping[str, object]] = None, header=None) -> MemorySnapshot:
    """The memory as a MemorySnapshot; ``poses``: location name -> PoseStamped, when known."""
    poses = poses or {}
    where = object_locations(memory)
    msg = MemorySnapshot()
    if header is not None:
        msg.header = header
    msg.objects = [scene_object_msg(o, where.get(o.name, "")) for o in memory.objects.values()]
    msg.relations = [relation_to_msg(r, r in memory.assumed, memory.fact_stamps.get(r)) for r in memory.relations]
    msg.locations = [Location(name=loc.name, objects=list(loc.objects), explored=loc.explored,
                              pose=[poses[loc.name]] if loc.name in poses else [])
                     for loc in memory.locations.values()]
    for agent in memory.agents:
        holding = [r.args[0] for r in memory.relations if r.predicate == "inhand" and r.args[1:] == (agent,)]
        kind = AgentState.KIND_HUMAN if is_human(agent) else AgentState.KIND_ROBOT
        msg.agents.append(AgentState(name=agent, kind=kind,
                                     location=memory.agent_location(agent) or "", holding=holding,
                                     free_hands=max(0, 2 - len(holding))))
    msg.instructions = list(memory.instructions)
    msg.substitutions = [Substitution(missing_class=m, replacement=a, reason="accepted by the user")
                         for m, a in memory.substitutions.items()]
    if memory.last_plan is not None:
        p = memory.last_plan
        steps = [parse_step_text(s, memory.agents) for s in p.steps]
        msg.last_plan = Plan(goal=p.goal or "", steps=steps_to_msg(steps), cost=float(p.cost or 0.0),
                             partial=p.tool.startswith("partial"), planner="fast-downward")
        msg.last_result = ("not executed" if not p.executed else "succeeded" if p.success
                           else f"failed: {p.message}")
    return msg

