"""Object-affordance detection (OAD): detections x OAM -> named scene objects with affordances.

AutoGPT+P represents the scene as detected objects whose affordances come from the
object-affordance mapping (OAM). Here each detection of a class the OAM knows becomes a
:class:`PerceivedObject` named like the planner names objects (``cup0``). Names stay stable
across frames: a small tracker matches each new detection to the previous frame's objects of
the same class by box overlap (IoU), so the cup seen in the last frame is still ``cup0``.
Detections of classes the OAM does not know are reported separately (``unknown``): they can be
mapped on demand (the GenerateOam service / ``affplan oam generate``) instead of reaching the
planner without affordances.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Optional, Sequence

import numpy as np

from affplan_ros.core.knowledge.oam import OamDatabase
from affplan_ros.core.model.scene import object_name
from affplan_ros.core.perception.detection import Detection

Box = tuple[float, float, float, float]


def iou(a: Box, b: Box) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


@dataclass(frozen=True)
class PerceivedObject:
    """A detected object as the planner will name it, with where it was seen."""

    class_name: str
    instance: int
    affordances: frozenset[str]
    confidence: float
    box: Box                                   # pixels x1, y1, x2, y2
    label: str = ""                            # the detector's label before synonyms
    track_id: int = -1
    position: Optional[tuple[float, float, float]] = None  # camera frame, metres (with depth)

    @property
    def name(self) -> str:
        return object_name(self.class_name, self.instance)


@dataclass
class _Track:
    track_id: int
    class_name: str
    instance: int
    box: Box
    hits: int = 1
    missed: int = 0


@dataclass
class Tracker:
    """Greedy class + IoU matching frame to frame; instance numbers are reused once freed.

    ``max_missed`` frames without a match end a track (its number becomes free again);
    ``min_hits`` frames are needed before a new track is reported (suppresses one-frame
    false positives, the main failure cause of the paper's robot experiments).
    """

    iou_threshold: float = 0.3
    max_missed: int = 5
    min_hits: int = 1
    _tracks: list[_Track] = field(default_factory=list)
    _next_id: int = 0

    def reset(self) -> None:
        self._tracks.clear()

    def update(self, detections: Sequence[Detection]) -> list[tuple[Detection, _Track]]:
        """Match ``detections`` (one frame) to tracks; return the reportable (detection, track) pairs."""
        pairs = sorted(((iou(d.box, t.box), di, ti) for di, d in enumerate(detections)
                        for ti, t in enumerate(self._tracks) if t.class_name == d.class_name),
                       key=lambda p: -p[0])
        det_to_track: dict[int, _Track] = {}
        used: set[int] = set()
        for overlap, di, ti in pairs:
            if overlap < self.iou_threshold:
                break
            if di in det_to_track or ti in used:
                continue
            det_to_track[di] = self._tracks[ti]
            used.add(ti)
        for ti, track in enumerate(self._tracks):
            if ti not in used:
                track.missed += 1
        self._tracks = [t for t in self._tracks if t.missed <= self.max_missed]
        for di, d in enumerate(detections):
            track = det_to_track.get(di)
            if track is None:
                track = _Track(self._next_id, d.class_name, self._free_instance(d.class_name), d.box, hits=0)
                self._next_id += 1
                self._tracks.append(track)
                det_to_track[di] = track
            track.box, track.missed = d.box, 0
            track.hits += 1
        return [(detections[di], t) for di, t in sorted(det_to_track.items()) if t.hits >= self.min_hits]

    def _free_instance(self, class_name: str) -> int:
        taken = {t.instance for t in self._tracks if t.class_name == class_name}
        return next(i for i in range(len(taken) + 1) if i not in taken)


@dataclass
class OadResult:
    objects: list[PerceivedObject]
    unknown: list[Detection]        # detections of classes the OAM does not know


class ObjectAffordanceDetector:
    """Detections of one frame -> scene objects with affordances from the OAM, names kept stable."""

    def __init__(self, oam: OamDatabase, tracker: Optional[Tracker] = None):
        self.oam = oam
        self.tracker = tracker or Tracker()

    def process(self, detections: Iterable[Detection]) -> OadResult:
        known, unknown = [], []
        for d in detections:
            (known if d.class_name in self.oam else unknown).append(d)
        objects = [PerceivedObject(d.class_name, t.instance, self.oam.affordances_of(d.class_name), d.confidence,
                                   d.box, d.label, t.track_id)
                   for d, t in self.tracker.update(known)]
        objects.sort(key=lambda o: (o.class_name, o.instance))
        return OadResult(objects, unknown)


def with_positions(objects: Sequence[PerceivedObject], depth_m: Optional[np.ndarray],
                   intrinsics: Optional[tuple[float, float, float, float]]) -> list[PerceivedObject]:
    """Add a 3D position (camera frame: x right, y down, z forward) from the median depth in the
    middle of each box, when a depth image and the intrinsics (fx, fy, cx, cy) are known."""
    if depth_m is None or intrinsics is None:
        return list(objects)
    fx, fy, cx, cy = intrinsics
    out = []
    for o in objects:
        # The nearest surfaces in the box, not its centre: a table's box is mostly the wall
        # seen between its legs.
        z = box_depth(depth_m, o.box, shrink=0.05, percentile=10)
        if z is None:
            out.append(o)
            continue
        u, v = (o.box[0] + o.box[2]) / 2.0, (o.box[1] + o.box[3]) / 2.0
        out.append(replace(o, position=((u - cx) * z / fx, (v - cy) * z / fy, z)))
    return out


def box_depth(depth_m: np.ndarray, box: Box, shrink: float = 0.25, percentile: float = 50) -> Optional[float]:
    """A percentile (default: the median) of the valid depths in ``box`` shrunk by ``shrink`` of its
    size on each side (edges often show the background)."""
    h, w = depth_m.shape[:2]
    x1, y1, x2, y2 = box
    dx, dy = (x2 - x1) * shrink, (y2 - y1) * shrink
    xa, xb = int(np.clip(x1 + dx, 0, w - 1)), int(np.clip(x2 - dx, 1, w))
    ya, yb = int(np.clip(y1 + dy, 0, h - 1)), int(np.clip(y2 - dy, 1, h))
    patch = depth_m[ya:max(yb, ya + 1), xa:max(xb, xa + 1)]
    valid = patch[np.isfinite(patch)]
    return float(np.percentile(valid, percentile)) if valid.size else None


# -- annotated image for RViz ---------------------------------------------------------------

def _color(class_name: str) -> tuple[int, int, int]:
    h = sum(ord(c) * 31 ** i for i, c in enumerate(class_name)) % 180
    import cv2

    hsv = np.uint8([[[h, 200, 230]]])
    return tuple(int(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])


def annotate(image_bgr: np.ndarray, objects: Sequence[PerceivedObject], relations: Sequence[str] = (),
             unknown: Sequence[Detection] = (), max_affordances: int = 5) -> np.ndarray:
    """A copy of the image with each object's box, name, confidence and affordances, unknown
    classes in grey, and the estimated relations listed at the bottom."""
    import cv2

    out = image_bgr.copy()
    font, scale = cv2.FONT_HERSHEY_SIMPLEX, max(0.35, min(out.shape[:2]) / 1000.0)

    def label(text: str, x: int, y: int, color) -> None:
        (tw, th), base = cv2.getTextSize(text, font, scale, 1)
        y = max(th + 2, y)
        cv2.rectangle(out, (x, y - th - 3), (x + tw + 2, y + base - 1), color, -1)
        cv2.putText(out, text, (x + 1, y - 2), font, scale, (0, 0, 0), 1, cv2.LINE_AA)

    for d in unknown:
        x1, y1, x2, y2 = (int(v) for v in d.box)
        cv2.rectangle(out, (x1, y1), (x2, y2), (128, 128, 128), 1)
        label(f"{d.class_name}? {d.confidence:.2f} (not in OAM)", x1, y1, (180, 180, 180))
    for o in objects:
        x1, y1, x2, y2 = (int(v) for v in o.box)
        color = _color(o.class_name)
        cv2.rectangle(out, (x1, y1), (x2, y2), color, 2)
        affs = sorted(o.affordances)
        text = ", ".join(affs[:max_affordances]) + (f" +{len(affs) - max_affordances}"
                                                    if len(affs) > max_affordances else "")
        label(f"{o.name} {o.confidence:.2f}", x1, y1, color)
        (_, th), _ = cv2.getTextSize(text, font, scale, 1)
        label(text, x1, y1 + th + 6, color)
    y = out.shape[0] - 6
    for rel in reversed(list(relations)):
        label(rel, 4, y, (255, 255, 255))
        y -= int(22 * scale / 0.4)
    return out
