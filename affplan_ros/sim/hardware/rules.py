"""The home's own rules while it is a robot's hardware (its people, liquids, screw caps, tools),
run each control period. A rule that raises is said once and left out from then on: the physics
keeps stepping, so the clock, the controllers and the robot's software go on, and what the broken
rule decided (a pour, a cut) simply no longer happens. (A controller that raises still stops the
physics: that is a robot fault.)"""
from __future__ import annotations

from typing import Callable, Protocol


class Rule(Protocol):
    def update(self, data, dt: float) -> None: ...


class HomeRules:
    def __init__(self, rules: dict[str, Rule], report: Callable[[str], None]):
        self.rules = dict(rules)
        self.report = report
        self.failed: dict[str, str] = {}     # rule -> what it raised

    def update(self, data, dt: float) -> None:
        """One control period of ``dt`` simulated seconds (under the world's lock)."""
        for name, rule in list(self.rules.items()):
            try:
                rule.update(data, dt)
            except Exception as exc:  # noqa: BLE001 - said once; the rest of the home goes on
                del self.rules[name]
                self.failed[name] = f"{type(exc).__name__}: {exc}"
                self.report(f"the home's {name} rule failed and is left out from now on: {self.failed[name]}")
