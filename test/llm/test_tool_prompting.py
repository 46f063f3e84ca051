"""Prompt templates of the AutoGPT+P loop and the kind of question each one asks."""
from __future__ import annotations

from affplan_ros.core.goal_loop import GoalMode, GoalRequest
from affplan_ros.core.signature import Signature
from affplan_ros.core.tool_selection import ToolPromptView
from affplan_ros.llm.prompting import GoalPromptBuilder
from affplan_ros.llm.tool_prompting import PROMPT_KINDS, AlternativePromptBuilder, ToolPromptBuilder, _openings, prompt_kind

VIEW = ToolPromptView("Give me the apple", "Objects: cup0\nUnexplored locations: counter0", ("Open the door",),
                      "Explored counter0: found apple0")


def test_every_rendered_prompt_has_its_kind_and_no_placeholder_left() -> None:
    tools, alts = ToolPromptBuilder(), AlternativePromptBuilder()
    sig = Signature({"on": ("carry", "support")}, {"cup0": frozenset({"carry", "object"})})
    goals = GoalPromptBuilder()
    rendered = {
        "tool": [tools.initial_messages(VIEW)[1]["content"], tools.update_message(VIEW),
                 tools.invalid_message("'X' is not a tool.", VIEW)],
        "goal": [goals.initial_messages(GoalRequest("t", sig))[1]["content"],
                 goals.initial_messages(GoalRequest("t", sig, GoalMode.PARTIAL_PLAN, 3))[1]["content"],
                 goals.correction_message(GoalRequest("t", sig), "unknown object")],
        "affordances": [alts.affordances_question("apple", "I want an apple", [("grasp", "can be held"), ("carry", "")])],
        "object": [alts.choose_question("apple", "consumable", ["banana", "orange"]),
                   alts.correction("pear", ["banana"]), alts.direct_question("apple", "I want an apple", ["banana"])],
    }
    for kind, texts in rendered.items():
        for text in texts:
            assert prompt_kind(text) == kind, text[:60]
            assert "$" not in text
    assert prompt_kind("Hello, who are you?") is None and prompt_kind("") is None
    first = rendered["tool"][0]
    assert 'Request: "Give me the apple"' in first and '"Open the door"' in first
    assert "Unexplored locations: counter0" in first
    assert "SELECTED TOOL: <TOOL> <PARAMETER>" in tools.initial_messages(VIEW)[0]["content"]
    assert "grasp, carry" in rendered["affordances"][0]
    assert "banana, orange" in rendered["object"][0]


def test_template_openings_are_distinct() -> None:
    openings = _openings(None)
    assert len(openings) == len(PROMPT_KINDS)
    for text, kind in openings:
        assert len(text) >= 15, f"{kind} template opens with too little fixed text: {text!r}"
        clash = [k for t, k in openings if t != text and t.startswith(text) and k != kind]
        assert not clash, f"{text!r} ({kind}) also opens a {clash} template"
