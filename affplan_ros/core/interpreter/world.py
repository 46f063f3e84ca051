"""What the offline interpreter may refer to: the objects, relations and locations it knows.

Built either from a planning scene (goal writing: the scene of the goal request, with the
domain's PDDL names and types) or from the robot's memory (tool selection: known objects,
explored and unexplored locations). Unexplored locations are listed as places even though
nothing is known about what is there, so "the apple from the table" can send the robot to
explore the table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

from affplan_ros.core.model.scene import AGENT_CLASSES, Scene, split_name
from affplan_ros.core.model.signature import Signature


@dataclass(frozen=True)
class WorldObject:
    name: str                 # as written in goals (the domain's PDDL name, e.g. n7up0)
    class_name: str
    instance: int
    types: frozenset[str]     # affordances and built-in types (location, actor, object)
    known: bool = True        # False: an unexplored location (its name only)


@dataclass
class World:
    objects: dict[str, WorldObject] = field(default_factory=dict)
    relations: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    locations: dict[str, tuple[str, ...]] = field(default_factory=dict)   # location -> objects there
    unexplored: tuple[str, ...] = ()
    known_classes: frozenset[str] = frozenset()    # classes the OAM knows (may be absent here)
    class_affordances: Mapping[str, frozenset[str]] = field(default_factory=dict)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_scene(cls, scene: Scene, signature: Optional[Signature] = None,
                   names: Optional[Mapping[str, str]] = None, oam=None,
                   unexplored: Iterable[str] = ()) -> "World":
        """``names``: scene name -> PDDL name (``7up0`` -> ``n7up0``); ``signature`` gives the
        types the goal checks use (otherwise the objects' affordances and built-in types)."""
        names = dict(names or {})
        rename = lambda n: names.get(n, n)  # noqa: E731
        w = cls()
        for n, o in scene.objects.items():
            pddl = rename(n)
            if signature is not None and pddl in signature.objects:
                types = frozenset(signature.objects[pddl])
            else:
                types = frozenset(o.affordances) | _builtin(n, o.class_name, scene.locations)
                if not o.affordances and oam is not None and o.class_name in oam:
                    types |= oam.affordances_of(o.class_name)
            w.objects[pddl] = WorldObject(pddl, o.class_name, o.instance, types)
        w.relations = [(r.predicate, tuple(rename(a) for a in r.args)) for r in scene.relations]
        w.locations = {rename(n): tuple(rename(a) for a in loc.objects) for n, loc in scene.locations.items()}
        for loc in unexplored:
            w._add_place(rename(loc))
        w._set_oam(oam)
        return w

    @classmethod
    def from_memory(cls, memory, oam=None) -> "World":
        """The memory's known objects plus its unexplored locations (as bare places)."""
        w = cls.from_scene(memory.scene(), oam=oam)
        for name, _loc in memory.locations.items():
            if name not in w.locations:
                w._add_place(name)
        w.unexplored = tuple(memory.unexplored())
        return w

    def _add_place(self, name: str) -> None:
        if name not in self.objects:
            cls_name, instance = split_name(name) or (name, 0)
            self.objects[name] = WorldObject(name, cls_name, instance,
                                             frozenset({"location", "object"}), known=False)
        self.locations.setdefault(name, ())
        if name not in self.unexplored:
            self.unexplored = (*self.unexplored, name)

    def _set_oam(self, oam) -> None:
        if oam is None:
            return
        self.known_classes = frozenset(oam.classes())
        self.class_affordances = {c: frozenset(oam.affordances_of(c)) for c in oam.classes()}

    # -- queries --------------------------------------------------------------------------
    def classes(self) -> set[str]:
        return {o.class_name for o in self.objects.values()}

    def of_class(self, class_name: str) -> list[str]:
        return sorted((o.name for o in self.objects.values() if o.class_name == class_name),
                      key=lambda n: self.objects[n].instance)

    def fits(self, name: str, type_name: str) -> bool:
        o = self.objects.get(name)
        return o is not None and type_name in o.types

    def agents(self, class_name: str) -> list[str]:
        return self.of_class(class_name) if class_name in AGENT_CLASSES else []

    def holders(self, name: str) -> list[str]:
        """What ``name`` stands on / is inside (directly)."""
        return [args[1] for p, args in self.relations if p in ("on", "in", "liquid_in") and args[:1] == (name,)]

    def on_or_in(self, name: str, holder: str, predicates: tuple[str, ...]) -> bool:
        return any(p in predicates and args == (name, holder) for p, args in self.relations)

    def located_under(self, name: str, place: str) -> bool:
        """``name`` is on/in ``place`` (transitively), or listed at the location ``place``."""
        seen, todo = set(), [name]
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            for h in self.holders(cur):
                if h == place:
                    return True
                todo.append(h)
        return name in self.locations.get(place, ()) and name != place

    def on_top_of(self, support: str) -> list[str]:
        return sorted(args[0] for p, args in self.relations if p == "on" and args[1:] == (support,))

    def liquids_in(self, container: str) -> list[str]:
        return sorted(args[0] for p, args in self.relations if p == "liquid_in" and args[1:] == (container,))


def _builtin(name: str, class_name: str, locations) -> frozenset[str]:
    out = {"object"}
    if class_name in AGENT_CLASSES:
        out |= {"actor", "location"}
    if name in locations:
        out.add("location")
    return frozenset(out)
