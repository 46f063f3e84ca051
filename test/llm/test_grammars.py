"""GBNF grammars from the domain and scene: property-based checks against the core's goal checker.

Hypothesis generates domains (predicates over affordance types, objects with type sets); the
grammar built from each is read back (Lark) and must (1) admit only goals the syntax and type
checker accepts - every random derivation passes ``check_goal_text`` - and (2) reject every
literal with an unknown predicate, unknown object, wrong arity or wrong type.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from affplan_ros.core.goals.syntax import check_goal_text
from affplan_ros.core.model.signature import Signature
from affplan_ros.llm.grammars import (
    GbnfRecognizer,
    GrammarError,
    goal_grammar,
    tool_grammar,
)

TYPES = ["carry", "support", "contain", "liquid", "liquid-contain", "actor", "open"]
NAME = st.from_regex(r"[a-z][a-z_]{1,7}", fullmatch=True).filter(lambda n: n not in ("and", "or", "not"))


@st.composite
def signatures(draw) -> Signature:
    preds = draw(st.dictionaries(NAME, st.lists(st.sampled_from(TYPES), min_size=1, max_size=3),
                                 min_size=1, max_size=5))
    objs = draw(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,6}[0-9]", fullmatch=True),
                                st.sets(st.sampled_from(TYPES), min_size=1, max_size=3).map(
                                    lambda s: frozenset(s | {"object"})), min_size=1, max_size=6))
    return Signature({p: tuple(ts) for p, ts in preds.items()}, objs)


def _fitting(sig: Signature, t: str) -> list[str]:
    return sorted(o for o, ts in sig.objects.items() if t in ts)


def random_goal(sig: Signature, rnd: random.Random, grammar_preds: list[str]) -> str:
    """A derivation of the grammar's shape (or of ands of literals) with random choices."""
    def atom() -> str:
        p = rnd.choice(grammar_preds)
        return "(" + " ".join([p] + [rnd.choice(_fitting(sig, t)) for t in sig.predicates[p]]) + ")"

    def lit() -> str:
        a = atom()
        return f"(not {a})" if rnd.random() < 0.2 else a

    def conj() -> str:
        n = rnd.randint(1, 3)
        return lit() if n == 1 and rnd.random() < 0.5 else "(and " + " ".join(lit() for _ in range(n)) + ")"

    n = rnd.randint(1, 3)
    body = conj() if n == 1 else "(or " + " ".join(conj() for _ in range(n)) + ")"
    return f"(:goal {body})"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sig=signatures(), seed=st.integers(0, 10_000))
def test_the_goal_grammar_admits_exactly_well_typed_goals(sig: Signature, seed: int) -> None:
    try:
        gbnf = goal_grammar(sig)
    except GrammarError:
        # Only when no predicate has fitting objects for every parameter.
        assert all(not all(_fitting(sig, t) for t in ts) for ts in sig.predicates.values())
        return
    rec = GbnfRecognizer(gbnf)
    usable = [p for p, ts in sig.predicates.items() if all(_fitting(sig, t) for t in ts)]
    rnd = random.Random(seed)
    for _ in range(5):
        text = random_goal(sig, rnd, usable)
        assert rec.accepts(text), (gbnf, text)                      # the grammar generates it ...
        assert check_goal_text(text, sig).ok, text                  # ... and the checker accepts it
    # Mutations the grammar must never admit.
    p = rnd.choice(usable)
    args = [rnd.choice(_fitting(sig, t)) for t in sig.predicates[p]]
    bad = [
        f"(:goal (zz_unknown {' '.join(args)}))",                   # unknown predicate
        f"(:goal ({p} {' '.join(args + [args[0]])}))",              # one argument too many
        f"(:goal ({p} {' '.join(['nosuch_obj99'] + args[1:])}))",        # unknown object
    ]
    if len(args) > 1:
        bad.append(f"(:goal ({p} {' '.join(args[:-1])}))")          # one argument too few
    for i, t in enumerate(sig.predicates[p]):                         # an object lacking the type
        wrong = [o for o, ts in sig.objects.items() if t not in ts]
        if wrong:
            bad.append(f"(:goal ({p} {' '.join(args[:i] + [wrong[0]] + args[i + 1:])}))")
    for text in bad:
        assert not rec.accepts(text), (gbnf, text)
        assert not check_goal_text(text, sig).ok, text


@settings(max_examples=25, deadline=None)
@given(sig=signatures(), pred=st.one_of(NAME, st.just("zz_unknown")),
       args=st.lists(st.one_of(st.from_regex(r"[a-z][a-z_]{0,6}[0-9]", fullmatch=True)), min_size=0, max_size=4))
def test_any_literal_the_grammar_admits_passes_the_checker(sig, pred, args) -> None:
    """Random literals, mostly wrong: grammar admits <=> checker accepts (no unknown predicate,
    object, arity or type slips through)."""
    try:
        rec = GbnfRecognizer(goal_grammar(sig))
    except GrammarError:
        return
    names = list(sig.objects)
    args = [names[hash(a) % len(names)] if i % 2 == 0 else a for i, a in enumerate(args)]
    text = f"(:goal ({' '.join([pred] + args)}))"
    fits = pred in sig.predicates and all(_fitting(sig, t) for t in sig.predicates[pred])
    assert rec.accepts(text) == (fits and check_goal_text(text, sig).ok), text


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sig=signatures(), k=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_a_partial_plan_grammar_admits_no_more_literals_than_allowed(sig: Signature, k: int, seed: int) -> None:
    try:
        rec = GbnfRecognizer(goal_grammar(sig, max_literals=k))
    except GrammarError:
        return
    rnd = random.Random(seed)
    usable = [p for p, ts in sig.predicates.items() if all(_fitting(sig, t) for t in ts)]
    atoms = ["(" + " ".join([p] + [rnd.choice(_fitting(sig, t)) for t in sig.predicates[p]]) + ")"
             for p in rnd.choices(usable, k=k + 1)]
    for n in range(1, k + 2):
        text = "(:goal (and " + " ".join(atoms[:n]) + "))"
        assert rec.accepts(text) == (n <= k), (k, text)
        if n <= k:
            assert check_goal_text(text, sig, max_predicates=k).ok, text
    assert not rec.accepts("(:goal (or " + atoms[0] + " " + atoms[0] + "))")   # no way around the bound


def test_the_tool_grammar_admits_only_valid_tools_and_parameters() -> None:
    rec = GbnfRecognizer(tool_grammar(["counter0", "refrigerator0"], ["spoon", "glass"]))
    for ok in ["SELECTED TOOL: PLAN", "SELECTED TOOL: PARTIAL_PLAN", "SELECTED TOOL: EXPLORE counter0",
               "SELECTED TOOL: SUGGEST_ALTERNATIVE spoon", "FAILURE"]:
        assert rec.accepts(ok), ok
    for bad in ["SELECTED TOOL: EXPLORE table0", "SELECTED TOOL: SUGGEST_ALTERNATIVE apple",
                "SELECTED TOOL: EXPLORE", "SELECTED TOOL: COOK", "PLAN", "SELECTED TOOL: PLAN now"]:
        assert not rec.accepts(bad), bad
    none = GbnfRecognizer(tool_grammar([], []))
    assert none.accepts("SELECTED TOOL: PLAN") and not none.accepts("SELECTED TOOL: EXPLORE counter0")


def test_a_scene_without_fitting_objects_has_no_grammar() -> None:
    with pytest.raises(GrammarError, match="no predicate"):
        goal_grammar(Signature({"on": ("carry", "support")}, {"cup0": frozenset({"carry"})}))
