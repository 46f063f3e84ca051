"""`affplan bench perception`: detector inference time per frame and OAD time, on CPU, on drawn or
rendered physics frames, with the detector and the on/in relations scored against ground truth.

``--source drawn`` (default) renders ``--frames`` random kitchen scenes with the synthetic camera
(``sim/camera.py``: colour + depth + intrinsics); ``--source physics`` takes held-back rendered
views of the MuJoCo physics world (``sim/physics/dataset.py``, seeds from its evaluation range,
never the training ones: ``bench/perception_physics.py``). Each frame goes through the perception
pipeline (detector, OAD with tracking, relations with depth, assumptions, annotation); the report
gives medians of the per-frame times and, because every frame has ground truth, the detector's
precision/recall at IoU 0.5 (after synonyms), overall and per class, and the on/in relations: for
each detected object matched to a ground-truth one, its estimated parent (tracker names mapped
through the matching) against the true one (drawn, or read from the physics state by
``sim/physics/relations.py``), as precision, recall and accuracy per predicate.

``--model`` is any ultralytics model: the shipped ``models/kitchen_shapes.pt`` (default for drawn
frames), ``models/kitchen_physics.pt`` (default for physics frames), your weights, or an
architecture YAML such as ``yolo11n.yaml`` (untrained, but the same computation as the trained
model: what a real robot's detector costs per frame on this CPU).

Writes results.json, summary.md and perception_bench.png to --out.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from affplan_ros.bench.frame import BenchSetupError, command, output_option, save, setup_errors

SOURCES = {  # --source -> (default model, default width, default height)
    "drawn": ("models/kitchen_shapes.pt", 640, 480),
    "physics": ("models/kitchen_physics.pt", 320, 240),
}
PREDICATES = ("on", "in")
Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class View:
    """One frame with its ground truth, whatever drew it."""

    image_bgr: object                      # (h, w, 3) uint8
    depth: object                          # (h, w) float32 metres
    intrinsics: tuple[float, float, float, float]
    labels: list[str]                      # ground-truth class per box
    boxes: list[Box]
    relations: list[tuple[str, int, Optional[int]]]  # (predicate, child, parent) indices; parent None: not in view
    movable: frozenset[int]                # boxes that can be on or in something (scored for relations)
    source_s: float = 0.0                  # seconds to draw or render it
    scene: str = ""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", choices=tuple(SOURCES), default="drawn",
                        help="drawn: OpenCV scenes (sim/camera.py); physics: held-back rendered views of the "
                             "MuJoCo world (sim/physics/dataset.py) (default: %(default)s)")
    parser.add_argument("--model", default=None,
                        help="weights or architecture YAML; relative paths also looked up in config/ (default: "
                             + ", ".join(f"{m} for {s}" for s, (m, _, _) in SOURCES.items()) + ")")
    parser.add_argument("--imgsz", type=int, default=0,
                        help="detector input size; 0 = the size the model was trained at, else 640 (default)")
    parser.add_argument("--frames", type=int, default=50, help="frames to time (default: %(default)s)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed frames first (default: %(default)s)")
    parser.add_argument("--width", type=int, default=None, help="default: 640 drawn, 320 physics")
    parser.add_argument("--height", type=int, default=None, help="default: 480 drawn, 240 physics")
    parser.add_argument("--seed", type=int, default=None,
                        help="drawn: default 1; physics: the first view's seed, default the dataset's first "
                             "evaluation seed (training seeds are refused)")
    parser.add_argument("--confidence", type=float, default=0.35)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    parser.add_argument("--settings", help="perception settings YAML (default: config/perception_settings.yaml)")
    output_option(parser, "perception")


def drawn_views(seed: int, count: int, width: int, height: int) -> Iterator[View]:
    """Random drawn kitchen scenes (sim/camera.py): everything but the table stands on or in something."""
    import numpy as np

    from affplan_ros.sim.camera import random_scene, render

    rng = np.random.default_rng(seed)
    for _ in range(count):
        t0 = time.perf_counter()
        frame = render(random_scene(rng, width, height), seed=int(rng.integers(1 << 31)))
        yield View(frame.image, frame.depth, frame.intrinsics, [o.label for o in frame.objects],
                   [o.box for o in frame.objects], list(frame.relations),
                   frozenset(c for _, c, _ in frame.relations), time.perf_counter() - t0)


def _match(objects, labels: list[str], boxes: list[Box], synonyms: dict[str, str]) -> dict[int, object]:
    """Greedy IoU >= 0.5 matching of detected objects to ground-truth boxes of the same class:
    ground-truth index -> the object matched to it."""
    from affplan_ros.core.perception.oad import iou

    gt = [(synonyms.get(label, label), box) for label, box in zip(labels, boxes)]
    mapping = {}
    for o in sorted(objects, key=lambda o: -o.confidence):
        best, best_iou = None, 0.5
        for i, (cls, box) in enumerate(gt):
            if i not in mapping and cls == o.class_name and iou(o.box, box) >= best_iou:
                best, best_iou = i, iou(o.box, box)
        if best is not None:
            mapping[best] = o
    return mapping


def _class_counts(objects, view: View, matched: dict[int, object], synonyms: dict[str, str]) -> dict[str, Counter]:
    """tp/fn per ground-truth class, fp per detected class, gt boxes per class."""
    out: dict[str, Counter] = {}
    for i, label in enumerate(view.labels):
        c = out.setdefault(synonyms.get(label, label), Counter())
        c["gt"] += 1
        c["tp" if i in matched else "fn"] += 1
    hits = {id(o) for o in matched.values()}
    for o in objects:
        if id(o) not in hits:
            out.setdefault(o.class_name, Counter())["fp"] += 1
    return out


def _relation_counts(view: View, matched: dict[int, str], found: set[tuple[str, ...]]) -> dict[str, Counter]:
    """Per predicate, over the detected objects matched to ground truth (``matched``: index -> tracker
    name; ``found``: the estimated (predicate, child, parent) in tracker names):

    * found / correct: estimated relations of a matched child, and those whose parent (mapped to
      ground truth) is the true one;
    * true / observable: true relations of a matched child, and those whose parent was detected too
      (what the estimate could find: recall is correct / observable);
    * decided / agree: matched movable children whose true parent is detected or absent, and those
      whose estimated parents for the predicate are exactly the true ones (accuracy)."""
    index = {name: i for i, name in matched.items()}
    out = {}
    for pred in PREDICATES:
        est = {(index[c], index.get(s)) for p, c, s in found if p == pred and c in index}
        tru = {(c, s) for p, c, s in view.relations if p == pred and c in matched}
        right = {(c, s) for c, s in est & tru if s is not None}
        n = Counter(found=len(est), correct=len(right), true=len(tru),
                    observable=sum(s in matched for _, s in tru))
        for child in matched:
            truth = {s for c, s in tru if c == child}
            if child in view.movable and all(s in matched for s in truth):
                n["decided"] += 1
                n["agree"] += {s for c, s in est if c == child} == truth
        out[pred] = n
    return out


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def _defaults(args: argparse.Namespace) -> None:
    model, width, height = SOURCES[args.source]
    args.model = args.model or model
    args.width = args.width or width
    args.height = args.height or height


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

    _defaults(args)
    if args.source == "physics":
        from affplan_ros.bench import perception_physics
        with setup_errors(ValueError):
            args.seed = perception_physics.check_seed(args.seed)
        views = perception_physics.views(args.seed, args.warmup + args.frames, args.width, args.height)
    else:
        args.seed = 1 if args.seed is None else args.seed
        views = drawn_views(args.seed, args.warmup + args.frames, args.width, args.height)
    if args.frames < 1:
        raise BenchSetupError(f"--frames {args.frames}: at least 1 frame")

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
    synonyms = settings.detector.synonyms
    frames = []
    classes: dict[str, Counter] = {}
    predicates = {p: Counter() for p in PREDICATES}
    for i, view in enumerate(views):
        pipeline.oad.tracker.reset()  # independent scenes: no tracking across them
        obs = pipeline.process(view.image_bgr, view.depth, view.intrinsics)
        if i < args.warmup:
            continue
        # Detections of classes the OAM does not know (a person) count as detections; named
        # objects only have relations.
        detected = [*obs.objects, *obs.unknown]
        matched = _match(detected, view.labels, view.boxes, synonyms)
        unnamed = {id(d) for d in obs.unknown}
        names = {k: o.name for k, o in matched.items() if id(o) not in unnamed}
        for cls, n in _class_counts(detected, view, matched, synonyms).items():
            classes.setdefault(cls, Counter()).update(n)
        found_rel = {(r.predicate, *r.args) for r in obs.relations if not r.assumed}
        for pred, n in _relation_counts(view, names, found_rel).items():
            predicates[pred].update(n)
        tp = len(matched)
        truth_rel = {(p, names.get(c), names.get(s)) for p, c, s in view.relations}
        frames.append({"scene": view.scene, "objects_drawn": len(view.boxes), "objects_detected": len(obs.objects),
                       "unknown_detected": len(obs.unknown), "tp": tp, "fp": len(detected) - tp,
                       "fn": len(view.boxes) - tp,
                       "relations_true": len(view.relations), "relations_found": len(found_rel),
                       "relations_correct": len(truth_rel & found_rel), "source_ms": view.source_s * 1000,
                       **{f"{k}_ms": v * 1000 for k, v in obs.timings.items()}})
    if not frames:
        raise BenchSetupError(f"no frames came from the {args.source} source")
    med = {k: statistics.median(f[k] for f in frames)
           for k in ("detect_ms", "oad_ms", "relations_ms", "annotate_ms", "source_ms")}
    tp, fp, fn = (sum(f[k] for f in frames) for k in ("tp", "fp", "fn"))
    rt, rf, rc = (sum(f[k] for f in frames) for k in ("relations_true", "relations_found", "relations_correct"))
    result = {
        "benchmark": "perception", "source": args.source, "seed": args.seed, "model": args.model,
        "detector_kind": detector.kind, "labels": detector.labels,
        "imgsz": detector.imgsz, "image": [args.width, args.height], "frames": len(frames), "warmup": args.warmup,
        "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "device": settings.detector.device,
        "model_load_s": load_s,
        "median_ms": {**med, "oad_total_ms": statistics.median(f["oad_ms"] + f["relations_ms"] for f in frames),
                      "frame_ms": statistics.median(sum(f[k] for k in ("detect_ms", "oad_ms", "relations_ms",
                                                                       "annotate_ms")) for f in frames)},
        "p90_detect_ms": float(np.percentile([f["detect_ms"] for f in frames], 90)),
        "detection": {"precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn), "tp": tp, "fp": fp, "fn": fn},
        "per_class": {cls: {"precision": _ratio(n["tp"], n["tp"] + n["fp"]), "recall": _ratio(n["tp"], n["gt"]),
                            "gt": n["gt"], "tp": n["tp"], "fp": n["fp"], "fn": n["fn"]}
                      for cls, n in sorted(classes.items())},
        "relations": {"precision": _ratio(rc, rf), "recall": _ratio(rc, rt), "correct": rc, "found": rf, "true": rt},
        "relations_by_predicate": {p: {"precision": _ratio(n["correct"], n["found"]),
                                       "recall": _ratio(n["correct"], n["observable"]),
                                       "accuracy": _ratio(n["agree"], n["decided"]),
                                       **{k: n[k] for k in ("found", "correct", "true", "observable", "decided",
                                                            "agree")}}
                                   for p, n in predicates.items()},
        "per_frame": frames,
    }
    print(_summary(result))
    save(args.out, result, _summary(result), plot=("perception_bench.png", lambda path: _plot(result, path)))
    return 0


def _summary(r: dict) -> str:
    m = r["median_ms"]
    d, rel = r["detection"], r["relations"]
    what = "drawn by sim/camera.py" if r["source"] == "drawn" else \
        f"rendered from the physics world (sim/physics/dataset.py, held-back seeds from {r['seed']})"
    lines = [
        f"# Perception time per frame (CPU, {r['torch_threads']} torch threads, median of {r['frames']} frames)", "",
        f"* model `{r['model']}` ({r['detector_kind']}, {len(r['labels'])} labels), input {r['imgsz']} px, "
        f"frames {r['image'][0]}x{r['image'][1]} {what}; model load {r['model_load_s']:.1f} s", "",
        "| step | median ms |", "|---|---:|",
        f"| detector inference (ultralytics predict) | {m['detect_ms']:.1f} |",
        f"| OAD (OAM lookup, tracking, 3D positions) | {m['oad_ms']:.2f} |",
        f"| relations + assumptions | {m['relations_ms']:.2f} |",
        f"| OAD + relations | {m['oad_total_ms']:.2f} |",
        f"| annotated image | {m['annotate_ms']:.2f} |",
        f"| whole frame | {m['frame_ms']:.1f} |", "",
        f"90th percentile of detector inference: {r['p90_detect_ms']:.1f} ms; drawing or rendering a frame "
        f"(not part of the frame time): {m['source_ms']:.1f} ms", "",
        f"Detection vs. ground truth (IoU >= 0.5): precision {d['precision']:.3f}, recall {d['recall']:.3f} "
        f"({d['tp']} TP, {d['fp']} FP, {d['fn']} FN). Relations on/in: precision {rel['precision']:.3f}, "
        f"recall {rel['recall']:.3f} ({rel['correct']} of {rel['true']} true, {rel['found']} found).", "",
        "## Detection per class", "",
        "Detections of classes the OAM does not know (e.g. `human`) are scored here, but get no name and no "
        "relations.", "",
        "| class | ground-truth boxes | TP | FP | FN | precision | recall |", "|---|---:|---:|---:|---:|---:|---:|",
        *(f"| {cls} | {c['gt']} | {c['tp']} | {c['fp']} | {c['fn']} | {c['precision']:.3f} | {c['recall']:.3f} |"
          for cls, c in r["per_class"].items()), "",
        "## Relations of the detected objects", "",
        "Over the detected objects matched to ground truth: an estimated relation is correct when its parent is "
        "the true one; recall counts the true relations whose parent was detected too (`observable`); accuracy: "
        "matched movable objects whose estimated parents for the predicate are exactly the true ones (none "
        "included), of those whose true parent was detected or absent (`decided`).", "",
        "| predicate | found | correct | precision | true | observable | recall | decided | accuracy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(f"| {p} | {c['found']} | {c['correct']} | {c['precision']:.3f} | {c['true']} | {c['observable']} | "
          f"{c['recall']:.3f} | {c['decided']} | {c['accuracy']:.3f} |"
          for p, c in r["relations_by_predicate"].items()), ""]
    return "\n".join(lines)


def _plot(r: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 3.8), gridspec_kw={"width_ratios": [1, 1, 1.6]})
    det = [f["detect_ms"] for f in r["per_frame"]]
    oad = [f["oad_ms"] + f["relations_ms"] for f in r["per_frame"]]
    for ax, values, median, color, what in ((a, det, r["median_ms"]["detect_ms"], "tab:blue", "detector inference"),
                                            (b, oad, r["median_ms"]["oad_total_ms"], "tab:orange", "OAD + relations")):
        ax.hist(values, bins=20, color=color)
        ax.axvline(median, color="k", ls="--", label=f"median {median:.2f} ms")
        ax.set_xlabel(f"{what} per frame (ms)")
        ax.legend(fontsize=8)
    classes = list(r["per_class"])
    x = np.arange(len(classes))
    for k, (metric, color) in enumerate((("precision", "tab:green"), ("recall", "tab:purple"))):
        c.bar(x + (k - 0.5) * 0.4, [r["per_class"][cls][metric] for cls in classes], 0.4, label=metric, color=color)
    c.set_xticks(x, [f"{cls} ({r['per_class'][cls]['gt']})" for cls in classes], rotation=45, ha="right", fontsize=7)
    c.set_ylim(0, 1.15)
    c.set_title("detection per class (ground-truth boxes), IoU >= 0.5", fontsize=8)
    c.legend(fontsize=8, ncol=2, loc="upper right")
    fig.suptitle(f"{r['model']} at {r['imgsz']} px, {r['frames']} {r['source']} frames, CPU", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
