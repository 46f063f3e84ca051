"""PDDL domain and problem generation from a scene, an OAM and capabilities.

Typing scheme (why): unified-planning types have exactly one parent and its PDDL reader
rejects ``(either ...)``, but an object has many affordances (a cup can ``carry``,
``contain`` and ``pour``). So

* every object class gets its own PDDL type whose single parent is a built-in type:
  ``actor`` (humans, robots), ``location`` (classes with an instance agents can move to)
  or ``object``; built-ins are ``location - object`` and ``actor - location`` because one
  can move to a person;
* affordances are static unary predicates ``(aff_<affordance> ?o)`` that action
  preconditions test; Fast Downward's translator evaluates static facts while grounding,
  so they prune groundings exactly as types would;
* which agent may run which capability is another static predicate ``(can_<cap> ?actor)``,
  and each action costs ``(cost ?actor)``.

The ``Signature`` handed to goal checking still speaks in affordances: its predicate
parameters are affordance types and each object's type set holds its class, the built-in
ancestors and all its affordances.

AutoGPT+P derives ``reachable`` with axioms, which UP's Fast Downward engines do not accept
(and LM-cut could not use). We keep a fluent ``(located ?o ?l)`` instead: initialised
from the scene's LOCATIONS and updated by the actions that pick up and put down objects.
Limitation: objects inside or on a container that is carried away keep their old
``located`` fact; this only matters when such an object is later the *target* of a
reachability test (e.g. chopping an apple whose cutting board was moved with it).

Grounding cost: Fast Downward's translator grounds each action over (roughly) the product of
its parameters' domains. ``domain_pddl(split=True)`` (what the planner uses) writes the
capabilities that would ground into many operators as chains of stage actions with at most
three parameters (see ``split_capability`` below for the encoding and why it keeps every
plan's cost); the capabilities themselves (what plans, skills and validation speak) are
unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

import yaml

from .affordances import AffordanceSet, load_affordances
from .capabilities import BUILTIN_TYPES, Agent, Capability, agents_for_scene, load_capabilities
from .oam import OamDatabase, UnknownClassError, load_oam
from .scene import Scene
from .signature import Signature

DATA_DIR = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class PredicateDef:
    name: str
    params: tuple[tuple[str, str], ...]  # (variable, affordance/builtin type)
    description: str
    internal: bool = False


def load_predicates(path: Optional[Path] = None) -> dict[str, PredicateDef]:
    data = yaml.safe_load((path or DATA_DIR / "predicates.yaml").read_text(encoding="utf-8"))
    return {n: PredicateDef(n, tuple((str(v), str(t)) for v, t in d["params"]),
                            str(d.get("description", "")), bool(d.get("internal", False)))
            for n, d in data["predicates"].items()}


_DATA_CACHE: dict = {}


def _cached_default(loader, path: Path):
    """``loader()`` for a default data file, re-read only when the file changes (YAML parsing
    was a third of the fixed cost of planning a small scene). Callers get their own dict."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return loader()
    hit = _DATA_CACHE.get(loader)
    if hit is None or hit[0] != stamp:
        hit = (stamp, loader())
        _DATA_CACHE[loader] = hit
    value = hit[1]
    return dict(value) if isinstance(value, dict) else value


PDDL_CONFIG = yaml.safe_load((DATA_DIR / "pddl.yaml").read_text(encoding="utf-8"))
_VALID_NAME = re.compile(r"^[A-Za-z][\w\-]*$")
_PDDL_RESERVED = {"object", "either", "and", "or", "not", "define", "domain", "problem",
                  "number", "total-cost", "cost", "forall", "exists", "when", "imply"}


def pddl_name(name: str) -> str:
    """A valid PDDL name for a scene name (``7up0`` -> ``n7up0``)."""
    return name if _VALID_NAME.match(name) else "n" + re.sub(r"[^\w\-]", "_", name)


def _fmt_literal(pred: str, args: Sequence[str], negated: bool = False) -> str:
    atom = "(" + " ".join((pred, *args)) + ")"
    return f"(not {atom})" if negated else atom


def goal_to_pddl(dnf: Sequence[Sequence]) -> str:
    """PDDL text of a DNF goal (a list of conjunctions of goal.Literal-like objects)."""
    def conj(c) -> str:
        return "(and " + " ".join(_fmt_literal(l.predicate, l.args, l.negated) for l in c) + ")"
    if not dnf:
        raise ValueError("empty goal: a DNF goal needs at least one conjunction")
    return conj(dnf[0]) if len(dnf) == 1 else "(or " + " ".join(conj(c) for c in dnf) + ")"


class GoalVocabularyError(ValueError):
    """The goal mentions a predicate or object the problem does not have."""


@dataclass
class PlanningTask:
    """A generated planning domain + problem (goal optional) for one scene."""

    scene: Scene
    domain_name: str
    types: dict[str, str]                       # type -> parent
    object_types: dict[str, str]                # pddl object -> type
    predicates: dict[str, PredicateDef]
    static_predicates: list[str]                # aff_*/can_* names
    actions: dict[str, str]                     # name -> PDDL text
    init: list[str]                             # PDDL atoms (incl. numeric assignments)
    signature: Signature
    agents: list[Agent]
    capabilities: dict[str, Capability]
    goal: Optional[list] = None                 # DNF
    # Split encoding: capabilities with more than ``split_above`` parameters (the actor
    # included) become chains of stages with at most ``stage_arity`` parameters each.
    split_above: int = 3
    stage_arity: int = 3
    split_min_groundings: int = 2000
    # ... but only in tasks whose actions would ground into at least this many operators in
    # all (estimated). Why: stage chains weaken the heuristics of the search (in the delete
    # relaxation, stages shared by several action instances are paid once), which turned
    # 2-second optimal searches on 16-22-object kitchen scenes into timeouts, while the
    # translator only needs the split on big tasks (e.g. 4 s -> 1 s at 300 objects).
    # Measured estimates: AutoGPT+P evaluation scenes (pruned) <= 35k; 300-object scenes 100k+.
    split_min_total: int = 60000
    warnings: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # scene name -> pddl name

    # -- text ----------------------------------------------------------------------------
    def domain_pddl(self, goal_actions: Optional[Sequence[Sequence]] = None, *, split: bool = False) -> str:
        """Domain text; ``goal_actions`` (DNF) adds one zero-cost action per disjunct that
        sets a goal flag (so an optimal planner never needs axioms for a disjunctive goal).
        ``split``: high-arity capabilities are written as chains of low-arity stage actions
        (see :func:`split_capability`); plans are mapped back by :meth:`merge_stages`."""
        splits = self.split_actions if split else {}
        reqs = " ".join(PDDL_CONFIG["requirements"])
        by_parent: dict[str, list[str]] = {}
        for t, parent in self.types.items():
            by_parent.setdefault(parent, []).append(t)
        types = "\n    ".join(f"{' '.join(sorted(ch))} - {p}" for p, ch in sorted(by_parent.items()))
        preds = []
        for p in self.predicates.values():
            preds.append(f"    ; {p.description}")
            preds.append("    (" + " ".join([p.name] + [f"?{v} - {self._builtin(t)}" for v, t in p.params]) + ")")
        preds.append("    ; static: affordances of objects, capabilities of agents")
        for s in self.static_predicates:
            var = "?a - actor" if s.startswith(PDDL_CONFIG["capability_prefix"]) else "?o - object"
            preds.append(f"    ({s} {var})")
        if splits:
            actions = []
            preds.append("    ; bookkeeping of split actions (stages of one action run back to back)")
            preds += [f"    {p}" for p in _split_predicates(splits.values())]
            for name, text in self.actions.items():
                if name in splits:
                    actions += [st.text for st in splits[name].stages]
                else:
                    actions.append(_add_precondition(text, f"({SPLIT_IDLE})"))
        else:
            actions = list(self.actions.values())
        constants = ""
        if goal_actions:
            # Objects named in the goal actions must be domain constants (and are then left
            # out of the problem's :objects, see problem_pddl(goal_flag=True)).
            consts = sorted(self.goal_constants(goal_actions))
            constants = ("  (:constants\n    " + "\n    ".join(
                f"{o} - {self.object_types[o]}" for o in consts) + ")\n")
            flag = PDDL_CONFIG["goal_flag"]
            preds.append(f"    ({flag})")
            for i, c in enumerate(goal_actions):
                body = " ".join(_fmt_literal(l.predicate, self._map_args(l.args), l.negated) for l in c)
                if splits:
                    body = f"({SPLIT_IDLE}) " + body
                actions.append(f"  (:action {PDDL_CONFIG['goal_action_prefix']}{i}\n    :parameters ()\n"
                               f"    :precondition (and {body})\n"
                               f"    :effect (and ({flag}) (increase (total-cost) 0)))")
        return (f"(define (domain {self.domain_name})\n  (:requirements {reqs})\n"
                f"  (:types\n    {types})\n" + constants + "  (:predicates\n" + "\n".join(preds) + "\n  )\n"
                "  (:functions (total-cost) - number (cost ?a - actor) - number)\n"
                + "\n".join(actions) + "\n)\n")

    def problem_pddl(self, goal: Optional[Sequence[Sequence]] = None, *, goal_flag: bool = False,
                     name: str = "task", split: bool = False) -> str:
        goal = goal if goal is not None else self.goal
        split = split and bool(self.split_actions)
        body = self.problem_without_goal(name, exclude=self.goal_constants(goal) if goal_flag else (),
                                         extra_init=[f"({SPLIT_IDLE})"] if split else ())
        if goal_flag:
            goal_text = f"({PDDL_CONFIG['goal_flag']})"
        elif goal:
            goal_text = goal_to_pddl([[_MappedLit(l, self) for l in c] for c in goal])
            if split:
                goal_text = f"(and ({SPLIT_IDLE}) {goal_text})"
        else:
            goal_text = f"(and ({SPLIT_IDLE}))" if split else "(and)"
        return body.rstrip()[:-1] + f"  (:goal {goal_text})\n  (:metric minimize (total-cost))\n)\n"

    def goal_constants(self, goal: Optional[Sequence[Sequence]]) -> set[str]:
        return {self._map(a) for c in (goal or ()) for l in c for a in l.args}

    def problem_without_goal(self, name: str = "task", exclude: Iterable[str] = (),
                             extra_init: Iterable[str] = ()) -> str:
        exclude = set(exclude)
        objs = "\n    ".join(f"{o} - {t}" for o, t in sorted(self.object_types.items())
                              if o not in exclude)
        init = "\n    ".join([*self.init, *extra_init])
        return (f"(define (problem {name})\n  (:domain {self.domain_name})\n"
                f"  (:objects\n    {objs})\n  (:init\n    {init})\n)\n")

    def predicates_prompt(self, include_internal: bool = True) -> str:
        """Predicates with affordance-typed parameters and descriptions, for LLM prompts."""
        lines = ["(:predicates"]
        for p in self.predicates.values():
            if p.internal and not include_internal:
                continue
            lines.append(f"; {p.description}")
            lines.append("(" + " ".join([p.name] + [f"?{v} - {t}" for v, t in p.params]) + ")")
        lines.append(")")
        return "\n".join(lines)

    # -- split encoding --------------------------------------------------------------------
    @cached_property
    def split_actions(self) -> dict[str, "SplitAction"]:
        """Capabilities written as stage chains when ``domain_pddl(split=True)``; name -> split."""
        out: dict[str, SplitAction] = {}
        if sum(self.estimated_groundings(c) for c in self.capabilities.values()) < self.split_min_total:
            return out
        for cap in self.capabilities.values():
            if cap.environment:  # low arity by design; split_capability assumes an actor
                continue
            # Splitting has a fixed price (the translator's invariant synthesis grows with
            # the schemas), so only actions that would ground into many operators are split.
            if self.estimated_groundings(cap) < self.split_min_groundings:
                continue
            sp = split_capability(cap, split_above=self.split_above, stage_arity=self.stage_arity,
                                  counts=self._type_counts)
            if sp is not None:
                out[cap.name] = sp
        return out

    @cached_property
    def _type_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {"object": len(self.signature.objects)}
        for types in self.signature.objects.values():
            for t in types:
                if t != "object":
                    counts[t] = counts.get(t, 0) + 1
        return counts

    def estimated_groundings(self, cap) -> int:
        """Upper estimate of ``cap``'s ground actions: the product of its parameters' domains."""
        n = 1 if cap.environment else self._type_counts.get("actor", 0)
        for p in cap.parameters:
            n *= self._type_counts.get(p.type, 0)
        return n

    def merge_stages(self, steps: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, tuple[str, ...]]]:
        """Plan steps of the split domain -> steps of the capabilities ``(action, (actor, *args))``.

        Stage actions of one capability instance are consecutive (the ``idle`` lock); their
        bindings are joined. Raises ValueError on an incomplete or inconsistent chain."""
        by_stage = {st.name: (sp, i) for sp in self.split_actions.values() for i, st in enumerate(sp.stages)}
        out: list[tuple[str, tuple[str, ...]]] = []
        cur: Optional[tuple[SplitAction, dict[str, str]]] = None
        expect = 0
        for action, args in steps:
            hit = by_stage.get(action)
            if hit is None:
                if cur is not None:
                    raise ValueError(f"stage chain of {cur[0].capability} interrupted by {action}")
                out.append((action, tuple(args)))
                continue
            sp, i = hit
            if i != expect or (cur is not None and cur[0] is not sp):
                raise ValueError(f"stage {action} out of order")
            if cur is None:
                cur = (sp, {})
            for var, val in zip(sp.stages[i].params, args):
                if cur[1].setdefault(var, val) != val:
                    raise ValueError(f"stage {action} rebinds {var}")
            expect = i + 1
            if expect == len(sp.stages):
                out.append((sp.capability, tuple(cur[1][v] for v in sp.params)))
                cur, expect = None, 0
        if cur is not None:
            raise ValueError(f"plan ends inside the stages of {cur[0].capability}")
        return out

    def step_parts(self, action: str, args: Sequence[str]) -> tuple[str, tuple[str, ...]]:
        """(agent, parameters) of a capability step ``(action, *args)`` as the planner writes
        it; the agent is "" for environment capabilities, which have no actor."""
        from .capabilities import split_actor
        cap = self.capabilities.get(action)
        if cap is None:
            raise ValueError(f"unknown action {action!r}")
        return split_actor(cap, args)

    # -- unified-planning ----------------------------------------------------------------
    def up_problem(self, goal: Optional[Sequence[Sequence]] = None):
        """The task as a unified-planning Problem (parsed from the generated PDDL)."""
        from unified_planning.io import PDDLReader
        return PDDLReader().parse_problem_string(self.domain_pddl(), self.problem_pddl(goal))

    def check_goal(self, goal: Sequence[Sequence]) -> None:
        """Raise GoalVocabularyError for unknown predicates, objects or wrong arity."""
        for conj in goal:
            for lit in conj:
                p = self.predicates.get(lit.predicate)
                if p is None:
                    raise GoalVocabularyError(f"unknown predicate {lit.predicate!r} in goal")
                if len(p.params) != len(lit.args):
                    raise GoalVocabularyError(
                        f"{lit.predicate} takes {len(p.params)} arguments, goal gives {len(lit.args)}")
                for a in lit.args:
                    if self._map(a) not in self.object_types:
                        raise GoalVocabularyError(f"unknown object {a!r} in goal")

    # -- helpers -------------------------------------------------------------------------
    @staticmethod
    def _builtin(t: str) -> str:
        return t if t in ("location", "actor") else "object"

    def _map(self, name: str) -> str:
        return self.names.get(name, name)

    def _map_args(self, args: Iterable[str]) -> tuple[str, ...]:
        return tuple(self._map(a) for a in args)


@dataclass(frozen=True)
class _MappedLit:
    """A goal literal with scene names replaced by PDDL names."""

    lit: object
    task: PlanningTask

    @property
    def predicate(self) -> str:
        return self.lit.predicate

    @property
    def args(self) -> tuple[str, ...]:
        return self.task._map_args(self.lit.args)

    @property
    def negated(self) -> bool:
        return self.lit.negated


def object_affordances(scene: Scene, oam: OamDatabase, *, unknown: str = "error",
                       warnings: Optional[list[str]] = None) -> dict[str, frozenset[str]]:
    """Affordances per object: the object's own (perception) or its class's in the OAM.

    ``unknown``: "error" raises UnknownClassError, "warn" gives the object no affordances.
    Agents need no OAM entry.
    """
    out = {}
    for name, obj in scene.objects.items():
        if obj.affordances:
            out[name] = obj.affordances
        elif obj.is_agent:
            out[name] = frozenset()
        elif obj.class_name in oam:
            out[name] = oam.affordances_of(obj.class_name)
        elif unknown == "error":
            raise UnknownClassError(obj.class_name, oam.classes())
        else:
            if warnings is not None:
                warnings.append(f"{scene.source}: class {obj.class_name!r} of {name} is not in the "
                                f"OAM; it gets no affordances")
            out[name] = frozenset()
    return out


_AFF_IN_TEXT = re.compile(r"\(\s*aff_([\w\-]+)\s")


def build_task(scene: Scene, goal: Optional[Sequence[Sequence]] = None, *,
               oam: Optional[OamDatabase] = None,
               capabilities: Optional[Mapping[str, Capability]] = None,
               agents: Optional[Sequence[Agent]] = None,
               affordances: Optional[AffordanceSet] = None,
               unknown_classes: str = "error",
               predicates: Optional[Mapping[str, PredicateDef]] = None) -> PlanningTask:
    """Generate the domain and problem for ``scene`` (and ``goal``, a DNF, if given).
    ``predicates``: the predicate set (default: predicates.yaml), e.g. extended with
    properties learned from execution failures (``core/recovery``)."""
    oam = oam if oam is not None else load_oam()
    from .affordances import DEFAULT_AFFORDANCES
    from .capabilities import DEFAULT_CAPABILITIES
    caps = (dict(capabilities) if capabilities is not None
            else _cached_default(load_capabilities, DEFAULT_CAPABILITIES))
    if agents is None:
        from .capabilities import DEFAULT_AGENTS, load_agent_profiles
        agents = agents_for_scene(scene, _cached_default(load_agent_profiles, DEFAULT_AGENTS))
    agents = list(agents)
    affordances = (affordances if affordances is not None
                   else _cached_default(load_affordances, DEFAULT_AFFORDANCES))
    predicates = (dict(predicates) if predicates is not None
                  else _cached_default(load_predicates, DATA_DIR / "predicates.yaml"))
    warnings: list[str] = list(scene.warnings)
    src = scene.source
    aff_prefix, cap_prefix = PDDL_CONFIG["affordance_prefix"], PDDL_CONFIG["capability_prefix"]

    affs = object_affordances(scene, oam, unknown=unknown_classes, warnings=warnings)
    names = {n: pddl_name(n) for n in scene.objects}
    for loc in scene.locations:
        names.setdefault(loc, pddl_name(loc))
    agent_names = {a.name for a in agents}

    # ---- types -----------------------------------------------------------------------
    # Types share unified-planning's namespace with objects, predicates and actions (a typo
    # like `table1:0` makes a class `table1` next to the object `table1`).
    reserved = (_PDDL_RESERVED | set(BUILTIN_TYPES) | set(predicates) | set(caps)
                | set(names.values()))
    types: dict[str, str] = dict(PDDL_CONFIG["builtin_types"])
    class_type: dict[str, str] = {}
    class_parent: dict[str, str] = {}
    for name, obj in scene.objects.items():
        parent = ("actor" if obj.is_agent or name in agent_names
                  else "location" if name in scene.locations else "object")
        prev = class_parent.get(obj.class_name)
        # A class is a location type if any instance is a location (one parent only).
        if prev is None or (prev == "object" and parent != "object"):
            class_parent[obj.class_name] = parent
    for cls, parent in class_parent.items():
        t = pddl_name(cls)
        if t in reserved:
            t = f"{t}_class"
        class_type[cls] = t
        types[t] = parent
    object_types = {names[n]: class_type[o.class_name] for n, o in scene.objects.items()}
    for loc in scene.locations:
        if loc not in scene.objects:  # a named place without an object, e.g. kitchen0
            object_types[names[loc]] = "location"

    # ---- actions ---------------------------------------------------------------------
    used_affs: set[str] = set()
    actions: dict[str, str] = {}
    for cap in caps.values():
        # Environment capabilities have no actor and cost nothing (see capabilities.py).
        params = [] if cap.environment else ["?actor - actor"]
        guards = [] if cap.environment else [f"({cap_prefix}{cap.name} ?actor)"]
        for p in cap.parameters:
            builtin = p.type if p.type in ("location", "actor") else "object"
            params.append(f"?{p.name} - {builtin}")
            if p.type not in BUILTIN_TYPES:
                guards.append(f"({aff_prefix}{p.type} ?{p.name})")
                used_affs.add(p.type)
        used_affs.update(_AFF_IN_TEXT.findall(cap.precondition + " " + cap.effect))
        actions[cap.name] = (
            f"  (:action {cap.name}\n    :parameters ({' '.join(params)})\n"
            f"    :precondition (and {' '.join(guards)} {cap.precondition})\n"
            f"    :effect (and {_strip_and(cap.effect)} "
            f"(increase (total-cost) {0 if cap.environment else '(cost ?actor)'})))")

    # ---- initial state ---------------------------------------------------------------
    init: list[str] = []
    facts: set[tuple[str, ...]] = set()

    def add(pred: str, *args: str) -> None:
        key = (pred, *args)
        if key not in facts:
            facts.add(key)
            init.append(_fmt_literal(pred, [names.get(a, a) for a in args]))

    known_objs = set(scene.objects) | set(scene.locations)
    for rel in scene.relations:
        p = predicates.get(rel.predicate)
        if p is None or p.internal:
            warnings.append(f"{src}: relation {rel} uses a predicate the domain does not have; ignored")
            continue
        if len(rel.args) != len(p.params) or not all(a in known_objs for a in rel.args):
            warnings.append(f"{src}: relation {rel} has wrong arity or unknown objects; ignored")
            continue
        if rel.predicate == "at" and rel.args[1] not in scene.locations and rel.args[1] not in agent_names:
            warnings.append(f"{src}: relation {rel}: {rel.args[1]} is not a location; ignored")
            continue
        add(rel.predicate, *rel.args)

    # Where each object can be reached from: LOCATIONS, then along on/in/liquid_in.
    located: dict[str, str] = {}
    for loc in scene.locations.values():
        if loc.name in scene.objects:
            located[loc.name] = loc.name
        for o in loc.objects:
            if o in agent_names:
                continue
            located.setdefault(o, loc.name)
    holders = {r.args[0]: r.args[1] for r in scene.relations
               if r.predicate in ("on", "in", "liquid_in") and len(r.args) == 2}
    held = {r.args[0] for r in scene.relations if r.predicate == "inhand"}
    for name in scene.objects:
        if name in located or name in agent_names or name in held:
            continue
        seen, cur = set(), name
        while cur in holders and cur not in located and cur not in seen:
            seen.add(cur)
            cur = holders[cur]
        if cur in located:
            located[name] = located[cur]
        else:
            warnings.append(f"{src}: {name} is under no location and not on/in anything located; "
                            f"it cannot be reached")
    for o, loc in sorted(located.items()):
        add("located", o, loc)
    # Objects listed at a location with nothing holding them are taken to stand on the
    # location's furniture, if it is a support (otherwise they could never be picked up).
    for o, loc in sorted(located.items()):
        if (o != loc and o not in holders and o not in held and "carry" in affs.get(o, ())
                and "support" in affs.get(loc, ())):
            warnings.append(f"{src}: {o} is at {loc} but on/in nothing; assuming (on {o} {loc})")
            add("on", o, loc)
            holders[o] = loc

    for a in agents:
        if not any(f[0] == "at" and f[1] == a.name for f in facts):
            loc = scene.location_of(a.name)
            if loc in scene.locations:
                add("at", a.name, loc)
            else:
                warnings.append(f"{src}: agent {a.name} is at no location")
        if any(f[0] == "inhand" and f[2] == a.name for f in facts if len(f) == 3):
            add("hand_occupied", a.name)

    # A capability parameter may also be typed by an object class (wetten's liquid is
    # `water`: milk would not do); the class then acts as a static type fact like an affordance.
    static_preds = [f"{aff_prefix}{a}" for a in sorted(used_affs)]
    for name in sorted(scene.objects):
        for a in sorted(affs.get(name, frozenset()) | {scene.objects[name].class_name}):
            if a in used_affs:
                add(f"{aff_prefix}{a}", name)
    agent_caps = [c for c, cap in caps.items() if not cap.environment]
    static_preds += [f"{cap_prefix}{c}" for c in agent_caps]
    for a in agents:
        for c in agent_caps:
            if a.can(c):
                add(f"{cap_prefix}{c}", a.name)
    init.append("(= (total-cost) 0)")
    for a in agents:
        init.append(f"(= (cost {names.get(a.name, a.name)}) {a.cost})")

    # ---- signature -------------------------------------------------------------------
    ancestors = {}
    for t in list(types) + ["object"]:
        chain, cur = {t}, t
        while cur in types:
            cur = types[cur]
            chain.add(cur)
        chain.add("object")
        ancestors[t] = chain
    sig_objects = {}
    for n, o in scene.objects.items():
        t = class_type[o.class_name]
        sig_objects[names[n]] = frozenset(ancestors[t] | set(affs.get(n, ())) | {o.class_name})
    for loc in scene.locations:
        if loc not in scene.objects:
            sig_objects[names[loc]] = frozenset({"location", "object"})
    signature = Signature(
        predicates={p.name: tuple(t for _, t in p.params) for p in predicates.values() if not p.internal},
        objects=sig_objects,
        descriptions={p.name: p.description for p in predicates.values()},
    )
    task = PlanningTask(scene=scene, domain_name=PDDL_CONFIG["domain_name"], types=types,
                        object_types=object_types, predicates=predicates,
                        static_predicates=static_preds, actions=actions, init=init,
                        signature=signature, agents=agents, capabilities=caps,
                        warnings=warnings, names={k: v for k, v in names.items() if k != v})
    if goal is not None:
        goal = [tuple(c) for c in goal]
        task.check_goal(goal)
        task.goal = goal
    return task


def _strip_and(expr: str) -> str:
    """``(and a b)`` -> ``a b`` so effects can be merged into one conjunction."""
    s = expr.strip()
    m = re.match(r"^\(\s*and\s+(.*)\)$", s, re.S)
    return m.group(1) if m else s


def _add_precondition(action_text: str, literal: str) -> str:
    return action_text.replace(":precondition (and ", f":precondition (and {literal} ", 1)


# -- split encoding of high-arity actions ---------------------------------------------------
#
# Fast Downward's translator grounds an action schema over (roughly) the product of its
# parameters' domains, because relaxed reachability makes almost every fluent combination
# reachable (`located ?x ?l` for any carried ?x and any ?l, `in ?x ?c` for any pair, ...).
# A 5-parameter `pour` (actor, source, poured object, target, location) is therefore the
# bulk of the grounding. Splitting rewrites such an action as a chain of stage actions with
# at most 3 parameters each (action schema splitting, cf. Areces et al., ICAPS 2014):
#
# * a global lock `(sp_idle)`: every ordinary action and the first stage need it, the first
#   stage deletes it, the last stage adds it back; goals need it too. So the stages of one
#   instance run back to back and nothing else runs in between;
# * `(sp_<cap>_<k>)` says stage k ran, so stages run exactly in order;
# * a parameter used by several stages is remembered in a unary `(sp_<cap>_m_<param> ?x)`
#   fact added by its first stage, required by later ones and deleted by its last one; only
#   one such fact exists at a time, so all stages bind it to the same object;
# * every precondition literal is tested in the first stage that has all of its variables,
#   every effect literal applied in the last such stage, and the actor's cost is charged once.
#
# A stage order is accepted only if no effect of a stage touches a predicate that a later
# stage tests, and no add is followed by a delete of the same predicate in a later stage.
# Then the chain is applicable exactly when the original action is (all its literals are
# tested in the state it would be tested in), has the same net effect (PDDL applies deletes
# before adds; a later stage's add wins as it would) and the same cost: plans of the two
# domains correspond one to one with equal costs, so optimal costs are unchanged. Plans are
# mapped back with PlanningTask.merge_stages and then validated against the original actions.

SPLIT_IDLE = "sp_idle"
_NOT_ATOMS = {"and", "or", "not", "=", "increase", "decrease", "imply", "forall", "exists", "when"}


@dataclass(frozen=True)
class Stage:
    name: str                    # PDDL action name
    params: tuple[str, ...]      # variables with '?', in the capability's order (actor first)
    text: str                    # the PDDL action


@dataclass(frozen=True)
class SplitAction:
    capability: str
    params: tuple[str, ...]      # '?actor', then the capability's parameters
    stages: tuple[Stage, ...]
    predicates: tuple[str, ...]  # PDDL declarations of its bookkeeping predicates


def _sx(e) -> str:
    return e if isinstance(e, str) else "(" + " ".join(_sx(x) for x in e) + ")"


def _vars_of(e) -> frozenset:
    if isinstance(e, str):
        return frozenset({e}) if e.startswith("?") else frozenset()
    return frozenset().union(*(_vars_of(x) for x in e)) if e else frozenset()


def _preds_of(e) -> set:
    if isinstance(e, str) or not e:
        return set()
    head = e[0]
    if head in _NOT_ATOMS:
        return set().union(*(_preds_of(x) for x in e[1:])) if len(e) > 1 else set()
    return {head}


def _conjuncts(e) -> list:
    if not isinstance(e, str) and e and e[0] == "and":
        return [c for x in e[1:] for c in _conjuncts(x)]
    return [e]


def split_capability(cap, *, split_above: int = 4, stage_arity: int = 3, max_stages: int = 5,
                     counts: Optional[Mapping[str, int]] = None,
                     stage_charge: float = 0.15) -> Optional[SplitAction]:
    """The stage chain for ``cap`` if it has more than ``split_above`` parameters (actor
    included) and a valid split into stages of at most ``stage_arity`` exists; else None.
    ``counts``: objects per parameter type (affordance or built-in) in the task, to pick the
    split with the fewest ground actions; ``stage_charge``: relative price of each extra stage."""
    from itertools import permutations

    from .goal import parse_sexprs

    aff_prefix, cap_prefix = PDDL_CONFIG["affordance_prefix"], PDDL_CONFIG["capability_prefix"]
    params = ("?actor",) + tuple(f"?{p.name}" for p in cap.parameters)
    if len(params) <= split_above or stage_arity < 1:
        return None
    ptype = {"?actor": "actor", **{f"?{p.name}": p.type for p in cap.parameters}}
    guards = [(f"{cap_prefix}{cap.name}", "?actor")] + [
        (f"{aff_prefix}{p.type}", f"?{p.name}") for p in cap.parameters if p.type not in BUILTIN_TYPES]
    try:
        (pre,) = parse_sexprs(cap.precondition)
        (eff,) = parse_sexprs(cap.effect)
    except Exception:
        return None
    pres = [tuple(g) for g in guards] + [c for c in _conjuncts(pre) if c != ("and",)]
    effs = [c for c in _conjuncts(eff) if c != ("and",)]
    if any(not isinstance(e, tuple) or not e or e[0] in ("when", "forall", "increase", "decrease")
           for e in effs):
        return None
    groups = [_vars_of(c) for c in pres + effs] + [frozenset({p}) for p in params]
    if any(len(g) > stage_arity for g in groups) or any(not g <= set(params) for g in groups):
        return None
    # The actor's cost is charged in the stage that applies the action's add effect, so that
    # stage must also bind ?actor (when that fits). Why: in the delete relaxation that the
    # planner's heuristics (LM-cut) solve, stage flags and remembered bindings are never
    # deleted, so stages shared by several action instances are paid once. Charging the
    # stage that makes the new fact keeps one charge per fact reached, as in the unsplit
    # domain; charging the first stage made `pour` look almost free and A* blind (LM-cut
    # fell from 8 to 3 on complex_goal#7, which then timed out).
    adds = [e for e in effs if e[0] != "not"]
    charged = next((_vars_of(e) | {"?actor"} for e in adds
                    if len(_vars_of(e) | {"?actor"}) <= stage_arity), None)
    if charged is not None:
        groups.append(frozenset(charged))

    def eff_info(e):
        positive = e[0] != "not"
        atom = e if positive else e[1]
        return atom[0], positive

    # Stages are unions of blocks of a set partition of the maximal variable sets (every
    # literal then fits in some stage); the cheapest partition (estimated ground actions,
    # a small charge per extra stage) that has a valid order wins.
    maximal = sorted({g for g in groups if g and not any(g < h for h in groups)}, key=sorted)
    weight = {"actor": 2, "location": 10}

    def count(v):
        t = ptype[v]
        if counts is not None:
            return max(1, counts.get(t, 1))
        return weight.get(t, 30)

    def size(stage):
        n = 1
        for v in stage:
            n *= count(v)
        return n

    def order_ok(order):
        first = lambda vs: next((i for i, st in enumerate(order) if vs <= st), None)
        last = lambda vs: next((i for i in range(len(order) - 1, -1, -1) if vs <= order[i]), None)
        pre_at = [first(_vars_of(c)) for c in pres]
        eff_at = [last(_vars_of(e)) for e in effs]
        if None in pre_at or None in eff_at or first(frozenset({"?actor"})) is None:
            return None
        for e, i in zip(effs, eff_at):
            pred, positive = eff_info(e)
            if any(j > i and pred in _preds_of(c) for c, j in zip(pres, pre_at)):
                return None
            if positive and any(j > i and eff_info(e2) == (pred, False) for e2, j in zip(effs, eff_at)):
                return None
        return pre_at, eff_at

    def partitions(items):
        if not items:
            yield []
            return
        head, rest = items[0], items[1:]
        for part in partitions(rest):
            for i, block in enumerate(part):
                u = block | head
                if len(u) <= stage_arity:
                    yield part[:i] + [u] + part[i + 1:]
            if len(part) < max_stages:
                yield part + [head]

    if len(maximal) > 10:
        return None
    scored = sorted({(size(frozenset(params)) if len(p) == 1 else
                      sum(size(st) for st in p) * (1 + stage_charge * (len(p) - 1)), tuple(sorted(p, key=sorted)))
                     for p in partitions(maximal) if len(p) > 1}, key=lambda x: (x[0], len(x[1])))
    best = None
    for score, combo in scored:
        if score >= size(frozenset(params)):
            break
        for order in permutations(combo):
            got = order_ok(order)
            if got is not None:
                best = (order, got)
                break
        if best:
            break
    if best is None:
        return None
    order, (pre_at, eff_at) = best
    cost_at = next((i for i, st in enumerate(order) if charged is not None and charged <= st),
                   next(i for i, st in enumerate(order) if "?actor" in st))
    base = re.sub(r"[^\w]", "_", cap.name)
    n = len(order)
    stage_flag = lambda i: f"sp_{base}_{i}"
    mem = lambda v: f"sp_{base}_m_{v[1:].replace('-', '_')}"
    decls = [f"({stage_flag(i)})" for i in range(1, n)]
    uses = {v: [i for i, st in enumerate(order) if v in st] for v in params}
    decls += [f"({mem(v)} ?x - object)" for v, idx in uses.items() if len(idx) > 1]
    stages = []
    for i, st in enumerate(order):
        sp = tuple(v for v in params if v in st)
        ptxt = " ".join(f"{v} - {PlanningTask._builtin(ptype[v]) if ptype[v] in BUILTIN_TYPES else 'object'}"
                        for v in sp)
        pre_l = [f"({SPLIT_IDLE})" if i == 0 else f"({stage_flag(i)})"]
        eff_l = [f"(not ({SPLIT_IDLE}))" if i == 0 else f"(not ({stage_flag(i)}))"]
        eff_l.append(f"({SPLIT_IDLE})" if i == n - 1 else f"({stage_flag(i + 1)})")
        for v in sp:
            idx = uses[v]
            if len(idx) > 1:
                if i == idx[0]:
                    eff_l.append(f"({mem(v)} {v})")
                else:
                    pre_l.append(f"({mem(v)} {v})")
                    if i == idx[-1]:
                        eff_l.append(f"(not ({mem(v)} {v}))")
        pre_l += [_sx(c) for c, j in zip(pres, pre_at) if j == i]
        eff_l += [_sx(e) for e, j in zip(effs, eff_at) if j == i]
        eff_l.append("(increase (total-cost) (cost ?actor))" if i == cost_at else "(increase (total-cost) 0)")
        name = f"{cap.name}_stage{i + 1}"
        text = (f"  (:action {name}\n    :parameters ({ptxt})\n"
                f"    :precondition (and {' '.join(pre_l)})\n    :effect (and {' '.join(eff_l)}))")
        stages.append(Stage(name, sp, text))
    return SplitAction(cap.name, params, tuple(stages), tuple(decls))


def _split_predicates(splits: Iterable[SplitAction]) -> list[str]:
    out = [f"({SPLIT_IDLE})"]
    for sp in splits:
        out += list(sp.predicates)
    return out
