"""Prompts of the AutoGPT+P loop from the template files: tool selection and alternatives.

Implements the prompter protocols of ``core.tool_selection`` and ``core.alternatives``.
:func:`prompt_kind` tells which template a user message was rendered from (by the
template's fixed opening words), so a scripted LLM can answer each kind of question from
its own list of answers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from ..core.goal_loop import Message
from ..core.tool_selection import ToolPromptView
from .prompting import PROMPT_DIR, render_template, template_openings


@dataclass
class ToolPromptBuilder:
    """Implements :class:`affplan_ros.core.tool_selection.ToolPrompter`."""

    directory: Optional[Path] = None

    def _values(self, view: ToolPromptView) -> dict:
        previous = ", ".join(f'"{p}"' for p in view.previous_requests) or "(none)"
        return {"memory": lean_memory(view), "request": view.request, "previous": previous,
                "result": view.last_result or "(none)"}

    def initial_messages(self, view: ToolPromptView) -> list[Message]:
        system = render_template("tool_system", {}, self.directory).strip()
        user = render_template("tool_select", self._values(view), self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def update_message(self, view: ToolPromptView) -> str:
        return render_template("tool_update", self._values(view), self.directory).strip()

    def invalid_message(self, error: str, view: ToolPromptView) -> str:
        return render_template("tool_invalid", {"error": error.strip()}, self.directory).strip()


_WORD = re.compile(r"[a-z0-9]+")


def lean_memory(view: ToolPromptView) -> str:
    """The memory text with only the relations of objects the request names (all of them when it
    names none): which objects exist and which places are unexplored is what a tool choice
    needs; where every other object stands is not."""
    memory = view.memory
    if memory is None:
        return view.memory_text
    words = set(_WORD.findall(view.request.lower().replace("_", " ")))
    words |= {w[:-1] for w in words if w.endswith("s")}
    named = {n for n, o in memory.objects.items()
             if set(o.class_name.split("_")) <= words or o.class_name.replace("_", "") in words}
    if not named:
        return view.memory_text
    keep = [r for r in memory.relations if r.args and (r.args[0] in named or r.args[0] in memory.agents)]
    text = " ".join(r.predicate + " " + " ".join(r.args) for r in keep) or "(none)"
    return "\n".join(f"Relations of the named objects: {text}" if line.startswith("Relations:") else line
                     for line in view.memory_text.splitlines())


@dataclass
class AlternativePromptBuilder:
    """Implements :class:`affplan_ros.core.alternatives.AlternativePrompter`."""

    directory: Optional[Path] = None

    def system(self) -> str:
        return render_template("alternative_system", {}, self.directory).strip()

    def affordances_question(self, missing: str, task: str, affordances: Sequence[tuple[str, str]]) -> str:
        listed = ", ".join(a for a, _ in affordances)  # the names say enough (descriptions doubled it)
        return render_template("alternative_affordances", {"missing": missing, "task": task,
                                                           "affordances": listed}, self.directory).strip()

    def choose_question(self, missing: str, affordance: str, candidates: Sequence[str]) -> str:
        return render_template("alternative_choose", {"missing": missing, "affordance": affordance,
                                                      "candidates": ", ".join(candidates)}, self.directory).strip()

    def correction(self, answer: str, candidates: Sequence[str]) -> str:
        return render_template("alternative_correction", {"answer": answer, "candidates": ", ".join(candidates)},
                               self.directory).strip()

    def direct_question(self, missing: str, task: str, objects: Sequence[str]) -> str:
        return render_template("alternative_direct", {"missing": missing, "task": task,
                                                      "objects": ", ".join(objects)}, self.directory).strip()


# Which kind of question each template asks (what a scripted answer list is keyed by).
PROMPT_KINDS = {
    "tool_select": "tool", "tool_update": "tool", "tool_invalid": "tool",
    "goal_plan": "goal", "goal_partial_plan": "goal", "goal_correction": "goal",
    "alternative_affordances": "affordances",
    "alternative_choose": "object", "alternative_correction": "object", "alternative_direct": "object",
}


@lru_cache(maxsize=4)
def _openings(directory: Optional[Path] = None) -> tuple[tuple[str, str], ...]:
    """(fixed opening text, kind) per template, longest first."""
    return template_openings(PROMPT_KINDS.items(), directory)


def prompt_kind(text: str, directory: Optional[Path] = None) -> Optional[str]:
    """The kind of question a user message asks (``tool``, ``goal``, ``affordances``,
    ``object``), or None when no template opens it."""
    text = (text or "").lstrip()
    for opening, kind in _openings(directory or PROMPT_DIR):
        if opening and text.startswith(opening):
            return kind
    return None
