"""Semantic checks in SWI-Prolog: each condition, the DNF-disjunct rule, threading, errors."""
from __future__ import annotations

import builtins
import threading

import pyswip  # noqa: F401 - required: a broken install fails here, it never skips
import pytest

from affplan_ros.core.goals import semantics
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.goals.semantics import (  # noqa: E402
    PrologUnavailableError,
    SemanticChecker,
    SemanticCheckError,
)


@pytest.fixture(scope="module")
def checker() -> SemanticChecker:
    return SemanticChecker()


def kinds(checker: SemanticChecker, goal: str) -> list[str]:
    return [v.kind for v in checker.check(parse_goal(goal)).violations]


CASES = [
    # kind, violating goal, consistent goal
    ("on_two_supports", "(and (on apple0 table0) (on apple0 plate0))", "(and (on apple0 table0) (on cup0 table0))"),
    ("in_two_containers", "(and (in apple0 bowl0) (in apple0 box0))", "(and (in apple0 bowl0) (in pear0 bowl0))"),
    ("in_and_on", "(and (in apple0 bowl0) (on apple0 table0))", "(and (in apple0 bowl0) (on bowl0 table0))"),
    ("inhand_two_actors", "(and (inhand cup0 human0) (inhand cup0 robot0))",
     "(and (inhand cup0 human0) (inhand apple0 human0))"),  # a human may hold several objects
    ("inhand_and_placed", "(and (inhand cup0 human0) (on cup0 table0))",
     "(and (inhand cup0 human0) (on plate0 table0))"),
    ("inhand_and_placed", "(and (inhand cup0 human0) (in cup0 sink0))", "(and (inhand cup0 human0) (in spoon0 cup0))"),
    ("actor_two_locations", "(and (at robot0 table0) (at robot0 counter0))",
     "(and (at robot0 table0) (at human0 counter0))"),
    ("liquid_two_containers", "(and (liquid_in water0 cup0) (liquid_in water0 glass0))",
     "(and (liquid_in water0 cup0) (liquid_in milk0 glass0))"),
    ("self_reference", "(and (on plate0 plate0))", "(and (on plate0 table0))"),
    ("placement_cycle", "(and (on plate0 tray0) (in tray0 plate0))", "(and (on plate0 tray0) (on tray0 table0))"),
    ("contradiction", "(and (opened fridge0) (not (opened fridge0)))", "(and (opened fridge0) (not (opened door0)))"),
]


@pytest.mark.parametrize("kind, bad, good", CASES, ids=[c[0] + str(i) for i, c in enumerate(CASES)])
def test_condition_negative_and_positive(checker: SemanticChecker, kind: str, bad: str, good: str) -> None:
    result = checker.check(parse_goal(bad))
    assert not result.ok
    assert kind in [v.kind for v in result.violations]
    assert result.feedback().startswith("There is a logical contradiction in the goal")
    ok = checker.check(parse_goal(good))
    assert ok.ok, ok.violations
    assert ok.feedback() == ""


def test_message_names_objects(checker: SemanticChecker) -> None:
    result = checker.check(parse_goal("(and (on apple0 table0) (on apple0 plate0))"))
    (msg,) = result.messages
    assert "apple0" in msg and "table0" in msg and "plate0" in msg and "at most one" in msg


def test_negated_literals_are_not_placements(checker: SemanticChecker) -> None:
    # "not on the table, but on the plate" is fine
    assert checker.check(parse_goal("(and (not (on apple0 table0)) (on apple0 plate0))")).ok


def test_one_good_disjunct_passes(checker: SemanticChecker) -> None:
    goal = parse_goal("(or (and (on apple0 table0) (on apple0 plate0)) (and (inhand apple0 human0)))")
    result = checker.check(goal)
    assert result.ok
    assert [d.ok for d in result.disjuncts] == [False, True]
    assert result.consistent_dnf == [to_dnf(goal)[1]]
    assert result.violations == ()


def test_all_bad_reports_fewest_violations(checker: SemanticChecker) -> None:
    goal = parse_goal(
        "(or (and (on a0 t0) (on a0 p0) (in a0 b0)) (and (at robot0 t0) (at robot0 c0)))"
    )
    result = checker.check(goal)
    assert not result.ok
    assert result.best is not None and result.best.index == 1
    assert [v.kind for v in result.violations] == ["actor_two_locations"]
    assert "every alternative" in result.feedback()


def test_facts_are_retracted_between_checks(checker: SemanticChecker) -> None:
    assert not checker.check(parse_goal("(and (on a0 t0) (on a0 p0))")).ok
    # if facts leaked, (on a0 t0) from the previous call would clash with (on a0 x0)
    assert checker.check(parse_goal("(and (on a0 x0))")).ok
    assert checker.check(to_dnf(parse_goal("(and (on a0 t0))"))).ok  # a DNF is accepted too


def test_odd_names_are_quoted(checker: SemanticChecker) -> None:
    r = checker.check(parse_goal("(and (on Cup-0 'x) (on Cup-0 Table_1))"))
    assert not r.ok and "Cup-0" in r.messages[0]


def test_concurrent_checks_are_serialised(checker: SemanticChecker) -> None:
    errors: list[BaseException] = []
    results: list[bool] = []

    def work(i: int) -> None:
        try:
            for j in range(30):
                bad = (i + j) % 2 == 0
                g = "(and (on a0 t0) (on a0 p0))" if bad else "(and (on a0 t0))"
                results.append(checker.check(parse_goal(g)).ok == (not bad))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert len(results) == 120 and all(results)


def test_missing_pyswip_gives_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "pyswip" or name.startswith("pyswip."):
            raise ImportError("No module named 'pyswip'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(PrologUnavailableError) as e:
        SemanticChecker()
    assert "swi-prolog" in str(e.value).lower() and "pip install pyswip" in str(e.value)


def test_missing_rules_file(tmp_path) -> None:
    with pytest.raises(SemanticCheckError) as e:
        SemanticChecker(tmp_path / "nope.pl")
    assert "not found" in str(e.value)


def test_default_rules_file_is_packaged() -> None:
    assert semantics.DEFAULT_RULES.is_file()
    assert "check_disjunct" in semantics.DEFAULT_RULES.read_text()
