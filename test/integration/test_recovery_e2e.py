"""Issue 7 through the ROS graph: a learned precondition survives a restart of the suite.

The suite (every node of launch/sim.launch.xml as its own process) runs on the LASP case
``lasp_store_fruit_1``: the simulated world enforces that a container must be open to put
something in, the robot's model (``capabilities_file`` = the scenario: its robot without the
hidden precondition) does not know it. Task 1 fails at ``putin``, the tool-selection node
learns the precondition (LASP, scripted answers on the local chat-completions server through
the real openai client), writes the knowledge file and finishes the task. The whole suite is
shut down and started again on the same knowledge file: task 2 is planned with the learned
precondition from the start (the planning node read the file) and runs without a failure.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from suite_support import run_task, scripted_suite

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = "/affplan"
RECOVERY = Path(__file__).resolve().parents[2] / "config" / "scenarios" / "recovery"
SCENARIO = RECOVERY / "lasp_store_fruit_1.yaml"
TASK = "put the apple into the refrigerator"
LEARNED = "putin requires (not (closed ?in))"


def script() -> dict:
    """The case's answers of config/scenarios/recovery/answers.yaml, plus the tool choice."""
    case = yaml.safe_load((RECOVERY / "answers.yaml").read_text())["cases"]["lasp_store_fruit_1"]
    # The goal is asked twice in task 1: by the planning node, then by the learning run.
    return {TASK: {"tool": ["SELECTED TOOL: PLAN"], "goal": case["goal"] * 2,
                   **{k: case[k] for k in ("cause", "precondition", "completeness", "translate")}}}


def _task(tmp: Path, knowledge: Path):
    from action_msgs.msg import GoalStatus

    from affplan_ros.task_client import SuiteClient

    parameters = {"capabilities_file": str(SCENARIO), "knowledge_file": str(knowledge)}
    with scripted_suite(tmp, SCENARIO, script(), parameters=parameters, time_scale="0.02") as _suite:
        with SuiteClient(NS, "recovery_e2e") as client:
            outcome, seen = run_task(client, TASK, timeout=90.0)
    assert outcome.status in (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED), seen
    return outcome.result, seen


def test_a_learned_precondition_survives_a_restart_and_prevents_the_failure(tmp_path) -> None:
    knowledge = tmp_path / "knowledge.json"
    t0 = time.monotonic()

    # Task 1: the plan puts the apple into the closed fridge; putin fails; LASP learns.
    res, seen = _task(tmp_path / "first", knowledge)
    assert res.success and res.stop_reason == "done", (res.message, seen)
    assert sum(m.startswith("step ") and "failed: Error: putin" in m for m in seen) == 1, seen   # learned at once
    assert any("learning what the model lacks" in m for m in seen), seen
    assert f"learned: {LEARNED}" in res.message and "recovery completed" in res.message, res.message
    assert list(res.learned) == [LEARNED], res.learned   # a typed field, not read back out of the message
    steps = [s.action for s in res.final_plan.steps]
    assert "open" in steps and steps.index("open") < len(steps) - 1 and steps[-1] == "putin", steps
    data = json.loads(knowledge.read_text())
    assert [(p["action"], p["condition"], p["confirmed"]) for p in data["preconditions"]] == \
        [("putin", "(not (closed ?in))", True)]

    # The whole suite again, a fresh world (the apple on the table, the fridge closed).
    res, seen = _task(tmp_path / "second", knowledge)
    assert res.success and res.stop_reason == "done", (res.message, seen)
    plan = [s.action for s in res.final_plan.steps]
    assert plan.index("open") < plan.index("putin"), plan          # planned with it from the start
    assert any(m.endswith(f"(with learned knowledge: {LEARNED})") for m in seen), seen
    assert not any("failed" in m or "learning" in m or "repair" in m for m in seen), seen
    assert "recovery" not in res.message and res.llm_calls == 2, res.message   # one tool choice, one goal
    assert list(res.learned) == [], res.learned                                # nothing new learned
    print(f"\nrecovery e2e: two suites, two tasks in {time.monotonic() - t0:.1f} s")


def _node(name: str, *params: str):
    import sys

    from affplan_ros.launch_xml import find_executable
    from affplan_ros.launcher import NodeProcess

    args = [a for p in params for a in ("-p", p)]
    return NodeProcess([sys.executable, str(find_executable("affplan_ros", name)), "--ros-args",
                        "-r", "__ns:=/recovery_params", *args], env={"AFFPLAN_LLM_BASE_URL": ""}, name=name, wait=False)


def test_bad_recovery_parameters_stop_the_node_with_a_clear_message() -> None:
    from affplan_ros.launcher import NodeStartError

    proc = _node("tool_selection", "feedback_level:=loud")
    with pytest.raises(NodeStartError, match="feedback level must be one of what, why, how"):
        proc.wait_ready(30.0)


def test_a_malformed_knowledge_file_is_reported_and_planning_goes_on(tmp_path) -> None:
    bad = tmp_path / "knowledge.json"
    bad.write_text("{ this is not json")
    proc = _node("planning", f"knowledge_file:={bad}")
    try:
        proc.wait_ready(30.0)
        assert proc.proc.poll() is None
        assert "knowledge file not used, planning without learned knowledge" in "".join(proc.output)
    finally:
        proc.stop()
    assert bad.read_text() == "{ this is not json"      # never overwritten
