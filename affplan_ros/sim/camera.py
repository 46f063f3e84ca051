"""A synthetic RGB-D camera: kitchen table scenes drawn with OpenCV, with their ground truth.

The project cannot download a detector or photos, so it draws its own images: a table with
mugs, apples, bowls, bottles and bananas standing on it (an apple may lie in a bowl), in front
of a wall, with a matching depth image and pinhole intrinsics. The same drawings train the
small detector shipped in ``config/models`` (``scripts/train_detector.py``), feed the
perception tests and the ``affplan bench perception`` benchmark, and can stand in for a camera
in simulation.

Every frame carries its ground truth: the pixel box, label and depth of each object and the
relations between them (``on mug table``, ``in apple bowl``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

LABELS = ("table", "mug", "apple", "bowl", "bottle", "banana")
SMALL = ("mug", "apple", "bowl", "bottle", "banana")
WALL_DEPTH_M = 3.0
TABLE_DEPTH_M = 1.6


@dataclass(frozen=True)
class Placed:
    """One drawn object: its label, pixel box (x1, y1, x2, y2, inclusive-exclusive) and depth."""

    label: str
    box: tuple[int, int, int, int]
    depth_m: float


@dataclass
class Frame:
    image: np.ndarray                    # BGR uint8 (h, w, 3)
    depth: np.ndarray                    # float32 metres (h, w)
    objects: list[Placed]
    relations: list[tuple[str, int, int]]  # (predicate, child index, parent index) into objects
    intrinsics: tuple[float, float, float, float]  # fx, fy, cx, cy

    def relation_labels(self) -> list[tuple[str, str, str]]:
        return [(p, self.objects[c].label, self.objects[s].label) for p, c, s in self.relations]


@dataclass(frozen=True)
class Item:
    """What to put on the table in a scripted scene: ``x`` is the centre as a fraction of the
    table's width, ``size`` scales the default size, ``inside`` puts an apple into the bowl
    with that index (in the item list)."""

    label: str
    x: float
    size: float = 1.0
    inside: Optional[int] = None


@dataclass
class SceneSpec:
    """A scripted scene for tests and benchmarks (random scenes come from :func:`random_scene`)."""

    items: list[Item] = field(default_factory=list)
    table: bool = True
    width: int = 640
    height: int = 480
    table_top: float = 0.55      # table surface height as a fraction of the image height
    table_span: tuple[float, float] = (0.08, 0.92)
    wall_color: tuple[int, int, int] = (200, 210, 215)


def kitchen_scene(width: int = 640, height: int = 480) -> SceneSpec:
    """The reference scene of the tests: a mug, a bowl with an apple in it and a bottle on a table."""
    return SceneSpec([Item("mug", 0.15), Item("bowl", 0.45), Item("apple", 0.45, inside=1), Item("bottle", 0.78)],
                     width=width, height=height)


# -- drawing --------------------------------------------------------------------------------

def _jitter(rng: np.random.Generator, color: Sequence[int], amount: int = 18) -> tuple[int, int, int]:
    return tuple(int(np.clip(c + rng.integers(-amount, amount + 1), 0, 255)) for c in color)


def _background(spec: SceneSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    import cv2

    h, w = spec.height, spec.width
    img = np.empty((h, w, 3), np.uint8)
    img[:] = _jitter(rng, spec.wall_color, 25)
    floor_y = int(h * rng.uniform(0.72, 0.8))
    img[floor_y:] = _jitter(rng, (120, 135, 150), 20)
    cv2.line(img, (0, floor_y), (w, floor_y), _jitter(rng, (90, 100, 110)), 2)
    # Things on the wall that are not objects of interest: frames, a shelf line.
    for _ in range(int(rng.integers(0, 3))):
        x, y = int(rng.integers(0, w - 60)), int(rng.integers(5, max(6, int(h * 0.3))))
        cv2.rectangle(img, (x, y), (x + int(rng.integers(30, 90)), y + int(rng.integers(20, 60))),
                      _jitter(rng, (110, 110, 110), 60), int(rng.integers(2, 5)))
    depth = np.full((h, w), WALL_DEPTH_M, np.float32)
    rows = np.arange(floor_y, h, dtype=np.float32)
    depth[floor_y:] = (WALL_DEPTH_M - (rows - floor_y) / max(1, h - floor_y) * 1.8)[:, None]
    return img, depth, floor_y


def _draw_table(img, depth, spec: SceneSpec, rng, floor_y: int) -> Placed:
    import cv2

    h, w = img.shape[:2]
    x1, x2 = int(spec.table_span[0] * w), int(spec.table_span[1] * w)
    top = int(spec.table_top * h)
    slab = max(6, int(0.045 * h))
    wood = _jitter(rng, (40, 85, 140), 20)
    bottom = min(h - 1, floor_y + int(0.06 * h))
    leg_w = max(6, int(0.025 * w))
    for lx in (x1 + int(0.04 * (x2 - x1)), x2 - int(0.04 * (x2 - x1)) - leg_w):
        cv2.rectangle(img, (lx, top + slab), (lx + leg_w, bottom), tuple(int(c * 0.8) for c in wood), -1)
        depth[top + slab:bottom + 1, lx:lx + leg_w + 1] = TABLE_DEPTH_M
    cv2.rectangle(img, (x1, top), (x2, top + slab), wood, -1)
    cv2.line(img, (x1, top), (x2, top), tuple(int(c * 1.2) % 256 for c in wood), 2)
    depth[top:top + slab + 1, x1:x2 + 1] = TABLE_DEPTH_M
    return Placed("table", (x1, top, x2 + 1, bottom + 1), TABLE_DEPTH_M)


def _draw_mug(img, cx: int, bottom: int, s: float, rng) -> tuple[int, int, int, int]:
    import cv2

    h = img.shape[0]
    bh = int(0.15 * h * s)
    bw = int(bh * rng.uniform(0.7, 0.9))
    color = _jitter(rng, [(180, 90, 30), (40, 40, 200), (230, 230, 230), (60, 160, 60)][int(rng.integers(4))], 25)
    x1, y1 = cx - bw // 2, bottom - bh
    cv2.rectangle(img, (x1, y1), (x1 + bw, bottom), color, -1)
    cv2.ellipse(img, (x1 + bw // 2, y1), (bw // 2, max(2, bh // 10)), 0, 0, 360, tuple(int(c * 0.6) for c in color), -1)
    hr = max(4, bh // 4)
    cv2.ellipse(img, (x1 + bw, y1 + bh // 2), (hr, int(hr * 1.3)), 0, -90, 90, color, max(3, bh // 12))
    return x1, y1 - max(2, bh // 10), x1 + bw + hr + max(3, bh // 12) // 2, bottom


def _draw_apple(img, cx: int, bottom: int, s: float, rng, clip_bottom: Optional[int] = None):
    import cv2

    h = img.shape[0]
    r = int(0.05 * h * s)
    color = _jitter(rng, [(30, 30, 200), (40, 170, 90)][int(rng.random() < 0.25)], 20)
    cy = bottom - r
    cv2.circle(img, (cx, cy), r, color, -1)
    cv2.circle(img, (cx - r // 3, cy - r // 3), max(2, r // 4), tuple(min(255, c + 60) for c in color), -1)
    cv2.line(img, (cx, cy - r), (cx + r // 5, cy - r - r // 2), (30, 60, 90), max(2, r // 6))
    cv2.ellipse(img, (cx + r // 3, cy - r - r // 4), (max(3, r // 3), max(2, r // 6)), -30, 0, 360, (40, 150, 40), -1)
    y2 = bottom if clip_bottom is None else min(bottom, clip_bottom)
    return cx - r, cy - r - r // 2 - 2, cx + r + 1, y2


def _draw_bowl(img, cx: int, bottom: int, s: float, rng, front_only: bool = False):
    import cv2

    h = img.shape[0]
    bw = int(0.22 * h * s)
    bh = int(bw * rng.uniform(0.38, 0.48))
    color = _jitter(rng, [(60, 140, 220), (200, 200, 200), (160, 80, 160)][int(rng.integers(3))], 25)
    rim_h = max(3, bh // 4)
    top = bottom - bh
    if not front_only:  # back of the rim (hidden behind an apple when something lies in the bowl)
        cv2.ellipse(img, (cx, top), (bw // 2, rim_h), 0, 180, 360, tuple(int(c * 0.55) for c in color), -1)
    cv2.ellipse(img, (cx, top), (bw // 2, bh), 0, 0, 180, color, -1)
    cv2.ellipse(img, (cx, top), (bw // 2, rim_h), 0, 0, 180, tuple(int(c * 0.75) for c in color), 2)
    return cx - bw // 2, top - rim_h, cx + bw // 2 + 1, bottom, top


def _draw_bottle(img, cx: int, bottom: int, s: float, rng):
    import cv2

    h = img.shape[0]
    bh = int(0.28 * h * s)
    bw = int(bh * rng.uniform(0.26, 0.34))
    color = _jitter(rng, [(40, 120, 40), (30, 70, 120), (150, 110, 60)][int(rng.integers(3))], 20)
    body_top = bottom - int(bh * 0.62)
    cv2.rectangle(img, (cx - bw // 2, body_top), (cx + bw // 2, bottom), color, -1)
    neck_w = max(4, bw // 3)
    neck_top = bottom - bh
    pts = np.array([[cx - bw // 2, body_top], [cx + bw // 2, body_top], [cx + neck_w // 2, body_top - bh // 6],
                    [cx - neck_w // 2, body_top - bh // 6]], np.int32)
    cv2.fillConvexPoly(img, pts, color)
    cv2.rectangle(img, (cx - neck_w // 2, neck_top + bh // 12), (cx + neck_w // 2, body_top - bh // 6), color, -1)
    cv2.rectangle(img, (cx - neck_w // 2 - 1, neck_top), (cx + neck_w // 2 + 1, neck_top + bh // 12),
                  _jitter(rng, (30, 30, 30), 20), -1)
    label_y = body_top + int(bh * 0.2)
    cv2.rectangle(img, (cx - bw // 2, label_y), (cx + bw // 2, label_y + bh // 6),
                  _jitter(rng, (235, 235, 235), 15), -1)
    return cx - bw // 2, neck_top, cx + bw // 2 + 1, bottom


def _draw_banana(img, cx: int, bottom: int, s: float, rng):
    import cv2

    h = img.shape[0]
    bw = int(0.2 * h * s)
    thick = max(5, bw // 6)
    bh = int(bw * 0.35)
    color = _jitter(rng, (40, 210, 235), 15)
    center = (cx, bottom - thick // 2 - bh)
    cv2.ellipse(img, center, (bw // 2, bh), 0, 20, 160, color, thick)
    for ang in (20, 160):
        t = np.deg2rad(ang)
        tip = (int(center[0] + bw / 2 * np.cos(t)), int(center[1] + bh * np.sin(t)))
        cv2.circle(img, tip, max(2, thick // 3), (20, 60, 90), -1)
    top = center[1] + int(bh * np.sin(np.deg2rad(20))) - thick // 2 - 2
    return cx - int(bw / 2 * np.cos(np.deg2rad(20))) - thick // 2, top, \
        cx + int(bw / 2 * np.cos(np.deg2rad(20))) + thick // 2 + 1, bottom


def render(spec: SceneSpec, seed: int = 0, noise: float = 4.0) -> Frame:
    """Draw a scripted scene. Same spec and seed -> the same frame, pixel for pixel."""
    import cv2

    rng = np.random.default_rng(seed)
    img, depth, floor_y = _background(spec, rng)
    objects: list[Placed] = []
    relations: list[tuple[str, int, int]] = []
    table_index = None
    if spec.table:
        objects.append(_draw_table(img, depth, spec, rng, floor_y))
        table_index = 0
        tx1, top, tx2, _ = objects[0].box
        surface = top + max(3, int(0.02 * spec.height))
    else:
        tx1, tx2, surface = 0, spec.width, floor_y + int(0.1 * spec.height)
    index_of_item: dict[int, int] = {}
    bowl_geometry: dict[int, tuple[int, int, int, float]] = {}  # item index -> (cx, rim_y, bottom, size)
    order = sorted(range(len(spec.items)), key=lambda i: spec.items[i].inside is not None)
    for i in order:
        item = spec.items[i]
        cx = int(tx1 + item.x * (tx2 - tx1))
        d = TABLE_DEPTH_M - 0.05
        if item.inside is not None:
            if item.label != "apple" or spec.items[item.inside].label != "bowl":
                raise ValueError("only an apple can be put inside a bowl in a synthetic scene")
            bcx, rim_y, bbottom, bsize = bowl_geometry[item.inside]
            # Redraw the bowl's front over the apple so that the apple sits inside it.
            r = int(0.05 * spec.height * item.size)
            box = _draw_apple(img, bcx, rim_y + r, item.size, rng, clip_bottom=rim_y + r)
            sub = np.random.default_rng(seed * 7919 + i)
            _draw_bowl(img, bcx, bbottom, bsize, sub, front_only=True)
            box = (box[0], box[1], box[2], min(box[3], rim_y + max(3, r // 2)))
            parent = index_of_item[item.inside]
            relations.append(("in", len(objects), parent))
        else:
            bottom = surface
            if item.label == "bowl":
                sub = np.random.default_rng(seed * 7919 + i)
                *box, rim_y = _draw_bowl(img, cx, bottom, item.size, sub)
                bowl_geometry[i] = (cx, rim_y, bottom, item.size)
                box = tuple(box)
            else:
                draw = {"mug": _draw_mug, "apple": _draw_apple, "bottle": _draw_bottle, "banana": _draw_banana}
                if item.label not in draw:
                    raise ValueError(f"unknown synthetic object {item.label!r}; known: {', '.join(SMALL)}")
                box = draw[item.label](img, cx, bottom, item.size, rng)
            if table_index is not None:
                relations.append(("on", len(objects), table_index))
        x1, y1, x2, y2 = (int(np.clip(box[0], 0, spec.width)), int(np.clip(box[1], 0, spec.height)),
                          int(np.clip(box[2], 0, spec.width)), int(np.clip(box[3], 0, spec.height)))
        depth[y1:y2, x1:x2] = d if item.inside is None else d + 0.02
        index_of_item[i] = len(objects)
        objects.append(Placed(item.label, (x1, y1, x2, y2), d))
    if noise > 0:
        img = np.clip(img.astype(np.float32) * rng.uniform(0.85, 1.15) + rng.normal(0, noise, img.shape), 0, 255
                      ).astype(np.uint8)
        img = cv2.GaussianBlur(img, (3, 3), 0)
    f = 0.9 * spec.width  # a ~60 degree horizontal field of view
    return Frame(img, depth, objects, relations, (f, f, spec.width / 2.0, spec.height / 2.0))


# Approximate drawn width of each object, as a fraction of the image height (size 1.0).
_WIDTH = {"mug": 0.17, "apple": 0.1, "bowl": 0.22, "bottle": 0.09, "banana": 0.2}


def random_scene(rng: np.random.Generator, width: int = 640, height: int = 480) -> SceneSpec:
    """A random table scene for training and benchmarks: 1-6 objects side by side, none
    overlapping, maybe an apple in a bowl, random table height, extent and wall colour."""
    left, right = float(rng.uniform(0.0, 0.15)), float(rng.uniform(0.8, 1.0))
    table_px = (right - left) * width
    items: list[Item] = []
    x_px = float(rng.uniform(0.02, 0.2)) * table_px
    for _ in range(int(rng.integers(1, 7))):
        label = SMALL[int(rng.integers(0, len(SMALL)))]
        size = float(rng.uniform(0.75, 1.25))
        w = _WIDTH[label] * height * size
        if x_px + w > table_px * 0.98:
            break
        items.append(Item(label, (x_px + w / 2) / table_px, size))
        x_px += w + float(rng.uniform(0.02, 0.15)) * table_px
    bowls = [i for i, it in enumerate(items) if it.label == "bowl"]
    if bowls and rng.random() < 0.6:
        b = bowls[0]
        items.append(Item("apple", items[b].x, float(rng.uniform(0.8, 1.0)) * items[b].size, inside=b))
    return SceneSpec(items, table=rng.random() > 0.1, width=width, height=height,
                     table_top=float(rng.uniform(0.45, 0.62)), table_span=(left, right),
                     wall_color=tuple(int(c) for c in rng.integers(120, 240, 3)))
