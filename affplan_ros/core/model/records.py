"""The pieces of a memory: stamps (when a belief was set and by whom), object, location and
plan records, observations, and the checks a relation must pass to become a belief."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Optional

from affplan_ros.core.model.limits import (
    MAX_OBJECTS,
    MAX_RELATIONS,
    name_problem,
)
from affplan_ros.core.model.predicates import load_predicates
from affplan_ros.core.model.scene import (
    AGENT_CLASSES,
    Relation,
    SceneObject,
)


class Source(str, Enum):
    """Who set a belief."""

    INITIAL = "initial"          # the configured or scenario memory, at start-up or reset
    OBSERVATION = "observation"  # a camera view (perception, the simulated camera)
    STEP = "step"                # a plan step the robot executed
    PERSON = "person"            # a plan step the person did
    UPDATE = "update"            # an UpdateMemory request (a node, a user)


@dataclass(frozen=True)
class Stamp:
    """When a belief was set (seconds since the epoch, as ROS header stamps count) and by whom."""

    time: float = 0.0
    source: Source = Source.INITIAL

    @classmethod
    def now(cls, source: Source) -> "Stamp":
        return cls(time.time(), source)

    def to_list(self) -> list:
        return [self.time, self.source.value]

    @classmethod
    def parse(cls, value: object, what: str) -> "Stamp":
        """``[time, source]`` as :meth:`to_list` writes it; ValueError naming ``what`` otherwise."""
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ValueError(f"{what}: a stamp is [time, source], not {value!r:.80}")
        t, source = value
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise ValueError(f"{what}: the time {t!r:.40} is not a number of seconds >= 0")
        try:
            return cls(float(t), Source(source))
        except ValueError:
            raise ValueError(f"{what}: unknown source {source!r:.40}; one of "
                             f"{', '.join(s.value for s in Source)}") from None


NEVER = Stamp(0.0, Source.INITIAL)


@dataclass(frozen=True)
class ObjectRecord:
    """A known object: PDDL-style name (``cup0``), class, instance number, affordances."""

    name: str
    class_name: str
    instance: int
    affordances: tuple[str, ...] = ()

    @property
    def is_agent(self) -> bool:
        return self.class_name in AGENT_CLASSES

    @classmethod
    def from_scene_object(cls, obj: SceneObject, affordances: Iterable[str] = ()) -> "ObjectRecord":
        return cls(obj.name, obj.class_name, obj.instance, tuple(sorted(set(affordances or obj.affordances))))


@dataclass
class LocationRecord:
    name: str
    explored: bool = False
    objects: list[str] = field(default_factory=list)  # reachable from here, as last observed


@dataclass(frozen=True)
class Observation:
    """What was perceived, e.g. at a location after moving there.

    ``location``: the place that was looked at; when given, the objects listed are
    everything visible there (objects the memory placed there but not seen any more leave
    the location, unless they cannot be seen: inside a closed container). ``relations``
    describe the observed objects (a relation whose first argument is an observed object
    replaces what the memory believed about that object). ``stamp``: when the view was taken
    (seconds since the epoch; None = now).
    """

    objects: tuple[ObjectRecord, ...] = ()
    relations: tuple[Relation, ...] = ()
    location: Optional[str] = None
    assumed: tuple[Relation, ...] = ()  # those of ``relations`` not seen (config defaults, LLM guesses)
    stamp: Optional[float] = None

    def problems(self) -> list[str]:
        """What makes this observation unusable (empty when it is fine)."""
        out = [p for o in self.objects for p in object_problems(o)]
        if len(self.objects) > MAX_OBJECTS or len(self.relations) > MAX_RELATIONS:
            out.append(f"{len(self.objects)} objects and {len(self.relations)} relations; the limits are "
                       f"{MAX_OBJECTS} and {MAX_RELATIONS}")
        out += [p for r in self.relations for p in [relation_problem(r)] if p]
        out += [f"assumed relation {relation_text(r)} is not among the relations" for r in self.assumed
                if r not in self.relations]
        if self.location is not None and name_problem(self.location, "location"):
            out.append(name_problem(self.location, "location"))
        if self.stamp is not None and (not math.isfinite(self.stamp) or self.stamp < 0):
            out.append(f"the stamp {self.stamp!r} is not a time")
        return out


@dataclass
class PlanRecord:
    """The most recent plan: which tool made it, for which request, and how execution went."""

    tool: str
    task: str
    goal: Optional[str]
    steps: list[str]
    cost: Optional[float] = None
    executed: bool = False
    success: Optional[bool] = None
    message: str = ""


def subject(rel: Relation) -> str:
    """The object a relation is about (``on cup0 table0`` -> ``cup0``): beliefs are kept and
    replaced per subject."""
    return rel.args[0] if rel.args else rel.predicate


_ARITY: dict[str, int] = {}


def predicate_arity() -> dict[str, int]:
    """Arity of every predicate a memory may hold (the domain's, without internal ones)."""
    if not _ARITY:
        _ARITY.update({name: len(d.params) for name, d in load_predicates().items() if not d.internal})
    return _ARITY


def relation_problem(rel: Relation) -> str:
    """Why ``rel`` cannot be a belief ("" when it can): unknown predicate, wrong arity, bad names."""
    problem = name_problem(rel.predicate, "predicate")
    if problem:
        return problem
    arity = predicate_arity().get(rel.predicate)
    if arity is None:
        return f"unknown predicate {rel.predicate!r}; known: {', '.join(sorted(predicate_arity()))}"
    if len(rel.args) != arity:
        return f"{rel.predicate} takes {arity} argument{'s' if arity != 1 else ''}, not {len(rel.args)}: " \
               f"{' '.join(map(str, (rel.predicate, *rel.args)))[:120]}"
    for a in rel.args:
        problem = name_problem(a, f"argument of {rel.predicate}")
        if problem:
            return problem
    return ""


def object_problems(o: ObjectRecord) -> list[str]:
    out = [p for p in (name_problem(o.name, "object name"), name_problem(o.class_name, "class name")) if p]
    if isinstance(o.instance, bool) or not isinstance(o.instance, int) or o.instance < 0:
        out.append(f"object {o.name!r:.40}: instance {o.instance!r:.20} is not a number >= 0")
    out += [p for a in o.affordances for p in [name_problem(a, f"affordance of {o.name!s:.40}")] if p]
    return out


def relation_text(r: Relation) -> str:
    """``on cup0 table0``: a relation as the memory's JSON and prompts write it."""
    return " ".join((r.predicate, *r.args))
