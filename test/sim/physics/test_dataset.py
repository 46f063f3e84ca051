"""Labelled views of physics worlds (sim/physics/dataset.py): labels from the segmentation
rendering, what a closed door hides, determinism per seed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import product
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.physics.camera import HeadCamera
from affplan_ros.sim.physics.dataset import CLASSES, EVAL_SEED, LabelledBox, label_view, random_view, stand_and_look
from affplan_ros.sim.physics.world import PhysicsWorld, build_world

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "config" / "models" / "kitchen_physics.pt"
APPLE_PX = 150       # an apple of at least this many visible pixels (about 14 px across at 320x240)


def kitchen(relations: str, locations: str) -> PhysicsWorld:
    """A table, a counter and a refrigerator, an apple and a cup, placed by ``relations``."""
    return build_world(parse_scene_text(
        "SCENE-DESCRIPTION\nOBJECTS\ntable:0\ncounter:0\nrefrigerator:0\napple:0\ncup:0\nrobot:0\nEND-OBJECTS\n"
        f"RELATIONS\n{relations}\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\n{locations}\nEND-LOCATIONS\n"))


def look(world: PhysicsWorld, target: str) -> tuple[object, dict[str, LabelledBox]]:
    stand_and_look(world, target)
    camera = HeadCamera(world, 320, 240)
    try:
        frame, boxes = label_view(world, camera)
    finally:
        camera.close()
    return frame, {b.name: b for b in boxes}


def projected_box(frame, world: PhysicsWorld, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Image corners of the 2-D box round the projection of ``name``'s 3-D bounding box."""
    thing = world.thing(name)
    sx, sy, sz = thing.props.size
    sy, sz = (sx, sx) if thing.props.shape == "sphere" else (sx if thing.props.shape == "cylinder" else sy, sz)
    half = np.array([sx, sy, sz]) / 2
    pixels = np.array([frame.pixel_of(world.position(name) + world.rotation(name) @ (half * np.array(s)))[:2]
                       for s in product((-1, 1), repeat=3)])
    return pixels.min(axis=0), pixels.max(axis=0)


def inside(box: tuple[int, int, int, int], u: float, v: float) -> bool:
    return box[0] <= u < box[2] and box[1] <= v < box[3]


def test_a_box_is_where_its_object_is_and_only_known_classes_are_labelled():
    world = kitchen("on apple:0 table:0\non cup:0 table:0\nclosed refrigerator:0",
                    "table0 table:0 apple:0 cup:0\ncounter0 counter:0\nrefrigerator0 refrigerator:0")
    frame, boxes = look(world, "table0")
    assert {"apple0", "cup0", "table0"} <= set(boxes), boxes
    for name in ("apple0", "cup0"):
        box = boxes[name]
        u, v, z = frame.pixel_of(world.position(name))
        assert inside(box.box, u, v), (name, box, u, v)
        # Tight: within the projection of the object's bounding box (its visible pixels only).
        lo, hi = projected_box(frame, world, name)
        assert lo[0] - 2 <= box.box[0] and lo[1] - 2 <= box.box[1], (name, box, lo)
        assert box.box[2] <= hi[0] + 2 and box.box[3] <= hi[1] + 2, (name, box, hi)
        # The box's centre pixel shows the object: its depth is about the object's distance.
        cu, cv = (box.box[0] + box.box[2]) // 2, (box.box[1] + box.box[3]) // 2
        assert abs(float(frame.depth[cv, cu]) - z) < 0.08, (name, frame.depth[cv, cu], z)
    assert boxes["apple0"].label == "apple" and boxes["cup0"].label == "cup"
    # The table fills the lower image, less what stands on it: a pixel belongs to one thing only.
    table = boxes["table0"]
    area = (table.box[2] - table.box[0]) * (table.box[3] - table.box[1])
    hidden = boxes["cup0"].visible_px + boxes["apple0"].visible_px
    assert 5 * boxes["cup0"].visible_px < table.visible_px <= area - hidden
    # The robot's own arms, the walls and the floor get no box.
    assert all(b.label in CLASSES for b in boxes.values())
    assert not any(name.startswith("robot") for name in boxes)


def test_an_apple_in_the_closed_refrigerator_has_no_box_and_has_one_with_the_door_open():
    locations = "table0 table:0 cup:0\ncounter0 counter:0\nrefrigerator0 refrigerator:0 apple:0"
    closed = kitchen("in apple:0 refrigerator:0\non cup:0 table:0\nclosed refrigerator:0", locations)
    frame, boxes = look(closed, "refrigerator0")
    assert "refrigerator0" in boxes
    # The apple lies within the picture, behind the door: the camera cannot see it.
    u, v, _ = frame.pixel_of(closed.position("apple0"))
    assert 0 <= u < 320 and 0 <= v < 240
    assert "apple0" not in boxes, boxes
    opened = kitchen("in apple:0 refrigerator:0\non cup:0 table:0\nopened refrigerator:0", locations)
    frame, boxes = look(opened, "refrigerator0")
    assert "apple0" in boxes, boxes
    u, v, _ = frame.pixel_of(opened.position("apple0"))
    assert inside(boxes["apple0"].box, u, v)


def test_the_same_seed_gives_the_same_view_and_another_index_another():
    a, b = random_view(EVAL_SEED, 3), random_view(EVAL_SEED, 3)
    assert a.scene == b.scene == f"seed {EVAL_SEED} view 3"
    assert np.array_equal(a.rgb, b.rgb) and a.boxes == b.boxes and a.boxes
    assert a.rgb.shape == (240, 320, 3) and a.depth.shape == (240, 320) and a.depth.dtype == np.float32
    c = random_view(EVAL_SEED, 4)
    assert not np.array_equal(a.rgb, c.rgb)


DETECT = """
import json, sys
import cv2
from affplan_ros.core.perception.detection import Detector, DetectorConfig
detector = Detector(DetectorConfig(model=sys.argv[1], confidence=0.25))
print(json.dumps([[(d.class_name, d.confidence, d.box) for d in detector.detect(cv2.imread(p))] for p in sys.argv[2:]]))
"""


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


@pytest.mark.slow
def test_the_shipped_physics_detector_finds_the_apple_on_held_back_views(tmp_path):
    assert MODEL.is_file(), f"{MODEL} is missing: run scripts/train_detector.py --source physics"
    # The first held-back views (seeds training never saw) that show an apple well enough.
    shown: list[tuple[Path, tuple[int, int, int, int]]] = []
    for index in range(120):
        view = random_view(EVAL_SEED, index)
        apples = [b for b in view.boxes if b.label == "apple" and b.visible_px >= APPLE_PX
                  and 0 < b.box[0] and 0 < b.box[1] and b.box[2] < 320 and b.box[3] < 240]  # in full view
        if apples:
            path = tmp_path / f"view{index}.png"
            cv2.imwrite(str(path), cv2.cvtColor(view.rgb, cv2.COLOR_RGB2BGR))
            shown.append((path, apples[0].box))
        if len(shown) == 3:
            break
    assert len(shown) == 3
    # Inference in a process of its own: ultralytics imports triton, which crashes a process that
    # has already rendered with Mesa's EGL (both bring their own LLVM).
    out = subprocess.run([sys.executable, "-c", DETECT, str(MODEL), *(str(p) for p, _ in shown)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "YOLO_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    detections = json.loads(out.stdout.strip().splitlines()[-1])
    for (path, truth), found in zip(shown, detections):
        apples = [box for cls, _, box in found if cls == "apple"]
        assert any(iou(box, truth) >= 0.5 for box in apples), (path.name, truth, found)
