"""``affplan up``'s stop signals (suite.StopRequest): one request to stop, and a second signal
while the process ends changes nothing (it used to kill a suite that stopped in under 0.3 s
with the second Ctrl-C: exit -2 instead of 0)."""
from __future__ import annotations

import os
import signal

from affplan_ros.suite import StopRequest, StopSignal


def test_a_second_stop_signal_after_a_requested_stop_is_ignored_to_the_end():
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        with StopRequest() as stop:
            stop.raise_now = False            # nodes started: the signal is only recorded
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            assert stop.requested() and stop.name == "SIGINT"
        os.kill(os.getpid(), signal.SIGINT)   # after the stop, on the way out: no KeyboardInterrupt
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def test_without_a_stop_the_handlers_are_given_back_and_a_stop_before_start_raises():
    previous = signal.getsignal(signal.SIGTERM)
    with StopRequest() as stop:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except StopSignal:
            pass
        else:
            raise AssertionError("a stop before anything started should end at once (StopSignal)")
        stop.signum = 0                       # as if it had not come: the handlers go back
    assert signal.getsignal(signal.SIGTERM) == previous
