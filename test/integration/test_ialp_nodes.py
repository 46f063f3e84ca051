"""Issue 17, item 3: IALP in the nodes, through the ROS graph.

Real rclpy nodes - ``sim_world`` (the CoPAL case ``copal_kitchen_out_of_reach``: cup0 on the
counter beside the robot is out of the arm's reach, cup1 is on the table), ``memory`` and
``planning`` - in a DDS domain of their own, the language model the project's local
chat-completions server (with token log-probabilities) reached through the real openai client.
Each test asks ``plan_task`` (PlanTask) as the tool-selection node does:

* ``grounding`` on: the planning node asks sim_world's ``grounding`` service, and no plan takes
  the unreachable cup0 (off: the cheapest plan takes it);
* ``planning_mode`` stepwise: the plan is built one step at a time from the model's scored
  candidates; the best-scored candidate is inapplicable at every step, and it is never taken;
  an endpoint without log-probabilities falls back to Fast Downward and says why;
* bad parameter values stop the node at start-up with an error naming them.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from ros_support import nodes_in_process

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "config" / "scenarios" / "recovery" / "copal_kitchen_out_of_reach.yaml"
TASK = "bring me a cup"
EITHER_CUP = "(:goal (or (inhand cup0 human0) (inhand cup1 human0)))"
CUP1 = "(:goal (inhand cup1 human0))"
STEPWISE_PLAN = ["move robot0 counter0 table0", "grasp robot0 cup1 table0 table0", "move robot0 table0 human0",
                 "handover robot0 human0 cup1"]


class Endpoint:
    """Goal answers and step candidates (with or without log-probabilities), in order."""

    def __init__(self):
        from affplan_ros.llm.fake_server import FakeChatServer

        self.goals: list[str] = []
        self.steps: list = []
        self.step_bodies: list[dict] = []
        self._lock = threading.Lock()
        self.server = FakeChatServer(self._answer, model="scripted").start()

    def _answer(self, messages, body):
        from affplan_ros.llm.fake_server import FakeReply
        from affplan_ros.llm.recovery_prompting import recovery_prompt_kind

        last = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        kind = recovery_prompt_kind(last)
        with self._lock:
            queue = {"goal": self.goals, "step": self.steps}.get(kind)
            if kind == "step":
                self.step_bodies.append(body)
            if not queue:
                return FakeReply(status=400, error_message=f"no scripted {kind!r} answer left")
            return queue.pop(0)


def candidates(*scored, logprobs: bool = True):
    """One step's K answers: (text, summed log-probability) each, spread over its words."""
    from affplan_ros.llm.fake_server import FakeChoice, FakeReply

    choices = []
    for text, lp in scored:
        words = text.split()
        choices.append(FakeChoice(text, [(w, lp / len(words)) for w in words] if logprobs else None))
    return FakeReply(text=choices[0].text, choices=choices)


@contextmanager
def graph(tmp: Path, endpoint: Endpoint, **planning):
    """sim_world, memory and planning on one MultiThreadedExecutor, in a context of their own,
    with config/sim.yaml's parameters and ``planning`` over them; yields a client node."""
    from affplan_ros.nodes.memory import MemoryNode
    from affplan_ros.nodes.planning import PlanningNode
    from affplan_ros.nodes.sim_world import SimWorldNode

    params = yaml.safe_load((ROOT / "config" / "sim.yaml").read_text())
    params["/**"]["ros__parameters"].update({
        "knowledge_file": "", "scenario": str(SCENARIO), "llm_base_url": endpoint.server.base_url,
        "llm_model": "scripted", "llm_api_key_env": "none"})
    params["/**/sim_world"]["ros__parameters"]["time_scale"] = 0.0
    params["/**/planning"]["ros__parameters"].update({"semantic_check": False, **planning})
    path = tmp / f"params_{len(list(tmp.glob('params_*')))}.yaml"
    path.write_text(yaml.safe_dump(params))
    with nodes_in_process((SimWorldNode, MemoryNode, PlanningNode), "ialp_test_client", params_file=path,
                          threads=6) as nodes:
        yield nodes[-1]


def plan(client, task: str = TASK, timeout: float = 60.0):
    from affplan_ros.srv import PlanTask

    srv = client.create_client(PlanTask, "plan_task")
    assert srv.wait_for_service(timeout_sec=20.0), "plan_task is not served"
    future = srv.call_async(PlanTask.Request(task=task))
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert future.done(), "no answer from plan_task"
    return future.result()


def live_grounding(client) -> set:
    """Objects sim_world's grounding says are reachable, through the tool-selection node's provider."""
    from rclpy.callback_groups import ReentrantCallbackGroup

    from affplan_ros.clients.grounding import GroundingClient, LiveGrounding
    from affplan_ros.core.recovery.grounding import load_grounding
    from affplan_ros.srv import Ground

    provider = LiveGrounding(GroundingClient(client, client.create_client(
        Ground, "grounding", callback_group=ReentrantCallbackGroup())))
    answer = provider.ground(load_grounding()["reachable"], [("cup0",), ("cup1",)])
    assert answer.available, answer.reason
    return {args[0] for args in answer.true}


def steps(response) -> list[str]:
    return [" ".join([s.action, s.agent, *s.arguments]) for s in response.plan.steps]


@pytest.fixture()
def endpoint():
    ep = Endpoint()
    yield ep
    ep.server.stop()


@pytest.fixture(autouse=True)
def _no_fast_path(monkeypatch):
    monkeypatch.setenv("AFFPLAN_FAST_PATH", "0")   # every answer from the endpoint


def test_grounding_off_the_cheapest_plan_takes_the_unreachable_cup(tmp_path, endpoint) -> None:
    endpoint.goals += [EITHER_CUP]
    with graph(tmp_path, endpoint, grounding="off") as client:
        got = plan(client)
    assert got.success, got.message
    assert "cup0" in " ".join(steps(got)) and "cup1" not in " ".join(steps(got)), steps(got)
    assert "grounding" not in got.message


def test_grounding_on_no_plan_takes_what_the_robot_cannot_reach(tmp_path, endpoint) -> None:
    endpoint.goals += [EITHER_CUP, "(:goal (inhand cup0 human0))"]
    # `grounding: on` in a YAML file (or `-p grounding:=on`) arrives as a boolean: it means on.
    with graph(tmp_path, endpoint, grounding=True) as client:
        got = plan(client)
        assert got.success, got.message
        assert "cup0" not in " ".join(steps(got)) and steps(got)[-1] == "handover robot0 human0 cup1", steps(got)
        assert "not feasible: (reachable cup0)" in got.message, got.message
        # Only cup0 will do: no plan at all rather than one the robot cannot carry out.
        only = plan(client, "bring me the cup on the counter")
        live = live_grounding(client)   # what the tool-selection node's learning replans ask
    assert live == {"cup1"}, live
    assert not only.success and not only.plan.steps, steps(only)
    assert "unsolvable" in only.message or "no plan" in only.message, only.message


def test_stepwise_takes_only_applicable_actions_of_the_scored_candidates(tmp_path, endpoint) -> None:
    """At every step the best-scored candidate is one the robot cannot do now (the handover
    before holding the cup; grasping cup0, which grounding says is out of reach; `done` before
    the goal holds); the plan is made of the best applicable ones."""
    endpoint.goals += [CUP1, CUP1]
    endpoint.steps += [
        candidates(("handover robot0 human0 cup1", -0.01), ("grasp robot0 cup0 counter0 counter0", -0.05),
                   ("move robot0 counter0 table0", -0.3)),
        candidates(("handover robot0 human0 cup1", -0.01), ("grasp robot0 cup1 table0 table0", -0.2),
                   ("move robot0 table0 counter0", -0.6)),
        candidates(("handover robot0 human0 cup1", -0.01), ("move robot0 table0 human0", -0.3),
                   ("done", -0.4)),
        candidates(("done", -0.01), ("handover robot0 human0 cup1", -0.1), ("move robot0 human0 table0", -0.2)),
        # the second task: an endpoint without log-probabilities
        candidates(("move robot0 counter0 table0", -0.3), ("done", -0.01), ("adjust cup0", -1.0), logprobs=False),
    ]
    with graph(tmp_path, endpoint, planning_mode="stepwise", stepwise_candidates=3, stepwise_fallback="planner",
               grounding="on") as client:
        got = plan(client)
        assert got.success, got.message
        assert got.plan.planner == "stepwise", got.plan.planner
        assert steps(got) == STEPWISE_PLAN, steps(got)
        assert "stepwise: 4 steps chosen" in got.message and "6 inapplicable candidates refused" in got.message, \
            got.message
        assert len(endpoint.step_bodies) == 4
        assert all(b["logprobs"] is True and b["n"] == 3 for b in endpoint.step_bodies)

        fallback = plan(client)
    assert fallback.success and fallback.plan.planner.startswith("fast-downward"), fallback.message
    assert "no log-probabilities" in fallback.message and "the PDDL planner made the plan" in fallback.message
    assert "cup0" not in " ".join(steps(fallback)), steps(fallback)       # grounding holds for the planner too


@pytest.mark.parametrize("override, words", [
    ({"planning_mode": "greedy"}, "planning_mode must be one of: planner, stepwise (got 'greedy')"),
    ({"stepwise_candidates": 0}, "stepwise_candidates must be >= 1 (got 0)"),
    ({"stepwise_candidates": 50}, "stepwise_candidates must be <= 20 (got 50)"),
    ({"stepwise_fallback": "retry"}, "stepwise_fallback must be one of: planner, none (got 'retry')"),
    ({"grounding": "yes"}, "grounding must be one of: off, on (got 'yes')"),
    ({"grounding": 3}, "grounding must be one of: off, on (got 3)"),
])
def test_bad_ialp_parameters_stop_the_node_with_a_clear_error(tmp_path, endpoint, override, words) -> None:
    with pytest.raises(ValueError) as err:
        with graph(tmp_path, endpoint, **override):
            pass
    assert words in str(err.value)


def test_the_physics_world_grounds_what_its_camera_and_arm_can_do(tmp_path):
    """sim_world with ``physics`` on answers ``grounding`` from the physics state: the apple in the
    closed fridge is not detected (no camera sees through a door) while the cup on the counter is,
    and only the predicates asked for come back; an unknown predicate gets a clear error."""
    from affplan_ros.clients.grounding import facts_from_response
    from affplan_ros.nodes.base import call_service
    from affplan_ros.nodes.sim_world import SimWorldNode
    from affplan_ros.srv import Ground

    params = yaml.safe_load((ROOT / "config" / "sim.yaml").read_text())
    params["/**/sim_world"]["ros__parameters"].update({
        "time_scale": 0.0, "physics": True, "scenario": str(ROOT / "config" / "scenarios" / "kitchen.txt")})
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    with nodes_in_process((SimWorldNode,), "ground_test_client", params_file=path) as nodes:
        client = nodes[1].create_client(Ground, "grounding")
        got, error = call_service(client, Ground.Request(predicates=["detected"]), 60.0, wait_s=20.0)
        assert got is not None and got.success, error or got.message
        facts = facts_from_response(got)
        assert facts.facts[("detected", ("apple0",))] is False and facts.facts[("detected", ("cup0",))] is True
        assert {p for p, _ in facts.facts} == {"detected"} and not facts.unavailable
        bad, error = call_service(client, Ground.Request(predicates=["levitating"]), 60.0, wait_s=20.0)
        assert bad is not None and not bad.success and "levitating" in bad.message
