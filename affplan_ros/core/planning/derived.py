"""AutoGPT+P's derived predicate ``free`` compiled into fluents Fast Downward's optimal searches take.

``(free ?o)`` holds when nothing stands on ``?o``; AutoGPT+P's grasp and take_out require it (a
plate is not pulled from under an apple). Written as PDDL it is a negated existential, which
Fast Downward's translator turns into axioms, and none of its admissible heuristics (LM-cut,
BJOLP's landmark cost partitioning, iPDB) accepts axioms. Expanding it into negated ``on`` facts
over the task's objects does not work either: the translator multiplies a negated fact of a
multi-valued variable out into every other value of that variable, once per fact (a 15-object
test task did not translate in 60 s).

So each task gets a positive complement: ``(not_on ?x ?y)`` for every object ``?x`` that can
come to stand on something and every ``?y`` that can carry others (a carryable support or
stack), true in the initial state unless ``(on ?x ?y)`` is, and kept exact by every action
that adds or deletes an ``on`` fact. ``(free ?v)`` becomes

    (or (and (not (aff_support ?v)) (not (aff_stack ?v)))      ; nothing can stand on ?v
        (and (not_on x1 ?v) ... (not_on xn ?v)))               ; nothing does

with ``x1 .. xn`` domain constants. The facts are |X| x |Y| for the (pruned) task, where Y is
small (plates, boards, books, trays). The capabilities keep ``(free ?object)``; only the task's
copy of them (what the planner writes as PDDL) is compiled; the simulation derives ``free``
from the ``on`` facts itself (simulate.holds).

``(enclosed ?o)``, inside a closed container (a milk carton in a closed refrigerator cannot be
opened, a plate in a closed microwave gets nothing put on it), is ours: AutoGPT+P's
``reachable`` ignores doors. A fluent kept by open and close would need a conditional effect
for everything inside, which LM-cut, BJOLP and iPDB reject. But a thing is in at most one
container, so the test is local: ``(not (enclosed ?v))`` becomes

    (or (loose ?v)                                              ; in no container
        (exists (?holder - object) (and (in ?v ?holder) (not (closed ?holder)))))

``(loose ?v)`` is a fluent kept exact by every action that adds or deletes an ``in`` fact, and
Fast Downward turns the existential into a parameter of its own copy of the action (the plan
still names the action's own parameters). One level: what stands on a plate inside a closed
cupboard is not enclosed itself, but the plate is, and grasp and place test their support.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

from affplan_ros.core.goals.sexpr import SExpr, parse_sexpr, render_sexpr
from affplan_ros.core.knowledge.capabilities import Capability
from affplan_ros.core.model.predicates import PredicateDef

FREE = "free"
ENCLOSED = "enclosed"
NOT_ON = "not_on"
LOOSE = "loose"
HOLDER = "?holder"  # the existential's variable; capability parameters never start with "holder"
NOT_ON_DEF = PredicateDef(NOT_ON, (("x", "object"), ("y", "object")),
                          "do not use this predicate (?x does not stand on ?y; bookkeeping for free)",
                          internal=True)
FREE_DEF = PredicateDef(FREE, (("x", "object"),), "do not use this predicate (nothing stands on ?x)", internal=True)
ENCLOSED_DEF = PredicateDef(ENCLOSED, (("x", "object"),),
                            "do not use this predicate (?x is inside a closed container)", internal=True)
LOOSE_DEF = PredicateDef(LOOSE, (("x", "object"),),
                         "do not use this predicate (?x is in no container; bookkeeping for enclosed)", internal=True)
# What lets something stand on an object (the parameter types of place's ?on and stack's ?bottom).
CARRIES_OTHERS = ("support", "stack")


@dataclass(frozen=True)
class DerivedEncoding:
    """The compiled ``free`` and ``enclosed`` of one task (names are PDDL object names)."""

    capabilities: dict[str, Capability]
    init: tuple[str, ...]                # PDDL facts true at the start
    constants: frozenset[str]            # the objects the expanded preconditions name
    predicates: tuple[PredicateDef, ...]  # what the domain must declare for them


def compile_derived(capabilities: Mapping[str, Capability], affordances: Mapping[str, Iterable[str]],
                    relations: Iterable[tuple[str, ...]], aff_prefix: str) -> DerivedEncoding:
    """The task's capabilities with ``free`` and ``enclosed`` compiled, and the facts they start with.

    ``affordances``: PDDL object name -> its affordances; ``relations``: the initial facts as
    (predicate, *PDDL names)."""
    caps = dict(capabilities)
    parsed = {n: (parse_sexpr(c.precondition), parse_sexpr(c.effect)) for n, c in caps.items()}
    uses_free = any(_mentions(pre, FREE) for pre, _ in parsed.values())
    uses_enclosed = any(_mentions(pre, ENCLOSED) for pre, _ in parsed.values())
    if not (uses_free or uses_enclosed):
        return DerivedEncoding(caps, (), frozenset(), ())
    relations = {tuple(r) for r in relations}
    init: list[str] = []
    tops: list[str] | None = None
    if uses_free:
        on_facts = {(r[1], r[2]) for r in relations if r[0] == "on" and len(r) == 3}
        bottoms = sorted(o for o, a in affordances.items() if "carry" in a and set(a) & set(CARRIES_OTHERS))
        if bottoms:
            tops = sorted({o for o, a in affordances.items() if "carry" in a}
                          | {x for x, y in on_facts if y in bottoms})
            init += [f"({NOT_ON} {x} {y})" for y in bottoms for x in tops if (x, y) not in on_facts]
    if uses_enclosed:
        inside = {r[1] for r in relations if r[0] == "in" and len(r) == 3}
        init += [f"({LOOSE} {o})" for o in sorted(affordances) if o not in inside]
    for name, (pre, eff) in parsed.items():
        new_pre = _expand_free(pre, tops, aff_prefix) if uses_free else pre
        new_pre = _expand_enclosed(new_pre) if uses_enclosed else new_pre
        new_eff = _with_bookkeeping(eff, uses_free and tops is not None, uses_enclosed)
        if new_pre != pre or new_eff != eff:
            caps[name] = replace(caps[name], precondition=render_sexpr(new_pre), effect=render_sexpr(new_eff))
    # `free` and `enclosed` are declared for their descriptions (failures are said in words); the
    # PDDL never uses them.
    predicates = (((FREE_DEF,) if uses_free else ()) + ((NOT_ON_DEF,) if tops is not None else ())
                  + ((ENCLOSED_DEF, LOOSE_DEF) if uses_enclosed else ()))
    return DerivedEncoding(caps, tuple(init), frozenset(tops or ()), predicates)


def _mentions(expr: SExpr, predicate: str) -> bool:
    if isinstance(expr, str):
        return False
    return (bool(expr) and expr[0] == predicate) or any(_mentions(e, predicate) for e in expr[1:])


def _expand_free(expr: SExpr, tops: list[str] | None, aff_prefix: str) -> SExpr:
    """``tops`` None: no object of the task can carry others, so only the static test is left."""
    if isinstance(expr, str) or not expr:
        return expr
    if expr[0] == FREE:
        if len(expr) != 2:
            raise ValueError(f"(free ...) takes one argument, not {render_sexpr(expr)}")
        v = expr[1]
        cannot_carry = ("and", *(("not", (f"{aff_prefix}{a}", v)) for a in CARRIES_OTHERS))
        if tops is None:
            return cannot_carry
        return ("or", cannot_carry, ("and", *((NOT_ON, x, v) for x in tops)))
    return (expr[0], *(_expand_free(e, tops, aff_prefix) for e in expr[1:]))


def _expand_enclosed(expr: SExpr) -> SExpr:
    if isinstance(expr, str) or not expr:
        return expr
    if expr[0] == "not" and len(expr) == 2 and isinstance(expr[1], tuple) and expr[1][:1] == (ENCLOSED,):
        v = _one_argument(expr[1])
        return ("or", (LOOSE, v), ("exists", (HOLDER, "-", "object"), ("and", ("in", v, HOLDER),
                                                                      ("not", ("closed", HOLDER)))))
    if expr[0] == ENCLOSED:
        v = _one_argument(expr)
        return ("exists", (HOLDER, "-", "object"), ("and", ("in", v, HOLDER), ("closed", HOLDER)))
    return (expr[0], *(_expand_enclosed(e) for e in expr[1:]))


def _one_argument(atom: SExpr) -> str:
    if len(atom) != 2 or not isinstance(atom[1], str):
        raise ValueError(f"({atom[0]} ...) takes one argument, not {render_sexpr(atom)}")
    return atom[1]


def _with_bookkeeping(effect: SExpr, not_on: bool, enclosed: bool) -> SExpr:
    """Every ``(on a b)`` an effect adds deletes ``(not_on a b)`` and every one it deletes adds
    it; every ``(in a c)`` it adds deletes ``(loose a)``, and every one it deletes adds it."""
    if isinstance(effect, str) or not effect:
        return effect
    parts = list(effect[1:]) if effect[0] == "and" else [effect]
    extra: list[SExpr] = []
    for lit in parts:
        positive = not (isinstance(lit, tuple) and len(lit) == 2 and lit[0] == "not")
        atom = lit if positive else lit[1]
        if not isinstance(atom, tuple) or not atom:
            continue
        if not_on and atom[0] == "on" and len(atom) == 3:
            extra.append(("not", (NOT_ON, atom[1], atom[2])) if positive else (NOT_ON, atom[1], atom[2]))
        elif enclosed and atom[0] == "in" and len(atom) == 3:
            extra.append(("not", (LOOSE, atom[1])) if positive else (LOOSE, atom[1]))
    if not extra:
        return effect
    return ("and", *parts, *extra)
