"""The symbolic scene the planner works on: objects, relations between them, locations, agents.

Objects are named the way they appear in PDDL: class name + instance number (``cup:0`` in
the AutoGPT+P files becomes ``cup0``). Relations are ground atoms such as ``on cup0 table0``.
A location is a place an agent can move to (usually a piece of furniture whose object has the
same name) together with the objects that can be reached from there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional

# Classes whose instances are agents (they act, have hands and can be moved to).
AGENT_CLASSES = frozenset({"robot", "human"})


def object_name(class_name: str, instance: int) -> str:
    """PDDL object name of an instance: ``object_name("cup", 0) == "cup0"``."""
    return f"{class_name}{instance}"


_INSTANCE = re.compile(r"^(?P<cls>.*\D)(?P<instance>\d+)$")


def split_name(name: str) -> Optional[tuple[str, int]]:
    """``cup12`` -> ``("cup", 12)``: class and instance of a PDDL object name; None for a name
    with no instance number (or nothing before it)."""
    match = _INSTANCE.match(name)
    return (match["cls"], int(match["instance"])) if match else None


def class_of(name: str) -> str:
    """``human0`` -> ``human``: the class of a PDDL object name (the name itself without a number)."""
    parts = split_name(name)
    return parts[0] if parts else name


@dataclass(frozen=True)
class BoundingBox:
    """Axis-aligned box in the world frame (metres), when perception provides one."""

    min_xyz: tuple[float, float, float]
    max_xyz: tuple[float, float, float]


@dataclass(frozen=True)
class SceneObject:
    class_name: str
    instance: int
    # Empty means "look the class up in the OAM"; perception may fill it directly.
    affordances: frozenset[str] = frozenset()
    bbox: Optional[BoundingBox] = None

    @property
    def name(self) -> str:
        return object_name(self.class_name, self.instance)

    @property
    def is_agent(self) -> bool:
        return self.class_name in AGENT_CLASSES


@dataclass(frozen=True)
class Relation:
    predicate: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return "(" + " ".join((self.predicate, *self.args)) + ")"


@dataclass(frozen=True)
class Location:
    """A place agents move to; ``objects`` are reachable from it (the anchor object included)."""

    name: str
    objects: tuple[str, ...] = ()


@dataclass
class Scene:
    objects: dict[str, SceneObject] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    locations: dict[str, Location] = field(default_factory=dict)
    # Problems found while reading (file:line: message); never fatal.
    warnings: list[str] = field(default_factory=list)
    source: str = "<memory>"

    # -- construction helpers ------------------------------------------------------------
    def add_object(self, obj: SceneObject) -> None:
        self.objects[obj.name] = obj

    def add_relation(self, predicate: str, *args: str) -> None:
        rel = Relation(predicate, tuple(args))
        if rel not in self.relations:
            self.relations.append(rel)

    # -- queries -------------------------------------------------------------------------
    @property
    def agents(self) -> list[str]:
        return sorted(n for n, o in self.objects.items() if o.is_agent)

    def relations_of(self, name: str) -> list[Relation]:
        return [r for r in self.relations if name in r.args]

    def location_of(self, name: str) -> Optional[str]:
        """The location an object is listed under (agents: where ``at`` puts them)."""
        obj = self.objects.get(name)
        if obj is not None and obj.is_agent:
            for r in self.relations:
                if r.predicate == "at" and r.args[0] == name:
                    return r.args[1]
        for loc in self.locations.values():
            if name in loc.objects:
                return loc.name
        return None

    def copy(self) -> "Scene":
        return replace(self, objects=dict(self.objects), relations=list(self.relations),
                       locations=dict(self.locations), warnings=list(self.warnings))

    def subset(self, keep: Iterable[str]) -> "Scene":
        """The scene restricted to ``keep``: relations that mention a dropped object go too."""
        keep = set(keep)
        out = Scene(source=self.source, warnings=list(self.warnings))
        out.objects = {n: o for n, o in self.objects.items() if n in keep}
        out.relations = [r for r in self.relations if all(a in keep for a in r.args)]
        out.locations = {
            n: Location(n, tuple(o for o in loc.objects if o in keep))
            for n, loc in self.locations.items() if n in keep or loc.name in keep
        }
        return out
