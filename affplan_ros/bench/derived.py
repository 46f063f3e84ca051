"""AutoGPT+P's derived goal predicates, written out in the domain's own predicates.

A few desired goals of the original scenarios use ``(free ?s)`` ("nothing is on the support
?s"; e.g. "Clear the counter" -> ``and (free counter0)``).  AutoGPT+P's prompt lists ``free``
with "Do not use this predicate" and its evaluator derives it in Prolog; this project's domain
has no ``free`` predicate, so the goal checks reject it.  For the benchmark the desired goal is
rewritten as ``(and (not (on o s)) ...)`` over every carryable object ``o`` of the scene — the
same meaning, in predicates the planner knows.  (GPT-4 itself answered "Tidy the table" that
way in the paper's log.)
"""
from __future__ import annotations

from typing import Iterable, Mapping

from affplan_ros.core.goals.formula import And, Goal, Literal, Not, Or


def uses_derived(goal: Goal) -> bool:
    if isinstance(goal, Literal):
        return goal.predicate == "free"
    if isinstance(goal, Not):
        return uses_derived(goal.child)
    return any(uses_derived(c) for c in goal.children)


def expand_free(goal: Goal, carryables: Iterable[str], on_now: Mapping[str, Iterable[str]] | None = None) -> Goal:
    """``goal`` with every ``(free s)`` replaced by ``(and (not (on o s)) ...)``.

    With ``on_now`` (support -> objects on it in the scene) only those objects are named: the
    answer a careful LLM writes ("take off what is there"); an optimal plan never puts
    anything else on ``s``, and success is still judged with the full expansion.
    """
    objs = sorted(set(carryables))

    def free(s: str, negated: bool) -> Goal:
        names = objs if on_now is None or negated else sorted(set(on_now.get(s, ())) & set(objs))
        lits = tuple(Literal("on", (o, s), negated=not negated) for o in names if o != s)
        if not lits:  # nothing could ever be on s
            return Literal("on", (s, s), negated=not negated)
        return Or(lits) if negated else And(lits)

    def go(g: Goal) -> Goal:
        if isinstance(g, Literal):
            if g.predicate == "free" and len(g.args) == 1:
                return free(g.args[0], g.negated)
            return g
        if isinstance(g, Not):
            return Not(go(g.child))
        return type(g)(tuple(go(c) for c in g.children))

    return go(goal)


def objects_on(scene, names: Mapping[str, str]) -> dict[str, list[str]]:
    """support -> objects ``on`` it in the scene (PDDL names)."""
    out: dict[str, list[str]] = {}
    for rel in scene.relations:
        if rel.predicate == "on" and len(rel.args) == 2:
            o, s = (names.get(a, a) for a in rel.args)
            out.setdefault(s, []).append(o)
    return out


def carryables(signature) -> list[str]:
    """Objects that may stand as the first argument of ``on`` (type ``carry``)."""
    first = (signature.predicates.get("on") or ("carry",))[0]
    return [o for o, types in signature.objects.items() if first in types]


def normalize_desired(goal: Goal, names: Mapping[str, str], signature) -> tuple[Goal, list[str]]:
    """The scenario's desired goal in the generated domain's vocabulary, with notes on each change.

    * scene names that are no valid PDDL names are renamed as domain generation does
      (``7up0`` -> ``n7up0``): the LLM sees (and answers with) the domain's names;
    * ``(inhand ACTOR OBJECT)`` — arguments swapped in a few original SayCan scenarios
      (``(not (inhand robot0 coke0))``; the predicate is ``(inhand ?o - carry ?a - actor)``) —
      is read as ``(inhand OBJECT ACTOR)``.
    """
    notes: list[str] = []
    renamed = sorted({(a, names[a]) for lit in _lits(goal) for a in lit.args if names.get(a, a) != a})
    if renamed:
        notes.append("renamed to the domain's PDDL names: " + ", ".join(f"{a} -> {b}" for a, b in renamed))
    swapped: list[str] = []

    def fix(lit: Literal) -> Literal:
        args = tuple(names.get(a, a) for a in lit.args)
        if (lit.predicate == "inhand" and len(args) == 2 and signature.has_type(args[0], "actor")
                and not signature.has_type(args[0], "carry") and signature.has_type(args[1], "carry")):
            swapped.append(f"(inhand {args[0]} {args[1]})")
            args = (args[1], args[0])
        return Literal(lit.predicate, args, lit.negated)

    def go(g: Goal) -> Goal:
        if isinstance(g, Literal):
            return fix(g)
        if isinstance(g, Not):
            return Not(go(g.child))
        return type(g)(tuple(go(c) for c in g.children))

    out = go(goal)
    if swapped:
        notes.append("data fix: arguments of " + ", ".join(sorted(set(swapped)))
                     + " swapped in the scenario (inhand takes ?o - carry, then ?a - actor)")
    return out, notes


def _lits(g: Goal):
    if isinstance(g, Literal):
        yield g
    elif isinstance(g, Not):
        yield from _lits(g.child)
    else:
        for c in g.children:
            yield from _lits(c)
