"""RViz markers of the memory: locations, object labels with affordances, agents, the last plan.

Locations stand where the robot config puts them (``locations``: name x y yaw); locations
without a configured pose are laid out on a circle so the picture stays readable.
"""
from __future__ import annotations

import math
from typing import Mapping

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from affplan_ros.core.model.memory import Memory
from affplan_ros.nodes.convert_memory import is_human

Pose2D = tuple[float, float, float]
GREY = ColorRGBA(r=0.6, g=0.6, b=0.6, a=0.8)
GREEN = ColorRGBA(r=0.2, g=0.8, b=0.3, a=0.9)
BLUE = ColorRGBA(r=0.2, g=0.4, b=1.0, a=0.9)
ORANGE = ColorRGBA(r=1.0, g=0.6, b=0.1, a=0.9)
WHITE = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)


def layout(memory: Memory, poses: Mapping[str, Pose2D]) -> dict[str, Pose2D]:
    """A pose for every known location: the configured one, else a place on a circle."""
    out = {n: poses[n] for n in memory.locations if n in poses}
    rest = [n for n in memory.locations if n not in out]
    for i, name in enumerate(rest):
        angle = 2 * math.pi * i / max(len(rest), 1)
        out[name] = (3.0 * math.cos(angle), 3.0 * math.sin(angle), 0.0)
    return out


def memory_markers(memory: Memory, poses: Mapping[str, Pose2D], frame_id: str = "map",
                   stamp: Time | None = None) -> MarkerArray:
    stamp = stamp or Time()
    markers = [Marker(action=Marker.DELETEALL)]  # what was forgotten disappears too
    next_id = iter(range(1, 1_000_000))

    def marker(ns: str, kind: int, x: float, y: float, z: float, color: ColorRGBA, text: str = "",
               scale: tuple[float, float, float] = (0.2, 0.2, 0.2)) -> Marker:
        m = Marker(ns=ns, id=next(next_id), type=kind, action=Marker.ADD, text=text, color=color)
        m.header.frame_id, m.header.stamp = frame_id, stamp
        m.pose.position = Point(x=float(x), y=float(y), z=float(z))
        m.pose.orientation.w = 1.0
        m.scale.x, m.scale.y, m.scale.z = scale
        return m

    where = layout(memory, poses)
    for name, (x, y, _yaw) in where.items():
        loc = memory.locations[name]
        markers.append(marker("locations", Marker.CYLINDER, x, y, 0.05, GREEN if loc.explored else GREY,
                              scale=(0.6, 0.6, 0.1)))
        markers.append(marker("location_labels", Marker.TEXT_VIEW_FACING, x, y, 0.3, WHITE,
                              f"{name} ({'explored' if loc.explored else 'unexplored'})", (0.0, 0.0, 0.15)))
        for level, obj_name in enumerate(o for o in loc.objects if o != name):
            obj = memory.objects.get(obj_name)
            label = obj_name + (f": {', '.join(obj.affordances)}" if obj is not None and obj.affordances else "")
            markers.append(marker("objects", Marker.TEXT_VIEW_FACING, x, y, 0.55 + 0.15 * level, WHITE, label,
                                  (0.0, 0.0, 0.1)))
    for agent in memory.agents:
        here = memory.agent_location(agent)
        if here in memory.agents:  # standing at another agent (e.g. to hand something over)
            here = memory.agent_location(here)
        if here not in where:
            continue
        x, y, _ = where[here]
        dx = 0.5 if is_human(agent) else -0.5
        markers.append(marker("agents", Marker.SPHERE, x + dx, y - 0.5, 0.5, ORANGE if is_human(agent) else BLUE,
                              scale=(0.35, 0.35, 0.35)))
        markers.append(marker("agent_labels", Marker.TEXT_VIEW_FACING, x + dx, y - 0.5, 0.85, WHITE, agent,
                              (0.0, 0.0, 0.15)))
    plan = memory.last_plan
    if plan is not None:
        state = ("not executed" if not plan.executed else "succeeded" if plan.success else f"failed: {plan.message}")
        text = f"{plan.tool}: {plan.goal or ''}\n" + "\n".join(f"{i + 1}. {s}" for i, s in enumerate(plan.steps)) \
            + f"\n{state}"
        markers.append(marker("plan", Marker.TEXT_VIEW_FACING, 0.0, 0.0, 2.5, WHITE, text, (0.0, 0.0, 0.15)))
    return MarkerArray(markers=markers)
