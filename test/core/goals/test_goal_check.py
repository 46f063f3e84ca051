"""Syntax/typing checks: one test per error kind, each asserting an actionable message."""
from __future__ import annotations

import pytest

from affplan_ros.core.goals.syntax import IssueKind, check_goal_text, suggest
from affplan_ros.core.model.signature import Signature


def household() -> Signature:
    def t(*names: str) -> frozenset[str]:
        return frozenset(names + ("object",))

    return Signature(
        predicates={
            "on": ("carry", "support"),
            "in": ("carry", "contain"),
            "inhand": ("carry", "actor"),
            "at": ("actor", "location"),
            "liquid_in": ("liquid", "liquid-contain"),
            "opened": ("open",),
            "hand_occupied": ("actor",),
        },
        objects={
            "cup0": t("cup", "carry", "contain", "liquid-contain"),
            "apple0": t("apple", "carry", "consumable"),
            "apple1": t("apple", "carry", "consumable"),
            "table0": t("table", "support", "location"),
            "bowl0": t("bowl", "carry", "contain"),
            "human0": t("human", "actor", "location"),
            "robot0": t("robot", "actor"),
            "water0": t("water", "liquid"),
            "fridge0": t("refrigerator", "contain", "open", "location"),
        },
        descriptions={"on": "?a1 is on top of the supporting ?a2", "inhand": "?a1 is in the hand of ?a2"},
    )


SIG = household()


def check(answer: str, **kw):
    return check_goal_text(answer, SIG, **kw)


def single(answer: str, kind: str, **kw) -> str:
    r = check(answer, **kw)
    assert not r.ok
    assert [i.kind for i in r.issues] == [kind], r.issues
    return r.issues[0].message


def test_valid_goal_passes() -> None:
    r = check("I think the answer is (:goal (and (on apple0 table0) (inhand cup0 human0)))")
    assert r.ok and r.issues == []
    assert r.dnf is not None and len(r.dnf) == 1 and r.goal is not None


def test_no_goal() -> None:
    msg = single("I cannot do that.", IssueKind.NO_GOAL)
    assert "did not contain a goal" in msg and "(:goal" in msg


def test_unbalanced_parentheses() -> None:
    msg = single("(:goal (and (on apple0 table0) (inhand cup0 human0)", IssueKind.UNBALANCED_PARENTHESES)
    assert "never closed" in msg and "character" in msg


def test_unbalanced_extra_close() -> None:
    msg = single("(and (on apple0 table0)))", IssueKind.UNBALANCED_PARENTHESES)
    assert "closes nothing" in msg


def test_unknown_predicate_suggests_close_name() -> None:
    msg = single("(:goal (and (onn apple0 table0)))", IssueKind.UNKNOWN_PREDICATE)
    assert "'onn'" in msg and "Did you mean 'on'" in msg and "inhand" in msg


def test_unknown_object_suggests_instance() -> None:
    msg = single("(:goal (and (on apple table0)))", IssueKind.UNKNOWN_OBJECT)
    assert "'apple'" in msg and "does not exist in the scene" in msg
    assert "'apple0'" in msg and "'apple1'" in msg
    assert "Objects of type 'carry'" in msg


def test_unknown_object_fuzzy() -> None:
    msg = single("(:goal (and (on apple0 tabel0)))", IssueKind.UNKNOWN_OBJECT)
    assert "Did you mean 'table0'" in msg


def test_wrong_arity_states_signature() -> None:
    msg = single("(:goal (and (on apple0)))", IssueKind.WRONG_ARITY)
    assert "takes 2 arguments" in msg and "(on ?a1 - carry ?a2 - support)" in msg and "gives 1" in msg
    assert "supporting" in msg  # the predicate description helps


def test_wrong_type_names_missing_affordance() -> None:
    msg = single("(:goal (and (on apple0 bowl0)))", IssueKind.WRONG_TYPE)
    assert "argument 2" in msg and "'bowl0' does not have 'support'" in msg
    assert "(on ?a1 - carry ?a2 - support)" in msg
    assert "Objects with 'support': table0" in msg


def test_variable() -> None:
    msg = single("(:goal (and (inhand ?x human0)))", IssueKind.VARIABLE)
    assert "'?x'" in msg and "without '?'" in msg and "apple0" in msg


def test_empty_goal() -> None:
    msg = single("(:goal (and))", IssueKind.EMPTY_GOAL)
    assert "at least one predicate" in msg


def test_empty_wrapper() -> None:
    single("(:goal )", IssueKind.EMPTY_GOAL)


@pytest.mark.parametrize("goal, word", [
    ("(:goal (exists (?o - carry) (inhand ?o human0)))", "exists"),
    ("(:goal (forall (?o - carry) (on ?o table0)))", "forall"),
    ("(:goal (imply (opened fridge0) (on apple0 table0)))", "imply"),
    ("(:goal (and (> (total-cost) 3)))", ">"),
])
def test_unsupported_constructs(goal: str, word: str) -> None:
    msg = single(goal, IssueKind.UNSUPPORTED_CONSTRUCT)
    assert f"'{word}'" in msg and "not supported" in msg


def test_typed_argument() -> None:
    msg = single("(:goal (and (on apple0 table0 - support)))", IssueKind.TYPED_ARGUMENT)
    assert "type annotation" in msg and "(on apple0 table0)" in msg


def test_malformed_nested_predicate() -> None:
    msg = single("(:goal (and (inhand (on apple0 table0) human0)))", IssueKind.MALFORMED)
    assert "must be object names" in msg


def test_forbidden_predicate() -> None:
    msg = single("(:goal (and (hand_occupied robot0)))", IssueKind.FORBIDDEN_PREDICATE,
                 forbidden_predicates=["hand_occupied"])
    assert "must not be used" in msg and "hand_occupied" not in msg.split("Use one of:")[1]


def test_too_many_predicates_in_partial_mode() -> None:
    msg = single("(:goal (and (on apple0 table0) (in apple1 bowl0) (opened fridge0)))",
                 IssueKind.TOO_MANY_PREDICATES, max_predicates=2)
    assert "3 predicates" in msg and "at most 2" in msg


def test_several_issues_are_numbered_and_deduplicated() -> None:
    r = check("(:goal (and (on banana table0) (inhand banana human0) (onn cup0 table0)))")
    kinds = [i.kind for i in r.issues]
    assert kinds.count(IssueKind.UNKNOWN_OBJECT) == 2  # once per predicate slot type
    assert IssueKind.UNKNOWN_PREDICATE in kinds
    assert r.feedback().startswith("1. ")


def test_suggest() -> None:
    assert suggest("Apple0", SIG.objects)[0] == "apple0"
    assert suggest("human", SIG.objects)[0] == "human0"
    assert suggest("zzz", SIG.objects) == []
