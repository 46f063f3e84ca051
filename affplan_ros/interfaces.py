"""The suite's generated ROS 2 interface types, looked up by kind.

Import through here (not ``affplan_ros.msg`` directly) where a missing build should give a
clear message instead of a bare ImportError.
"""
from __future__ import annotations

import importlib
from types import ModuleType

KINDS = ("msg", "srv", "action")


class InterfacesNotBuilt(ImportError):
    pass


def interface_module(kind: str) -> ModuleType:
    if kind not in KINDS:
        raise ValueError(f"unknown interface kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        return importlib.import_module(f"affplan_ros.{kind}")
    except ImportError as exc:
        raise InterfacesNotBuilt(
            f"the affplan_ros {kind} interfaces are not built ({exc}); run `make setup`, "
            "or `colcon build` and source install/setup.bash on a ROS 2 machine"
        ) from exc


def interface_types(kind: str) -> dict[str, type]:
    """Name -> generated class for every interface of one kind, sorted by name."""
    module = interface_module(kind)
    # Generated modules also export helper types (Grasp_SendGoal_Request, ...); interface
    # names are CamelCase without underscores, so those are easy to leave out.
    found = {
        name: obj
        for name, obj in vars(module).items()
        if isinstance(obj, type)
        and obj.__module__.startswith(f"affplan_ros.{kind}._")
        and "_" not in name
    }
    return dict(sorted(found.items()))
