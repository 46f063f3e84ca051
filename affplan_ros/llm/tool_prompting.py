"""Prompts of the AutoGPT+P loop from the template files: tool selection and alternatives.

Implements the prompter protocols of ``core.tool_selection`` and ``core.alternatives``.
:func:`prompt_kind` tells which template a user message was rendered from (by the
template's fixed opening words), so a scripted LLM can answer each kind of question from
its own list of answers.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from affplan_ros.core.agent.tool_loop import ToolPromptView
from affplan_ros.core.goals.loop import Message
from affplan_ros.llm.focus import (
    PROMPT_LOCATIONS,
    TOOL_PER_CLASS,
    TOOL_PER_PLACE,
    Focus,
    natural_key,
    recent_requests,
    request_focus,
)
from affplan_ros.llm.prompting import (
    PROMPT_DIR,
    named_classes,
    render_template,
    template_openings,
)


@dataclass
class ToolPromptBuilder:
    """Implements :class:`affplan_ros.core.agent.tool_loop.ToolPrompter`.

    The system message (role, tools, answer format) is the same for every request, so endpoints
    can cache it; the first question shows the lean memory (:func:`lean_memory`); a next round
    shows only the last tool's result and what a tool choice reads from the memory that may have
    changed (unexplored locations, the named objects' relations, the alternatives) - the
    conversation already holds the rest, and the instructions are not repeated."""

    directory: Optional[Path] = None

    def initial_messages(self, view: ToolPromptView) -> list[Message]:
        previous = previous_text(view)
        system = render_template("tool_system", {}, self.directory).strip()
        user = render_template("tool_select", {"memory": lean_memory(view), "request": view.request,
                                               "previous": f"{previous}\n" if previous else ""},
                               self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def update_message(self, view: ToolPromptView) -> str:
        changes = lean_memory(view, only=("Unexplored locations", "About the named objects", "Accepted alternatives",
                                            "Rejected alternatives"))
        return render_template("tool_update", {"result": view.last_result or "(none)", "changes": changes},
                               self.directory).strip()

    def invalid_message(self, error: str, view: ToolPromptView) -> str:
        return render_template("tool_invalid", {"error": error.strip()}, self.directory).strip()


def memory_focus(view: ToolPromptView) -> Focus:
    """What of a large memory the tool prompt lists (:mod:`affplan_ros.llm.focus`)."""
    memory = view.memory
    return request_focus(view.request, {n: o.class_name for n, o in memory.objects.items()}, memory.relations,
                         lambda n: memory.objects[n].affordances, memory.agents, memory.locations,
                         per_class=TOOL_PER_CLASS, per_place=TOOL_PER_PLACE)


def lean_memory(view: ToolPromptView, only: Sequence[str] = ()) -> str:
    """What a tool choice reads from the memory: the known objects (not the agents), the
    unexplored locations, where the objects the request names are (all relations would mostly
    describe objects the request does not need), the alternatives and the last plan.
    A large memory is narrowed to what the request concerns, the other objects counted per
    class (so whether a kind of thing is known still shows). ``only``: just the lines with these
    labels. Without a Memory: its rendered text."""
    memory = view.memory
    if memory is None:
        return view.memory_text
    focus = memory_focus(view)
    named = named_classes(view.request, memory.classes())
    relations = [r for r in memory.relations
                 if r.args and r.args[0] in memory.objects and memory.objects[r.args[0]].class_name in named
                 and all(focus.shows(a) for a in r.args)]
    known = " ".join(sorted((n for n, o in memory.objects.items() if not o.is_agent and focus.shows(n)),
                            key=natural_key)) or "none"
    if focus.omitted:
        known += "; " + focus.summary(besides={memory.objects[n].class_name for n in focus.listed or ()
                                                if n in memory.objects})
    unexplored = memory.unexplored()
    where = ", ".join(unexplored[:PROMPT_LOCATIONS]) or "none"
    if len(unexplored) > PROMPT_LOCATIONS:
        where += f" and {len(unexplored) - PROMPT_LOCATIONS} more"
    lines = [("Known objects", known), ("Unexplored locations", where)]
    if relations:
        lines.append(("About the named objects", ", ".join(" ".join([r.predicate, *r.args]) for r in relations)))
    if memory.substitutions:
        lines.append(("Accepted alternatives", ", ".join(f"{m} -> {a}" for m, a in memory.substitutions.items())))
    if memory.rejected:
        lines.append(("Rejected alternatives", ", ".join(f"{m} -> {a}" for m, a in memory.rejected)))
    if memory.last_plan is not None:
        p = memory.last_plan
        state = ("not executed" if not p.executed else "executed" if p.success else f"failed: {p.message}")
        lines.append((f"Last plan ({p.tool})", f"{'; '.join(p.steps) or '(empty)'} - {state}"))
    return "\n".join(f"{k}: {v}" for k, v in lines if not only or k in only)


def previous_text(view: ToolPromptView) -> str:
    """``Previous requests: "a", "b"``: the recent ones and older ones about the same things,
    with how many more there were (a year of requests must not grow every prompt)."""
    classes = view.memory.classes() if view.memory is not None else ()
    shown, left = recent_requests(view.previous_requests, view.request, classes)
    if not shown:
        return ""
    text = "Previous requests: " + ", ".join(f'"{p}"' for p in shown)
    return text + (f" ({left} earlier not shown)" if left else "")


@dataclass
class AlternativePromptBuilder:
    """Implements :class:`affplan_ros.core.agent.alternatives.AlternativePrompter`."""

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
