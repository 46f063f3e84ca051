"""The nodes' environment parameters (ENVIRONMENT_PARAMS): the robot's lift capacity, the
quantity table, declared properties and a recovery scenario's world, checked at start-up."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from affplan_ros.nodes.base import environment_knowledge

RECOVERY = __import__("pathlib").Path(__file__).resolve().parents[2] / "config" / "scenarios" / "recovery"


def params(**kw) -> SimpleNamespace:
    base = {"robot_lift_capacity_kg": 2.0, "quantities_file": "", "environment_properties_file": "",
            "capabilities_file": ""}
    return SimpleNamespace(**{**base, **kw})


def test_the_lift_capacity_comes_from_the_robots_configuration() -> None:
    k = environment_knowledge(params(robot_lift_capacity_kg=7.5))
    assert k.quantities.value("lift_capacity", "robot0", "robot") == 7.5
    assert k.quantities.value("lift_capacity", "human0", "human") == 15.0
    assert k.declared == {}


def test_a_recovery_scenario_brings_its_worlds_measurements_and_properties() -> None:
    k = environment_knowledge(params(capabilities_file=str(RECOVERY / "lasp_serve_fruit_3.yaml")))
    assert k.quantities.value("mass", "watermelon0", "watermelon") == 4.5
    k = environment_knowledge(params(capabilities_file=str(RECOVERY / "lasp_heat_milk_3.yaml")))
    assert k.declared["microwave_safe"].objects == {"bowl0"}


def test_bad_files_stop_the_node_with_the_parameter_named(tmp_path) -> None:
    bad = tmp_path / "q.yaml"
    bad.write_text("quantities: {mass: {of: thing}}\n")
    with pytest.raises(ValueError, match="quantities_file: .*of must be object or actor"):
        environment_knowledge(params(quantities_file=str(bad)))
    bad.write_text("nothing: here\n")
    with pytest.raises(ValueError, match="environment_properties_file: .*expected `properties"):
        environment_knowledge(params(environment_properties_file=str(bad)))
