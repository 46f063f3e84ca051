"""What every simulated controller shares: position servos on some joints, and a command that
runs over control periods of the physics loop (``update``, called with the world's lock held) and
ends once, with an outcome an action server's thread waits for; a stop holds the joints where
they are."""
from __future__ import annotations

import threading
from typing import Generic, Optional, Sequence, TypeVar

import mujoco

Outcome = TypeVar("Outcome")


class Controller(Generic[Outcome]):
    def __init__(self, model: mujoco.MjModel, joints: Sequence[str]) -> None:
        """``joints``: the model's joints it drives, each with a position servo of the same name."""
        self._qpos = [int(model.joint(j).qposadr[0]) for j in joints]
        self._act = [model.actuator(j).id for j in joints]
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

    def _hold(self, data: mujoco.MjData) -> None:
        """Servo the joints to where they are now (call with ``self._lock`` held)."""
        for a, q in zip(self._act, self._qpos):
            data.ctrl[a] = float(data.qpos[q])

    def _stopped(self, data: mujoco.MjData) -> Outcome:
        """The outcome of a command stopped where it was."""
        raise NotImplementedError

    def stop(self, data: mujoco.MjData) -> Outcome:
        """Hold the joints where they are and end the command (a cancel, a timeout)."""
        with self._lock:
            self._hold(data)
            self._end(self._stopped(data))
            return self._outcome

    def wait(self, timeout_s: float) -> Optional[Outcome]:
        """The outcome of the running command, or None if it has not ended within ``timeout_s``."""
        if not self._done.wait(timeout_s):
            return None
        return self._outcome
