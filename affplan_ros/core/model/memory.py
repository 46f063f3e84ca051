"""What the robot knows: the memory the tool-selection loop reasons over (AutoGPT+P, Sec. IV).

The memory is the robot's *belief*, not the world: objects it has seen (with their
affordances), relations between them, the locations it knows and which of them it has
explored, where the agents are, the user's instructions, accepted and rejected alternatives,
and the most recent plan with its execution result. It is

* rendered to compact natural language for prompts (:meth:`Memory.render`),
* turned into a :class:`~affplan_ros.core.model.scene.Scene` for planning (:meth:`Memory.scene`),
  which contains only what is known: unexplored locations and their objects stay out, so
  no plan can use them,
* updated by observations (:meth:`Memory.merge`, e.g. after exploring a location), by
  executed plan steps (:meth:`Memory.apply_steps`) and by another copy of itself
  (:meth:`Memory.reconcile`, what a node pushes back after working on a copy),
* JSON-serializable (:meth:`Memory.to_dict` / :meth:`Memory.from_dict`), so a memory node
  can publish and restore it; :meth:`Memory.from_dict` validates everything it reads.

State never goes back in time: every belief about an object (its relations, where it is)
carries the time it was set and by whom (:class:`Stamp`). An observation taken before the
newest belief about an object does not change that object, however late it arrives; objects
a camera cannot see (inside a closed container) are not taken for gone because they were not
seen.

Over 500 lines on purpose: this is one class whose methods (merge, apply_steps, reconcile,
from_dict) keep one invariant together (the stamps); its records and checks are in records.py.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Iterable, Optional, Sequence

from affplan_ros.core.model.limits import (
    MAX_INSTRUCTIONS,
    MAX_LOCATIONS,
    MAX_OBJECTS,
    MAX_RELATIONS,
    MAX_TASK_CHARS,
    name_problem,
)
from affplan_ros.core.model.records import (
    NEVER,
    LocationRecord,
    ObjectRecord,
    Observation,
    PlanRecord,
    Source,
    Stamp,
    object_problems,
    relation_problem,
    relation_text,
    subject,
)
from affplan_ros.core.model.scene import (
    Location,
    Relation,
    Scene,
    SceneObject,
)
from affplan_ros.core.planning.simulate import apply_step, initial_state, state_to_scene
from affplan_ros.core.planning.task import build_task


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
    # When each believed relation was last set, and by whom.
    fact_stamps: dict[Relation, Stamp] = field(default_factory=dict)
    # When the belief about an object (its relations, where it is) last changed, removals
    # included: an observation older than this does not touch the object.
    object_stamps: dict[str, Stamp] = field(default_factory=dict)
    # Since when this memory holds (a reset forgets everything before it): an observation
    # taken earlier changes nothing at all, not even which objects and places exist.
    since: float = 0.0

    # -- queries -------------------------------------------------------------------------
    @property
    def agents(self) -> list[str]:
        return sorted(n for n, o in self.objects.items() if o.is_agent)

    def agent_location(self, agent: str) -> Optional[str]:
        for r in self.relations:
            if r.predicate == "at" and len(r.args) == 2 and r.args[0] == agent:
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

    def stamp_of(self, name: str) -> Stamp:
        """When the belief about object ``name`` last changed (NEVER when it never did)."""
        return self.object_stamps.get(name, NEVER)

    def newest(self) -> float:
        """The time of the newest belief (0 for none): a node refuses data from the future."""
        return max((s.time for s in self.object_stamps.values()), default=self.since)

    def hidden(self, names: Iterable[str], closed: Optional[set[str]] = None) -> set[str]:
        """Those of ``names`` a camera cannot see: in a closed container, or on or in something
        that is (``closed``: the closed containers; default: those believed closed)."""
        if closed is None:
            closed = {r.args[0] for r in self.relations if r.predicate == "closed" and r.args}
        holders = {r.args[0]: (r.predicate, r.args[1]) for r in self.relations
                   if r.predicate in ("in", "on", "liquid_in") and len(r.args) == 2}
        out = set()
        for name in names:
            here, visited = name, set()
            while here in holders and here not in visited:  # up the chain of holders; a cycle ends it
                visited.add(here)
                how, here = holders[here]
                if how != "on" and here in closed:
                    out.add(name)
                    break
        return out

    # -- updates -------------------------------------------------------------------------
    def _touch(self, name: str, stamp: Stamp) -> None:
        if stamp.time >= self.stamp_of(name).time:
            self.object_stamps[name] = stamp

    def _set(self, rel: Relation, stamp: Stamp) -> None:
        if rel not in self.fact_stamps and rel not in self.relations:
            self.relations.append(rel)
        self.fact_stamps[rel] = stamp
        self._touch(subject(rel), stamp)

    def _unset(self, keep, stamp: Stamp) -> None:
        """Remove the relations ``keep`` rejects, stamping their subjects."""
        gone = [r for r in self.relations if not keep(r)]
        if not gone:
            return
        self.relations = [r for r in self.relations if keep(r)]
        for r in gone:
            self.fact_stamps.pop(r, None)
            self._touch(subject(r), stamp)

    def add_location(self, name: str, explored: bool = False) -> None:
        loc = self.locations.setdefault(name, LocationRecord(name))
        loc.explored = loc.explored or explored

    def add_relation(self, rel: Relation, stamp: Optional[Stamp] = None) -> None:
        self._set(rel, stamp or Stamp.now(Source.UPDATE))

    def remove_relation(self, rel: Relation, stamp: Optional[Stamp] = None) -> None:
        self._unset(lambda r: r != rel, stamp or Stamp.now(Source.UPDATE))

    def set_agent_location(self, agent: str, location: str, stamp: Optional[Stamp] = None) -> None:
        stamp = stamp or Stamp.now(Source.UPDATE)
        here = Relation("at", (agent, location))
        self._unset(lambda r: r == here or not (r.predicate == "at" and r.args[:1] == (agent,)), stamp)
        self._set(here, stamp)

    def stamp_all(self, stamp: Stamp) -> None:
        """Every belief set at ``stamp``, and nothing older counts (a memory built at start-up
        or reset)."""
        self.since = stamp.time
        self.fact_stamps = {r: stamp for r in self.relations}
        names = set(self.objects) | {subject(r) for r in self.relations}
        self.object_stamps = {n: stamp for n in names}

    def merge(self, obs: Observation, source: Source = Source.OBSERVATION) -> list[str]:
        """Add what was observed; observed facts replace beliefs about the observed objects,
        unless a belief about an object is newer than the observation (then the object is
        left as it is). Returns the names of the objects left so, for the caller's log."""
        stamp = Stamp(time.time() if obs.stamp is None else float(obs.stamp), source)
        seen = {o.name for o in obs.objects}
        if stamp.time < self.since:
            return sorted(seen)
        for o in obs.objects:  # what an object is does not go back in time; where it is may
            self.objects[o.name] = o
        fresh = {n for n in seen if stamp.time >= self.stamp_of(n).time}
        gone: set[str] = set()
        if obs.location is not None:
            loc = self.locations.setdefault(obs.location, LocationRecord(obs.location))
            loc.explored = True
            # Inside a container seen closed now (or believed closed) is out of sight, not gone.
            closed = {r.args[0] for r in obs.relations if r.predicate == "closed" and r.args}
            closed |= {r.args[0] for r in self.relations if r.predicate == "closed" and r.args
                       and r.args[0] not in fresh}
            unseen = set(loc.objects) - seen
            gone = {n for n in unseen - self.hidden(unseen, closed) if stamp.time >= self.stamp_of(n).time}
            for other in self.locations.values():  # what is seen here is nowhere else
                other.objects = [n for n in other.objects if n not in fresh and n not in gone]
            here = [o.name for o in obs.objects if o.name in fresh and not o.is_agent and o.name != obs.location]
            loc.objects = here + [n for n in loc.objects if n not in here]
            for n in gone:  # beliefs about objects that are no longer where they were are stale
                self._touch(n, stamp)
        # An assumption does not replace knowledge: a door the robot opened and looks into again
        # stays open although the view assumes closed (a detector cannot tell).
        known = {(subject(r), len(r.args)) for r in self.relations if r not in self.assumed}
        blocked = {r for r in obs.assumed if (subject(r), len(r.args)) in known}
        kept = {(subject(r), len(r.args)) for r in blocked}
        observed = set(obs.relations) - blocked
        self._unset(lambda r: subject(r) not in gone and (subject(r) not in fresh or r in observed
                                                           or (subject(r), len(r.args)) in kept), stamp)
        applied = set()
        for r in obs.relations:
            if r in blocked:
                continue
            about = subject(r)
            if about in seen and about not in fresh:
                continue
            if about not in seen and stamp.time < self.stamp_of(about).time:
                continue
            agent = self.objects.get(about)
            if r.predicate == "at" and len(r.args) == 2 and agent is not None and agent.is_agent:
                self.set_agent_location(*r.args, stamp=stamp)  # an agent is at one place
            else:
                self._set(r, stamp)
            applied.add(r)
        for n in fresh:
            self._touch(n, stamp)
        assumed = set(obs.assumed) & applied
        self.assumed = ((self.assumed | assumed) - (applied - assumed)) & set(self.relations)
        return sorted(seen - fresh)

    def apply_steps(self, steps: Sequence, *, oam=None, capabilities=None, at: Optional[float] = None) -> None:
        """Apply executed plan steps (``PlanStep``s) to the memory, as their effects say; what
        they change is stamped ``at`` (default: now) as set by the robot or the person.
        ``capabilities``: the robot's model the steps come from (None: the built-in set)."""
        if not steps:
            return

        t = time.time() if at is None else at
        kw = {} if capabilities is None else {"capabilities": capabilities}
        task = build_task(self.scene(), oam=oam, unknown_classes="warn", **kw)
        inv = {v: k for k, v in task.names.items()}
        state = initial_state(task)
        changed: dict[str, Stamp] = {}
        for s in steps:
            new = apply_step(task, state, s.action, task._map(s.agent),
                             tuple(task._map(a) for a in s.args), check=False)
            actor = self.objects.get(s.agent)
            stamp = Stamp(t, Source.PERSON if actor is not None and actor.class_name == "human" else Source.STEP)
            for atom in state ^ new:
                if len(atom) > 1:
                    changed[inv.get(atom[1], atom[1])] = stamp
            state = new
        after = state_to_scene(task, state)
        before = set(self.relations)
        self.relations = list(after.relations)
        for r in before - set(self.relations):
            self.fact_stamps.pop(r, None)
        for r in self.relations:
            if r not in before:
                self.fact_stamps[r] = changed.get(subject(r), Stamp(t, Source.STEP))
        for name, stamp in changed.items():
            self._touch(name, stamp)
        self.assumed &= set(self.relations)
        for name, loc in after.locations.items():
            if name in self.locations:
                self.locations[name].objects = [o for o in loc.objects if o in self.objects and o != name]

    def record_instruction(self, text: str) -> None:
        """Add a request to the history; only the newest MAX_INSTRUCTIONS are kept (the whole
        history would grow every prompt and the memory file for the robot's whole life)."""
        self.instructions.append(text)
        del self.instructions[:-MAX_INSTRUCTIONS]

    def accept_substitution(self, missing: str, alternative: str) -> None:
        self.substitutions[missing] = alternative

    def reject_substitution(self, missing: str, alternative: str) -> None:
        if (missing, alternative) not in self.rejected:
            self.rejected.append((missing, alternative))

    def reconcile(self, other: "Memory") -> "Memory":
        """This memory with ``other`` (a copy someone worked on, e.g. tool selection's) merged
        in: per object, the newer belief wins (``other`` on a tie); objects and locations
        are united; the task history, alternatives and last plan are ``other``'s."""
        out = Memory.from_dict(self.to_dict())
        out.objects.update(other.objects)
        for name, loc in other.locations.items():
            out.add_location(name, loc.explored)
        names = (set(self.object_stamps) | set(other.object_stamps)
                 | {subject(r) for r in (*self.relations, *other.relations)})
        theirs = {n for n in names if other.stamp_of(n).time >= self.stamp_of(n).time}
        order: dict[Relation, int] = {}
        for r in (*self.relations, *other.relations):
            order.setdefault(r, len(order))
        chosen = ({r for r in self.relations if subject(r) not in theirs}
                  | {r for r in other.relations if subject(r) in theirs})
        out.relations = sorted(chosen, key=order.__getitem__)
        out.fact_stamps = {r: (other if subject(r) in theirs else self).fact_stamps.get(r, NEVER)
                           for r in out.relations}
        out.object_stamps = {n: (other if n in theirs else self).stamp_of(n) for n in names}
        out.assumed = {r for r in out.relations if r in (other if subject(r) in theirs else self).assumed}
        where_other = {o: n for n, loc in other.locations.items() for o in loc.objects}
        for loc in out.locations.values():
            loc.objects = [o for o in loc.objects if o not in theirs or where_other.get(o) == loc.name]
        for o, n in where_other.items():
            if o in theirs and o not in out.locations[n].objects:
                out.locations[n].objects.append(o)
        out.since = max(self.since, other.since)
        out.instructions = list(other.instructions)
        out.substitutions = dict(other.substitutions)
        out.rejected = list(other.rejected) + [x for x in self.rejected if x not in other.rejected]
        out.last_plan = other.last_plan if other.last_plan is not None else self.last_plan
        return out

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
        relations = [relation_text(r) + (" (assumed)" if r in self.assumed else "") for r in self.relations]
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
        names = set(self.objects) | set(self.object_stamps) | {subject(r) for r in self.relations}
        return {
            "objects": [asdict(o) | {"affordances": list(o.affordances)} for o in self.objects.values()],
            "relations": [[r.predicate, *r.args] for r in self.relations],
            "assumed": [[r.predicate, *r.args] for r in self.relations if r in self.assumed],
            "locations": [asdict(loc) for loc in self.locations.values()],
            "instructions": list(self.instructions),
            "substitutions": dict(self.substitutions),
            "rejected": [list(x) for x in self.rejected],
            "last_plan": asdict(self.last_plan) if self.last_plan is not None else None,
            "fact_stamps": {relation_text(r): self.fact_stamps.get(r, NEVER).to_list() for r in self.relations},
            "object_stamps": {n: self.stamp_of(n).to_list() for n in sorted(names)},
            "since": self.since,
        }

    @classmethod
    def from_dict(cls, data: object, *, default: Stamp = NEVER) -> "Memory":
        """Inverse of :meth:`to_dict`, checking every entry: ValueError ("malformed memory
        data: ...") names the first bad one. Data without stamps (written by hand, or before
        beliefs had stamps) has every belief stamped ``default``."""
        try:
            return cls._from_dict(data, default)
        except KeyError as exc:
            raise ValueError(f"malformed memory data: a required field is missing: {exc}") from None
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise ValueError(f"malformed memory data: {exc}") from None

    @classmethod
    def _from_dict(cls, data: object, default: Stamp) -> "Memory":
        data = _expect(data, dict, "the memory")
        unknown = set(data) - _FIELDS
        if unknown:
            raise ValueError(f"unknown field(s) {', '.join(sorted(map(str, unknown)))[:200]}; "
                             f"known: {', '.join(sorted(_FIELDS))}")
        mem = cls()
        for i, o in enumerate(_expect(data.get("objects", []), list, "objects", MAX_OBJECTS)):
            o = _expect(o, dict, f"objects[{i}]")
            instance = o["instance"]
            if isinstance(instance, bool) or not isinstance(instance, int):
                raise ValueError(f"objects[{i}].instance must be a whole number, not {instance!r:.40}")
            rec = ObjectRecord(o["name"], o["class_name"], instance,
                               tuple(_expect(o.get("affordances", []), list, f"objects[{i}].affordances", 200)))
            problems = object_problems(rec)
            if problems:
                raise ValueError(f"objects[{i}]: {problems[0]}")
            mem.objects[rec.name] = rec
        mem.relations = list(dict.fromkeys(
            _relation(r, f"relations[{i}]")
            for i, r in enumerate(_expect(data.get("relations", []), list, "relations", MAX_RELATIONS))))
        assumed = _expect(data.get("assumed", []), list, "assumed", MAX_RELATIONS)
        mem.assumed = {_relation(r, f"assumed[{i}]") for i, r in enumerate(assumed)} & set(mem.relations)
        for i, loc in enumerate(_expect(data.get("locations", []), list, "locations", MAX_LOCATIONS)):
            loc = _expect(loc, dict, f"locations[{i}]")
            explored = loc.get("explored", False)
            if not isinstance(explored, bool):
                raise ValueError(f"locations[{i}].explored must be true or false, not {explored!r:.40}")
            objects = _expect(loc.get("objects", []), list, f"locations[{i}].objects", MAX_OBJECTS)
            for name in (loc["name"], *objects):
                _check_name(name, f"locations[{i}]")
            mem.locations[loc["name"]] = LocationRecord(loc["name"], explored, list(objects))
        instructions = _expect(data.get("instructions", []), list, "instructions")
        for i, text in enumerate(instructions):
            if not isinstance(text, str) or len(text) > MAX_TASK_CHARS:
                raise ValueError(f"instructions[{i}] must be text of at most {MAX_TASK_CHARS} characters")
        mem.instructions = list(instructions[-MAX_INSTRUCTIONS:])
        for missing, alt in _expect(data.get("substitutions") or {}, dict, "substitutions").items():
            mem.substitutions[_check_name(missing, "substitutions")] = _check_name(alt, "substitutions")
        for i, pair in enumerate(_expect(data.get("rejected", []), list, "rejected")):
            pair = _expect(pair, list, f"rejected[{i}]")
            if len(pair) != 2:
                raise ValueError(f"rejected[{i}] must be [missing class, rejected class]")
            mem.rejected.append((_check_name(pair[0], "rejected"), _check_name(pair[1], "rejected")))
        mem.last_plan = _plan_record(data.get("last_plan"))
        stamps = data.get("object_stamps")
        if stamps is None and "fact_stamps" not in data:
            mem.stamp_all(default)
            return mem
        for name, value in _expect(stamps or {}, dict, "object_stamps", MAX_OBJECTS + MAX_RELATIONS).items():
            mem.object_stamps[_check_name(name, "object_stamps")] = Stamp.parse(value, f"object_stamps[{name}]")
        by_text = {relation_text(r): r for r in mem.relations}
        for text, value in _expect(data.get("fact_stamps") or {}, dict, "fact_stamps", MAX_RELATIONS).items():
            if text not in by_text:
                raise ValueError(f"fact_stamps names {text!r:.80}, which is not among the relations")
            mem.fact_stamps[by_text[text]] = Stamp.parse(value, f"fact_stamps[{text}]")
        for r in mem.relations:
            mem.fact_stamps.setdefault(r, NEVER)
        since = data.get("since", 0.0)
        if isinstance(since, bool) or not isinstance(since, (int, float)) or not math.isfinite(since) or since < 0:
            raise ValueError(f"since must be a time in seconds >= 0, not {since!r:.40}")
        mem.since = float(since)
        return mem


_FIELDS = frozenset({"objects", "relations", "assumed", "locations", "instructions", "substitutions", "rejected",
                     "last_plan", "fact_stamps", "object_stamps", "since"})


def _expect(value: object, kind: type, what: str, limit: Optional[int] = None):
    if not isinstance(value, kind):
        want = {dict: "an object", list: "a list"}.get(kind, kind.__name__)
        raise ValueError(f"{what} must be {want}, not {type(value).__name__}")
    if limit is not None and len(value) > limit:  # type: ignore[arg-type]
        raise ValueError(f"{what} has {len(value)} entries; the limit is {limit}")  # type: ignore[arg-type]
    return value


def _check_name(value: object, what: str) -> str:
    problem = name_problem(value, f"{what}: name")
    if problem:
        raise ValueError(problem)
    return value  # type: ignore[return-value]


def _relation(value: object, what: str) -> Relation:
    items = _expect(value, list, what)
    if not items or not all(isinstance(x, str) for x in items):
        raise ValueError(f"{what} must be [predicate, argument, ...] of names, not {value!r:.80}")
    rel = Relation(items[0], tuple(items[1:]))
    problem = relation_problem(rel)
    if problem:
        raise ValueError(f"{what}: {problem}")
    return rel


def _plan_record(value: object) -> Optional[PlanRecord]:
    if value is None:
        return None
    plan = _expect(value, dict, "last_plan")
    rec = PlanRecord(**plan)
    types = {"tool": (str,), "task": (str,), "goal": (str, type(None)), "steps": (list,),
             "cost": (int, float, type(None)), "executed": (bool,), "success": (bool, type(None)), "message": (str,)}
    for key, allowed in types.items():
        if not isinstance(getattr(rec, key), allowed) or (key == "cost" and isinstance(rec.cost, bool)):
            raise ValueError(f"last_plan.{key} has the wrong type ({type(getattr(rec, key)).__name__})")
    if len(rec.steps) > 10_000 or not all(isinstance(s, str) for s in rec.steps):
        raise ValueError("last_plan.steps must be a list of step texts")
    return rec


def _join(items: Sequence[str], limit: int) -> str:
    items = list(items)
    if not items:
        return "(none)"
    more = f", ... ({len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more
