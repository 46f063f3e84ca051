"""The split encoding of high-arity actions (why and how: the comment below)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from affplan_ros.core.goals.sexpr import parse_sexprs
from affplan_ros.core.knowledge.capabilities import (
    BUILTIN_TYPES,
)
from affplan_ros.core.planning.encoding import PDDL_CONFIG, builtin_parent

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
    """The free variables of ``e`` (those an exists/forall binds are its own, not a parameter's)."""
    if isinstance(e, str):
        return frozenset({e}) if e.startswith("?") else frozenset()
    if e and e[0] in ("exists", "forall") and len(e) == 3 and isinstance(e[1], tuple):
        return _vars_of(e[2]) - _vars_of(e[1])
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
        def first(vs):
            return next((i for i, st in enumerate(order) if vs <= st), None)

        def last(vs):
            return next((i for i in range(len(order) - 1, -1, -1) if vs <= order[i]), None)

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

    def stage_flag(i):
        return f"sp_{base}_{i}"

    def mem(v):
        return f"sp_{base}_m_{v[1:].replace('-', '_')}"

    decls = [f"({stage_flag(i)})" for i in range(1, n)]
    uses = {v: [i for i, st in enumerate(order) if v in st] for v in params}
    decls += [f"({mem(v)} ?x - object)" for v, idx in uses.items() if len(idx) > 1]
    stages = []
    for i, st in enumerate(order):
        sp = tuple(v for v in params if v in st)
        ptxt = " ".join(f"{v} - {builtin_parent(ptype[v]) if ptype[v] in BUILTIN_TYPES else 'object'}"
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


def split_predicates(splits: Iterable[SplitAction]) -> list[str]:
    out = [f"({SPLIT_IDLE})"]
    for sp in splits:
        out += list(sp.predicates)
    return out
