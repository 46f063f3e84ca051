"""The planner makes an LLM's action list executable (core/planning/action_list.py): gap plans to
unmet preconditions (the derived `free` included), skipped actions with reasons, the gap bound, the
completion to the goal."""
from __future__ import annotations

import pytest
from test_derived import SCENE, goal  # the table with a plate under an apple and a banana

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.planning.action_list import fluent_predicates, make_executable, precondition_goal
from affplan_ros.core.planning.planner import validate
from affplan_ros.core.planning.simulate import full_condition, ground_step, initial_state, substitute
from affplan_ros.core.planning.task import build_task


@pytest.fixture(scope="module")
def task():
    return build_task(parse_scene_text(SCENE, "derived.txt"))


def test_the_precondition_becomes_a_goal_over_fluents(task) -> None:
    cap, _, binding = ground_step(task, "grasp", ("robot0", "plate0", "table0", "table0"))
    pre = substitute(full_condition(cap)[0], binding)
    (conj,) = precondition_goal(pre, initial_state(task), fluent_predicates(task))
    assert Literal("on", ("apple0", "plate0"), True) in conj and Literal("on", ("banana0", "plate0"), True) in conj
    assert Literal("at", ("robot0", "table0")) in conj and Literal("hand_occupied", ("robot0",), True) in conj
    assert not any(lit.predicate.startswith(("aff_", "can_")) for lit in conj)   # static: decided
    cap, _, binding = ground_step(task, "grasp", ("robot0", "table0", "counter0", "counter0"))
    assert precondition_goal(substitute(full_condition(cap)[0], binding), initial_state(task),
                             fluent_predicates(task)) == []                       # a table is not carried


def test_a_gap_clears_what_stands_on_the_plate(task) -> None:
    listed = [("move", ("robot0", "counter0", "table0")), ("grasp", ("robot0", "plate0", "table0", "table0"))]
    res = make_executable(task, listed, goal("(inhand plate0 robot0)"), gap_time_limit=20)
    assert res.kept == 2 and res.skipped == 0 and res.gaps == 1 and not res.completion_needed
    gap = res.listed[1].inserted
    assert len(gap) == res.inserted == 4 and sum(s.startswith("grasp") for s in gap) == 2
    assert res.steps[0] == listed[0] and res.steps[-1] == listed[1]
    assert validate(task, goal("(inhand plate0 robot0)"), res.steps)[0]
    assert res.stop_reason == "every listed action handled" and res.planner_calls == 1


def test_skips_with_reasons_the_gap_bound_and_the_completion(task) -> None:
    listed = [("grasp", ("robot0", "table0", "counter0", "counter0")),     # no carry affordance
              ("fly", ("robot0", "table0")),                               # no such action
              ("grasp", ("robot0", "cup0", "counter0")),                   # one argument short
              ("move", ("robot0", "table0", "counter0")),                  # the robot is not at the table
              ("grasp", ("robot0", "cup0", "counter0", "counter0"))]       # holds: kept
    res = make_executable(task, listed, goal("(on cup0 table0)"), max_gaps=0, completion_time_limit=20)
    reasons = [a.reason for a in res.listed]
    assert reasons[0].startswith("its precondition can never hold (a static part is false")
    assert reasons[1] == "not an action of the domain: unknown action"
    assert reasons[2] == "not an action of the domain: wrong number of arguments"
    assert reasons[3] == "its precondition does not hold and the gap bound (0) is reached"
    assert res.listed[4].kept and res.kept == 1 and res.gaps == 0
    assert res.completion_needed and res.completion_status == "solved"
    assert res.completion == ["move robot0 counter0 table0", "place robot0 cup0 table0 table0"]
    assert res.inserted == 2 and validate(task, goal("(on cup0 table0)"), res.steps)[0]
