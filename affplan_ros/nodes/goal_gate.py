"""One goal at a time for an action server, from its acceptance on, without a lost acceptance
holding the server for ever.

rclpy calls the goal callback, then sends the acceptance, and only when that send succeeds
hands the goal on to run. Fast DDS refuses the send when the server has not matched the
client's response reader within the writer's max_blocking_time (a brand-new client on a loaded
computer; 100 ms by default, 5 s with config/fastdds_profiles.xml): the goal is then accepted on
the server, never runs, and its client never hears of it. A lock taken in the goal callback
stayed taken, and every later goal, the client's own resend included, was refused as "busy"
(CI, November 2026: "no answer from /affplan/execute_task within 15 s").

So the gate holds the server from the goal callback only for a while (``PENDING_S``)
until the goal is handed on to run (:meth:`on_accepted`); from then on the running goal holds
it until :meth:`release`. A goal whose hand-over never came stops counting after ``PENDING_S``.
Two goals can only both be handed on when an acceptance took longer than that; the second one
is then told it was refused (:meth:`holds` is false) and must end at once.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

from rclpy.action import GoalResponse

# Longer than a send that succeeds can take (up to the profile's 5 s wait for the client) and
# shorter than send_goal's resend (nodes/base.py RESEND_GOAL_S), so the client's copy of a goal
# whose acceptance was lost finds the server free, and a copy of one still being sent does not.
PENDING_S = 6.0


def goal_key(goal_handle: Any) -> bytes:
    return bytes(goal_handle.goal_id.uuid)


class OneGoalAtATime:
    """``label``: what a goal request is called in messages (the task, the plan's size)."""

    def __init__(self, logger, what: str, label: Callable[[Any], str], pending_s: float = PENDING_S) -> None:
        self._logger, self._what, self._label, self._pending_s = logger, what, label, pending_s
        self._lock = threading.Lock()
        self._pending: Optional[tuple[float, str]] = None   # (accepted at, label): not yet handed on
        self._running: Optional[tuple[bytes, str]] = None   # (goal id, label)

    @property
    def current(self) -> str:
        """The label of the goal that holds the server ("" when free)."""
        with self._lock:
            held = self._running or self._fresh_pending()
            return held[1] if held else ""

    def on_goal(self, request) -> GoalResponse:
        """The goal callback: accept when nothing holds the server."""
        label = self._label(request)
        with self._lock:
            held = self._running or self._fresh_pending()
            if held:
                self._logger.warning(f"{self._what} refused {label[:100]!r}: busy with {held[1][:100]!r}")
                return GoalResponse.REJECT
            if self._pending is not None:
                self._logger.warning(f"{self._what}: the acceptance of {self._pending[1][:100]!r} never reached "
                                     "its client (not yet discovered); that goal does not run")
            self._pending = (time.monotonic(), label)
            return GoalResponse.ACCEPT

    def on_accepted(self, goal_handle) -> None:
        """The handle_accepted_callback: the client has the acceptance; the goal runs."""
        label = self._label(goal_handle.request)
        with self._lock:
            self._pending = None
            if self._running is None:
                self._running = (goal_key(goal_handle), label)
        goal_handle.execute()

    def holds(self, goal_handle) -> bool:
        """Whether this running goal holds the server (false: accepted beside another one)."""
        with self._lock:
            return self._held_by(goal_handle)

    def release(self, goal_handle) -> None:
        """The goal ended: the server is free, if that goal held it."""
        with self._lock:
            if self._held_by(goal_handle):
                self._running = None

    def _held_by(self, goal_handle) -> bool:
        return self._running is not None and self._running[0] == goal_key(goal_handle)

    def _fresh_pending(self) -> Optional[tuple[float, str]]:
        if self._pending is not None and time.monotonic() - self._pending[0] < self._pending_s:
            return self._pending
        return None
