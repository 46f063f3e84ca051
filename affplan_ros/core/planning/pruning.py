"""Dropping objects that cannot matter to a goal, before Fast Downward grounds the task.

Grounding time grows with objects x action arity, so a 150-object scene is planned on the
few objects a goal can involve. The rule is conservative so that the optimal cost never
changes (the test suite checks this on the AutoGPT+P oracle scenarios, and the planner
falls back to the full problem if the pruned one has no plan). Kept are:

1. the goal's objects, all agents, all location objects, and whatever an agent holds;
2. upwards along on/in/liquid_in: what a kept object stands on or is in (to pick it up
   it must be reached through its holders, to pour a liquid its container is needed);
3. "tools": capabilities relevant to the goal are found by backward chaining over
   predicates from the goal (through non-manipulation preconditions, e.g. heat_liquid
   needs liquid_in, which fill achieves). A parameter of such a capability that is not
   the object being changed (the knife and cutting board of chop, the source of fill)
   keeps every object having that parameter's affordance. Exception: a parameter tied to
   a changed object by a precondition the plan does not try to change, when the parameter
   asks for exactly the affordance that the predicate itself requires there (grasp's
   ?from in (on ?object ?from)): whatever holds the object qualifies, and rule 2 keeps it.
   Chop's (on ?target ?on) wants a sturdy-support, more than `on` guarantees, so the target
   may first have to be moved onto one: every sturdy-support is kept. The source of a
   transfer that moves a goal object from holder to holder (fill, pour) is only its holder
   now: a detour through another holder costs one more transfer and asks the same of it;
4. supports and containers at locations whose furniture is not itself a support or
   container, so an agent there can still put down what it holds.
"""
from __future__ import annotations

from typing import Sequence

from affplan_ros.core.goals.sexpr import parse_sexprs
from affplan_ros.core.model.scene import Scene

# Predicates of the pick-and-place skeleton: every plan uses them, chaining through them
# would make everything relevant, and rules 1, 2 and 4 cover what they need.
SKELETON = frozenset({"on", "in", "inhand", "hand_occupied", "at", "located", "visited"})
_LOGIC = {"and", "or", "not", "=", "increase"}
# Relations that say what holds an object (the holder closure follows them upwards).
HOLDING = ("on", "in", "liquid_in")


def _atoms(text: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """(predicate, args, positive) for each atom of a PDDL condition/effect."""
    out = []

    def walk(e, positive=True):
        if isinstance(e, str) or not e:
            return
        head = e[0]
        if head == "not":
            walk(e[1], not positive)
        elif head in ("and", "or"):
            for c in e[1:]:
                walk(c, positive)
        elif head in _LOGIC:
            return
        elif isinstance(head, str):
            out.append((head, tuple(a for a in e[1:] if isinstance(a, str)), positive))
    for expr in parse_sexprs(text):
        walk(expr)
    return out


def relevant_capabilities(goal: Sequence[Sequence], capabilities) -> tuple[set[str], set[tuple[str, bool]]]:
    """(capability names, (predicate, polarity) pairs) reachable backwards from the goal.

    Polarity matters: a capability only helps a positive literal if it adds the predicate
    (place deletes inhand, it never achieves it)."""
    preds = {(l.predicate, not l.negated) for c in goal for l in c}
    caps: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cap in capabilities.values():
            if cap.name in caps:
                continue
            if any((p, pos) in preds for p, _, pos in _atoms(cap.effect)):
                caps.add(cap.name)
                changed = True
                for p, _, pos in _atoms(cap.precondition):
                    if p not in SKELETON and not p.startswith("aff_"):
                        preds.add((p, pos))
    return caps, preds


def _transfer_sources(cap, bound: set[str]) -> set[str]:
    """Source parameters of a transfer that moves a goal object between holders: fill's
    ?source in (liquid_in ?liquid ?source) -> (liquid_in ?liquid ?target), pour's ?source of
    the poured object. A detour through another holder repeats the transfer from a holder that
    must meet the same preconditions, so it never makes a plan cheaper: only where the object
    is now counts, and the holder closure keeps that."""
    effect = _atoms(cap.effect)
    adds = {(p, args[0]) for p, args, pos in effect if pos and args}
    dels = {(p, args) for p, args, pos in effect if not pos}
    return {args[1].lstrip("?") for p, args, pos in _atoms(cap.precondition)
            if pos and p in HOLDING and len(args) == 2 and args[0].lstrip("?") in bound
            and (p, args) in dels and (p, args[0]) in adds}


def prune_scene(scene: Scene, goal: Sequence[Sequence], task) -> Scene:
    """The sub-scene that a plan for ``goal`` can need (see module doc); ``task`` is the
    full PlanningTask (for capabilities, agents and affordances)."""
    sig = task.signature
    inv = {v: k for k, v in task.names.items()}
    affs = {inv.get(n, n): types for n, types in sig.objects.items()}
    keep: set[str] = {a for c in goal for l in c for a in l.args}
    keep |= {a.name for a in task.agents}
    keep |= {l for l in scene.locations if l in scene.objects}
    keep |= {r.args[0] for r in scene.relations if r.predicate == "inhand"}

    caps, preds = relevant_capabilities(goal, task.capabilities)
    for name in caps:
        cap = task.capabilities[name]
        bound = {a.lstrip("?") for p, args, pos in _atoms(cap.effect) if (p, pos) in preds
                 for a in args}
        # A parameter tied to a changed object by a precondition the plan does not try to
        # change (grasp's ?from in (on ?object ?from)) is found by the holder closure below.
        # Only when the parameter's affordance is exactly what the predicate requires there:
        # chop's (on ?target ?on) asks for a sturdy-support, stronger than `on`'s support,
        # so the target may first have to be put on one - every sturdy-support is kept.
        ptypes = {q.name: q.type for q in cap.parameters}
        tied = set()
        for p, args, pos in _atoms(cap.precondition):
            if (p, pos) in preds or not any(x.lstrip("?") in bound for x in args):
                continue
            decl = task.predicates.get(p)
            for i, a in enumerate(args):
                a = a.lstrip("?")
                if decl is not None and i < len(decl.params) and ptypes.get(a) == decl.params[i][1]:
                    tied.add(a)
        tied |= _transfer_sources(cap, bound)
        for param in cap.parameters:
            if param.type in ("location", "actor") or param.name in bound or param.name in tied:
                continue
            keep |= {o for o, types in affs.items() if param.type in types}

    for loc in scene.locations.values():
        anchor = affs.get(loc.name, frozenset())
        if not ({"support", "contain"} & anchor):
            keep |= {o for o in loc.objects if {"support", "contain"} & affs.get(o, frozenset())}

    holders: dict[str, set[str]] = {}
    for r in scene.relations:
        if r.predicate in HOLDING and len(r.args) == 2:
            holders.setdefault(r.args[0], set()).add(r.args[1])
    frontier = list(keep)
    while frontier:
        o = frontier.pop()
        for h in holders.get(o, ()):
            if h not in keep:
                keep.add(h)
                frontier.append(h)
    return scene.subset(keep)
