"""`bench autogptp --llm replay:paper`: the paper's tool-selection logs read round by round, and
replayed through our loop."""
import json

import pytest
from _oracle import autogpt_dir

from affplan_ros.bench.replay_loop import parse_tool_log, selected_tools
from affplan_ros.bench.scripted import ScriptError, normalize_answers

# A case in the logs' layout (the texts are made up): a Suggest Alternative round, a Plan round
# with one correction, a FAILURE round the paper's loop followed with a Partial Plan, and a
# re-run appended after the first case.
LOG = """Waiting for memory server 'Planning/Actor' ...
--------------------------------------NEW CASE ----------------------------------------
You are an robotic assistant that tries to help the user to achieve his plan.
User-Request: I want a pear
Which tool would you use? End your answer with SELECTED TOOL:<TOOL> <PARAMETERS>.
End your answer with FAILURE if no tool is valid.
There is no pear.

SELECTED TOOL: SUGGEST_ALTERNATIVE pear
Out of the following affordances for a pear, which ones does the user need for the request "I want a pear"?
consumable: The object can be safely consumed by a human
 End your answer with listing the affordances as strings in a python list format
['consumable']
Q:Out of the following affordances for a pear, which ones does the user need?
A: ['consumable']
-----------------------------------------

Which of these objects can replace a pear for the affordance consumable the best. The object(s) are: apple
 Finish your answer by naming exactly one object with OBJECT:<object>
OBJECT:apple
Q:Which of these objects can replace a pear for the affordance consumable the best.
A: OBJECT:apple
-----------------------------------------

New Scene Memory:
Objects: apple0,human0
End your answer with FAILURE if no tool is valid.

The apple can be given.
SELECTED TOOL: PLAN I want an apple
You are the humanoid service robot HIDDEN_FOR_REVIEW assisting a human in a kitchen.
(:predicates (inhand ?o ?a))
 The user asks "I want an apple". Explain step by step how you concluded that this is the desired goal state.
Example: Bring me a banana -> (goal: and(inhand banana human))
The apple goes to the human.
(:goal (and (inhand apple human0)))
Your previous answer contained the object apple, however this object does not exist. Please correct your answer
(:goal (and (inhand apple0 human0)))
New Scene Memory:
End your answer with FAILURE if no tool is valid.

Nothing else can be done. FAILURE
You are the humanoid service robot HIDDEN_FOR_REVIEW assisting a human. If an object does not exist ignore it.
 The user(human) asks: "I want an apple". Explain step by step how you concluded that this is the desired goal state.
(:goal (and (inhand apple0 human0)))
---------------------------------------Results:---------------------------------------------
Goal Reached: True
Used tools SUGGEST_ALTERNATIVE, PLAN, INCOMPLETE_PLAN
--------------------------------------NEW CASE ----------------------------------------
You are an robotic assistant that tries to help the user to achieve his plan.
End your answer with FAILURE if no tool is valid.
SELECTED TOOL: PLAN a later re-run
"""


def test_a_log_case_becomes_rounds_of_answers():
    cases = parse_tool_log(LOG, limit=1)
    assert len(cases) == 1 and len(parse_tool_log(LOG)) == 2
    rounds = cases[0]
    assert selected_tools(rounds) == ["SUGGEST_ALTERNATIVE", "PLAN", "FAILURE"]
    alt, plan, failure = rounds
    assert alt["tool"].endswith("SELECTED TOOL: SUGGEST_ALTERNATIVE pear") and alt["goal"] == []
    assert alt["affordances"] == ["['consumable']"] and alt["object"] == ["OBJECT:apple"]
    # the goal before the correction and the corrected one; the prompt's example line is not an answer
    assert plan["goal"] == ["The apple goes to the human.\n(:goal (and (inhand apple human0)))",
                            "(:goal (and (inhand apple0 human0)))"]
    # the Partial Plan the paper's loop ran after FAILURE answers in the FAILURE round
    assert failure["tool"] == "Nothing else can be done. FAILURE"
    assert failure["goal"] == ["(:goal (and (inhand apple0 human0)))"]
    # as a script: each round keeps its own answers
    script = normalize_answers({"rounds": rounds})
    assert [r["tool"] for r in script["rounds"]] == [r["tool"] for r in rounds]
    with pytest.raises(ScriptError):
        normalize_answers({"rounds": [{"goal": ["no tool answer"]}]})


def test_the_papers_logs_replayed_through_our_loop(tmp_path):
    from affplan_ros.cli import main

    autogpt_dir()
    # plan#0: one Plan round; partial#18: FAILURE, then the fallback Partial Plan;
    # alternative#1: an alternative, then Plan; plan#18: the paper's planner failed on GPT-4's
    # negated goal where ours empties the bottle into the sink (docs/benchmarks.md).
    ids = ["plan#0", "partial#18", "alternative#1", "plan#18"]
    rc = main(["bench", "autogptp", "--llm", "replay:paper", "--jobs", "1", "--out", str(tmp_path),
               *[a for i in ids for a in ("--case", i)]])
    assert rc == 0
    cases = {c["id"]: c for c in json.loads((tmp_path / "results.json").read_text())["cases"]}
    for cid in ids[:3]:
        assert cases[cid]["success"] == cases[cid]["paper"]["reached"] is True, cases[cid]["failure"]
    # partial#18: our loop refuses GPT-4's SUGGEST_ALTERNATIVE plate0 (a plate is there) and asks
    # again; the log's next answer, FAILURE, brings the fallback Partial Plan, as in the paper
    first, second = cases["partial#18"]["loop"]["rounds"][:2]
    assert not first["valid"] and "no alternative is needed" in first["error"]
    assert second["tool"] == "PARTIAL_PLAN" and second["fallback"]
    assert cases["plan#18"]["success"] and cases["plan#18"]["paper"]["reached"] is False


def test_replay_without_the_logs_or_where_there_is_none_is_a_clear_error(tmp_path, capsys):
    from affplan_ros.cli import main

    autogpt_dir()
    assert main(["bench", "autogptp", "--llm", "replay:paper", "--logs", str(tmp_path / "none"),
                 "--set", "plan", "--out", str(tmp_path / "out")]) == 2
    assert "no log" in capsys.readouterr().err
    # Suggest Alternative on its own has no recorded rounds to replay
    assert main(["bench", "alternative", "--llm", "replay:paper", "--out", str(tmp_path / "alt")]) == 2
    assert "use scripted:FILE" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "alt").exists()
