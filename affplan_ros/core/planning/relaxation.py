"""A relaxation of the pruned task whose optimal plan, when the home can carry it out, is
optimal for the whole home: the cheapest agents alone, in the places the plan goes to anyway.

Rule 5 of :mod:`pruning` keeps every place no other place stands in for, and every agent. An
empty sink stays (something could be parked in it), and so does the person (the robot could hand
them something to hold). For a goal of ten things to carry, these options multiply the states an
optimal search must rule out: the 1000-object home's "clear the table" did not finish in 30 s,
with the sink, a cupboard and the person making most of it. They never make a plan cheaper, but
no heuristic sees that. This module builds a task in which they are gone, in a way that only
makes plans cheaper, never dearer:

* every place rule 5 keeps but the plan does not go to anyway (``prune_scene(anchored=True)``)
  is *merged* into a support the plan goes to anyway (``M``): what is on or in it stands on
  ``M``, and an agent going there goes to ``M``. Only places with nothing on them but
  on/in/closed/opened, and whose furniture serves nothing a support cannot, beyond being a
  container that opens and closes;
* an agent dearer than the cheapest (the person, cost 100) is *left out* where the goal does
  not name them, they hold nothing and they stand at a support: what would be handed to them
  is put down where they stand, what they would hand back is picked up from there.

Why its optimum is a lower bound. Map each state of the pruned task to one of the relaxation
(phi): ``(in x P)`` and ``(on x P)`` become ``(on x M)``, ``(located x P)`` and ``(at a P)``
become ``... M``, ``(closed P)`` and ``(opened P)`` are forgotten, ``(inhand x person)`` becomes
``(on x L)`` for the place ``L`` they stand at, and ``(at robot person)`` becomes ``(at robot L)``.
Each action of a plan that costs less than a left-out agent's action (so that agent never acts)
maps to an action of the relaxation that costs the same, or to none:
``putin x P`` -> ``place x M``, ``take_out x P`` -> ``grasp x M`` (the capability's
``support_form``), ``handover x person`` -> ``place x L``, ``receive_object x person`` -> ``grasp
x L``, ``open P`` / ``close P`` / ``move`` between P and M -> nothing, an action taking a
container ``P`` that has no support form (``pour``) -> its *twin*, the same action with ``P``
made a support (``(in x P)`` read as ``(on x P)``, P's other conditions dropped), and every
other action -> itself with P read as M. The mapped action's precondition holds in the mapped
state: P's conditions only get weaker, nothing stands on a thing in a hand, and ``M`` takes
everything carryable (no ``too_wide`` fact names it, checked on the built task). So every such
plan maps to a plan of the relaxation that costs no more.

Hence: an optimal plan of the relaxation that costs less than ``below`` (the cheapest left-out
agent's cost) and is a plan of the home (it uses no twin: the planner validates it against the
whole home) is optimal for the home. If it is not, the caller plans the pruned task as before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from affplan_ros.core.goals.sexpr import SExpr, parse_sexpr, render_sexpr
from affplan_ros.core.knowledge.capabilities import Capability, Parameter
from affplan_ros.core.model.scene import Location, Relation, Scene
from affplan_ros.core.planning.pruning import goal_relevant_capabilities, object_affordances_of

# What a merged place's furniture may offer (of what the goal's capabilities take): a support
# (read as the support it merges into), a container (read as that support too) that opens and
# closes (forgotten). Anything else (a heater, a tap, a cutting surface) keeps it a place.
MERGEABLE_ROLES = frozenset({"support", "contain", "stack", "open", "close"})
# Of those, what an action takes that M need not be: an action on the place in such a role has
# a support form (putin -> place), or, for a container, a twin; else the place is not merged
# (stack has neither: a support_form for it slowed the kitchen scenes).
READ_AS_SUPPORT = ("contain", "stack")
# Relations a merged place may be in: what stands on or in it, and its door.
_ON_OR_IN = ("on", "in")
_DOOR = ("closed", "opened")
# Suffix of a twin capability's name (a name the home's domain never has).
TWIN_SUFFIX = "_on_support"


@dataclass
class Relaxation:
    task: object                   # the relaxation's PlanningTask
    below: float                   # the proof covers plans cheaper than this
    merged: dict[str, str]         # merged place -> the support it was merged into
    left_out: tuple[str, ...]      # agents left out
    twins: tuple[str, ...]         # capabilities only the relaxation has


def relax(kept: Scene, anchored: Scene, goal: Sequence[Sequence], full, *,
          build=None) -> tuple[Optional[Relaxation], str]:
    """The relaxation of ``kept`` (rule 5's scene) for ``goal``, or (None, why not).

    ``anchored``: the places the plan goes to anyway (``prune_scene(anchored=True)``);
    ``full``: the whole home's task (capabilities, agents, affordances); ``build``: builds a
    task from (scene, agents, capabilities), as :func:`task.build_task` with the caller's
    options."""
    affs = object_affordances_of(full)
    useful = goal_relevant_capabilities(goal, full.capabilities)
    # What the goal's capabilities take of a thing (a place as a place is read as M: not a role).
    roles = {q.type for name in useful for q in full.capabilities[name].parameters} - {"location", "actor"}
    named = {a for c in goal for lit in c for a in lit.args}
    negated = {a for c in goal for lit in c if lit.negated for a in lit.args}
    unary = {(r.predicate, r.args[0]) for r in kept.relations if len(r.args) == 1}

    places = [p for p in anchored.locations if p in anchored.objects]
    # The support merged places go into: one the goal does not name, of a class it names none of,
    # where there is one (a twin acts on that class: on a goal's support it could cheat the bound).
    named_classes = {kept.objects[a].class_name for a in named if a in kept.objects}
    supports = sorted((p for p in places if "support" in affs.get(p, ()) and ("closed", p) not in unary
                       and p not in negated),
                      key=lambda p: (p in named, kept.objects[p].class_name in named_classes, p))
    dropped = sorted(p for p in kept.locations if p in kept.objects and p not in anchored.locations)
    if not supports:
        return None, "no support among the places the plan goes to anyway"

    target = supports[0]
    merged: dict[str, str] = {}
    twins: dict[str, Capability] = {}
    for p in dropped:
        others = [r for r in kept.relations if p in r.args
                  and not (r.predicate in _ON_OR_IN and r.args[1:] == (p,))
                  and not (r.predicate in _DOOR and r.args == (p,))]
        if others:
            return None, f"{p} is in {others[0]}"
        offers = roles & set(affs.get(p, ()))
        if offers - MERGEABLE_ROLES:
            return None, f"{p} offers {sorted(offers - MERGEABLE_ROLES)}"
        for name in sorted(useful):
            cap = full.capabilities[name]
            for q in cap.parameters:
                if q.type not in offers or q.type not in READ_AS_SUPPORT or cap.support_form or name in twins:
                    continue
                twin = _twin(cap, q.name, kept.objects[target].class_name) if q.type == "contain" else None
                if twin is None:
                    return None, f"{name} would take {p} as its ?{q.name} ({q.type}): no act on a support does that"
                twins[name] = twin
        merged[p] = target

    cheapest = min((a.cost for a in full.agents), default=0)
    left_out: dict[str, str] = {}      # agent -> the support they stand at
    below = math.inf
    actor_roles = [c for c in useful if not full.capabilities[c].support_form
                   and any(q.type == "actor" for q in full.capabilities[c].parameters)]
    for agent in full.agents:
        if (agent.cost <= cheapest or agent.name in named or agent.name not in kept.objects or actor_roles
                or agent.name in kept.locations):      # things kept "at" a person: not here
            continue
        rels = [r for r in kept.relations if agent.name in r.args]
        stands = [r.args[1] for r in rels if r.predicate == "at" and r.args[0] == agent.name]
        where = merged.get(stands[0], stands[0]) if len(stands) == 1 else None
        if len(rels) != 1 or where not in kept.objects or "support" not in affs.get(where, ()) \
                or ("closed", where) in unary:
            continue
        left_out[agent.name] = where
        below = min(below, float(agent.cost))
    if not merged and not left_out:
        return None, "nothing to relax"

    scene = _merged_scene(kept, merged, set(left_out))
    agents = [a for a in full.agents if a.name not in left_out]
    caps = dict(full.capabilities) | {twin.name: twin for twin in twins.values()}
    task = build(scene, agents, caps)
    stands_on = set(merged.values()) | set(left_out.values())
    wide = [f for f in task.init if f.startswith("(too_wide ") and f[1:-1].split()[2] in
            {task.names.get(s, s) for s in stands_on}]
    if wide:
        return None, f"not everything can be put down on {sorted(stands_on)}: {wide[0]}"
    return Relaxation(task, below, merged, tuple(left_out), tuple(t.name for t in twins.values())), ""


def _merged_scene(kept: Scene, merged: dict[str, str], left_out: set[str]) -> Scene:
    """``kept`` with each merged place's things standing on its support, and without the
    merged places and the agents left out."""
    gone = set(merged) | left_out
    out = Scene(source=kept.source, warnings=list(kept.warnings))
    out.objects = {n: o for n, o in kept.objects.items() if n not in gone}
    for r in kept.relations:
        if any(a in left_out for a in r.args):
            continue
        if r.predicate in _ON_OR_IN and len(r.args) == 2 and r.args[1] in merged:
            out.add_relation("on", r.args[0], merged[r.args[1]])
        elif not any(a in merged for a in r.args):
            out.relations.append(Relation(r.predicate, r.args))
    moved: dict[str, list[str]] = {}
    for p, m in merged.items():
        moved.setdefault(m, []).extend(o for o in kept.locations[p].objects if o != p)
    out.locations = {n: Location(n, tuple(o for o in loc.objects if o not in left_out) + tuple(moved.get(n, ())))
                     for n, loc in kept.locations.items() if n not in gone}
    return out


def _twin(cap: Capability, param: str, support_class: str) -> Optional[Capability]:
    """``cap`` with its container ``?param`` made a thing of ``support_class`` (the support
    merged places go into): ``(in ?x ?param)`` read as ``(on ?x ?param)``, every other
    condition on ``?param`` but where it is dropped. None if the effect does more to
    ``?param`` than put things in or take them out."""
    var = "?" + param

    # A condition left out (None) holds: in an `and` it goes, an `or` or a `not` holding it goes
    # whole (a `not` of a rewritten atom is not implied by the original).
    def pre(e: SExpr) -> Optional[SExpr]:
        if isinstance(e, str) or not e:
            return e
        if e[0] == "and":
            parts = [x for x in (pre(c) for c in e[1:]) if x is not None]
            return ["and", *parts] if parts else None
        if e[0] == "or":
            parts = [pre(c) for c in e[1:]]
            return None if any(x is None for x in parts) else ["or", *parts]
        if e[0] == "not":
            return e if pre(e[1]) == e[1] else None
        if any(not isinstance(x, str) for x in e):
            return None if _mentions(e) else e      # exists, forall, imply, ...
        return atom(e)

    def eff(e: SExpr) -> SExpr:
        if isinstance(e, str) or not e:
            return e
        if e[0] in ("and", "not"):
            return [e[0], *(eff(c) for c in e[1:])]
        out = atom(e) if all(isinstance(x, str) for x in e) else (None if _mentions(e) else e)
        if out is None:
            raise ValueError(render_sexpr(e))
        return out

    def atom(e: SExpr) -> Optional[SExpr]:
        if var not in e[1:]:
            return e
        if e[0] == "in" and len(e) == 3 and e[2] == var:
            return ["on", e[1], var]
        if e[0] == "located" and e[1] == var:
            return e
        return None

    def _mentions(e: SExpr) -> bool:
        return e == var if isinstance(e, str) else any(_mentions(x) for x in e)

    try:
        effect = render_sexpr(eff(parse_sexpr(cap.effect)))
    except ValueError:
        return None
    condition = pre(parse_sexpr(cap.precondition))
    params = tuple(Parameter(q.name, support_class) if q.name == param else q for q in cap.parameters)
    return replace(cap, name=cap.name + TWIN_SUFFIX, parameters=params,
                   precondition=render_sexpr(condition if condition is not None else ["and"]), effect=effect,
                   description=f"{cap.description} (relaxed: ?{param} the {support_class} places merged into; "
                               "never in a plan for the home)")
