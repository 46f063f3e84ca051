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
three parameters (see ``splitting.py`` for the encoding and why it keeps every
plan's cost); the capabilities themselves (what plans, skills and validation speak) are
unchanged.

Over 500 lines on purpose: ``PlanningTask`` and ``build_task`` are one concept, the task as the planner,
the checks and the validator all see it; names and literals are in encoding.py, the split encoding in
splitting.py.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Iterable, Mapping, Optional, Sequence

from affplan_ros.core.knowledge.affordances import DEFAULT_AFFORDANCES, AffordanceSet, load_affordances
from affplan_ros.core.knowledge.capabilities import (
    BUILTIN_TYPES,
    DEFAULT_AGENTS,
    DEFAULT_CAPABILITIES,
    Agent,
    Capability,
    agents_for_scene,
    load_agent_profiles,
    load_capabilities,
    split_actor,
)
from affplan_ros.core.knowledge.oam import OamDatabase, UnknownClassError, load_oam
from affplan_ros.core.knowledge.objects import DEFAULT_OBJECTS, ObjectProperties, ObjectTable, load_object_table
from affplan_ros.core.model.predicates import (
    DEFAULT_PREDICATES,
    PredicateDef,
    load_predicates,
)
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.model.signature import Signature
from affplan_ros.core.planning.derived import compile_derived
from affplan_ros.core.planning.encoding import (
    PDDL_CONFIG,
    PDDL_RESERVED,
    GoalVocabularyError,
    builtin_parent,
    cached_default,
    fmt_literal,
    goal_to_pddl,
    pddl_name,
)
from affplan_ros.core.planning.splitting import (
    SPLIT_IDLE,
    SplitAction,
    split_capability,
    split_predicates,
)


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
    # Objects the domain's actions name (the compiled `free`, see derived.py): :constants of the
    # domain, left out of the problem's :objects.
    domain_constants: frozenset[str] = frozenset()
    # The capabilities as the PDDL writes them (``free``, ``enclosed`` compiled, derived.py); ``capabilities``
    # above are the source, what plans, skills and the simulation speak.
    compiled_capabilities: dict[str, Capability] = field(default_factory=dict)

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
            preds.append("    (" + " ".join([p.name] + [f"?{v} - {builtin_parent(t)}" for v, t in p.params]) + ")")
        preds.append("    ; static: affordances of objects, capabilities of agents")
        for s in self.static_predicates:
            var = "?a - actor" if s.startswith(PDDL_CONFIG["capability_prefix"]) else "?o - object"
            preds.append(f"    ({s} {var})")
        if splits:
            actions = []
            preds.append("    ; bookkeeping of split actions (stages of one action run back to back)")
            preds += [f"    {p}" for p in split_predicates(splits.values())]
            for name, text in self.actions.items():
                if name in splits:
                    actions += [st.text for st in splits[name].stages]
                else:
                    actions.append(_add_precondition(text, f"({SPLIT_IDLE})"))
        else:
            actions = list(self.actions.values())
        # Objects named in the goal actions must be domain constants too (and are then left
        # out of the problem's :objects, see problem_pddl(goal_flag=True)).
        consts = sorted(self.domain_constants | (self.goal_constants(goal_actions) if goal_actions else set()))
        constants = ("  (:constants\n    " + "\n    ".join(
            f"{o} - {self.object_types[o]}" for o in consts) + ")\n") if consts else ""
        if goal_actions:
            flag = PDDL_CONFIG["goal_flag"]
            preds.append(f"    ({flag})")
            for i, c in enumerate(goal_actions):
                body = " ".join(fmt_literal(l.predicate, self._map_args(l.args), l.negated) for l in c)
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
        exclude = set(exclude) | self.domain_constants
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
        for cap in (self.compiled_capabilities or self.capabilities).values():
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
               predicates: Optional[Mapping[str, PredicateDef]] = None,
               objects: Optional[ObjectTable] = None) -> PlanningTask:
    """Generate the domain and problem for ``scene`` (and ``goal``, a DNF, if given).
    ``predicates``: the predicate set (default: predicates.yaml), e.g. extended with
    properties learned from execution failures (``core/recovery``); ``objects``: sizes per
    class for ``fits`` (default: knowledge/data/objects.yaml)."""
    oam = oam if oam is not None else load_oam()
    caps = (dict(capabilities) if capabilities is not None
            else cached_default(load_capabilities, DEFAULT_CAPABILITIES))
    if agents is None:
        agents = agents_for_scene(scene, cached_default(load_agent_profiles, DEFAULT_AGENTS))
    agents = list(agents)
    affordances = (affordances if affordances is not None
                   else cached_default(load_affordances, DEFAULT_AFFORDANCES))
    predicates = (dict(predicates) if predicates is not None
                  else cached_default(load_predicates, DEFAULT_PREDICATES))
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
    reserved = (PDDL_RESERVED | set(BUILTIN_TYPES) | set(predicates) | set(caps)
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
    # Derived predicates (`free`, `enclosed`) as fluents (derived.py); the task keeps the source
    # capabilities too, which is what plans, skills and the simulation speak.
    derived = compile_derived(caps, {names[n]: a for n, a in affs.items()},
                              {(r.predicate, *(names.get(a, a) for a in r.args)) for r in scene.relations},
                              aff_prefix)
    if derived.predicates:
        predicates = {**predicates, **{p.name: p for p in derived.predicates}}
    used_affs: set[str] = set()
    actions: dict[str, str] = {}
    for cap in derived.capabilities.values():
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
            init.append(fmt_literal(pred, [names.get(a, a) for a in args]))

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

    init += derived.init
    # Static facts from sizes: each pair comes once, so they skip add's bookkeeping (a home of a
    # thousand objects has a few hundred thousand of them).
    for pred, pairs in (("fits", _fitting_pairs), ("too_wide", _too_wide_pairs)):
        if any(f"({pred} " in c.precondition for c in caps.values()):
            table = objects if objects is not None else cached_default(load_object_table, DEFAULT_OBJECTS)
            init.extend(f"({pred} {names.get(x, x)} {names.get(c, c)})" for x, c in pairs(scene, affs, table, warnings))

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
                        warnings=warnings, names={k: v for k, v in names.items() if k != v},
                        domain_constants=derived.constants, compiled_capabilities=derived.capabilities)
    if goal is not None:
        goal = [tuple(c) for c in goal]
        task.check_goal(goal)
        task.goal = goal
    return task


def _fitting_pairs(scene: Scene, affs: Mapping[str, frozenset[str]], table: ObjectTable,
                   warnings: list[str]) -> list[tuple[str, str]]:
    """(object, container) pairs where the carryable object goes into the container by size."""
    carried = [n for n in sorted(scene.objects) if "carry" in affs.get(n, ())]
    containers = [n for n in sorted(scene.objects) if "contain" in affs.get(n, ())]
    missing = sorted({scene.objects[n].class_name for n in carried + containers}
                     - set(table.classes))
    if missing:
        warnings.append(f"{scene.source}: no size for class(es) {', '.join(missing)} in "
                        f"{table.source or 'the object table'}; the default {table.default.size} m is used")
    props = {n: table.get(scene.objects[n].class_name) for n in set(carried) | set(containers)}
    for x in carried:  # a liquid the OAM lets one carry is a drink in its bottle or can (SayCan's water)
        if props[x].liquid:
            props[x] = table.default
    for c in containers:  # the OAM says it contains, the table gives no inner space: its outer box
        if props[c].inner is None:
            props[c] = replace(props[c], inner=props[c].size)
    return _pairs_by_props(carried, containers, props, lambda x, c: x.fits_into(c))


def _too_wide_pairs(scene: Scene, affs: Mapping[str, frozenset[str]], table: ObjectTable,
                    warnings: list[str]) -> list[tuple[str, str]]:
    """(object, support) pairs where the carryable object is too wide to stand on the support, an
    object that others stand or stack on. Only those are listed, and furniture and classes
    without a size (said by _fitting_pairs) take anything."""
    carried = [n for n in sorted(scene.objects) if "carry" in affs.get(n, ()) and scene.objects[n].class_name in table]
    supports = [n for n in sorted(scene.objects) if n not in scene.locations and scene.objects[n].class_name in table
                and affs.get(n, frozenset()) & {"support", "stack"}]
    props = {n: table.get(scene.objects[n].class_name) for n in set(carried) | set(supports)}
    return _pairs_by_props(carried, supports, props, lambda x, s: x.too_wide_for(s))


def _pairs_by_props(rows: Sequence[str], cols: Sequence[str], props: Mapping[str, ObjectProperties],
                    test: Callable[[ObjectProperties, ObjectProperties], bool]) -> list[tuple[str, str]]:
    """(row, col) pairs, cols outer and rows inner in the given orders, where ``test`` holds for
    their properties. It is asked once per distinct pair of properties: a home of a thousand
    objects has hundreds of thousands of pairs but a few hundred distinct ones."""
    by_props: dict[ObjectProperties, list[str]] = {}
    for r in rows:
        by_props.setdefault(props[r], []).append(r)
    order = {r: i for i, r in enumerate(rows)}
    passing: dict[ObjectProperties, list[str]] = {}
    out: list[tuple[str, str]] = []
    for c in cols:
        if props[c] not in passing:
            passing[props[c]] = sorted((r for p, names in by_props.items() if test(p, props[c]) for r in names),
                                       key=order.__getitem__)
        out.extend((r, c) for r in passing[props[c]] if r != c)
    return out


def _strip_and(expr: str) -> str:
    """``(and a b)`` -> ``a b`` so effects can be merged into one conjunction."""
    s = expr.strip()
    m = re.match(r"^\(\s*and\s+(.*)\)$", s, re.S)
    return m.group(1) if m else s


def _add_precondition(action_text: str, literal: str) -> str:
    return action_text.replace(":precondition (and ", f":precondition (and {literal} ", 1)
