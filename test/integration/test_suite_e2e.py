"""The whole suite end to end: every node of launch/sim.launch.xml as its own process, tasks sent
through the ROS graph only (ExecuteTask action, Command service), a scripted LLM on the local
chat-completions server reached by the nodes' real openai clients, the real goal checks
(Prolog), Fast Downward, executor and simulated world.

One suite serves the module (start-up costs seconds). Every test starts from the scenario's
world and memory (reset_world + reset_memory): none inherits what another left behind, so one
failure never fails the tests after it.
"""
from __future__ import annotations

import json
import time

import pytest
import yaml
from ros_support import Received
from suite_support import reset_suite, run_task, scripted_suite, served_client

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
SCENE = {
    "description": "A kitchen; the robot has only seen the table.",
    "objects": ["table:0", "counter:0", "refrigerator:0", "cup:0", "banana:0", "apple:0", "milk:0", "human:0",
                "robot:0"],
    "relations": ["on cup:0 table:0", "on banana:0 table:0", "on apple:0 counter:0", "in milk:0 refrigerator:0",
                  "closed refrigerator:0", "at robot:0 table:0", "at human:0 table:0"],
    "locations": {"table0": ["table:0", "cup:0", "banana:0"], "counter0": ["counter:0", "apple:0"],
                  "refrigerator0": ["refrigerator:0", "milk:0"]},
    "explored": ["table0"],
}
# What the language backend answers, per task and kind of question (tool choice, goal, the two
# questions of Suggest Alternative). The robot cannot open things: the person must.
SCRIPT = {
    "Give me the apple": {
        "tool": ["No apple in memory; counter0 is unexplored.\nSELECTED TOOL: EXPLORE counter0",
                 "The apple is on the counter.\nSELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (inhand apple0 human0)))"]},
    "Bring me a glass": {
        "tool": ["There is no glass anywhere.\nSELECTED TOOL: SUGGEST_ALTERNATIVE glass", "SELECTED TOOL: PLAN"],
        "affordances": ["To drink from it: ['drink']"],
        "goal": ["(:goal (and (inhand cup0 human0)))"]},
    "Open the fridge": {
        "tool": ["SELECTED TOOL: EXPLORE refrigerator0", "SELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (opened refrigerator0)))"]},
    "Put the banana on the counter": {
        "tool": ["SELECTED TOOL: PLAN", "SELECTED TOOL: PLAN"],
        "goal": ["(:goal (and (on banana0 counter0)))", "(:goal (and (on banana0 counter0)))"]},
    "Give me the banana": {
        "tool": ["SELECTED TOOL: PLAN", "Nothing else can help.\nFAILURE"],
        "goal": ["(:goal (and (inhand banana0 human0)))"]},
}


class Person:
    """The person at the other end of the ask_human service: says yes, remembers the questions."""

    def __init__(self):
        self.questions: list[str] = []

    def __call__(self, request, response):
        self.questions.append(request.question)
        response.answered, response.answer = True, "yes"
        return response


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    from affplan_ros.core.knowledge.capabilities import load_capabilities

    tmp = tmp_path_factory.mktemp("suite")
    (tmp / "kitchen.yaml").write_text(yaml.safe_dump(SCENE))
    robot = sorted(n for n, c in load_capabilities().items() if n != "open" and not c.environment)
    with scripted_suite(tmp, tmp / "kitchen.yaml", SCRIPT, parameters={"robot_capabilities": robot}) as started:
        yield started


@pytest.fixture(scope="module")
def client(suite):
    with served_client(NS, "e2e_test") as c:
        yield c


@pytest.fixture(autouse=True)
def fresh_world(request):
    """The scenario's world and memory before every test (the suite keeps running)."""
    if "client" not in request.fixturenames:
        return
    started, _env = request.getfixturevalue("suite")
    reset_suite(request.getfixturevalue("client"), started)


def memory_of(client):
    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory

    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    assert got is not None, error
    return Memory.from_dict(json.loads(got.json)), got


def relations(memory) -> set[str]:
    return {" ".join((r.predicate, *r.args)) for r in memory.relations}


def test_all_nodes_come_up_from_the_launch_file(suite):
    started, _ = suite
    names = [n.name for n in started.description.nodes]
    assert names == ["sim_world", "executor", "memory", "planning", "tool_selection"]
    assert all(p.proc.poll() is None for p in started.processes)
    # exactly the launch file's command lines: its executables, parameter files and parameters
    sim = started.description.node("sim_world")
    assert sim.argv()[1].endswith("scripts/nodes/sim_world") and sim.params["time_scale"] == "0.25"


def test_task_needing_exploration(client):
    from action_msgs.msg import GoalStatus

    outcome, seen = run_task(client, "Give me the apple")
    res = outcome.result
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED and res.success, seen
    assert res.stop_reason == res.STOP_DONE == "done" and res.rounds == 2 and res.llm_calls == 3
    assert list(res.answered_by) == ["scripted"] and "answered by" not in res.message, (res.answered_by, res.message)
    assert res.prompt_tokens > 0 and res.completion_tokens > 0
    assert [s.action for s in res.final_plan.steps] == ["grasp", "move", "handover"]
    assert "round 1: EXPLORE counter0" in seen and any(m.startswith("Explored counter0: found apple0") for m in seen)
    assert sum(m.startswith("step ") and " succeeded:" in m for m in seen) == 4  # the explore move + 3 plan steps
    memory, snapshot = memory_of(client)
    assert "inhand apple0 human0" in relations(memory) and memory.locations["counter0"].explored
    assert memory.last_plan.success and memory.instructions == ["Give me the apple"]
    assert [a.location for a in snapshot.memory.agents if a.name == "robot0"] == ["human0"]
    # Who set each fact, and when: the handover is the robot's executed step; the cup on the
    # table, untouched, is as the (reset) initial memory set it, before the handover.
    facts = {" ".join((r.predicate, *r.arguments)): r for r in snapshot.memory.relations}
    handed, cup = facts["inhand apple0 human0"], facts["on cup0 table0"]
    assert handed.source == "step" and cup.source == "initial"
    assert (cup.stamp.sec, cup.stamp.nanosec) < (handed.stamp.sec, handed.stamp.nanosec)
    markers_show(client)


def test_an_old_observation_delivered_late_keeps_the_plans_effects(client):
    """A camera view of the counter taken before the robot handed the apple over (the apple on
    the counter, the robot in front of it), delivered only now: the plan's effects are newer
    and stay; the memory still agrees with the world."""
    from affplan_ros.msg import MemorySnapshot, Relation, SceneObject, SceneObservation
    from affplan_ros.nodes.base import LATCHED_QOS

    outcome, seen = run_task(client, "Give me the apple")
    assert outcome.result.success, seen
    memory, _ = memory_of(client)
    handed_over = memory.fact_stamps[next(r for r in memory.relations if r.predicate == "inhand")].time
    old = SceneObservation(location="counter0", objects=[
        SceneObject(name="apple0", class_name="apple", instance=0,
                    affordances=list(memory.objects["apple0"].affordances)),
        SceneObject(name="counter0", class_name="counter", instance=0),
        SceneObject(name="robot0", class_name="robot", instance=0)],
        relations=[Relation(predicate="on", arguments=["apple0", "counter0"]),
                   Relation(predicate="at", arguments=["robot0", "counter0"])])
    taken = handed_over - 3.0  # during the explore, before the grasp
    old.header.stamp.sec, old.header.stamp.nanosec = int(taken), int((taken % 1) * 1e9)
    snapshots = []
    sub = client.node.create_subscription(MemorySnapshot, f"{NS}/memory", snapshots.append, LATCHED_QOS)
    pub = client.node.create_publisher(SceneObservation, f"{NS}/observation", LATCHED_QOS)
    sent = time.time()
    try:
        deadline = time.monotonic() + 15
        # The memory node publishes a snapshot after every message it handled: one stamped after
        # the send means the old view was merged (or rejected).
        while time.monotonic() < deadline and not any(
                m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 > sent for m in snapshots):
            pub.publish(old)
            time.sleep(0.3)
    finally:
        client.node.destroy_publisher(pub)
        client.node.destroy_subscription(sub)
    assert any(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 > sent for m in snapshots), "memory never handled it"
    after, _ = memory_of(client)
    assert "inhand apple0 human0" in relations(after) and "on apple0 counter0" not in relations(after)
    assert after.agent_location("robot0") == "human0"
    assert after.stamp_of("apple0").time == memory.stamp_of("apple0").time


def apple_fetched(client) -> None:
    """The world a person's session has reached by the time they ask about the counter: the
    counter explored, the apple handed over, the robot with the person (away from the table)."""
    outcome, seen = run_task(client, "Give me the apple")
    assert outcome.result.success, seen


def markers_show(client):
    from visualization_msgs.msg import MarkerArray

    from affplan_ros.nodes.base import LATCHED_QOS

    with Received(client.node, MarkerArray, f"{NS}/markers", LATCHED_QOS) as markers:
        markers.wait(bool, 10)
        got = list(markers.messages)
    assert got, "no markers on /affplan/markers"
    texts = [m.text for m in got[-1].markers]
    assert "counter0 (explored)" in texts and "refrigerator0 (unexplored)" in texts
    assert any(t.startswith("cup0: ") and "drink" in t for t in texts)           # labels carry affordances
    plan = next(t for t in texts if t.startswith("plan:"))
    assert "handover robot0 human0 apple0" in plan and plan.endswith("succeeded")
    assert {m.text for m in got[-1].markers if m.ns == "agent_labels"} == {"robot0", "human0"}


def test_task_needing_an_alternative_through_the_command_service(client):
    from affplan_ros.srv import AskHuman, Command

    person = Person()
    service = client.node.create_service(AskHuman, f"{NS}/ask_human", person)
    try:
        got, error = client.call(Command, "command", Command.Request(task="Bring me a glass"))
        assert got is not None and got.accepted and len(got.task_id) == 32, (error, got)
        busy, _ = client.call(Command, "command", Command.Request(task="Give me the apple"))
        assert busy is not None and not busy.accepted and "busy" in busy.message
        # The task runs in the background: its end is the goal's status on the action's status
        # topic (the next test's task would be refused while this one is still finishing).
        from action_msgs.msg import GoalStatus, GoalStatusArray

        from affplan_ros.nodes.base import LATCHED_QOS

        ended = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED)

        def task_statuses(msgs) -> dict:
            return {bytes(st.goal_info.goal_id.uuid).hex(): st.status for m in msgs for st in m.status_list}

        with Received(client.node, GoalStatusArray, f"{NS}/execute_task/_action/status", LATCHED_QOS) as status:
            status.wait(lambda msgs: task_statuses(msgs).get(got.task_id) in ended, 90)
            statuses = task_statuses(status.messages)
        assert statuses.get(got.task_id) == GoalStatus.STATUS_SUCCEEDED, statuses
        memory, _ = memory_of(client)
    finally:
        client.node.destroy_service(service)
    assert memory.substitutions == {"glass": "cup"}
    assert person.questions and "There is no glass here. May I use the cup instead?" in person.questions[0]
    assert memory.last_plan.success and "inhand cup0 human0" in relations(memory)
    assert memory.instructions[-1] == "Bring me a glass"


def test_task_needing_human_help(client):
    from action_msgs.msg import GoalStatus

    person = Person()
    outcome, seen = run_task(client, "Open the fridge", person=person)
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED, seen
    steps = [(s.action, s.agent) for s in outcome.result.final_plan.steps]
    assert ("open", "human0") in steps and ("open", "robot0") not in steps, steps   # the robot cannot open things
    human_steps = [s for s in steps if s[1] == "human0"]
    assert len(person.questions) == len(human_steps) and all(q.startswith("human0, please") for q in person.questions)
    assert any("open refrigerator0" in q for q in person.questions), person.questions
    memory, _ = memory_of(client)
    assert "opened refrigerator0" in relations(memory) and memory.locations["refrigerator0"].explored


def test_cancel_mid_execution_leaves_world_and_memory_consistent(client):
    from action_msgs.msg import GoalStatus

    from affplan_ros.srv import Observe

    apple_fetched(client)
    outcome, seen = run_task(client, "Put the banana on the counter",
                             cancel_when=lambda m: m.startswith("step 2/") and "running" in m)
    assert outcome.status == GoalStatus.STATUS_CANCELED and outcome.result.stop_reason == "canceled", seen
    assert not any(m.startswith("step 2/") and "succeeded" in m for m in seen)
    memory, _ = memory_of(client)
    robot_at = memory.agent_location("robot0")
    got, error = client.call(Observe, "observe", Observe.Request(location=""))
    assert got is not None and got.success, error or got.message
    assert got.observation.location == robot_at == "table0"             # the first step (move) happened ...
    boxes = {o.name: (o.bbox.width, o.bbox.height) for o in got.observation.objects}
    assert boxes["banana0"][0] > 0 and boxes["banana0"][1] > 0        # the simulated camera's detections
    seen_rel = {" ".join((r.predicate, *r.arguments)) for r in got.observation.relations}
    assert "on banana0 table0" in seen_rel and "on banana0 table0" in relations(memory)  # ... the grasp did not
    assert not memory.last_plan.success


def test_plan_only_plans_without_moving_anything(client):
    from action_msgs.msg import GoalStatus

    before = memory_of(client)[1].json
    outcome, seen = run_task(client, "Give me the banana", plan_only=True)
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED, seen
    assert [s.action for s in outcome.result.final_plan.steps][-1] == "handover"
    assert outcome.result.llm_calls == 1 and not any(m.startswith("step ") for m in seen)
    assert memory_of(client)[1].json == before


def test_restarting_planning_while_idle_keeps_memory_and_the_suite_works(suite, client):
    from action_msgs.msg import GoalStatus

    from affplan_ros.launcher import NodeProcess

    started, env = suite
    apple_fetched(client)
    before = memory_of(client)[1].json
    index = [p.name for p in started.processes].index("planning")
    old = started.processes[index]
    old.proc.kill()
    old.proc.wait(10)
    started.processes[index] = NodeProcess(started.description.node("planning").argv(), env=env, name="planning")
    assert memory_of(client)[1].json == before
    outcome, seen = run_task(client, "Put the banana on the counter")
    assert outcome.status == GoalStatus.STATUS_SUCCEEDED, seen
    assert "on banana0 counter0" in relations(memory_of(client)[0])


def test_bad_tasks_are_refused_with_a_reason(client):
    from action_msgs.msg import GoalStatus

    from affplan_ros.srv import Command

    got, _ = client.call(Command, "command", Command.Request(task="   "))
    assert not got.accepted and "the task is empty" in got.message
    got, _ = client.call(Command, "command", Command.Request(task="x" * 100_000))
    assert not got.accepted and "the limit is 2000" in got.message
    outcome, _ = run_task(client, "")
    assert outcome.status == GoalStatus.STATUS_ABORTED and outcome.result.stop_reason == "rejected"
    assert outcome.result.llm_calls == 0 and "empty" in outcome.result.message


def test_task_while_a_skill_server_is_down_fails_clearly(suite, client):
    started, _ = suite
    sim = next(p for p in started.processes if p.name == "sim_world")
    assert sim.stop() == 0
    t0 = time.monotonic()
    outcome, seen = run_task(client, "Give me the banana", timeout=60)
    assert time.monotonic() - t0 < 45
    assert not outcome.result.success and outcome.result.stop_reason == "failed"
    assert any("no skill server answers at /affplan/skills/" in m for m in seen), seen
