"""Dropping objects that cannot matter to a goal, before Fast Downward grounds the task.

Grounding time grows with objects x action arity, so a 150-object scene is planned on the
few objects a goal can involve. The rule is conservative so that the optimal cost never
changes (the test suite checks this on the AutoGPT+P oracle scenarios, and the planner
falls back to the full problem if the pruned one has no plan). Kept are:

1. the goal's objects, all agents, all location objects, and whatever an agent holds;
2. upwards along on/in/liquid_in: what a kept object stands on or is in (to pick it up
   it must be reached through its holders, to pour a liquid its container is needed); and
   what stands on a kept thing that can be carried (it must come off before the thing is
   picked up);
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
   container, so an agent there can still put down what it holds;
5. of the places (a home has thirty, and a knife in every drawer), those the plan must go to
   anyway (where the agents are, where the goal's objects and their holders are) and those no
   other place beats, with the tools of rule 3 there (:func:`stand_ins`). Every action costs
   its actor the same wherever it happens (AutoGPT+P's cost model), so a place whose furniture
   serves every action the other's does (every type a capability takes, closed only where the
   other is), with a tool of each kind the other offers at least as easy to take (the same
   class in the same holders, no more of them closed, no more on top or inside), can stand in
   for it in any plan: a plan going to the dropped place goes
   to its stand-in instead at the same cost (an empty place is stood in for by any place of
   the same furniture: something put down there can be put down there). A place the plan
   goes to anyway stands in for any place it could stand in for. Of places that stand in for
   each other one is kept (a plan that fetched from two of them fetches both from it), and
   one tool of a kind in one state per place (a tool is not used up: one serves every use).
"""
from __future__ import annotations

import math
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
    return [(p, args, positive) for p, args, positive, _ in _walk_atoms(text)]


def _walk_atoms(text: str) -> list[tuple[str, tuple[str, ...], bool, bool]]:
    """(predicate, args, positive, nested) for each atom of a PDDL condition/effect; ``nested``:
    under forall or when (of a when, only its effect), where one action may add any number."""
    out = []

    def walk(e, positive: bool, nested: bool) -> None:
        if isinstance(e, str) or not e:
            return
        head = e[0]
        if head == "not":
            walk(e[1], not positive, nested)
        elif head in ("and", "or"):
            for c in e[1:]:
                walk(c, positive, nested)
        elif head in ("forall", "when"):     # (forall (?x ...) body), (when condition effect)
            walk(e[2] if len(e) > 2 else None, positive, True)
        elif head in _LOGIC:
            return
        elif isinstance(head, str):
            out.append((head, tuple(a for a in e[1:] if isinstance(a, str)), positive, nested))
    for expr in parse_sexprs(text):
        walk(expr, True, False)
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


def object_affordances_of(task) -> dict[str, frozenset[str]]:
    """Scene name -> the types (affordances, class) the task gives the object."""
    inv = {v: k for k, v in task.names.items()}
    return {inv.get(n, n): types for n, types in task.signature.objects.items()}


def prune_scene(scene: Scene, goal: Sequence[Sequence], task, anchored: bool = False) -> Scene:
    """The sub-scene that a plan for ``goal`` can need (see module doc); ``task`` is the
    full PlanningTask (for capabilities, agents and affordances). ``anchored``: rule 5 keeps
    only the places the plan must go to anyway (not a safe pruning by itself: see
    :func:`visit_bound` for when its plan is still optimal)."""
    affs = object_affordances_of(task)
    keep: set[str] = {a for c in goal for l in c for a in l.args}
    keep |= {a.name for a in task.agents}
    keep |= {l for l in scene.locations if l in scene.objects}
    keep |= {r.args[0] for r in scene.relations if r.predicate == "inhand"}

    caps, preds = relevant_capabilities(goal, task.capabilities)
    base = set(keep)
    for name in caps:
        cap = task.capabilities[name]
        bound = {a.lstrip("?") for p, args, pos in _atoms(cap.effect) if (p, pos) in preds
                 for a in args}
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
    # What of a place's furniture a plan for this goal can use: the types the goal's relevant
    # capabilities take (heating, filling or chopping serve no plan that puts things away).
    useful = goal_relevant_capabilities(goal, task.capabilities)
    roles = {q.type for cap in task.capabilities.values() if cap.name in useful
             for q in cap.parameters} - {"location", "actor"}
    keep -= stand_ins(scene, affs, base, keep - base, goal, roles, anchored)

    for loc in scene.locations.values():
        if loc.name in scene.objects and loc.name not in keep:
            continue      # a place rule 5 dropped
        anchor = affs.get(loc.name, frozenset())
        if not ({"support", "contain"} & anchor):
            keep |= {o for o in loc.objects if {"support", "contain"} & affs.get(o, frozenset())}

    holders: dict[str, set[str]] = {}
    on_top: dict[str, set[str]] = {}
    for r in scene.relations:
        if r.predicate in HOLDING and len(r.args) == 2:
            holders.setdefault(r.args[0], set()).add(r.args[1])
        if r.predicate == "on" and len(r.args) == 2:
            on_top.setdefault(r.args[1], set()).add(r.args[0])
    # Upwards what holds a kept thing; and what stands on a kept thing that can be carried, which
    # must come off before it is picked up (`free`): without it a plate with an apple on it was
    # planned as if free, the plan failed validation, and the whole home was planned instead.
    frontier = list(keep)
    while frontier:
        o = frontier.pop()
        above = on_top.get(o, ()) if "carry" in affs.get(o, ()) else ()
        for h in (*holders.get(o, ()), *above):
            if h not in keep:
                keep.add(h)
                frontier.append(h)
    return scene.subset(keep)


def stand_ins(scene: Scene, affs, base: set[str], tools: set[str], goal: Sequence[Sequence],
              roles: set[str], anchored: bool = False) -> set[str]:
    """What rule 5 drops: the places another kept place stands in for, with the ``tools`` (kept
    only as a capability's tool, by rule 3) there, and a second and further tool of the same
    kind in the same state at one place. ``base``: what rules 1 and 2 keep anyway (a place
    holding any of it, or where an agent is, is never dropped); ``roles``: the types the
    capabilities take (what of a place's furniture an action can use)."""
    holder: dict[str, tuple[str, str]] = {}
    on_top: dict[str, int] = {}
    held_in: dict[str, int] = {}
    unary: dict[str, set[str]] = {}
    for r in scene.relations:
        if len(r.args) == 1:
            unary.setdefault(r.args[0], set()).add(r.predicate)
        if len(r.args) != 2:
            continue
        if r.predicate in ("in", "liquid_in"):
            held_in[r.args[1]] = held_in.get(r.args[1], 0) + 1
        if r.predicate in HOLDING and r.args[0] not in holder:
            holder[r.args[0]] = (r.predicate, r.args[1])
            if r.predicate == "on":
                on_top[r.args[1]] = on_top.get(r.args[1], 0) + 1
    closed = {o for o, preds in unary.items() if "closed" in preds}
    place_of: dict[str, str] = {}
    for loc in scene.locations.values():
        for o in loc.objects:
            place_of.setdefault(o, loc.name)
        place_of[loc.name] = loc.name
    # Places every plan goes to or starts from: not candidates for dropping.
    anchors = {scene.location_of(a) for a in scene.agents}
    anchors |= {place_of.get(a) for c in goal for lit in c for a in lit.args}
    anchors |= {place_of.get(o) for o in base if o not in scene.locations}
    anchors.discard(None)

    def state(o: str) -> tuple:
        """How a tool sits: its class (its size and every affordance: a sponge fits in a bowl,
        not in a cup), its own state (closed, ...), per holder (relation, holder's types,
        closed), how many things stand on it and are in it. Two tools in the same state are
        interchangeable."""
        chain, seen, x = [], set(), o
        while x in holder and x not in seen and x not in scene.locations:
            seen.add(x)
            rel, h = holder[x]
            # The place's own furniture is compared place against place (stands_in).
            chain.append((rel, None if h in scene.locations else frozenset(affs.get(h, ())), h in closed))
            x = h
        own = (scene.objects[o].class_name, frozenset(unary.get(o, ())), held_in.get(o, 0))
        return (own, tuple(chain), on_top.get(o, 0))

    def easier(a: tuple, b: tuple) -> bool:
        """Tool state ``a`` is at least as easy to take as ``b`` (the same tool in the same
        holders; no more of them closed; no more on top)."""
        return (a[0] == b[0] and len(a[1]) == len(b[1]) and a[2] <= b[2]
                and all(x[0] == y[0] and x[1] == y[1] and (not x[2] or y[2]) for x, y in zip(a[1], b[1])))

    drop: set[str] = set()
    offers: dict[str, dict[tuple, list[str]]] = {}
    for t in sorted(tools):
        where = place_of.get(t)
        if where is None or t in base:
            continue
        offers.setdefault(where, {}).setdefault(state(t), []).append(t)
    for states in offers.values():       # one of a kind in one state serves every use
        for same in states.values():
            drop |= set(same[1:])
    free = sorted(p for p in scene.locations if p in scene.objects and p not in anchors)
    for p in free:
        offers.setdefault(p, {})

    def furnished(m: str, p: str) -> bool:
        """Whatever an action can do with the furniture of ``p`` it can do with that of ``m``:
        every type a capability takes that ``p`` has, ``m`` has; ``m`` is closed only where
        ``p`` is, and open where ``p`` is."""
        um, up = unary.get(m, set()), unary.get(p, set())
        return (roles & set(affs.get(p, ())) <= set(affs.get(m, ())) and um - {"opened"} <= up - {"opened"}
                and ("opened" not in up or "opened" in um))

    def stands_in(m: str, p: str) -> bool:
        """Place ``m`` offers, for every kind of tool ``p`` offers, one at least as easy to take."""
        return furnished(m, p) and all(any(easier(sm, sp) for sm in offers[m]) for sp in offers[p])

    kept_equal: set[str] = set()     # one place of each group that stands in for each other
    for p in anchors:
        offers.setdefault(p, {})
    for p in free:
        # A place the plan goes to anyway serves as well as one it would go to for the same.
        beaten = anchored or any(stands_in(m, p) for m in anchors if m in scene.locations) or any(
            stands_in(m, p) and not stands_in(p, m) for m in free if m != p)
        if not beaten:
            first = next(m for m in free if m == p or (stands_in(m, p) and stands_in(p, m)))
            if first not in kept_equal:
                kept_equal.add(first)
                continue
        for same in offers[p].values():
            drop |= set(same)
        drop.add(p)
    return drop


def visit_bound(goal: Sequence[Sequence], task) -> float:
    """A lower bound on the cost of any plan for ``goal`` that goes to a place
    ``prune_scene(anchored=True)`` drops: such a place holds nothing the goal names and no
    agent, so the plan moves an agent there (at least the cheapest agent's cost) and still
    needs an action that achieves the goal (another, unless a capability that happens by
    itself, at no cost, can achieve it). A plan of the anchored task that costs no more is
    optimal for the whole scene."""
    cheapest = min((float(a.cost) for a in task.agents), default=0.0)
    caps, _ = relevant_capabilities(goal, task.capabilities)
    free_goal_action = any(task.capabilities[c].environment for c in caps)
    return cheapest * (1 if free_goal_action else 2)


def goal_cost_bound(goal: Sequence[Sequence], task) -> float:
    """A lower bound on the cost of any plan for ``goal`` (DNF) from ``task``'s initial state,
    found without search. Each positive goal literal that does not hold yet needs an action
    that adds it; one action adds at most as many atoms of a predicate as its effect names
    (any number under forall or when), and costs at least the cheapest agent's cost (nothing
    if it happens by itself). So a conjunction of n such literals of one predicate needs
    ceil(n / most added by one action) actions. Negated and derived literals count nothing.
    Used to skip a search whose cost bound no plan can meet (ten things to clear away)."""
    from affplan_ros.core.planning.simulate import initial_state  # it needs the task module

    cheapest = min((float(a.cost) for a in task.agents), default=0.0)
    most: dict[str, float] = {}     # predicate -> the most atoms of it one action adds
    cost: dict[str, float] = {}     # predicate -> the least an action adding it costs
    for cap in task.capabilities.values():
        for pred, n in _adds_per_action(cap.effect).items():
            most[pred] = max(most.get(pred, 0.0), n)
            cost[pred] = min(cost.get(pred, math.inf), 0.0 if cap.environment else cheapest)
    state = initial_state(task)
    best = math.inf
    for conj in goal:
        todo: dict[str, int] = {}
        for lit in conj:
            atom = (lit.predicate, *(task._map(a) for a in lit.args))
            if not lit.negated and lit.predicate in most and atom not in state:
                todo[lit.predicate] = todo.get(lit.predicate, 0) + 1
        need = max((max(1, math.ceil(n / most[p])) * cost[p] for p, n in todo.items()), default=0.0)
        best = min(best, need)
    return 0.0 if best == math.inf else best


def _adds_per_action(effect: str) -> dict[str, float]:
    """Predicate -> how many atoms of it one action with ``effect`` adds (inf under forall or
    when, where one action may add any number)."""
    out: dict[str, float] = {}
    for head, _, positive, nested in _walk_atoms(effect):
        if positive:
            out[head] = math.inf if nested else out.get(head, 0.0) + 1
    return out


def goal_relevant_capabilities(goal: Sequence[Sequence], capabilities) -> set[str]:
    """The capabilities a plan for ``goal`` can need: those whose effect names a needed predicate,
    the goal's to start with and then every predicate of a needed capability's precondition (and
    what a derived one is made of), to a fixed point. Predicates, not polarities, and every part
    of a condition: it over-approximates, so a capability left out can be cut from any plan."""
    needed = {lit.predicate for c in goal for lit in c}
    relevant: set[str] = set()
    changed = True
    while changed:
        changed = False
        needed |= {b for p in list(needed) for b in _DERIVED_FROM.get(p, ())}
        for cap in capabilities.values():
            if cap.name not in relevant and _symbols(cap.effect) & needed:
                relevant.add(cap.name)
                needed |= {p for p in _symbols(cap.precondition) if not p.startswith("aff_")}
                changed = True
    return relevant


# What the derived predicates are made of (core/planning/derived.py): needing one needs these.
_DERIVED_FROM = {"free": ("on",), "not_on": ("on",), "enclosed": ("in", "closed", "opened"),
                 "loose": ("in", "closed", "opened")}
_NOT_PREDICATES = {"and", "or", "not", "imply", "exists", "forall", "when", "=", "increase", "decrease"}


def _symbols(text: str) -> set[str]:
    """Every predicate symbol anywhere in a PDDL condition or effect."""
    out: set[str] = set()

    def walk(e) -> None:
        if isinstance(e, str) or not e:
            return
        if isinstance(e[0], str) and e[0] not in _NOT_PREDICATES and not e[0].startswith("?"):
            out.add(e[0])
        for x in e[1:]:
            walk(x)
        if not isinstance(e[0], str):
            walk(e[0])
    for expr in parse_sexprs(text):
        walk(expr)
    return out
