"""`affplan bench plan`: oracle and replay runs on a tiny synthetic data folder, log extraction,
and (with ../shared) a quick oracle run of one real set."""
from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips

from affplan_ros.bench import plan as bench_plan
from affplan_ros.bench.replay import (
    ReplayBook,
    paper_summary,
    parse_planning_log,
    read_log,
    replay_rows,
)

SCENE = """SCENE-DESCRIPTION
OBJECTS
human:0
table:0
counter:0
apple:0
cup:0
END-OBJECTS
RELATIONS
on apple:0 table:0
on cup:0 counter:0
at robot:0 table:0
at human:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 apple:0
counter0 counter:0 cup:0
END-LOCATIONS
"""

OAM = """name: tiny
classes:
  human: []
  table: [support, sturdy-support]
  counter: [support, sturdy-support]
  apple: [grasp, carry, consumable]
  cup: [grasp, carry, contain, liquid-contain, drink]
"""

# task, desired goal, min_costs (the robot and the human start at the table)
CASES = [
    ("Put the cup on the table", "and (on cup0 table0)", 4),      # move, grasp, move, place
    ("Give me the apple", "and (inhand apple0 human0)", 3),        # grasp, move to the human, handover
]


def make_data(root: Path, scene: str = SCENE, cases=CASES, oam: str = OAM) -> Path:
    data = root / "autogpt_p" / "data"
    (data / "evaluation" / "scenarios").mkdir(parents=True)
    (data / "evaluation" / "scenes").mkdir(parents=True)
    (data / "evaluation" / "scenes" / "tiny.txt").write_text(scene)
    with (data / "evaluation" / "scenarios" / "evaluation_simple_task.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "scene_file", "desired_goal", "min_costs"])
        for task, goal, cost in cases:
            w.writerow([task, "tiny.txt", goal, cost])
    (root / "oam.yaml").write_text(oam)
    return data


def bench_args(data: Path, out: Path, llm: str, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bench_plan.configure(parser)
    return parser.parse_args(["--data", str(data), "--set", "simple_task", "--llm", llm, "--out", str(out),
                              "--oam", str(data.parents[1] / "oam.yaml"), "--jobs", "1", "--time-limit", "30",
                              "--max-rounds", "3", *extra])


def load(out: Path) -> dict:
    assert (out / "summary.md").is_file() and (out / "plan_bench.png").stat().st_size > 1000
    return json.loads((out / "results.json").read_text())


def test_oracle_mode_on_synthetic_data(tmp_path: Path) -> None:
    data = make_data(tmp_path)
    out = tmp_path / "out"
    assert bench_plan.run(bench_args(data, out, "oracle")) == 0
    rep = load(out)
    cases = rep["cases"]
    assert [c["success"] for c in cases] == [True, True], [c["failure"] for c in cases]
    assert [c["minimal"] for c in cases] == [True, True]
    assert [c["cost"] for c in cases] == [4, 3]
    assert [c["rounds"] for c in cases] == [1, 1] and all(c["corrections"] == 0 for c in cases)
    assert cases[0]["goal"] == "(and (on cup0 table0))"
    assert rep["sets"]["simple_task"]["success"] == 2
    assert set(cases[0]["seconds"]) >= {"llm", "check", "plan", "total"}
    assert "| simple_task | 2 | 2/2 (100%)" in (out / "summary.md").read_text()


def test_replay_mode_one_correct_one_failing(tmp_path: Path) -> None:
    data = make_data(tmp_path)
    replay = tmp_path / "answers.csv"
    with replay.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "goal"])
        w.writerow(["Put the cup on the table", "The goal is\n(:goal (and (on cup0 table0)))"])
        # an object that is not in the scene: fails the syntax check every round
        w.writerow(["Give me the apple", "(:goal (and (inhand banana0 human0)))"])
    out = tmp_path / "out"
    assert bench_plan.run(bench_args(data, out, f"replay:{replay}")) == 0
    rep = load(out)
    ok, bad = rep["cases"]
    assert ok["success"] and ok["minimal"] and ok["cost"] == 4 and ok["rounds"] == 1
    assert not bad["success"] and not bad["minimal"] and bad["cost"] is None
    assert bad["stop_reason"] == "bound_reached" and bad["rounds"] == 3   # the --max-rounds bound
    assert bad["goal"] is None and bad["feedback"] and bad["feedback"][0]["stage"] == "syntax"
    assert "goal not accepted" in bad["failure"]
    summary = (out / "summary.md").read_text()
    assert "Give me the apple" in summary and "goal not accepted" in summary


def test_replay_missing_task_and_bad_options(tmp_path: Path) -> None:
    data = make_data(tmp_path)
    replay = tmp_path / "answers.csv"
    replay.write_text("task,goal\nPut the cup on the table,(and (on cup0 table0))\n")
    out = tmp_path / "out"
    assert bench_plan.run(bench_args(data, out, f"replay:{replay}")) == 0
    missing = load(out)["cases"][1]
    assert not missing["success"] and "no answer" in missing["failure"]
    assert bench_plan.run(bench_args(data, tmp_path / "o2", "nonsense")) == 2
    assert bench_plan.run(bench_args(tmp_path / "nowhere", tmp_path / "o3", "oracle")) == 2


LOG = """Waiting for memory server 'Planning/Actor' ...
NEW CASE ------------------------------------------------------------------
You are the humanoid service robot HIDDEN_FOR_REVIEW assisting a human in a kitchen.
 The user asks "Put the cup on the table". Explain step by step how you concluded that this is the desired goal state.
Example: Bring me a banana -> (:goal and(inhand banana human))
The goal is (:goal (and (on cupp0 table0)))
Your previous answer contained the object cupp0, however this object does not exist in the scene. Please correct your answer
I apologize. (:goal (and (on cup0 table0)))
----------------------------Results:----------------------------------
Task: Put the cup on the table
Generated Plan:
move robot0 table0 counter0
grasp robot0 cup0 counter0 counter0
move robot0 counter0 table0
place robot0 cup0 table0 table0
; cost = 4.0 (union cost)
Generated Goal: (and (on  cup0 table0))
Desired Goal: (and (on  cup0 table0))
Goal Reached: True
Costs are: 4 -- minimal costs: 3
Costs minimal: False
Costs Rate: 0.75
----------------------------------------------------------------------------
NEW CASE ------------------------------------------------------------------
 The user asks "Give me the apple". Explain step by step how you concluded that this is the desired goal state.
Example: Bring me a banana -> (:goal and(inhand banana human))
(:goal (and (on apple0 human0)))
----------------------------Results:----------------------------------
Task: Give me the apple
Generated Plan:
; cost = 0.0 (union cost)
Generated Goal: (and (on  apple0 human0))
Desired Goal: (and (inhand  apple0 human0))
Goal Reached: False
Costs are: 0 -- minimal costs: 2
Costs minimal: False
Costs Rate: 0.0
----------------------------------------------------------------------------
NEW CASE ------------------------------------------------------------------
 The user asks "A later re-run". Explain step by step how you concluded that this is the desired goal state.
Example: Bring me a banana -> (:goal and(inhand banana human))
"""  # noqa: E501 - log lines as the paper logged them


def test_log_extraction(tmp_path: Path) -> None:
    cases = parse_planning_log(LOG)
    assert [c.task for c in cases] == ["Put the cup on the table", "Give me the apple", "A later re-run"]
    first, second, third = cases
    assert first.corrections == 1 and len(first.answers) == 2 and "cup0 table0" in first.answers[1]
    assert first.generated_goal == "(and (on  cup0 table0))" and first.reached is True
    assert (first.cost, first.min_cost, first.minimal) == (4.0, 3.0, False)
    assert len(first.plan) == 4
    assert second.reached is False and second.desired_goal == "(and (inhand  apple0 human0))"
    assert not third.completed
    log = tmp_path / "planning_gpt_4_on_simulation_simple_task.log"
    log.write_text(LOG)
    paper = read_log(log, limit=2)  # only the paper's runs
    assert {"cases": 2, "success": 1, "minimal": 0, "corrections": 1}.items() <= paper_summary(paper).items()
    rows = replay_rows("simple_task", paper)
    book = ReplayBook(rows)
    assert book.lookup("simple_task", "put the cup  on the table")["goal"] == "(and (on  cup0 table0))"
    assert book.lookup("simple_goal", "Put the cup on the table") is None


def test_replay_paper_from_synthetic_logs(tmp_path: Path) -> None:
    """`--llm replay:paper` reads the logs beside the data folder and compares with them."""
    data = make_data(tmp_path)
    logs = data.parent / "logs" / "planning"
    logs.mkdir(parents=True)
    (logs / "planning_gpt_4_on_simulation_simple_task.log").write_text(LOG)
    out = tmp_path / "out"
    assert bench_plan.run(bench_args(data, out, "replay:paper")) == 0
    rep = load(out)
    a, b = rep["cases"]
    assert a["success"] and a["minimal"]
    assert not b["success"]                       # (on apple0 human0) is rejected: human0 is no support
    assert rep["sets"]["simple_task"]["paper"]["success"] == 1
    assert "Paper log success" in (out / "summary.md").read_text()


def test_real_simple_task_oracle(shared_datasets: Path, tmp_path: Path) -> None:
    data = shared_datasets / "autogpt_p" / "autogpt_p" / "data"
    parser = argparse.ArgumentParser()
    bench_plan.configure(parser)
    args = parser.parse_args(["--data", str(data), "--set", "simple_task", "--llm", "oracle", "--limit", "8",
                              "--out", str(tmp_path / "real"), "--jobs", "1"])
    assert bench_plan.run(args) == 0
    rep = json.loads((tmp_path / "real" / "results.json").read_text())
    s = rep["sets"]["simple_task"]
    assert s["cases"] == 8 and s["success"] >= 7 and s["minimal"] >= 7, [c["failure"] for c in rep["cases"]]


def test_endpoint_mode_counts_correction_rounds(tmp_path: Path, monkeypatch) -> None:
    """`--llm endpoint` through the real openai client against the scripted fake server."""
    from affplan_ros.llm.fake_server import FakeChatServer

    data = make_data(tmp_path)
    answers = ["(:goal (and (on cupp0 table0)))",           # unknown object -> corrected
               "Sorry: (:goal (and (on cup0 table0)))",
               "(:goal (and (inhand apple0 human0)))"]
    with FakeChatServer(answers) as server:
        monkeypatch.setenv("AFFPLAN_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("AFFPLAN_LLM_MODEL", "fake")
        monkeypatch.setenv("AFFPLAN_LLM_API_KEY_ENV", "")
        out = tmp_path / "out"
        assert bench_plan.run(bench_args(data, out, "endpoint")) == 0
    a, b = load(out)["cases"]
    assert a["success"] and a["rounds"] == 2 and a["corrections"] == 1 and a["feedback"][0]["stage"] == "syntax"
    assert b["success"] and b["rounds"] == 1 and b["tokens"]["prompt"] > 0


def test_endpoint_mode_without_configuration(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("AFFPLAN_LLM_BASE_URL", raising=False)
    data = make_data(tmp_path)
    assert bench_plan.run(bench_args(data, tmp_path / "out", "endpoint")) == 2


def test_llm_planner_baseline_plans_are_judged_by_the_validator(tmp_path: Path, monkeypatch) -> None:
    """`--method llm-planner`: the LLM writes the plan; a right one succeeds (minimal), one that
    skips a precondition is rejected at that step; only an endpoint can write plans."""
    from affplan_ros.llm.fake_server import FakeChatServer

    data = make_data(tmp_path)
    answers = ["The cup is on the counter.\n1. (move robot0 table0 counter0)\n"
               "2. (grasp robot0 cup0 counter0 counter0)\n3. (move robot0 counter0 table0)\n"
               "4. (place robot0 cup0 table0 table0)\nPLAN END",
               "(handover robot0 human0 apple0)\nPLAN END"]                # never grasped the apple
    with FakeChatServer(answers) as server:
        monkeypatch.setenv("AFFPLAN_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("AFFPLAN_LLM_MODEL", "fake")
        monkeypatch.setenv("AFFPLAN_LLM_API_KEY_ENV", "")
        out = tmp_path / "out"
        assert bench_plan.run(bench_args(data, out, "endpoint", "--method", "llm-planner")) == 0
        prompt = server.chat_requests[0].last_user_text
    a, b = load(out)["cases"]
    assert a["success"] and a["minimal"] and a["cost"] == 4 and a["plan"][0] == "move robot0 table0 counter0"
    assert a["llm_calls"] == 1 and a["tokens"]["prompt"] > 0 and a["goal"] is None
    assert not b["success"] and b["plan_status"] == "invalid" and b["failure_kind"] == "plan_invalid"
    assert "step 1 (handover robot0 human0 apple0)" in b["failure"] and "precondition is false" in b["failure"]
    # the prompt shows the actions, the objects by the types they take, the state and the request
    assert "(:action grasp :parameters (?actor - actor ?object - carry" in prompt
    assert "carry: apple0 cup0" in prompt and "(on cup0 counter0)" in prompt and '"Put the cup on the table"' in prompt
    assert bench_plan.run(bench_args(data, tmp_path / "x", "oracle", "--method", "llm-planner")) == 2
