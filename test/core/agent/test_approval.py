"""The approval gate in front of the executor: what is asked, when, and what a no does."""
from __future__ import annotations

import pytest

from affplan_ros.core.agent.approval import (
    ApprovalGate,
    ApprovalMode,
    approval_question,
)
from affplan_ros.core.planning.planner import PlanStep

PLAN = [PlanStep("move", ("table0", "counter0"), "robot0"),
        PlanStep("grasp", ("apple0", "counter0", "counter0"), "robot0"),
        PlanStep("open", ("refrigerator0", "refrigerator0"), "human0")]


class Person:
    def __init__(self, *answers: bool):
        self.answers, self.asked = list(answers), []

    def __call__(self, request):
        self.asked.append(request)
        return (self.answers.pop(0), "") if self.answers else (False, "no answer within 1 s")


def test_a_plan_is_asked_once_before_its_first_step() -> None:
    person = Person(True)
    gate = ApprovalGate(ApprovalMode.PLAN, person, "give me the apple")
    gate.offer("(inhand apple0 human0)", PLAN)
    for step in PLAN:               # the recovering executor sends one step at a time
        assert gate.check([step]) is None
        gate.done([step])
    assert len(person.asked) == 1 and person.asked[0].steps == tuple(PLAN)
    question = person.asked[0].question
    assert "(inhand apple0 human0)" in question and "3 steps" in question
    assert "1. the robot: move table0 counter0" in question and "3. you: open refrigerator0 refrigerator0" in question


def test_a_no_stops_everything_after_it() -> None:
    person = Person(False)
    gate = ApprovalGate(ApprovalMode.PLAN, person, "give me the apple")
    gate.offer("(inhand apple0 human0)", PLAN)
    why = gate.check(PLAN[:1])
    assert why is not None and "did not approve the plan" in why and gate.refused == why
    assert gate.check(PLAN[:1]) == why and len(person.asked) == 1   # not asked again: the task is over
    gate.offer("(inhand apple0 human0)", PLAN)                    # nor can a new plan get past it
    assert gate.check(PLAN[:1]) == why


def test_steps_outside_the_approved_plan_are_asked_on_their_own() -> None:
    person = Person(True, True, False)
    gate = ApprovalGate(ApprovalMode.PLAN, person, "t")
    explore = PlanStep("move", ("table0", "refrigerator0"), "robot0")
    assert gate.check([explore]) is None                 # the move of an Explore: asked alone
    gate.offer("(g)", PLAN)
    assert gate.check(PLAN[:1]) is None
    gate.done(PLAN[:1])
    repair = PlanStep("place", ("plate0", "counter0", "counter0"), "robot0")
    assert gate.check([repair]) is not None              # a step no approved plan holds: asked, refused
    assert [len(r.steps) for r in person.asked] == [1, 3, 1] and person.asked[0].goal == ""


def test_no_answer_or_a_failing_question_is_a_no() -> None:
    gate = ApprovalGate(ApprovalMode.PLAN, Person(), "t")
    gate.offer("(g)", PLAN)
    assert "no answer within" in gate.check(PLAN)

    def broken(_request):
        raise RuntimeError("no person here")

    gate = ApprovalGate(ApprovalMode.EACH_STEP, broken, "t")
    assert "asking the person failed: RuntimeError" in gate.check(PLAN[:1])


def test_each_step_asks_every_step_and_none_asks_nothing() -> None:
    person = Person(True, True, True)
    gate = ApprovalGate(ApprovalMode.EACH_STEP, person, "t")
    gate.offer("(g)", PLAN)
    for step in PLAN:
        assert gate.check([step]) is None
        gate.done([step])
    assert len(person.asked) == 3
    quiet = Person()
    gate = ApprovalGate(ApprovalMode.NONE, quiet, "t")
    assert gate.check(PLAN) is None and not quiet.asked


def test_modes_parse_with_a_clear_error() -> None:
    assert ApprovalMode.parse("each_step") is ApprovalMode.EACH_STEP
    with pytest.raises(ValueError, match="approval must be one of none, plan, each_step"):
        ApprovalMode.parse("always")
    assert approval_question("", PLAN[:1], "t").startswith('For "t" I would like to do this:')
