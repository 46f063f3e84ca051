#!/usr/bin/env python3
"""Train the small detector shipped in config/models/kitchen_shapes.pt, on CPU, in minutes.

No detector weights can be downloaded on the machines this project is built on, so it makes its
own: it draws random kitchen table scenes with OpenCV (affplan_ros/sim/camera.py: tables, mugs,
apples, bowls, bottles, bananas, each with its ground-truth box), writes them as a YOLO dataset
and trains the tiny architecture of config/models/kitchen_shapes.yaml with ultralytics.

    .venv/bin/python scripts/train_detector.py                 # the shipped weights (defaults)
    .venv/bin/python scripts/train_detector.py --epochs 5 --out /tmp/quick.pt

Writes the weights (optimizer stripped, fp16) and a JSON card beside them with the settings, the
validation metrics and the versions used. Same seed and versions -> the same data and, on the
same CPU build of torch, the same weights. The detector only knows these drawings: it is for
tests, benchmarks and simulation, not for real camera images (see config/models/README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

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
    data = folder / "data.yaml"
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(LABELS))
    data.write_text(f"path: {folder}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    return data


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "config" / "models" / "kitchen_shapes.pt"), help="weight file to write")
    p.add_argument("--model", default=str(ROOT / "config" / "models" / "kitchen_shapes.yaml"), help="architecture YAML")
    p.add_argument("--train-images", type=int, default=300)
    p.add_argument("--val-images", type=int, default=60)
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--imgsz", type=int, default=320)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=0.002, help="AdamW learning rate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--keep", help="keep the dataset and the training run in this folder")
    args = p.parse_args(argv)

    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".cache" / "ultralytics"))
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="affplan_train_"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    data = write_dataset(work / "data", args.train_images, args.val_images, args.seed, 640, 480)
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
                close_mosaic=max(1, args.epochs // 6), patience=args.epochs)
    t_train = time.monotonic() - t1
    best = work / "runs" / "train" / "weights" / "best.pt"
    metrics = YOLO(str(best)).val(data=str(data), imgsz=args.imgsz, device="cpu", plots=False, verbose=False)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(best, out)  # ultralytics already stripped the optimizer and saved fp16
    card = {
        "weights": out.name,
        "size_bytes": out.stat().st_size,
        "classes": list(YOLO(str(out)).names.values()),
        "architecture": Path(args.model).name,
        "train_images": args.train_images, "val_images": args.val_images, "image_size": [640, 480],
        "epochs": args.epochs, "imgsz": args.imgsz, "batch": args.batch, "lr": args.lr, "seed": args.seed,
        "val_map50": round(float(metrics.box.map50), 4), "val_map50_95": round(float(metrics.box.map), 4),
        "val_precision": round(float(metrics.box.mp), 4), "val_recall": round(float(metrics.box.mr), 4),
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


if __name__ == "__main__":
    sys.exit(main())
