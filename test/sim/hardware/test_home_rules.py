"""The home's rules on the hardware (sim/hardware/rules.py): a rule that raises is said once and
left out, and the others go on running every period."""
from __future__ import annotations

from affplan_ros.sim.hardware.rules import HomeRules


class Counting:
    def __init__(self, fail_at: int = -1):
        self.calls, self.fail_at = 0, fail_at

    def update(self, data, dt: float) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise KeyError("left_tcp")


def test_a_rule_that_raises_is_said_once_and_the_others_go_on():
    said: list[str] = []
    liquids, tools, lids = Counting(), Counting(fail_at=2), Counting()
    rules = HomeRules({"liquids": liquids, "tools": tools, "lids": lids}, said.append)
    for _ in range(5):
        rules.update(None, 0.01)
    assert (liquids.calls, tools.calls, lids.calls) == (5, 2, 5)
    assert list(rules.rules) == ["liquids", "lids"] and rules.failed == {"tools": "KeyError: 'left_tcp'"}
    assert len(said) == 1 and "tools rule failed" in said[0] and "left_tcp" in said[0]
