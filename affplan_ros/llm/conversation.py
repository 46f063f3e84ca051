"""Conversation history per task (the self-correction loop keeps talking in one thread).

:func:`compact_history` is what an endpoint is sent: every earlier answer shortened to the part
the loops read from it (the goal, the ``SELECTED TOOL`` line, the ``OBJECT:`` line, the list).
Why: a correction or a next round needs the model's previous answer and the error, not its
reasoning again - each round would resend it as prompt tokens. The system message and the
first question stay byte-identical, so endpoints can cache that prefix.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Mapping, Sequence

_TOOL_LINE = re.compile(r"SELECTED[ _]TOOL\s*:?[^\n]*(?:\n[ \t]*[A-Z_]{4,}[^\n]*)?", re.IGNORECASE)
_FAILURE = re.compile(r"\bFAILURE\W*$")
_OBJECT_LINE = re.compile(r"OBJECT\s*:[^\n]*", re.IGNORECASE)
_LIST = re.compile(r"\[[^\[\]]*\]")


def compact_answer(text: str, kind: str | None) -> str:
    """The final answer inside a model's reply to a question of ``kind`` (``goal``, ``tool``,
    ``affordances``, ``object`` - see ``tool_prompting.prompt_kind``), or the reply itself when
    the kind is unknown or no final answer is found (then the error fed back refers to it)."""
    from affplan_ros.core.goals.errors import GoalError
    from affplan_ros.core.goals.extraction import extract_goal_text

    text = text or ""
    if kind == "goal":
        try:
            return f"(:goal {extract_goal_text(text)})"
        except GoalError:
            return text
    if kind == "tool":
        hits = _TOOL_LINE.findall(text)
        return hits[-1].strip() if hits else "FAILURE" if _FAILURE.search(text.strip()) else text
    pattern = {"affordances": _LIST, "object": _OBJECT_LINE}.get(kind or "")
    hits = pattern.findall(text) if pattern else []
    return hits[-1].strip() if hits else text


def compact_history(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """``messages`` with every assistant turn replaced by :func:`compact_answer` of it, the kind
    read from the user message it answers."""
    from affplan_ros.llm.tool_prompting import prompt_kind

    out: list[dict[str, str]] = []
    kind = None
    for m in messages:
        if m.get("role") == "user":
            kind = prompt_kind(m.get("content", ""))
        elif m.get("role") == "assistant":
            m = dict(m, content=compact_answer(m.get("content", ""), kind))
        out.append(dict(m))
    return out


@dataclass
class Conversation:
    task_id: str = ""
    messages: list[dict[str, str]] = field(default_factory=list)

    def add(self, role: str, content: str) -> None:
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unknown chat role {role!r}")
        self.messages.append({"role": role, "content": content})

    def add_system(self, content: str) -> None:
        self.add("system", content)

    def add_user(self, content: str) -> None:
        self.add("user", content)

    def add_assistant(self, content: str) -> None:
        self.add("assistant", content)

    def pop(self) -> dict[str, str]:
        return self.messages.pop()

    def copy(self) -> "Conversation":
        return Conversation(self.task_id, [dict(m) for m in self.messages])

    def __len__(self) -> int:
        return len(self.messages)


class ConversationStore:
    """Conversations by task id; thread-safe since several tasks may run concurrently."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Conversation] = {}

    def get(self, task_id: str) -> Conversation:
        with self._lock:
            return self._items.setdefault(task_id, Conversation(task_id))

    def drop(self, task_id: str) -> None:
        with self._lock:
            self._items.pop(task_id, None)

    def task_ids(self) -> list[str]:
        with self._lock:
            return list(self._items)
