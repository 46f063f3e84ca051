"""Prompt templates (text files) and response parsing helpers."""
from __future__ import annotations

import pytest

from affplan_ros.core.goals.loop import GoalMode, GoalRequest
from affplan_ros.core.model.signature import Signature
from affplan_ros.llm.parsing import (
    extract_code_blocks,
    extract_json,
    parse_choice,
    strip_code_fences,
)
from affplan_ros.llm.prompting import (
    PROMPT_DIR,
    GoalPromptBuilder,
    PromptTemplateError,
    render_template,
)

SIG = Signature(
    predicates={"on": ("carry", "support"), "hand_occupied": ("actor",)},
    objects={"cup0": frozenset({"cup", "carry"}), "table0": frozenset({"table", "support"})},
    descriptions={"on": "Describes ?a1 being on top of the supporting ?a2"},
)


def test_templates_are_text_files() -> None:
    names = {p.name for p in PROMPT_DIR.glob("*.txt")}
    assert {"goal_system.txt", "goal_plan.txt", "goal_partial_plan.txt", "goal_correction.txt",
            "goal_examples.txt"} <= names


def test_plan_prompt_contents() -> None:
    req = GoalRequest("Put the cup on the table", SIG, scene_text="(on cup0 counter0)",
                      forbidden_predicates=("hand_occupied",))
    system, user = GoalPromptBuilder().initial_messages(req)
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    # The domain (predicates, rules, examples) is the system message: a stable prefix.
    assert "(on carry support)" in system["content"]
    assert "hand_occupied" not in system["content"] + text
    assert "(:goal ...)" in system["content"] and "Bring me a banana ->" in system["content"]
    other = GoalPromptBuilder().initial_messages(GoalRequest("Bring me the cup", SIG,
                                                             forbidden_predicates=("hand_occupied",)))
    assert other[0] == system
    # Objects by the types predicates take, the state, the request.
    assert "carry: cup0" in text and '"Put the cup on the table"' in text
    assert "(on cup0 counter0)" in text


def test_partial_prompt_states_bound() -> None:
    req = GoalRequest("Make tea", SIG, mode=GoalMode.PARTIAL_PLAN, max_predicates=3)
    text = GoalPromptBuilder(
        examples="Bring a cup -> (:goal (and (on cup0 table0)))").initial_messages(req)[1]["content"]
    system = GoalPromptBuilder(examples="Bring a cup -> (:goal (and (on cup0 table0)))").initial_messages(req)[0]
    assert "at most 3 predicates" in text and "may be missing" in text and "Bring a cup" in system["content"]
    with pytest.raises(PromptTemplateError):
        GoalPromptBuilder().initial_messages(GoalRequest("x", SIG, mode=GoalMode.PARTIAL_PLAN))


def test_correction_prompt_carries_error() -> None:
    msg = GoalPromptBuilder().correction_message(GoalRequest("x", SIG), "The object 'cupp' does not exist.")
    assert "The object 'cupp' does not exist." in msg and "(:goal" in msg


def test_template_errors(tmp_path) -> None:
    (tmp_path / "t.txt").write_text("Hello $name and $other")
    with pytest.raises(PromptTemplateError, match=r"\$other"):
        render_template("t", {"name": "x"}, tmp_path)
    with pytest.raises(PromptTemplateError, match="not found"):
        render_template("missing", {}, tmp_path)


def test_parsing_helpers() -> None:
    text = "Here:\n```json\n{\"tool\": \"plan\"}\n```\nand ```pddl\n(on a b)\n```"
    assert extract_code_blocks(text) == ['{"tool": "plan"}', "(on a b)"]
    assert extract_code_blocks(text, "pddl") == ["(on a b)"]
    assert strip_code_fences(text) == "(on a b)" and strip_code_fences(" plain ") == "plain"
    assert extract_json(text) == {"tool": "plan"}
    assert extract_json('I pick {"a": [1, 2]} finally') == {"a": [1, 2]}
    with pytest.raises(ValueError):
        extract_json("nothing")
    assert parse_choice("Maybe plan, but I choose partial_plan.", ["plan", "partial_plan", "explore"]) == "partial_plan"
    assert parse_choice("EXPLORE the kitchen", ["plan", "explore"]) == "explore"
    assert parse_choice("none of them", ["plan"]) is None
