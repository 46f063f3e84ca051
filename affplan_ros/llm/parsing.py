"""Parsing of free LLM answers: code blocks, JSON objects, choices, goals.

Everything here only *reads* text; nothing the LLM writes is executed (design rule).
Goal extraction lives in :mod:`affplan_ros.core.goals.formula` (the checks need it without
the LLM layer), the parsing of tool choices and of Suggest Alternative answers in
``core.tool_selection`` and ``core.alternatives`` (the loop validates them against its
memory); all are re-exported here for callers that only see ``llm``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from affplan_ros.core.agent.alternatives import (  # re-exported
    parse_affordance_list,
    parse_object_answer,
)
from affplan_ros.core.agent.tool_loop import (  # re-exported
    ToolAnswerError,
    parse_tool_answer,
)
from affplan_ros.core.goals.errors import GoalError  # re-exported
from affplan_ros.core.goals.extraction import extract_goal_text, parse_goal  # re-exported

__all__ = [
    "GoalError",
    "ToolAnswerError",
    "extract_code_blocks",
    "extract_goal_text",
    "extract_json",
    "parse_choice",
    "parse_affordance_list",
    "parse_goal",
    "parse_object_answer",
    "parse_tool_answer",
    "strip_code_fences",
]

_FENCE_RE = re.compile(r"```([^\n`]*)\n(.*?)```", re.DOTALL)


def extract_code_blocks(text: str, language: str | None = None) -> list[str]:
    """Bodies of markdown code blocks, optionally only those tagged ``language``."""
    out = []
    for m in _FENCE_RE.finditer(text or ""):
        tag = m.group(1).strip().lower()
        if language is None or tag == language.lower():
            out.append(m.group(2).strip())
    return out


def strip_code_fences(text: str) -> str:
    """The body of the last code block, or the text itself when there is none."""
    blocks = extract_code_blocks(text)
    return blocks[-1] if blocks else (text or "").strip()


def extract_json(text: str) -> Any:
    """The last JSON object/array in the text (fenced or inline); ValueError if none."""
    candidates = extract_code_blocks(text) + [text or ""]
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for cand in candidates:
        i = 0
        while i < len(cand):
            if cand[i] in "{[":
                try:
                    obj, end = decoder.raw_decode(cand[i:])
                except json.JSONDecodeError:
                    i += 1
                    continue
                found.append(obj)  # outermost values only: skip what it contains
                i += end
            else:
                i += 1
        if found:
            return found[-1]
    raise ValueError("no JSON object found in the answer")


def parse_choice(text: str, options: Iterable[str]) -> str | None:
    """The option named last in the answer (final answers follow the reasoning), or None.

    Matching is case-insensitive on whole words; longer options win over their
    prefixes (``plan_partial`` over ``plan``).
    """
    opts: Sequence[str] = sorted(set(options), key=len, reverse=True)
    if not opts or not text:
        return None
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(o) for o in opts) + r")(?![\w-])", re.IGNORECASE)
    matches = pattern.findall(text)
    if not matches:
        return None
    low = {o.lower(): o for o in opts}
    return low[matches[-1].lower()]
