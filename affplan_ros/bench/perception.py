"""`affplan bench perception`: detector inference time per frame and OAD time, on CPU, on drawn frames.

Renders ``--frames`` random kitchen scenes with the synthetic camera (``sim/camera.py``: colour +
depth + intrinsics), runs the perception pipeline on each (detector, OAD with tracking, relations
with depth, assumptions, annotation) and reports medians of the per-frame times. Because every
frame has ground truth, it also scores the detector (precision/recall at IoU 0.5, after synonyms)
and the on/in relations.

``--model`` is any ultralytics model: the shipped ``models/kitchen_shapes.pt`` (default), your
weights, or an architecture YAML such as ``yolo11n.yaml`` (untrained, but the same computation as
the trained model: what a real robot's detector costs per frame on this CPU).

Writes results.json, summary.md and perception_bench.png to --out.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from affplan_ros.bench.frame import command, output_option, save, setup_errors


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="models/kitchen_shapes.pt",
                        help="weights or architecture YAML; relative paths also looked up in config/ "
                             "(default: %(default)s)")
    parser.add_argument("--imgsz", type=int, default=0,
                        help="detector input size; 0 = the size the model was trained at, else 640 (default)")
    parser.add_argument("--frames", type=int, default=50, help="frames to time (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed frames first (default: %(default)s)")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--confidence", type=float, default=0.35)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    parser.add_argument("--settings", help="perception settings YAML (default: config/perception_settings.yaml)")
    output_option(parser, "perception")


def _match(objects, truth, synonyms: dict[str, str]) -> tuple[int, int, int, dict]:
    """Greedy IoU >= 0.5 matching of detected objects to drawn ones of the same class."""
    from affplan_ros.core.perception.oad import iou

    gt = [(synonyms.get(t.label, t.label), t.box) for t in truth]
    used: set[int] = set()
    mapping = {}
    tp = 0
    for o in sorted(objects, key=lambda o: -o.confidence):
        best, best_iou = None, 0.5
        for i, (cls, box) in enumerate(gt):
            if i not in used and cls == o.class_name and iou(o.box, box) >= best_iou:
                best, best_iou = i, iou(o.box, box)
        if best is not None:
            used.add(best)
            mapping[best] = o.name
            tp += 1
    return tp, len(objects) - tp, len(gt) - tp, mapping


@command
def run(args: argparse.Namespace) -> int:
    import numpy as np

    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.core.perception.detection import DetectorError
    from affplan_ros.core.perception.pipeline import (
        PerceptionConfigError,
        PerceptionPipeline,
        PerceptionSettings,
    )
    from affplan_ros.env import config_file, share_dir
    from affplan_ros.sim.camera import random_scene, render

    with setup_errors(PerceptionConfigError, DetectorError):
        settings = PerceptionSettings.from_file(config_file("perception_settings.yaml", args.settings or ""),
                                                {"model": args.model, "imgsz": args.imgsz,
                                                 "confidence": args.confidence})
        pipeline = PerceptionPipeline(settings, load_oam())
        t0 = time.perf_counter()
        detector = pipeline.load_detector([share_dir() / "config", Path.cwd()])
        load_s = time.perf_counter() - t0
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    synonyms = settings.detector.synonyms
    frames = []
    for i in range(args.warmup + args.frames):
        frame = render(random_scene(rng, args.width, args.height), seed=int(rng.integers(1 << 31)))
        pipeline.oad.tracker.reset()  # independent scenes: no tracking across them
        obs = pipeline.process(frame.image, frame.depth, frame.intrinsics)
        if i < args.warmup:
            continue
        tp, fp, fn, names = _match(obs.objects, frame.objects, synonyms)
        truth_rel = {(p, names.get(c), names.get(s)) for p, c, s in frame.relations}
        found_rel = {(r.predicate, *r.args) for r in obs.relations if not r.assumed}
        rel_tp = len(truth_rel & found_rel)
        frames.append({"objects_drawn": len(frame.objects), "objects_detected": len(obs.objects),
                       "tp": tp, "fp": fp, "fn": fn, "relations_true": len(frame.relations),
                       "relations_found": len(found_rel), "relations_correct": rel_tp,
                       **{f"{k}_ms": v * 1000 for k, v in obs.timings.items()}})
    med = {k: statistics.median(f[k] for f in frames) for k in ("detect_ms", "oad_ms", "relations_ms", "annotate_ms")}
    tp, fp, fn = (sum(f[k] for f in frames) for k in ("tp", "fp", "fn"))
    rt, rf, rc = (sum(f[k] for f in frames) for k in ("relations_true", "relations_found", "relations_correct"))
    result = {
        "benchmark": "perception", "model": args.model, "detector_kind": detector.kind, "labels": detector.labels,
        "imgsz": detector.imgsz, "image": [args.width, args.height], "frames": args.frames, "warmup": args.warmup,
        "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "device": settings.detector.device,
        "model_load_s": load_s,
        "median_ms": {**med, "oad_total_ms": statistics.median(f["oad_ms"] + f["relations_ms"] for f in frames),
                      "frame_ms": statistics.median(sum(f[k] for k in ("detect_ms", "oad_ms", "relations_ms",
                                                                       "annotate_ms")) for f in frames)},
        "p90_detect_ms": float(np.percentile([f["detect_ms"] for f in frames], 90)),
        "detection": {"precision": tp / (tp + fp) if tp + fp else 0.0, "recall": tp / (tp + fn) if tp + fn else 0.0,
                      "tp": tp, "fp": fp, "fn": fn},
        "relations": {"precision": rc / rf if rf else 0.0, "recall": rc / rt if rt else 0.0,
                      "correct": rc, "found": rf, "true": rt},
        "per_frame": frames,
    }
    print(_summary(result))
    save(args.out, result, _summary(result), plot=("perception_bench.png", lambda path: _plot(result, path)))
    return 0


def _summary(r: dict) -> str:
    m = r["median_ms"]
    d, rel = r["detection"], r["relations"]
    return "\n".join([
        f"# Perception time per frame (CPU, {r['torch_threads']} torch threads, median of {r['frames']} frames)", "",
        f"* model `{r['model']}` ({r['detector_kind']}, {len(r['labels'])} labels), input {r['imgsz']} px, "
        f"frames {r['image'][0]}x{r['image'][1]} drawn by sim/camera.py; model load {r['model_load_s']:.1f} s", "",
        "| step | median ms |", "|---|---:|",
        f"| detector inference (ultralytics predict) | {m['detect_ms']:.1f} |",
        f"| OAD (OAM lookup, tracking, 3D positions) | {m['oad_ms']:.2f} |",
        f"| relations + assumptions | {m['relations_ms']:.2f} |",
        f"| OAD + relations | {m['oad_total_ms']:.2f} |",
        f"| annotated image | {m['annotate_ms']:.2f} |",
        f"| whole frame | {m['frame_ms']:.1f} |", "",
        f"90th percentile of detector inference: {r['p90_detect_ms']:.1f} ms", "",
        f"Detection vs. drawn ground truth (IoU >= 0.5): precision {d['precision']:.3f}, recall {d['recall']:.3f} "
        f"({d['tp']} TP, {d['fp']} FP, {d['fn']} FN). Relations on/in: precision {rel['precision']:.3f}, "
        f"recall {rel['recall']:.3f} ({rel['correct']} of {rel['true']} true, {rel['found']} found).", ""])


def _plot(r: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    det = [f["detect_ms"] for f in r["per_frame"]]
    oad = [f["oad_ms"] + f["relations_ms"] for f in r["per_frame"]]
    for ax, values, median, color, what in ((a, det, r["median_ms"]["detect_ms"], "tab:blue", "detector inference"),
                                            (b, oad, r["median_ms"]["oad_total_ms"], "tab:orange", "OAD + relations")):
        ax.hist(values, bins=20, color=color)
        ax.axvline(median, color="k", ls="--", label=f"median {median:.2f} ms")
        ax.set_xlabel(f"{what} per frame (ms)")
        ax.legend(fontsize=8)
    fig.suptitle(f"{r['model']} at {r['imgsz']} px, {r['frames']} frames, CPU", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
