"""approval: plan through the whole suite: the person sees the goal and the plan (who does each
step) through AskHuman before anything moves; a no (or no answer) moves nothing and ends the task
as refused; a yes runs it."""
from __future__ import annotations

import time

import pytest
import yaml
from suite_support import STOVE_KITCHEN, run_task, scripted_suite, served_client

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
SCENE = STOVE_KITCHEN
SCRIPT = {
    "Put the banana on the counter": {"tool": ["SELECTED TOOL: PLAN"] * 3,
                                      "goal": ["(:goal (and (on banana0 counter0)))"] * 3},
    "Give me the apple": {"tool": ["SELECTED TOOL: EXPLORE stove0", "SELECTED TOOL: PLAN"],
                          "goal": ["(:goal (and (inhand apple0 human0)))"]},
}


class Person:
    """Answers AskHuman from a list ("" = stays silent until the question times out)."""

    def __init__(self, *answers: str):
        self.answers, self.requests = list(answers), []

    def __call__(self, request, response):
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else ""
        if not answer:
            time.sleep(min(request.timeout_s, 10.0))
            response.answered = False
            return response
        response.answered, response.answer = True, answer
        return response


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("approval")
    (tmp / "kitchen.yaml").write_text(yaml.safe_dump(SCENE))
    with scripted_suite(tmp, tmp / "kitchen.yaml", SCRIPT, parameters={"approval": "plan", "approval_timeout_s": 2.0}):
        with served_client(NS, "approval_test") as c:
            yield c


def _world_and_memory(client):
    """(the simulated camera's relations at the table, the memory's relations)."""
    import json

    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory, Observe

    seen, error = client.call(Observe, "observe", Observe.Request(location=""))
    assert seen is not None and seen.success, error
    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    assert got is not None, error
    memory = Memory.from_dict(json.loads(got.json))
    return ({" ".join((r.predicate, *r.arguments)) for r in seen.observation.relations},
            {" ".join((r.predicate, *r.args)) for r in memory.relations})


@pytest.mark.parametrize("answer", ["no", ""], ids=["refused", "no answer"])
def test_a_plan_the_person_does_not_approve_moves_nothing(client, answer):
    from action_msgs.msg import GoalStatus

    from affplan_ros.srv import AskHuman

    world, memory = _world_and_memory(client)
    person = Person(answer)
    outcome, seen = run_task(client, "Put the banana on the counter", person=person)
    res = outcome.result
    assert outcome.status == GoalStatus.STATUS_ABORTED and res.stop_reason == "refused", (res.message, seen)
    assert "did not approve the plan" in res.message and "nothing of it was executed" in res.message
    assert len(person.requests) == 1
    asked = person.requests[0]
    assert asked.purpose == AskHuman.Request.PURPOSE_APPROVE_PLAN and asked.options == ["yes", "no"]
    assert asked.plan[0].goal == "(and (on banana0 counter0))" and [s.action for s in asked.plan[0].steps] == \
        ["grasp", "move", "place"]
    assert "1. the robot: grasp banana0 table0 table0" in asked.question
    assert not any(m.startswith("step ") for m in seen), seen                 # no step started
    assert _world_and_memory(client) == (world, memory)                       # nothing moved, nothing believed


def test_an_approved_plan_runs_and_an_explore_move_is_asked_too(client):
    from action_msgs.msg import GoalStatus

    person = Person("yes", "yes")
    outcome, seen = run_task(client, "Give me the apple", person=person)
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED and outcome.result.success, seen
    assert [len(r.plan[0].steps) for r in person.requests] == [1, 3]        # the move to look, then the plan
    assert person.requests[0].plan[0].steps[0].action == "move" and person.requests[0].plan[0].goal == ""
    assert sum(m.startswith("step ") and "succeeded" in m for m in seen) == 4, seen
