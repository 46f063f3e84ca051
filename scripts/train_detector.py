#!/usr/bin/env python3
"""Train the small detectors shipped in config/models/ (kitchen_shapes.pt, kitchen_physics.pt) on CPU.

No detector weights can be downloaded on the machines this project is built on, so it makes its
own, from one of two sources, written as a YOLO dataset, and trains the tiny architecture of
config/models/kitchen_shapes.yaml with ultralytics (its class count set from the dataset):

* ``--source drawn`` (default): random kitchen table scenes drawn with OpenCV
  (affplan_ros/sim/camera.py: tables, mugs, apples, bowls, bottles, bananas, each with its
  ground-truth box) -> kitchen_shapes.pt;
* ``--source physics``: the robot's head camera in random MuJoCo kitchens, labelled from the
  renderer's segmentation (affplan_ros/sim/physics/dataset.py: CLASSES, seeds) ->
  kitchen_physics.pt. Training is bounded by ``--time`` (hours; ultralytics fits the epochs into it).

    .venv/bin/python scripts/train_detector.py                 # the shipped drawn weights (defaults)
    .venv/bin/python scripts/train_detector.py --source physics    # the shipped physics weights
    .venv/bin/python scripts/train_detector.py --epochs 5 --out /tmp/quick.pt

Writes the weights (optimizer stripped, fp16) and a JSON card beside them with the settings, the
validation metrics and the versions used. Same seed and versions -> the same data and, on the
same CPU build of torch, the same weights (a --time bound makes the epoch count depend on the
machine's speed). The detectors only know these images: they are for tests, benchmarks and
simulation, not for real camera images (see config/models/README.md).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def write_dataset(folder: Path, n_train: int, n_val: int, seed: int, width: int, height: int) -> Path:
    import cv2
    import numpy as np

    from affplan_ros.sim.camera import LABELS, random_scene, render

    rng = np.random.default_rng(seed)
    for split, count in (("train", n_train), ("val", n_val)):
        (folder / "images" / split).mkdir(parents=True, exist_ok=True)
        (folder / "labels" / split).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            frame = render(random_scene(rng, width, height), seed=int(rng.integers(1 << 31)))
            stem = f"{split}_{i:05d}"
            cv2.imwrite(str(folder / "images" / split / f"{stem}.jpg"), frame.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
            lines = []
            for obj in frame.objects:
                x1, y1, x2, y2 = obj.box
                if x2 - x1 < 3 or y2 - y1 < 3:
                    continue
                lines.append(f"{LABELS.index(obj.label)} {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
                             f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}")
            (folder / "labels" / split / f"{stem}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
    return _data_yaml(folder, LABELS)


def write_physics_dataset(folder: Path, n_train: int, n_val: int, seed: int, width: int, height: int) -> Path:
    """Head camera views of random physics kitchens: training views from ``seed``, validation views
    from ``seed + 1`` (dataset.py: held-back evaluation seeds start at EVAL_SEED, far above)."""
    # Rendered in a process of its own: once Mesa's EGL (with its LLVM) is loaded, importing
    # triton, which ultralytics' training does through torch, crashes the process (segfault).
    ctx = multiprocessing.get_context("spawn")
    child = ctx.Process(target=_write_physics_views, args=(folder, n_train, n_val, seed, width, height))
    child.start()
    child.join()
    if child.exitcode != 0:
        raise SystemExit(f"writing the physics dataset failed (exit code {child.exitcode})")
    from affplan_ros.sim.physics.dataset import CLASSES  # no rendering: safe in this process
    return _data_yaml(folder, CLASSES)


def _write_physics_views(folder: Path, n_train: int, n_val: int, seed: int, width: int, height: int) -> None:
    import cv2

    from affplan_ros.sim.physics.dataset import CLASSES, EVAL_SEED, random_views

    if seed + 1 >= EVAL_SEED:
        raise SystemExit(f"--seed {seed}: seeds from {EVAL_SEED - 1} on would train on the held-back evaluation views")
    for split, count, split_seed in (("train", n_train, seed), ("val", n_val, seed + 1)):
        (folder / "images" / split).mkdir(parents=True, exist_ok=True)
        (folder / "labels" / split).mkdir(parents=True, exist_ok=True)
        for i, view in enumerate(random_views(split_seed, count, width, height)):
            stem = f"{split}_{i:05d}"
            cv2.imwrite(str(folder / "images" / split / f"{stem}.png"), cv2.cvtColor(view.rgb, cv2.COLOR_RGB2BGR))
            lines = [f"{CLASSES.index(b.label)} {(b.box[0] + b.box[2]) / 2 / width:.6f} "
                     f"{(b.box[1] + b.box[3]) / 2 / height:.6f} {(b.box[2] - b.box[0]) / width:.6f} "
                     f"{(b.box[3] - b.box[1]) / height:.6f}" for b in view.boxes]
            (folder / "labels" / split / f"{stem}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))


def _data_yaml(folder: Path, labels: Sequence[str]) -> Path:
    data = folder / "data.yaml"
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(labels))
    data.write_text(f"path: {folder}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    return data


# Per source: weight file, image counts, rendered image size, epochs, training time bound (hours).
DEFAULTS = {
    "drawn": {"out": "kitchen_shapes.pt", "train_images": 300, "val_images": 60, "size": (640, 480),
              "epochs": 60, "time": None},
    # 320x240 is what the physics camera streams (sim_world); 0.45 h keeps training under 30 min.
    "physics": {"out": "kitchen_physics.pt", "train_images": 600, "val_images": 120, "size": (320, 240),
                "epochs": 60, "time": 0.45},
}


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", choices=sorted(DEFAULTS), default="drawn",
                   help="drawn: OpenCV drawings (kitchen_shapes.pt); "
                        "physics: MuJoCo head camera views (kitchen_physics.pt)")
    p.add_argument("--out", help="weight file to write (default: config/models/<the source's weights>)")
    p.add_argument("--model", default=str(ROOT / "config" / "models" / "kitchen_shapes.yaml"), help="architecture YAML")
    p.add_argument("--train-images", type=int, help="default: 300 drawn, 600 physics")
    p.add_argument("--val-images", type=int, help="default: 60 drawn, 120 physics")
    p.add_argument("--epochs", type=int, help="default: 60 (physics: as many of them as fit into --time)")
    p.add_argument("--time", type=float, help="training time bound in hours (ultralytics `time`); default: "
                                               "none drawn, 0.45 physics; 0: none")
    p.add_argument("--imgsz", type=int, default=320)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.002, help="AdamW learning rate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--keep", help="keep the dataset and the training run in this folder")
    args = p.parse_args(argv)
    defaults = DEFAULTS[args.source]
    for key in ("train_images", "val_images", "epochs", "time"):
        if getattr(args, key) is None:
            setattr(args, key, defaults[key])
    args.out = args.out or str(ROOT / "config" / "models" / defaults["out"])
    width, height = defaults["size"]
    write = write_physics_dataset if args.source == "physics" else write_dataset

    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".cache" / "ultralytics"))
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="affplan_train_"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    data = write(work / "data", args.train_images, args.val_images, args.seed, width, height)
    t_data = time.monotonic() - t0
    print(f"dataset: {args.train_images} train + {args.val_images} val images in {t_data:.0f} s -> {data}", flush=True)

    import torch
    import ultralytics
    from ultralytics import YOLO

    model = YOLO(args.model)
    t1 = time.monotonic()
    model.train(data=str(data), epochs=args.epochs, imgsz=args.imgsz, batch=args.batch, device="cpu",
                workers=args.workers, seed=args.seed, deterministic=True, plots=False, amp=False,
                project=str(work / "runs"), name="train", exist_ok=True, verbose=False,
                # A tiny model from scratch: a higher learning rate and a short warm-up converge in
                # fewer epochs than ultralytics' automatic choice (AdamW 0.001, 3 warm-up epochs).
                optimizer="AdamW", lr0=args.lr, warmup_epochs=1,
                close_mosaic=max(1, args.epochs // 6), patience=args.epochs, time=args.time or None)
    t_train = time.monotonic() - t1
    best = work / "runs" / "train" / "weights" / "best.pt"
    epochs_run = _epochs_run(work / "runs" / "train")
    metrics = YOLO(str(best)).val(data=str(data), imgsz=args.imgsz, device="cpu", plots=False, verbose=False)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(best, out)  # ultralytics already stripped the optimizer and saved fp16
    card = {
        "weights": out.name,
        "size_bytes": out.stat().st_size,
        "classes": list(YOLO(str(out)).names.values()),
        "architecture": Path(args.model).name,
        "source": args.source,
        "train_images": args.train_images, "val_images": args.val_images, "image_size": [width, height],
        "epochs": args.epochs, "imgsz": args.imgsz, "batch": args.batch, "lr": args.lr, "seed": args.seed,
        **({"time_hours": args.time, "epochs_run": epochs_run} if args.time else {}),
        "val_map50": round(float(metrics.box.map50), 4), "val_map50_95": round(float(metrics.box.map), 4),
        "val_precision": round(float(metrics.box.mp), 4), "val_recall": round(float(metrics.box.mr), 4),
        **({"val_per_class": _per_class(metrics)} if args.source == "physics" else {}),
        "dataset_seconds": round(t_data, 1), "train_seconds": round(t_train, 1),
        "cpu_threads": torch.get_num_threads(),
        "versions": {"ultralytics": ultralytics.__version__, "torch": torch.__version__},
        "command": "python scripts/train_detector.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    out.with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card, indent=2))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _epochs_run(run: Path) -> Optional[int]:
    """Epochs trained (ultralytics' results.csv has a row per epoch); None if it is missing."""
    csv = run / "results.csv"
    return len(csv.read_text().strip().splitlines()) - 1 if csv.is_file() else None


def _per_class(metrics) -> dict[str, dict[str, float]]:
    """Validation precision, recall, mAP50, mAP50-95 and instance count per class that occurs there."""
    out = {}
    for i, c in enumerate(metrics.ap_class_index):
        p, r, ap50, ap = metrics.class_result(i)
        out[metrics.names[int(c)]] = {"precision": round(float(p), 4), "recall": round(float(r), 4),
                                      "map50": round(float(ap50), 4), "map50_95": round(float(ap), 4),
                                      "instances": int(metrics.nt_per_class[int(c)])}
    return out


if __name__ == "__main__":
    sys.exit(main())
