"""What every simulated controller shares: a command runs over control periods of the physics
loop (``update``, called with the world's lock held) and ends once, with an outcome an action
server's thread waits for."""
from __future__ import annotations

import threading
from typing import Generic, Optional, TypeVar

Outcome = TypeVar("Outcome")


class Controller(Generic[Outcome]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._outcome: Optional[Outcome] = None
        self.running = False
        self.generation = 0       # which command runs: a newer one preempts it

    def _begin(self) -> int:
        """A new command (call with ``self._lock`` held): the previous one is replaced."""
        self.generation += 1
        self._outcome = None
        self._done.clear()
        self.running = True
        return self.generation

    def _end(self, outcome: Outcome) -> None:
        """The command's end (call with ``self._lock`` held)."""
        self._outcome = outcome
        self.running = False
        self._done.set()

    def wait(self, timeout_s: float) -> Optional[Outcome]:
        """The outcome of the running command, or None if it has not ended within ``timeout_s``."""
        if not self._done.wait(timeout_s):
            return None
        return self._outcome
