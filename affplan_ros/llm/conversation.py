"""Conversation history per task (the self-correction loop keeps talking in one thread)."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field


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
