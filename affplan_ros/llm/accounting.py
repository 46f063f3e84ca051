"""Token and latency accounting per LLM call and in total (benchmarks report these)."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallRecord:
    """One logical call (all its retry attempts together)."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    attempts: int
    ok: bool
    error: str | None = None
    tag: str = ""  # what the call was for, e.g. "goal" or "tool_selection"

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Accounting:
    """Thread-safe ledger of calls; nodes may share one client across callbacks."""

    records: list[CallRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self.records.append(record)

    def snapshot(self) -> list[CallRecord]:
        with self._lock:
            return list(self.records)

    @property
    def calls(self) -> int:
        return len(self.snapshot())

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.snapshot())

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.snapshot())

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.snapshot())

    @property
    def failures(self) -> int:
        return sum(1 for r in self.snapshot() if not r.ok)

    def totals(self) -> dict[str, float]:
        recs = self.snapshot()
        return {
            "calls": len(recs),
            "failures": sum(1 for r in recs if not r.ok),
            "prompt_tokens": sum(r.prompt_tokens for r in recs),
            "completion_tokens": sum(r.completion_tokens for r in recs),
            "seconds": sum(r.seconds for r in recs),
            "attempts": sum(r.attempts for r in recs),
        }

    def reset(self) -> None:
        with self._lock:
            self.records.clear()
