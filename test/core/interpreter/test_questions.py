"""Questions about what the robot knows: parsed by the interpreter's grammar, answered from memory
(nothing is planned or moved), and through the tool loop as its ANSWER tool."""
from __future__ import annotations

import pytest
from _kitchen import OAM, kitchen_scene

from affplan_ros.core.interpreter.interpreter import Interpreter
from affplan_ros.core.interpreter.questions import QuestionKind, answer
from affplan_ros.core.interpreter.world import World
from affplan_ros.core.model.records import PlanRecord

INTERPRETER = Interpreter()


@pytest.fixture
def memory():
    from affplan_ros.sim.executor import SimulatedExecutor

    return SimulatedExecutor(kitchen_scene(), oam=OAM).initial_memory(["table0", "counter0"])


def ask(text: str, memory) -> tuple[QuestionKind, str]:
    res = INTERPRETER.interpret(text, World.from_memory(memory, oam=OAM), partial=True)
    assert res.kind == "question" and res.question is not None and res.goal is None, res.reason
    return res.question.kind, answer(res.question, memory, OAM)


@pytest.mark.parametrize("text, kind, said", [
    ("What is on the table?", QuestionKind.CONTENTS, "banana0, board0, cup0 and orange0 are on table0."),
    ("what do you see on the counter", QuestionKind.CONTENTS, "apple0 and knife0 are on counter0."),
    # Not looked at yet: never "nothing".
    ("What is in the fridge?", QuestionKind.CONTENTS, "I have not looked in refrigerator0 yet."),
    ("Where is the cup?", QuestionKind.WHERE, "cup0 is on table0 (I have not looked at refrigerator0 yet)."),
    ("where's the milk", QuestionKind.WHERE, "I have not seen any milk (I have not looked at refrigerator0 yet)."),
    ("How many apples are there?", QuestionKind.COUNT, "I know of 1 apple: apple0 (I have not looked at "
                                                       "refrigerator0 yet)."),
    ("how many things are on the table", QuestionKind.COUNT,
     "I know of 4 things on the table: banana0, board0, cup0 and orange0 (I have not looked at refrigerator0 yet)."),
    ("What can I cut with?", QuestionKind.TOOLS, "knife0 is there to cut with (I have not looked at "
                                                 "refrigerator0 yet)."),
    ("What did you just do?", QuestionKind.DID, "I have not done anything yet."),
    ("Why did that fail?", QuestionKind.WHY, "Nothing has failed: I have not carried out a plan yet."),
])
def test_a_question_is_answered_from_memory(memory, text, kind, said):
    assert ask(text, memory) == (kind, said)


def test_after_exploring_the_fridge_its_contents_are_said(memory):
    from affplan_ros.sim.executor import SimulatedExecutor

    full = SimulatedExecutor(kitchen_scene(), oam=OAM).initial_memory("all")
    assert ask("what is in the fridge", full)[1] == "milk0 is in refrigerator0."
    assert ask("how many cups are on the table", full)[1] == "I know of 1 cup on the table: cup0."


def test_what_was_done_and_why_it_failed_come_from_the_last_plan(memory):
    memory.last_plan = PlanRecord("PLAN", "bring me the milk", "(inhand milk0 human0)",
                                  ["move robot0 table0 refrigerator0", "open robot0 refrigerator0 refrigerator0"],
                                  executed=True, success=False, message="open failed: the door is stuck")
    assert ask("what did you do", memory)[1] == ('For "bring me the milk" I carried out move robot0 table0 '
                                                 'refrigerator0; open robot0 refrigerator0 refrigerator0; it failed: '
                                                 'open failed: the door is stuck.')
    assert ask("what went wrong?", memory)[1] == '"bring me the milk" failed: open failed: the door is stuck.'


def test_the_tool_loop_answers_a_question_without_planning_or_moving(memory):
    from affplan_ros.core.agent.tool_loop import TaskStop
    from affplan_ros.llm.backends import make_backend
    from affplan_ros.llm.loop_factory import make_tool_loop
    from affplan_ros.sim.executor import SimulatedExecutor

    executor = SimulatedExecutor(kitchen_scene(), oam=OAM)
    loop = make_tool_loop(make_backend(oam=OAM, environ={}).model, executor, oam=OAM, max_rounds=3)
    res = loop.run("Where is the apple?", memory)
    assert res.stop_reason is TaskStop.ANSWERED and res.success and res.tools == ["ANSWER"]
    assert res.answer == res.message == "apple0 is on counter0 (I have not looked at refrigerator0 yet)."
    assert not executor.executed and res.final_plan == []


def test_an_endpoint_answer_keeps_its_words():
    from affplan_ros.core.agent.tool_loop import Tool, ToolAnswerError, parse_tool_answer

    call = parse_tool_answer('The memory lists it.\nSELECTED TOOL: ANSWER The "cup0" is on table0\n[seen at 10:02]')
    assert call.tool is Tool.ANSWER and call.argument == 'The "cup0" is on table0 [seen at 10:02]'
    with pytest.raises(ToolAnswerError, match="ANSWER needs the reply"):
        parse_tool_answer("SELECTED TOOL: ANSWER")
