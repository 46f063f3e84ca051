"""A scripted language model for the node-suite tests: answers per task and kind of question.

Served by the real local chat-completions server (``llm/fake_server.py``) and reached by the
nodes' real openai clients, like any endpoint. Test support only: the product's backends come
from ``llm/backends.py``.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Mapping, Optional

CONFIGURE_HELP = "configure a real endpoint"


def task_key(text: str) -> str:
    """Tasks match case- and punctuation-insensitively ("Bring me the apple!" == "bring me the apple")."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


# The request as the tool and goal prompts quote it (llm/prompts/tool_select.txt, goal_plan.txt).
_REQUEST = re.compile(r'^Request: "(.*)"$', re.MULTILINE)
_GOAL_REQUEST = _REQUEST


@dataclass
class ScriptedTasks:
    """Answers per task and per kind of question (``tool``, ``goal``, ``affordances``,
    ``object``); a task's queues restart when its first tool-selection question comes."""

    tasks: dict[str, dict[str, list[str]]]
    source: str = ""
    _current: Optional[str] = None
    _queues: dict[str, list[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_mapping(cls, data: Mapping, source: str = "") -> "ScriptedTasks":
        tasks = {}
        for task, answers in (data or {}).items():
            if not isinstance(answers, Mapping):
                raise ValueError(f"{source}: the scripted answers of {task!r} must map a question kind "
                                 "(tool, goal, affordances, object) to a list of answers")
            tasks[task_key(str(task))] = {str(k): [str(a) for a in v] for k, v in answers.items()}
        return cls(tasks, source)

    def known(self) -> list[str]:
        return sorted(self.tasks)

    def __call__(self, messages: list[dict], body: dict):
        from affplan_ros.llm.fake_server import FakeReply
        from affplan_ros.llm.recovery_prompting import (
            recovery_prompt_kind as prompt_kind,
        )

        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        last = users[-1] if users else ""
        kind = prompt_kind(last if isinstance(last, str) else "") or "unknown"
        with self._lock:
            if kind == "tool" and len(users) == 1:  # the first question of a new task
                found = _REQUEST.search(last)
                key = task_key(found.group(1)) if found else ""
                self._current = key if key in self.tasks else None
                self._queues = {k: list(v) for k, v in self.tasks.get(key, {}).items()}
                if self._current is None:
                    return FakeReply(status=400, error_message=(
                        f"the SCRIPTED language backend ({self.source}) has answers only for: "
                        f"{'; '.join(self.known())}. For any other task, {CONFIGURE_HELP}"))
            elif kind == "goal" and len(users) == 1:
                # A goal asked for outside a tool loop (PlanTask alone, `affplan ask --plan-only`):
                # switch to that task if it is another known one.
                found = _GOAL_REQUEST.search(last)
                key = task_key(found.group(1)) if found else ""
                if key in self.tasks and key != self._current:
                    self._current = key
                    self._queues = {k: list(v) for k, v in self.tasks[key].items()}
            queue = self._queues.get(kind)
            if not queue:
                return FakeReply(status=400, error_message=(
                    f"the SCRIPTED language backend has no further {kind!r} answer for this task; {CONFIGURE_HELP}"))
            return queue.pop(0)
