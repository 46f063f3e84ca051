"""`affplan bench tokens`: the paper's logs are read as the paper sent them, ours as our client sends them."""
from __future__ import annotations

import json

from affplan_ros.bench import tokens
from affplan_ros.cli import build_parser


def test_alternative_log_cases_pair_each_question_with_its_answer() -> None:
    log = "\n".join([
        "Q:Out of the following affordances for a apple, which ones ...? The affordances are:", "grasp: held",
        " End your answer with ...", "A: I think:", "['grasp']", "-" * 41, "",
        "Q:Out of the following affordances for a apple, which ones ...? The affordances are:", "grasp: held",
        " End your answer with ...", "A: I think:", "['grasp']", "-" * 41, "",        # logged twice: once
        "Q:Which of these objects can replace a apple for the affordance grasp the best. The object(s) are: a,b ",
        "A: OBJECT:b", "-" * 41, "", "Missing: apple - Substitution: b - Desired: ['b']",
        "Q:Which of these objects can replace a pear the best for the following task stated by the user.",
        "I want a pear", "The object(s) are: plum ", "A: OBJECT:plum", "Missing: pear - Substitution: plum"])
    cases = tokens._qa_blocks(log)
    assert [[(q.split()[0], a) for q, a in c] for c in cases] == [
        [("Out", "I think:\n['grasp']"), ("Which", "OBJECT:b")], [("Which", "OBJECT:plum")]]


def test_every_goal_prompt_of_a_case_is_found() -> None:
    lines = ["You are an robotic assistant", "SELECTED TOOL: INCOMPLETE_PLAN",
             "You are the humanoid service robot ... formulate a partial goal ...", "(:objects", "a0 - a", ")",
             'The user(human) asks: "Put a".', "(:goal (on a0 b0))", "Your previous answer ...",
             "You are the humanoid service robot ...", 'The user(human) asks: "Put b".', "(:goal (on b0 a0))",
             "SELECTED TOOL: PLAN"]
    found = tokens._prompts_in(lines, "You are the humanoid service robot", "The user(human) asks:")
    assert [(p.splitlines()[-1], a.splitlines()[0]) for p, a in found] == [
        ('The user(human) asks: "Put a".', "(:goal (on a0 b0))"),
        ('The user(human) asks: "Put b".', "(:goal (on b0 a0))")]


def test_bench_tokens_on_the_original_logs(shared_datasets, tmp_path, capsys) -> None:
    args = build_parser().parse_args(["bench", "tokens", "--limit", "4", "--out", str(tmp_path)])
    assert args.func(args) == 0
    report = json.loads((tmp_path / "results.json").read_text())
    assert set(report["kinds"]) == set(tokens.KINDS), report["notes"]
    partial = [r["case"] for r in report["cases"] if r["kind"] == "partial_goal"]
    assert len(partial) >= 4 and len({c.split("#")[0] for c in partial}) > 1   # Partial Plan prompts of all sets
    rows = {r["case"]: r for r in report["cases"] if r["kind"] == "alternative"}
    # the choice of a candidate is asked in the conversation of the affordance question
    assert any(r["ours_prompt"] > rows[c.rsplit(".", 1)[0] + ".0"]["ours_prompt"] for c, r in rows.items()
               if not c.endswith(".0") and c.rsplit(".", 1)[0] + ".0" in rows)
    assert (tmp_path / "summary.md").read_text().count("|") > 20 and (tmp_path / "tokens_bench.png").stat().st_size
