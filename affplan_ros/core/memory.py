"""What the robot knows: the memory the tool-selection loop reasons over (AutoGPT+P, Sec. IV).

The memory is the robot's *belief*, not the world: objects it has seen (with their
affordances), relations between them, the locations it knows and which of them it has
explored, where the agents are, the user's instructions, accepted and rejected alternatives,
and the most recent plan with its execution result. It is

* rendered to compact natural language for prompts (:meth:`Memory.render`),
* turned into a :class:`~affplan_ros.core.scene.Scene` for planning (:meth:`Memory.scene`),
  which contains only what is known: unexplored locations and their objects stay out, so
  no plan can use them,
* updated by observations (:meth:`Memory.merge`, e.g. after exploring a location) and by
  executed plan steps (:meth:`Memory.apply_steps`),
* JSON-serializable (:meth:`Memory.to_dict` / :meth:`Memory.from_dict`), so a memory node
  can publish and restore it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from .scene import AGENT_CLASSES, Location, Relation, Scene, SceneObject


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
    everything that is there (objects the memory placed there but not seen any more leave
    the location). ``relations`` describe the observed objects (a relation whose first
    argument is an observed object replaces what the memory believed about that object).
    """

    objects: tuple[ObjectRecord, ...] = ()
    relations: tuple[Relation, ...] = ()
    location: Optional[str] = None
    assumed: tuple[Relation, ...] = ()  # those of ``relations`` not seen (config defaults, LLM guesses)


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


def _relation_key(rel: Relation) -> tuple:
    return (rel.predicate, rel.args)


@dataclass
class Memory:
    objects: dict[str, ObjectRecord] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    locations: dict[str, LocationRecord] = field(default_factory=dict)
    instructions: list[str] = field(default_factory=list)
    substitutions: dict[str, str] = field(default_factory=dict)   # missing class -> accepted class
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (missing class, rejected class)
    last_plan: Optional[PlanRecord] = None
    # Relations believed without being observed (a fridge assumed closed); kept only while the
    # relation itself is in ``relations``: seeing it, or a step changing it, makes it a fact.
    assumed: set[Relation] = field(default_factory=set)

    # -- queries -------------------------------------------------------------------------
    @property
    def agents(self) -> list[str]:
        return sorted(n for n, o in self.objects.items() if o.is_agent)

    def agent_location(self, agent: str) -> Optional[str]:
        for r in self.relations:
            if r.predicate == "at" and r.args[:1] == (agent,):
                return r.args[1]
        return None

    def explored(self) -> list[str]:
        return [n for n, loc in self.locations.items() if loc.explored]

    def unexplored(self) -> list[str]:
        return [n for n, loc in self.locations.items() if not loc.explored]

    def classes(self) -> set[str]:
        """Classes of the known (non-agent) objects."""
        return {o.class_name for o in self.objects.values() if not o.is_agent}

    def objects_of_class(self, class_name: str) -> list[str]:
        return sorted(n for n, o in self.objects.items() if o.class_name == class_name)

    def rejected_for(self, missing: str) -> list[str]:
        return [alt for m, alt in self.rejected if m == missing]

    # -- updates -------------------------------------------------------------------------
    def add_location(self, name: str, explored: bool = False) -> None:
        loc = self.locations.setdefault(name, LocationRecord(name))
        loc.explored = loc.explored or explored

    def add_relation(self, rel: Relation) -> None:
        if _relation_key(rel) not in {_relation_key(r) for r in self.relations}:
            self.relations.append(rel)

    def set_agent_location(self, agent: str, location: str) -> None:
        self.relations = [r for r in self.relations if not (r.predicate == "at" and r.args[:1] == (agent,))]
        self.relations.append(Relation("at", (agent, location)))

    def merge(self, obs: Observation) -> None:
        """Add what was observed; observed facts replace beliefs about the observed objects."""
        seen = {o.name for o in obs.objects}
        for o in obs.objects:
            self.objects[o.name] = o
        if obs.location is not None:
            loc = self.locations.setdefault(obs.location, LocationRecord(obs.location))
            loc.explored = True
            gone = set(loc.objects) - seen
            for other in self.locations.values():  # what is seen here is nowhere else
                other.objects = [n for n in other.objects if n not in seen]
            loc.objects = [o.name for o in obs.objects if not o.is_agent and o.name != obs.location]
            # Beliefs about objects that are no longer where they were are stale.
            self.relations = [r for r in self.relations if not (r.args and r.args[0] in gone)]
        self.relations = [r for r in self.relations if not (r.args and r.args[0] in seen)]
        for r in obs.relations:
            agent = self.objects.get(r.args[0]) if r.args else None
            if r.predicate == "at" and len(r.args) == 2 and agent is not None and agent.is_agent:
                self.set_agent_location(*r.args)  # an agent is at one place
            else:
                self.add_relation(r)
        observed = set(obs.relations) - set(obs.assumed)
        self.assumed = ((self.assumed | set(obs.assumed)) - observed) & set(self.relations)

    def apply_steps(self, steps: Sequence, *, oam=None) -> None:
        """Apply executed plan steps (``PlanStep``s) to the memory, as their effects say."""
        if not steps:
            return
        from .domain import build_task
        from .simulate import apply_step, initial_state, state_to_scene

        task = build_task(self.scene(), oam=oam, unknown_classes="warn")
        state = initial_state(task)
        for s in steps:
            state = apply_step(task, state, s.action, task._map(s.agent),
                               tuple(task._map(a) for a in s.args), check=False)
        after = state_to_scene(task, state)
        self.relations = list(after.relations)
        self.assumed &= set(self.relations)
        for name, loc in after.locations.items():
            if name in self.locations:
                self.locations[name].objects = [o for o in loc.objects if o in self.objects and o != name]

    def record_instruction(self, text: str) -> None:
        self.instructions.append(text)

    def accept_substitution(self, missing: str, alternative: str) -> None:
        self.substitutions[missing] = alternative

    def reject_substitution(self, missing: str, alternative: str) -> None:
        if (missing, alternative) not in self.rejected:
            self.rejected.append((missing, alternative))

    # -- views ---------------------------------------------------------------------------
    def substitute(self, text: str) -> str:
        """``text`` with every accepted substitution applied (``apple`` -> ``banana``), as
        AutoGPT+P rewrites the user request once the user accepted an alternative. Class
        names with underscores also match their spelling with spaces (``kitchen knife``)."""
        for missing, alt in self.substitutions.items():
            for form in {missing, missing.replace("_", " ")}:
                text = re.sub(rf"(?<![\w-]){re.escape(form)}(?![\w-])", alt, text, flags=re.IGNORECASE)
        return text

    def scene(self) -> Scene:
        """The known world as a planning scene: explored locations (and any location an agent
        stands at) with their known objects; unexplored locations and what may be there are
        left out, so a plan can only use what the robot has seen."""
        scene = Scene(source="<memory>")
        for o in self.objects.values():
            scene.add_object(SceneObject(o.class_name, o.instance, frozenset(o.affordances)))
        usable = set(self.explored()) | {self.agent_location(a) for a in self.agents} - {None}
        for name in self.locations:
            if name in usable:
                loc = self.locations[name]
                members = [name] if name in self.objects else []
                members += [o for o in loc.objects if o in self.objects and o not in members]
                scene.locations[name] = Location(name, tuple(members))
        known = set(self.objects) | set(scene.locations)
        for r in self.relations:
            if all(a in known for a in r.args):
                scene.add_relation(r.predicate, *r.args)
        return scene

    def render(self, *, affordances: bool = False, max_items: int = 400) -> str:
        """Compact text for prompts: objects, relations, locations, agents, alternatives,
        previous requests and the last plan. ``affordances`` adds each class's affordances."""
        objs = sorted(self.objects)
        lines = [f"Objects: {_join(objs, max_items)}"]
        if affordances:
            by_class: dict[str, tuple[str, ...]] = {}
            for o in self.objects.values():
                if not o.is_agent and o.affordances:
                    by_class.setdefault(o.class_name, o.affordances)
            lines.append("Affordances: " + "; ".join(f"{c}: {', '.join(a)}" for c, a in sorted(by_class.items())))
        relations = [_rel_text(r) + (" (assumed)" if r in self.assumed else "") for r in self.relations]
        lines.append(f"Relations: {_join(relations, max_items)}")
        lines.append(f"Explored locations: {_join(self.explored(), max_items)}")
        lines.append(f"Unexplored locations: {_join(self.unexplored(), max_items)}")
        where = [f"{a} at {self.agent_location(a)}" for a in self.agents if self.agent_location(a)]
        if where:
            lines.append(f"Agents: {', '.join(where)}")
        if self.substitutions:
            lines.append("Accepted alternatives: " + ", ".join(f"{m} -> {a}" for m, a in self.substitutions.items()))
        if self.rejected:
            lines.append("Rejected alternatives: " + ", ".join(f"{m} -> {a}" for m, a in self.rejected))
        if self.last_plan is not None:
            p = self.last_plan
            state = ("not executed" if not p.executed else "executed successfully" if p.success
                     else f"execution failed: {p.message}")
            lines.append(f"Last plan ({p.tool}): {'; '.join(p.steps) or '(empty)'} - {state}")
        return "\n".join(lines)

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "objects": [asdict(o) | {"affordances": list(o.affordances)} for o in self.objects.values()],
            "relations": [[r.predicate, *r.args] for r in self.relations],
            "assumed": [[r.predicate, *r.args] for r in self.relations if r in self.assumed],
            "locations": [asdict(loc) for loc in self.locations.values()],
            "instructions": list(self.instructions),
            "substitutions": dict(self.substitutions),
            "rejected": [list(x) for x in self.rejected],
            "last_plan": asdict(self.last_plan) if self.last_plan is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "Memory":
        """Inverse of :meth:`to_dict`; a malformed entry raises ValueError naming it."""
        try:
            mem = cls()
            for o in data.get("objects", []):
                rec = ObjectRecord(str(o["name"]), str(o["class_name"]), int(o["instance"]),
                                   tuple(map(str, o.get("affordances", ()))))
                mem.objects[rec.name] = rec
            mem.relations = [Relation(str(r[0]), tuple(map(str, r[1:]))) for r in data.get("relations", [])]
            mem.assumed = {Relation(str(r[0]), tuple(map(str, r[1:]))) for r in data.get("assumed", [])} & set(mem.relations)
            for loc in data.get("locations", []):
                mem.locations[str(loc["name"])] = LocationRecord(str(loc["name"]), bool(loc.get("explored")),
                                                                 [str(x) for x in loc.get("objects", [])])
            mem.instructions = [str(x) for x in data.get("instructions", [])]
            mem.substitutions = {str(k): str(v) for k, v in (data.get("substitutions") or {}).items()}
            mem.rejected = [(str(a), str(b)) for a, b in data.get("rejected", [])]
            plan = data.get("last_plan")
            mem.last_plan = PlanRecord(**plan) if plan else None
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"malformed memory data: {type(exc).__name__}: {exc}") from exc
        return mem


def _rel_text(r: Relation) -> str:
    return " ".join((r.predicate, *r.args))


def _join(items: Sequence[str], limit: int) -> str:
    items = list(items)
    if not items:
        return "(none)"
    more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more
