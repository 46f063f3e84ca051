"""Names that last across views: an object seen again where it was keeps its name.

Frame-to-frame tracking (``oad.Tracker``) keeps names while the camera watches; once the head
turns to another place and back, or two places each show a cup, 2D boxes cannot tell which cup
is which. With depth and the camera's pose in the map, every object has a map position, and an
object of the same class seen near where a named one was is that one (object permanence, as a
semantic map keeps it). Otherwise it gets the lowest free number of its class.

How near is near depends on the size: the point measured on a table (its nearest surface in the
box) moves with the viewpoint by a good part of its width, on an apple by centimetres.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np

from affplan_ros.core.perception.oad import PerceivedObject

CameraPose = tuple[np.ndarray, np.ndarray]   # (3x3 rotation optical -> map, position in the map)


@dataclass
class _Known:
    class_name: str
    instance: int
    position: np.ndarray
    reach: float


def one_per_thing(objects: Sequence[PerceivedObject], fx: float, size_factor: float = 0.6) -> list[PerceivedObject]:
    """``objects`` of one frame (camera-frame positions from depth) without the second boxes of
    one thing: a detector sometimes puts two overlapping boxes of a class on one bowl (its rim and
    its body; NMS keeps both below its IoU), which would get two names. Two boxes of a class that
    overlap, measured closer than ``size_factor`` times the smaller one's width, are one thing: the
    surer box stays. Two apples side by side are a width apart, so they stay two."""
    kept: list[PerceivedObject] = []
    for o in sorted(objects, key=lambda x: -x.confidence):
        if o.position is None or not any(_same_spot(k, o, fx, size_factor) for k in kept):
            kept.append(o)
    return [o for o in objects if any(o is k for k in kept)]


def _same_spot(a: PerceivedObject, b: PerceivedObject, fx: float, factor: float) -> bool:
    if a.class_name != b.class_name or a.position is None or b.position is None:
        return False
    if min(a.box[2], b.box[2]) <= max(a.box[0], b.box[0]) or min(a.box[3], b.box[3]) <= max(a.box[1], b.box[1]):
        return False
    width = min((x.box[2] - x.box[0]) * x.position[2] / fx for x in (a, b))
    return float(np.linalg.norm(np.subtract(a.position, b.position))) <= factor * width


class MapNamer:
    """Names objects by where they are in the map, across every view it is given."""

    def __init__(self, min_reach_m: float = 0.3, size_factor: float = 0.6):
        if min_reach_m <= 0 or size_factor < 0:
            raise ValueError(f"min_reach_m {min_reach_m} must be > 0 and size_factor {size_factor} >= 0")
        self.min_reach_m, self.size_factor = min_reach_m, size_factor
        self._known: list[_Known] = []

    def reset(self) -> None:
        self._known.clear()

    def name(self, objects: Sequence[PerceivedObject], pose: CameraPose, fx: float) -> list[PerceivedObject]:
        """``objects`` (with camera-frame positions from depth) renamed: the name of the known
        object of their class nearest to their map position, within reach, else a new one."""
        rotation, origin = (np.asarray(a, float) for a in pose)
        used: set[int] = set()
        out: dict[int, PerceivedObject] = {}
        # Those with a position first: the ones without take numbers nobody is known by.
        for i in sorted(range(len(objects)), key=lambda k: (objects[k].position is None, -objects[k].confidence)):
            o = objects[i]
            if o.position is None:  # no depth there: a name of its own, not remembered
                out[i] = replace(o, instance=self._free(o.class_name, extra=[x.instance for x in out.values()
                                                                             if x.class_name == o.class_name]))
                continue
            at = rotation @ np.asarray(o.position, float) + origin
            reach = max(self.min_reach_m, self.size_factor * (o.box[2] - o.box[0]) * o.position[2] / fx)
            match = self._nearest(o.class_name, at, reach, used)
            if match is None:
                match = _Known(o.class_name, self._free(o.class_name), at, reach)
                self._known.append(match)
            else:  # it may have been moved a little: remember where it is now
                match.position, match.reach = at, max(match.reach, reach)
            used.add(id(match))
            out[i] = replace(o, instance=match.instance)
        return [out[i] for i in range(len(objects))]

    def _nearest(self, class_name: str, at: np.ndarray, reach: float, used: set[int]) -> Optional[_Known]:
        best, best_d = None, np.inf
        for k in self._known:
            if k.class_name != class_name or id(k) in used:
                continue
            d = float(np.linalg.norm(k.position - at))
            if d <= max(reach, k.reach) and d < best_d:
                best, best_d = k, d
        return best

    def _free(self, class_name: str, extra: Sequence[int] = ()) -> int:
        taken = {k.instance for k in self._known if k.class_name == class_name} | set(extra)
        return next(i for i in range(len(taken) + 1) if i not in taken)
