"""Prompt templates of the AutoGPT+P loop and the kind of question each one asks."""
from __future__ import annotations

from affplan_ros.core.agent.tool_loop import ToolPromptView
from affplan_ros.core.goals.loop import GoalMode, GoalRequest
from affplan_ros.core.model.signature import Signature
from affplan_ros.llm.prompting import GoalPromptBuilder
from affplan_ros.llm.tool_prompting import (
    PROMPT_KINDS,
    AlternativePromptBuilder,
    ToolPromptBuilder,
    _openings,
    prompt_kind,
)

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
        "affordances": [alts.affordances_question("apple", "I want an apple",
                                                  [("grasp", "can be held"), ("carry", "")])],
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


def test_earlier_answers_go_back_compacted_to_what_the_loops_read() -> None:
    from affplan_ros.llm.conversation import compact_history

    tools, alts, goals = ToolPromptBuilder(), AlternativePromptBuilder(), GoalPromptBuilder()
    sig = Signature({"on": ("carry", "support")}, {"cup0": frozenset({"carry", "object"})})
    conversation = [
        *goals.initial_messages(GoalRequest("t", sig)),
        {"role": "assistant", "content": "The cup goes on the table, so:\n```\n(:goal (and (on cup0 table0)))\n```"},
        {"role": "user", "content": goals.correction_message(GoalRequest("t", sig), "unknown object table0")},
        {"role": "assistant", "content": "I cannot tell."},                        # no goal: kept as is
        {"role": "user", "content": tools.invalid_message("no tool", VIEW)},
        {"role": "assistant",
         "content": "The apple is missing (maybe on the counter).\nSELECTED TOOL: EXPLORE counter0"},
        {"role": "user", "content": alts.affordances_question("apple", "eat", [("grasp", ""), ("consumable", "")])},
        {"role": "assistant", "content": "To eat it, ['consumable'] would do; ['grasp', 'consumable'] is safer."},
        {"role": "user", "content": alts.choose_question("apple", "consumable", ["banana", "pear"])},
        {"role": "assistant", "content": "A banana is closest.\nOBJECT: banana"},
        {"role": "user", "content": "Can a typical cup be grasped?"},              # not one of our templates
        {"role": "assistant", "content": "Yes, it can (with one hand)."},
    ]
    sent = compact_history(conversation)
    assert [m["content"] for m in sent if m["role"] == "assistant"] == [
        "(:goal (and (on cup0 table0)))", "I cannot tell.", "SELECTED TOOL: EXPLORE counter0",
        "['grasp', 'consumable']", "OBJECT: banana", "Yes, it can (with one hand)."]
    assert [m for m in sent if m["role"] != "assistant"] == [m for m in conversation if m["role"] != "assistant"]


def test_tool_prompts_show_what_a_tool_choice_reads_and_later_rounds_only_what_changed() -> None:
    from _kitchen import OAM, kitchen_scene

    from affplan_ros.sim.executor import SimulatedExecutor

    memory = SimulatedExecutor(kitchen_scene(), oam=OAM).initial_memory("table0")
    tools = ToolPromptBuilder()
    view = ToolPromptView("Put the mug on the board", memory.render(), (), "", memory)
    system, first = (m["content"] for m in tools.initial_messages(view))
    assert "Known objects: banana0 board0 cup0 orange0 table0" in first     # not the agents
    assert "Unexplored locations: counter0, refrigerator0" in first
    assert "About the named objects: on board0 table0, on cup0 table0" in first     # "mug": a synonym
    assert "banana0 table0" not in first and "Previous requests" not in first
    later = tools.update_message(ToolPromptView(view.request, "", (), "Explored counter0: found apple0", memory))
    assert later.splitlines() == ["Result of the last tool: Explored counter0: found apple0",
                                  "Unexplored locations: counter0, refrigerator0",
                                  "About the named objects: on board0 table0, on cup0 table0",
                                  "Which tool is next?"]
    assert tools.initial_messages(ToolPromptView("Give me something", "", ("Open it",), "", memory))[0]["content"] \
        == system                                                           # a stable prefix to cache
