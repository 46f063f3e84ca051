"""Where things are, for the robot's skills: one interface (``PoseSource``), several sources.

* ``FixedPoses``: poses typed into the robot config (``object_poses``: "name x y z"), for things
  that never move on a real robot (a fridge's handle, a counter's top) where nothing sees them.
* ``OraclePoses``: **simulation only**, named as such. The simulator's referee (``/referee/
  objects``, affplan_ros/RefereeObjects) says where everything is, so that the robot's motions
  can be measured apart from its perception. A real robot has no referee.

Perception (the head camera's detections, depth and TF) is the source a real robot uses.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Optional, Protocol

ORACLE_TOPIC = "/referee/objects"


@dataclass(frozen=True)
class Joint:
    """How a door or drawer moves, as the source sees it now (in the thing's frame)."""

    type: str                                  # "hinge" (a door) or "slide" (a drawer)
    handle: tuple[float, float, float]         # the middle of its handle
    origin: tuple[float, float, float]         # a point on the hinge's axis (a slide: its anchor)
    axis: tuple[float, float, float]           # unit: opening turns positively about it (moves along it)
    position: float                            # rad (a slide: m) from closed
    open: float                                # the position when fully open
    back_handle: Optional[tuple[float, float, float]] = None   # a room door's handle on its other face


@dataclass(frozen=True)
class SeenObject:
    """A thing where a source found it: the centre of its bounding box in ``frame``, its yaw and
    the box's extent along its own axes (m; zero where the source knows only a point)."""

    name: str
    x: float
    y: float
    z: float
    yaw: float = 0.0
    size: tuple[float, float, float] = (0.0, 0.0, 0.0)
    frame: str = "map"
    class_name: str = ""
    open_fraction: float = -1.0    # a door, drawer or lid: 0 closed .. 1 open; -1 none
    kind: str = ""                 # what the source says it is: "object", "furniture", "agent" (a person), ...
    joint: Optional[Joint] = None  # a door's hinge or a drawer's slide, where the source knows it
    # Furniture with room inside: the heights (map z) of the surfaces in it that things stand on
    # (its floor, its shelves), where the source knows them.
    inner_levels: tuple[float, ...] = ()

    @property
    def has_box(self) -> bool:
        """Whether the source knows its extent (not only a point)."""
        return all(v > 0 for v in self.size)

    @property
    def top(self) -> float:
        return self.z + self.size[2] / 2

    @property
    def bottom(self) -> float:
        return self.z - self.size[2] / 2


class PoseSource(Protocol):
    name: str

    def find(self, thing: str) -> Optional[SeenObject]:
        """Where ``thing`` is now, or None when this source does not know it."""

    def everything(self) -> list[SeenObject]:
        """All that the source knows now."""


class FixedPoses:
    """Poses of the robot config (``object_poses``), points without an extent."""

    name = "config"

    def __init__(self, entries, frame: str = "map"):
        self.poses: dict[str, SeenObject] = {}
        for entry in entries:
            words = str(entry).split()
            if len(words) != 4:
                raise ValueError(f"object_poses: {entry!r} is not 'name x y z'")
            try:
                x, y, z = (float(w) for w in words[1:])
            except ValueError:
                raise ValueError(f"object_poses: {entry!r} is not 'name x y z' with numbers") from None
            if not all(math.isfinite(v) for v in (x, y, z)):
                raise ValueError(f"object_poses: {entry!r} has a coordinate that is not a finite number")
            self.poses[words[0]] = SeenObject(words[0], x, y, z, frame=frame)

    def find(self, thing: str) -> Optional[SeenObject]:
        return self.poses.get(thing)

    def everything(self) -> list[SeenObject]:
        return list(self.poses.values())


class OraclePoses:
    """SIMULATION ONLY: where the simulator's referee says things are (``/referee/objects``)."""

    name = "oracle"

    def __init__(self, node, wait_s: float = 10.0, callback_group=None):
        try:
            from affplan_ros.msg import RefereeObjects
        except ImportError as exc:
            raise ValueError("the oracle pose source needs the project's interfaces: run make setup") from exc
        self._lock = threading.Lock()
        self._latest: dict[str, SeenObject] = {}
        self._first = threading.Event()
        self.wait_s = wait_s
        node.create_subscription(RefereeObjects, ORACLE_TOPIC, self._on_objects, 10, callback_group=callback_group)

    def _on_objects(self, msg) -> None:
        seen = {}
        for o in msg.objects:
            q = o.pose.orientation
            yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
            p = o.pose.position
            joint = None
            if o.joint_type:
                h, c, a = o.handle, o.joint_origin, o.joint_axis
                b = o.back_handle
                joint = Joint(o.joint_type, (h.x, h.y, h.z), (c.x, c.y, c.z), (a.x, a.y, a.z), o.joint_position,
                              o.joint_open, (b.x, b.y, b.z) if o.has_back_handle else None)
            seen[o.name] = SeenObject(o.name, p.x, p.y, p.z, yaw, (o.size.x, o.size.y, o.size.z),
                                      msg.header.frame_id or "map", o.class_name, o.open_fraction, o.kind, joint,
                                      tuple(float(z) for z in o.inner_levels))
        with self._lock:
            self._latest = seen
        self._first.set()

    def _wait(self) -> bool:
        return self._first.wait(self.wait_s)

    def find(self, thing: str) -> Optional[SeenObject]:
        if not self._wait():
            return None
        with self._lock:
            return self._latest.get(thing)

    def everything(self) -> list[SeenObject]:
        if not self._wait():
            return []
        with self._lock:
            return list(self._latest.values())
