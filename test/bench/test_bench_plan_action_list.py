"""`affplan bench plan --method llm-action-list`: the LLM writes the action list, Fast Downward fills
the gaps to unmet preconditions and completes the plan; through the real openai client against the
fake OpenAI-compatible server, on a tiny synthetic data folder."""
from __future__ import annotations

from pathlib import Path

import pytest
import up_fast_downward  # noqa: F401 - required: a broken install fails here, it never skips
from test_bench_plan import OAM, SCENE, bench_args, load, make_data

from affplan_ros.bench import plan as bench_plan
from affplan_ros.llm.fake_server import FakeChatServer

# the tiny scene plus a plate on the table, beside the apple
PLATE_SCENE = (SCENE.replace("cup:0\nEND-OBJECTS", "cup:0\nplate:0\nEND-OBJECTS")
               .replace("on cup:0 counter:0\n", "on cup:0 counter:0\non plate:0 table:0\n")
               .replace("table0 table:0 apple:0", "table0 table:0 apple:0 plate:0"))
PLATE_OAM = OAM + "  plate: [grasp, carry, support]\n"
CASES = [("Put the apple on the plate", "and (on apple0 plate0)", 2),     # grasp, place
         ("Put the cup on the table", "and (on cup0 table0)", 4),        # move, grasp, move, place
         ("Give me the apple", "and (inhand apple0 human0)", 3)]         # grasp, move to the human, handover
ANSWERS = ["(place robot0 apple0 plate0 table0)\nPLAN END",               # never grasped the apple
           "1. (move robot0 table0 counter0)\n2. (grasp robot0 mug0 counter0 counter0)\n"   # no mug0 here
           "3. (grasp robot0 cup0 counter0 counter0)\n4. (move robot0 counter0 table0)\n"
           "5. (place robot0 cup0 table0 table0)\nPLAN END",
           "I am sorry, I cannot help with that."]                         # no action at all


def endpoint_env(monkeypatch, server) -> None:
    monkeypatch.setenv("AFFPLAN_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("AFFPLAN_LLM_MODEL", "fake")
    monkeypatch.setenv("AFFPLAN_LLM_API_KEY_ENV", "")


def test_llm_action_list_gaps_skips_and_completion(tmp_path: Path, monkeypatch) -> None:
    """(a) a place without the grasp gets the grasp inserted by the planner and succeeds minimally;
    (b) an action with an unknown object is skipped with the reason, the rest is kept; (c) an answer
    without an action: the planner completes the plan to the desired goal, the case says the
    completion was needed and counts as failed (the completion planned for the desired goal, which
    the method never sees), its completed plan validated and counted as reached with completion."""
    data = make_data(tmp_path, PLATE_SCENE, CASES, PLATE_OAM)
    with FakeChatServer(ANSWERS) as server:
        endpoint_env(monkeypatch, server)
        out = tmp_path / "out"
        assert bench_plan.run(bench_args(data, out, "endpoint", "--method", "llm-action-list")) == 0
        assert len(server.chat_requests) == 3
        prompt = server.chat_requests[0].last_user_text
    assert "(:action grasp :parameters (?actor - actor ?object - carry" in prompt   # the llm-planner's prompt
    report = load(out)
    a, b, c = report["cases"]

    al = a["action_list"]
    assert a["success"] and a["minimal"] and a["cost"] == 2 and a["plan_status"] == "valid"
    assert a["plan"] == ["grasp robot0 apple0 table0 table0", "place robot0 apple0 plate0 table0"]
    assert (al["kept"], al["skipped"], al["inserted"], al["inserted_gaps"], al["gaps"]) == (1, 0, 1, 1, 1)
    assert not al["completion_needed"] and al["actions"][0]["inserted"] == ["grasp robot0 apple0 table0 table0"]
    assert a["llm_calls"] == 1 and a["tokens"]["prompt"] > 0 and a["failure"] is None

    al = b["action_list"]
    assert b["success"] and b["minimal"] and b["cost"] == 4
    assert (al["kept"], al["skipped"], al["inserted"], al["completion_needed"]) == (4, 1, 0, False)
    skipped = al["actions"][1]
    assert not skipped["kept"] and skipped["step"] == "grasp robot0 mug0 counter0 counter0"
    assert skipped["reason"] == "not an action of the domain: unknown object mug0"

    al = c["action_list"]
    assert not c["success"] and not c["minimal"] and c["failure_kind"] == "completed"
    assert al["no_action_in_answer"] and al["listed"] == 0 and al["completion_needed"]
    assert al["reached_with_completion"] and al["inserted_completion"] == 3 and al["inserted"] == 3
    assert c["plan_status"] == "valid" and c["cost"] == 3 and c["plan"][-1] == "handover robot0 human0 apple0"
    assert "the planner's completion did with 3 action(s)" in c["failure"]

    s = report["sets"]["simple_task"]["action_list"]
    assert (s["success"], s["reached_with_completion"], s["completion_needed"]) == (2, 1, 1)
    assert (s["kept"], s["skipped"], s["inserted"], s["llm_calls"]) == (5, 1, 4, 3)
    assert s["length_vs_min"] == {"equal": 3, "above": 0, "below": 0}
    summary = (out / "summary.md").read_text()
    assert "`--method llm-action-list`" in summary and "| simple_task | 3 | 2/3" in summary
    assert "simple_task#1 action 2 `(grasp robot0 mug0 counter0 counter0)`: not an action of the domain: " \
           "unknown object mug0" in summary
    assert "| simple_task#0 | yes | not needed | 2, 2 (2) | 1 / 0 | 1 (1 / 0) |" in summary
    assert "| simple_task#2 | no | reached the goal | 3, 3 (3) | 0 / 0 | 3 (0 / 3) |" in summary


def test_llm_action_list_needs_an_endpoint(tmp_path: Path, capsys) -> None:
    """(d) like llm-planner: only an endpoint writes actions; a clear setup error otherwise."""
    data = make_data(tmp_path)
    assert bench_plan.run(bench_args(data, tmp_path / "x", "oracle", "--method", "llm-action-list")) == 2
    err = capsys.readouterr().err
    assert "--method llm-action-list: the LLM writes the actions itself, so it needs --llm endpoint (not oracle)" in err


@pytest.mark.parametrize("option", [("--max-gaps", "-1"), ("--gap-time-limit", "0")])
def test_llm_action_list_bounds_must_be_sensible(tmp_path: Path, capsys, option) -> None:
    data = make_data(tmp_path)
    assert bench_plan.run(bench_args(data, tmp_path / "x", "oracle", *option)) == 2
    assert "--max-gaps must be >= 0 and --gap-time-limit > 0" in capsys.readouterr().err
