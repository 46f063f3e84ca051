"""Generated and malformed input to every service, action and subscribed topic of every node of
the sim suite, through real DDS (hypothesis, seeded, a fixed number of examples per entry point).

After every example: every node is alive; the memory is exactly as it was (or, for the few
valid parts generated, changed only as they asked); the learned knowledge file is untouched.
At the end a normal task still succeeds. The oracle of what is valid lives here, written apart
from the product's checks (core/model/limits.py, core/model/memory.py): a name is ASCII letters, digits,
_ and -, starting with a letter, of at most 64 characters.
"""
from __future__ import annotations

import json
import math
import time

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_support import STOVE_KITCHEN, run_task, scripted_suite, served_client

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
SCENE = STOVE_KITCHEN
SCRIPT = {"Put the banana on the counter": {"tool": ["SELECTED TOOL: PLAN"],
                                             "goal": ["(:goal (and (on banana0 counter0)))"]}}
KNOWLEDGE = {"version": 1, "preconditions": [{"action": "grasp", "condition": "(at ?actor ?at)", "text": "be there",
                                               "cause": "", "task": "", "failure": "", "learned_at": "2026-11-01",
                                               "confirmed": True}], "properties": []}
EXAMPLES = 12          # per entry point: about 90 s in all on the 2-core machine

# -- what is generated ------------------------------------------------------------------------------
KNOWN = ["cup0", "table0", "banana0", "counter0", "robot0", "human0", "stove0"]
# Text that is never a name: empty, spaces, non-ASCII, punctuation, digits first, huge.
NOT_NAMES = st.one_of(
    st.sampled_from(["", " ", "cúp0", "☕", "0cup", "cup 0", "cup;rm", "(on", "x" * 65, "a" * 100_000, "\t", "ü" * 3]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30).filter(
        lambda t: not _is_name(t)))
ANY_NAME = st.one_of(st.sampled_from(KNOWN), st.sampled_from(["zzz0", "garage0", "on", "robot9"]), NOT_NAMES)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60)
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([-1.0, 0.0, 1e12, -1e-9]))


def _is_name(text: str) -> bool:
    return (0 < len(text) <= 64 and text.isascii() and text[0].isalpha()
            and all(c.isalnum() or c in "_-" for c in text))


@st.composite
def bad_relations(draw):
    """A relation that must be refused: a bad name, an unknown predicate or the wrong arity."""
    kind = draw(st.sampled_from(["name", "predicate", "arity"]))
    if kind == "name":
        return draw(st.sampled_from(["on", "at", "inhand"])), [draw(NOT_NAMES), draw(ANY_NAME)]
    if kind == "predicate":
        return draw(st.one_of(st.sampled_from(["floats", "ON", "on_top"]), NOT_NAMES)), ["cup0", "table0"]
    predicate, arity = draw(st.sampled_from([("at", 2), ("on", 2), ("opened", 1), ("inhand", 2)]))
    count = draw(st.integers(0, 6).filter(lambda n: n != arity))
    return predicate, draw(st.lists(st.sampled_from(KNOWN), min_size=count, max_size=count))


def _relation(draw, bad: bool):
    from affplan_ros.msg import Relation

    predicate, args = draw(bad_relations()) if bad else (draw(st.sampled_from(["on", "in", "at"])),
                                                         draw(st.lists(ANY_NAME, max_size=3)))
    return Relation(predicate=predicate, arguments=args, assumed=draw(st.booleans()))


@st.composite
def bad_observations(draw):
    """A SceneObservation with at least one part that makes it unusable."""
    from affplan_ros.msg import SceneObject, SceneObservation

    msg = SceneObservation(location=draw(st.one_of(st.just(""), ANY_NAME)))
    for _ in range(draw(st.integers(0, 3))):
        msg.objects.append(SceneObject(name=draw(ANY_NAME), class_name=draw(ANY_NAME),
                                       instance=draw(st.integers(0, 2**31)),
                                       affordances=draw(st.lists(ANY_NAME, max_size=3))))
    msg.relations = [_relation(draw, bad=draw(st.booleans())) for _ in range(draw(st.integers(0, 3)))]
    poison = draw(st.sampled_from(["relation", "object", "future", "location"]))
    if poison == "relation":
        msg.relations.append(_relation(draw, bad=True))
    elif poison == "object":
        msg.objects.append(SceneObject(name=draw(NOT_NAMES), class_name="cup"))
    elif poison == "future":
        msg.relations.append(_relation(draw, bad=True)) if draw(st.booleans()) else None
        msg.header.stamp.sec = int(time.time()) + draw(st.integers(60, 10**6))
        msg.objects.append(SceneObject(name="banana0", class_name="banana"))
        msg.relations.append(_relation(draw, bad=False))
    else:
        msg.location = draw(NOT_NAMES.filter(bool))
    return msg


@st.composite
def bad_updates(draw):
    """An UpdateMemory request with at least one invalid part (so it must change nothing)."""
    from affplan_ros.msg import Plan, PlanStep, Substitution
    from affplan_ros.srv import UpdateMemory

    req = UpdateMemory.Request()
    if draw(st.booleans()):
        req.instruction = draw(TEXT)
    if draw(st.booleans()):
        req.explored_location = draw(ANY_NAME)
    req.add_relations = [_relation(draw, bad=draw(st.booleans())) for _ in range(draw(st.integers(0, 2)))]
    req.remove_relations = [_relation(draw, bad=draw(st.booleans())) for _ in range(draw(st.integers(0, 2)))]
    poison = draw(st.sampled_from(["json", "json_shape", "relation", "observation", "substitution", "plan", "huge"]))
    if poison == "json":
        req.memory_json = draw(st.sampled_from(["{not json", "[", "\"", "{\"objects\": [}", "1e999999"]))
    elif poison == "json_shape":
        req.memory_json = draw(st.sampled_from([
            "[]", "null", "42", "\"text\"", '{"substitutions": [1]}', '{"relations": [["at", "robot0"]]}',
            '{"objects": [{"name": "cup0"}]}', '{"objects": null}', '{"relation": []}', '{"locations": [{"name": 7}]}',
            '{"object_stamps": {"cup0": [1e300, "step"]}}', '{"object_stamps": {"cup0": [1.0, "magic"]}}',
            '{"last_plan": {"tool": 3}}', '{"instructions": [' + '"x", ' * 5 + '7]}',
            json.dumps({"objects": [{"name": "cúp0", "class_name": "cup", "instance": 0}]}),
            json.dumps({"relations": [["on", "cup0", "table0"]] * 3, "fact_stamps": {"on cup0 desk0": [1, "step"]}})]))
    elif poison == "relation":
        req.add_relations.append(_relation(draw, bad=True))
    elif poison == "observation":
        req.observation = draw(bad_observations())
    elif poison == "substitution":
        req.substitutions = [Substitution(missing_class=draw(NOT_NAMES), replacement=draw(ANY_NAME))]
    elif poison == "plan":
        steps = [PlanStep(action=draw(ANY_NAME), agent=draw(ANY_NAME), arguments=draw(st.lists(ANY_NAME, max_size=20)))
                 for _ in range(draw(st.integers(1, 3)))]
        steps.append(PlanStep(action=draw(NOT_NAMES.filter(bool)), arguments=["cup0"]))
        req.plan = [Plan(goal=draw(TEXT), steps=steps, cost=draw(NUMBERS))]
    else:
        req.instruction = "x" * draw(st.sampled_from([2001, 1_000_000]))
    return req


@st.composite
def bad_tasks(draw):
    """Task text that must be refused: empty, only whitespace or control characters, too long."""
    return draw(st.one_of(st.sampled_from(["", "   ", "\t\n", "\x01\x02", "\x7f"]),
                          st.integers(2001, 200_000).map(lambda n: "bring me " + "x" * n)))


@st.composite
def bad_plans(draw):
    """An ExecutePlan goal that must not move anything: a bad step (name, arity, unknown action),
    too many steps, or a bad step time limit."""
    from affplan_ros.action import ExecutePlan
    from affplan_ros.msg import Plan, PlanStep

    steps = [PlanStep(action=draw(st.sampled_from(["grasp", "move", "place"])), agent="robot0",
                      arguments=draw(st.lists(st.sampled_from(KNOWN), max_size=3)))
             for _ in range(draw(st.integers(0, 2)))]
    goal = ExecutePlan.Goal(plan=Plan(steps=steps))
    poison = draw(st.sampled_from(["name", "action", "agent", "count", "timeout"]))
    if poison == "name":
        goal.plan.steps = [PlanStep(action="grasp", agent="robot0", arguments=[draw(NOT_NAMES), "table0", "table0"])]
    elif poison == "action":
        goal.plan.steps = [PlanStep(action=draw(st.sampled_from(["teleport", "zzz", "rm_rf"])), agent="robot0",
                                    arguments=["cup0"])]
    elif poison == "agent":
        goal.plan.steps = [PlanStep(action="move", agent=draw(NOT_NAMES.filter(bool)),
                                    arguments=["table0", "counter0"])]
    elif poison == "count":
        goal.plan.steps = [PlanStep(action="move", agent="robot0", arguments=["table0", "table0"])] * 501
    else:
        goal.plan.steps = [PlanStep(action="move", agent="robot0", arguments=["table0", "counter0"])]
        goal.step_timeout_s = draw(st.sampled_from([-1.0, math.nan, math.inf, 1e9]))
    return goal


@st.composite
def bad_skill_goals(draw):
    """(skill, goal) for the simulated world's skill servers, every one naming something that is no name."""
    from affplan_ros.interfaces import interface_types

    types = interface_types("action")
    skill = draw(st.sampled_from(["Navigate", "Grasp", "Place", "Open", "Close", "Handover", "Pour", "Wipe", "Skill"]))
    goal = types[skill].Goal()
    fields = [n for n, t in goal.get_fields_and_field_types().items() if t in ("string", "sequence<string>")]
    for name in fields:
        value = draw(ANY_NAME)
        setattr(goal, name, [value] if isinstance(getattr(goal, name), list) else value)
    poisoned = draw(st.sampled_from(fields))
    bad = draw(NOT_NAMES.filter(bool))
    setattr(goal, poisoned, [bad] if isinstance(getattr(goal, poisoned), list) else bad)
    return skill, goal


FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


# -- the suite under test ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "kitchen.yaml").write_text(yaml.safe_dump(SCENE))
    knowledge = tmp / "knowledge.json"
    knowledge.write_text(json.dumps(KNOWLEDGE, indent=1))
    with scripted_suite(tmp, tmp / "kitchen.yaml", SCRIPT, parameters={"knowledge_file": str(knowledge)}) as started:
        yield started[0], knowledge


@pytest.fixture(scope="module")
def client(suite):
    with served_client(NS, "fuzz_test") as c:
        yield c


@pytest.fixture(scope="module")
def check(suite, client):
    """After an example: every node alive, the memory as expected, the knowledge untouched."""
    started, knowledge = suite
    original = knowledge.read_bytes()

    def memory_json() -> dict:
        from affplan_ros.srv import GetMemory

        got, error = client.call(GetMemory, "get_memory", GetMemory.Request(), timeout=20.0)
        assert got is not None, error
        return json.loads(got.json)

    def alive() -> None:
        dead = {p.name: p.proc.returncode for p in started.processes if p.proc.poll() is not None}
        assert not dead, f"nodes died: {dead}"

    class Check:
        def memory(self) -> dict:
            return memory_json()

        def unchanged(self, before: dict, what: str, *, stamps: bool = True) -> None:
            alive()
            after = memory_json()
            if not stamps:  # a valid view of what is there was merged: the same facts, newer stamps
                before = {k: v for k, v in before.items() if not k.endswith("_stamps")}
                after = {k: v for k, v in after.items() if not k.endswith("_stamps")}
            assert after == before, f"the memory changed after {what}"
            assert knowledge.read_bytes() == original, f"the knowledge file changed after {what}"

    return Check()


def _call(client, srv_type, name, request, timeout=20.0):
    got, error = client.call(srv_type, name, request, timeout=timeout)
    assert got is not None, f"{name} did not answer: {error}"
    return got


def _action(client, action_type, name, goal, timeout=30.0):
    """The result of an action goal (aborted, rejected or done), waiting at most ``timeout``."""
    # The project's ActionClient: the client's node spins in another thread while this makes it.
    from affplan_ros.nodes.base import ActionClient, FutureWait

    key = ("fuzz-action", name)
    ac = client._clients.get(key)
    if ac is None:
        ac = client._clients[key] = ActionClient(client.node, action_type, f"{NS}/{name}")
        assert ac.wait_for_server(timeout_sec=10.0), f"no action server {name}"
    sent = FutureWait(ac.send_goal_async(goal))
    assert sent.until(time.monotonic() + timeout) == "done", f"{name}: the goal was not answered"
    handle = sent.future.result()
    if not handle.accepted:
        return None
    done = FutureWait(handle.get_result_async())
    assert done.until(time.monotonic() + timeout) == "done", f"{name}: no result within {timeout} s"
    return done.future.result().result


# -- the entry points -------------------------------------------------------------------------------
def test_memory_update_memory(client, check):
    from affplan_ros.srv import UpdateMemory

    @FUZZ
    @given(bad_updates())
    def run(request):
        before = check.memory()
        got = _call(client, UpdateMemory, "update_memory", request)
        assert not got.success and got.message.startswith("update rejected:") and len(got.message) < 2000, got.message
        check.unchanged(before, f"UpdateMemory {got.message[:120]}")

    run()
    # The valid part of a request is applied, and only that.
    before = check.memory()
    got = _call(client, UpdateMemory, "update_memory", UpdateMemory.Request(instruction="  wipe   the table "))
    after = check.memory()
    assert got.success and after["instructions"] == before["instructions"] + ["wipe the table"]
    assert ({k: v for k, v in after.items() if k != "instructions"}
            == {k: v for k, v in before.items() if k != "instructions"})


def test_memory_observation_topic(client, check):
    from affplan_ros.msg import SceneObservation
    from affplan_ros.nodes.base import LATCHED_QOS

    pub = client.node.create_publisher(SceneObservation, f"{NS}/observation", LATCHED_QOS)

    @FUZZ
    @given(bad_observations())
    def run(msg):
        before = check.memory()
        pub.publish(msg)
        time.sleep(0.15)   # handled in arrival order with the next GetMemory or soon after (checked again at the end)
        check.unchanged(before, "a malformed observation")

    try:
        before = check.memory()
        run()
        time.sleep(1.0)
        check.unchanged(before, "the malformed observations")
    finally:
        client.node.destroy_publisher(pub)


def test_memory_get_and_planning_plan_task(client, check):
    from affplan_ros.srv import GetMemory, PlanTask

    @FUZZ
    @given(st.one_of(bad_tasks(), TEXT), st.booleans())
    def run(task, partial):
        before = check.memory()
        got = _call(client, PlanTask, "plan_task", PlanTask.Request(task=task, partial=partial), timeout=60.0)
        assert not got.success and got.message   # nothing scripted for these: never a plan
        if not " ".join(task.split()) or len(task) > 2000:
            assert got.message.startswith("task rejected:") and got.prompt_tokens == 0, got.message
        check.unchanged(before, f"PlanTask {task[:40]!r}")
        assert _call(client, GetMemory, "get_memory", GetMemory.Request()).json

    run()


def test_tool_selection_command_and_execute_task(client, check):
    from affplan_ros.action import ExecuteTask
    from affplan_ros.srv import Command

    @FUZZ
    @given(bad_tasks(), st.integers(0, 2**32 - 1), st.booleans())
    def run(task, rounds, plan_only):
        before = check.memory()
        got = _call(client, Command, "command", Command.Request(task=task))
        assert not got.accepted and not got.task_id and got.message
        result = _action(client, ExecuteTask, "execute_task", ExecuteTask.Goal(task=task, max_rounds=rounds,
                                                                                  plan_only=plan_only))
        assert result is not None and not result.success and result.stop_reason == "rejected", result
        assert result.llm_calls == 0 and len(result.message) < 500
        check.unchanged(before, f"a task of {len(task)} characters")

    run()
    before = check.memory()
    result = _action(client, ExecuteTask, "execute_task", ExecuteTask.Goal(task="Put the banana on the counter",
                                                                              max_rounds=101))
    assert result.stop_reason == "rejected" and "the limit is 100" in result.message
    check.unchanged(before, "max_rounds over the limit")


def test_executor_execute_plan(client, check):
    from affplan_ros.action import ExecutePlan

    @FUZZ
    @given(bad_plans())
    def run(goal):
        before = check.memory()
        result = _action(client, ExecutePlan, "execute_plan", goal)
        assert result is not None and not result.success and result.steps_done == 0, result
        assert result.message.startswith("plan rejected:"), result.message
        check.unchanged(before, f"ExecutePlan {result.message[:100]}")

    run()


def test_sim_world_skills_observe_and_parameters(client, check):
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    from affplan_ros.srv import Observe

    @FUZZ
    @given(bad_skill_goals())
    def skills(skill_goal):
        skill, goal = skill_goal
        before = check.memory()
        result = _action(client, _skill_type(skill), _skill_server(skill), goal)
        assert result is not None and not result.success and "rejected" in result.failure.what, result
        check.unchanged(before, f"{skill} goal")

    @FUZZ
    @given(ANY_NAME)
    def observe(location):
        before = check.memory()
        got = _call(client, Observe, "observe", Observe.Request(location=location))
        if location not in ("", "table0"):   # "" is where the robot is: the table
            assert not got.success and got.message, got
        # a valid look at the table is merged: the same facts, seen again (newer stamps)
        check.unchanged(before, f"Observe {location[:40]!r}", stamps=not got.success)

    @FUZZ
    @given(st.sampled_from(["sim_world", "executor", "memory", "planning", "tool_selection"]),
           st.one_of(st.sampled_from(["time_scale", "max_rounds", "persist_file", "approval", "plan_mode",
                                      "robot_agent"]),
                     TEXT), st.one_of(NUMBERS, TEXT, st.booleans()))
    def parameters(node, name, value):
        before = check.memory()
        pv = ParameterValue()
        if isinstance(value, bool):
            pv.type, pv.bool_value = ParameterType.PARAMETER_BOOL, value
        elif isinstance(value, float):
            pv.type, pv.double_value = ParameterType.PARAMETER_DOUBLE, value
        else:
            pv.type, pv.string_value = ParameterType.PARAMETER_STRING, value
        got = _call(client, SetParameters, f"{node}/set_parameters", SetParameters.Request(
            parameters=[Parameter(name=name, value=pv)]))
        assert not got.results[0].successful, (node, name, value)   # read once at start: never changed after
        check.unchanged(before, f"setting {node}.{name[:30]}")

    skills()
    observe()
    parameters()


def _skill_type(skill: str):
    from affplan_ros.interfaces import interface_types

    return interface_types("action")[skill]


def _skill_server(skill: str) -> str:
    from affplan_ros.core.knowledge.skills import SkillMap
    from affplan_ros.env import config_file

    return SkillMap.from_file(config_file("skills.yaml")).server(skill)


def test_a_normal_task_still_succeeds_and_nothing_died(suite, client, check):
    from action_msgs.msg import GoalStatus

    outcome, seen = run_task(client, "Put the banana on the counter")
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED and outcome.result.success, seen
    memory = check.memory()
    assert ["on", "banana0", "counter0"] in memory["relations"]
    started, knowledge = suite
    assert all(p.proc.poll() is None for p in started.processes)
    assert json.loads(knowledge.read_text())["preconditions"][0]["condition"] == "(at ?actor ?at)"
