"""Object detection with ultralytics YOLO: closed vocabulary, or open vocabulary (YOLO-World, YOLOE)
whose class list is set from the object-affordance mapping.

The model is a file path from configuration. Nothing is ever downloaded at import or start:
``ultralytics`` and ``torch`` are imported only when a model is loaded (so ``affplan --help``
and node start-up stay fast), ``YOLO_OFFLINE=1`` is set before the import, and a model name that
is not a file is refused unless ``allow_download`` is set (a robot that is online may want that).

After inference the detector's labels go through the configuration: synonyms map them to OAM
classes (``mug`` -> ``cup``), an ignore list drops classes with frequent false positives (the
AutoGPT+P robot experiments did this), and per-class confidence thresholds apply on top of the
global one. Two boxes of different classes on one spot (a plate also called a pot) keep only
the surer one (``cross_class_iou``).
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.files.settings import from_mapping

KINDS = ("auto", "yolo", "yolo_world", "yoloe")
OPEN_VOCABULARY_KINDS = ("yolo_world", "yoloe")


class DetectorError(AffplanError, RuntimeError):
    """The detector cannot be built or run; the message says what to change."""


def normalize_label(label: str) -> str:
    """``"Dining Table"`` -> ``"dining_table"``: how OAM class names are written."""
    return "_".join(str(label).strip().lower().replace("-", " ").split())


def display_name(class_name: str) -> str:
    """``"kitchen_knife"`` -> ``"kitchen knife"``: how people (and text encoders) write it."""
    return class_name.replace("_", " ").strip()


@dataclass(frozen=True)
class Detection:
    """One detected object in pixel coordinates of the image it was found in."""

    label: str                 # what the detector called it
    class_name: str            # OAM class after synonyms
    confidence: float
    box: tuple[float, float, float, float]  # x1, y1, x2, y2

    @property
    def area(self) -> float:
        return max(0.0, self.box[2] - self.box[0]) * max(0.0, self.box[3] - self.box[1])


@dataclass
class DetectorConfig:
    model: str = ""                       # weight file (.pt, .onnx, ...), or a model name if allow_download
    kind: str = "auto"                    # auto | yolo | yolo_world | yoloe
    confidence: float = 0.25              # global minimum confidence
    iou: float = 0.5                      # NMS IoU threshold
    # Two boxes of different classes overlapping this much (IoU) are one thing the detector could
    # not decide on (a plate also called a pot): only the surer one is kept. 1 keeps both.
    cross_class_iou: float = 1.0
    imgsz: int = 0                        # inference size in pixels; 0 = the size the model was trained at
    max_detections: int = 100
    device: str = "cpu"
    allow_download: bool = False          # let ultralytics fetch a model NAME (online robots only)
    synonyms: dict[str, str] = field(default_factory=dict)         # detector label -> OAM class
    class_confidence: dict[str, float] = field(default_factory=dict)  # per OAM class (or label)
    ignore: list[str] = field(default_factory=list)                 # OAM classes or labels to drop
    vocabulary: list[str] = field(default_factory=list)             # open vocabulary: classes to look for

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DetectorError(f"detector kind {self.kind!r} is unknown; use one of {', '.join(KINDS)}")
        for name, value in (("confidence", self.confidence), ("iou", self.iou),
                            ("cross_class_iou", self.cross_class_iou)):
            if not 0.0 <= float(value) <= 1.0:
                raise DetectorError(f"detector {name} must be in [0, 1], got {value}")
        for cls, value in self.class_confidence.items():
            if not 0.0 <= float(value) <= 1.0:
                raise DetectorError(f"class_confidence[{cls!r}] must be in [0, 1], got {value}")
        if self.imgsz != 0 and (self.imgsz < 32 or self.imgsz % 32):
            raise DetectorError(f"detector imgsz must be 0 (the model's own) or a multiple of 32, got {self.imgsz}")
        if self.max_detections < 1:
            raise DetectorError(f"max_detections must be >= 1, got {self.max_detections}")
        self.synonyms = {normalize_label(k): normalize_label(v) for k, v in self.synonyms.items()}
        self.class_confidence = {normalize_label(k): float(v) for k, v in self.class_confidence.items()}
        self.ignore = [normalize_label(x) for x in self.ignore]

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "DetectorConfig":
        return from_mapping(cls, values, "detector")

    # -- label post-processing (no model needed) ---------------------------------------
    def class_of(self, label: str) -> str:
        key = normalize_label(label)
        return self.synonyms.get(key, key)

    def threshold(self, label: str, class_name: str) -> float:
        per = self.class_confidence
        return max(self.confidence, per.get(class_name, per.get(normalize_label(label), 0.0)))

    def keep(self, label: str, class_name: str, confidence: float) -> bool:
        if class_name in self.ignore or normalize_label(label) in self.ignore:
            return False
        return confidence >= self.threshold(label, class_name)

    def filter(self, raw: Iterable[tuple[str, float, Sequence[float]]]) -> list[Detection]:
        """(label, confidence, box) from the model -> kept detections, best first."""
        out = []
        for label, conf, box in raw:
            cls = self.class_of(label)
            if self.keep(label, cls, float(conf)):
                out.append(Detection(str(label), cls, float(conf), tuple(float(v) for v in box)))
        kept: list[Detection] = []
        for d in sorted(out, key=lambda d: -d.confidence):
            if self.cross_class_iou >= 1.0 or not any(
                    k.class_name != d.class_name and box_iou(k.box, d.box) >= self.cross_class_iou for k in kept):
                kept.append(d)
        return kept


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two boxes (x1, y1, x2, y2)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _import_ultralytics():
    # Never let ultralytics reach the network or write to ~/.config (see environment.md).
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(Path.home() / ".cache" / "affplan_ros" / "ultralytics"))
    try:
        import ultralytics  # noqa: F401  (heavy: torch)
    except ImportError as exc:
        raise DetectorError("the detector needs ultralytics and torch: pip install -r requirements/perception.txt "
                            "(make setup installs them unless AFFPLAN_PERCEPTION=0)") from exc
    return ultralytics


def _short(exc: BaseException, limit: int = 240) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def resolve_model_path(model: str, search: Sequence[Path] = ()) -> Path | None:
    """The weight file ``model`` names: as given, else relative to each of ``search``."""
    if not model:
        return None
    path = Path(model).expanduser()
    if path.is_file() or path.is_absolute():
        return path if path.is_file() else None
    for base in search:
        candidate = Path(base) / path
        if candidate.is_file():
            return candidate
    return None


class Detector:
    """A loaded ultralytics model with our post-processing; thread-safe ``detect``."""

    def __init__(self, config: DetectorConfig, search: Sequence[Path] = ()):
        self.config = config
        self.kind = config.kind
        self.imgsz = config.imgsz
        self.load_seconds = 0.0
        self._lock = threading.Lock()  # one inference at a time: torch on 2 cores gains nothing from two
        t0 = time.monotonic()
        self._model = self._load(search)
        # The first predict sets ultralytics up (layer fusion, predictor): seconds on a CPU. Pay
        # it while loading, not on the first camera frame.
        self.detect(np.zeros((self.imgsz, self.imgsz, 3), np.uint8))
        self.load_seconds = time.monotonic() - t0

    # -- loading -------------------------------------------------------------------------
    def _load(self, search: Sequence[Path]):
        cfg = self.config
        if not cfg.model:
            raise DetectorError("no detector model configured: set `model` to the path of a YOLO weight file")
        path = resolve_model_path(cfg.model, search)
        # An architecture YAML (e.g. yolo11n.yaml) ships with ultralytics: an untrained model of
        # that size, built without a download (benchmarks time real-size models with it).
        architecture = path is None and cfg.model.endswith((".yaml", ".yml"))
        if path is None and not (cfg.allow_download or architecture):
            raise DetectorError(
                f"detector model file {cfg.model!r} does not exist"
                + (f" (also looked in {', '.join(str(s) for s in search)})" if search else "")
                + ". Give the path of a YOLO weight file (.pt, .onnx, ...); nothing is downloaded "
                  "unless allow_download is true and the machine is online.")
        source = str(path) if path is not None else cfg.model
        if path is not None and path.stat().st_size == 0:
            raise DetectorError(f"detector model file {path} is empty")
        _import_ultralytics()
        from ultralytics import YOLO

        kind = cfg.kind
        try:
            if kind == "yolo_world":
                from ultralytics import YOLOWorld
                model = YOLOWorld(source)
            elif kind == "yoloe":
                from ultralytics import YOLOE
                model = YOLOE(source)
            else:
                model = YOLO(source)  # ultralytics picks YOLOWorld/YOLOE itself from the file name
        except Exception as exc:  # torch/pickle/zip/onnx errors: all mean "not a usable model file"
            raise DetectorError(f"detector model {source} could not be loaded: {_short(exc)}. "
                                "Is it a weight file saved by ultralytics (YOLOv8/11, YOLO-World, YOLOE)?") from exc
        if kind == "auto":
            kind = {"YOLOWorld": "yolo_world", "YOLOE": "yoloe"}.get(type(model).__name__, "yolo")
        self.kind = kind
        if not self.imgsz:  # a model detects best at the scale it was trained at
            trained = (getattr(model, "ckpt", None) or {}).get("train_args", {}).get("imgsz")
            self.imgsz = int(trained) if isinstance(trained, int) and trained >= 32 else 640
        if kind in OPEN_VOCABULARY_KINDS:
            self._set_vocabulary(model, kind)
        elif not self._names(model):
            raise DetectorError(f"detector model {source} has an empty class list")
        return model

    def _set_vocabulary(self, model, kind: str) -> None:
        classes = [display_name(c) for c in dict.fromkeys(self.config.vocabulary) if c]
        if not classes:
            raise DetectorError("open-vocabulary detector without classes: the class list (from the OAM's classes "
                                "and `vocabulary`) is empty")
        try:
            if kind == "yoloe":
                model.set_classes(classes, model.get_text_pe(classes))
            else:
                model.set_classes(classes)
        except Exception as exc:  # the text encoder (CLIP / MobileCLIP) is a separate download
            raise DetectorError(
                f"the {kind} model cannot set its class list: its text encoder (CLIP for YOLO-World, MobileCLIP "
                f"for YOLOE) is not available offline ({_short(exc)}). Put the encoder weights where ultralytics "
                "looks for them (YOLO_CONFIG_DIR / weights dir) on an online machine first, or export the model "
                "with its classes set, or use a closed-vocabulary YOLO model.") from exc

    @staticmethod
    def _names(model) -> dict[int, str]:
        names = getattr(model, "names", None) or {}
        return dict(names) if isinstance(names, Mapping) else dict(enumerate(names))

    @property
    def labels(self) -> list[str]:
        """The detector's own labels (before synonyms)."""
        return [self._names(self._model)[i] for i in sorted(self._names(self._model))]

    # -- inference -----------------------------------------------------------------------
    def detect(self, image_bgr: np.ndarray) -> list[Detection]:
        """Detections in a BGR uint8 image, filtered by the configuration, best first."""
        if not isinstance(image_bgr, np.ndarray) or image_bgr.ndim != 3 or image_bgr.shape[2] != 3 \
                or image_bgr.dtype != np.uint8 or min(image_bgr.shape[:2]) < 8:
            shape = getattr(image_bgr, "shape", None)
            raise DetectorError(f"the detector needs a BGR uint8 image of shape (h, w, 3), at least 8x8; got {shape}")
        cfg = self.config
        floor = min([cfg.confidence, *cfg.class_confidence.values()])  # per-class thresholds may be lower
        with self._lock:
            try:
                results = self._model.predict(image_bgr, conf=floor, iou=cfg.iou, imgsz=self.imgsz,
                                              max_det=cfg.max_detections, device=cfg.device, verbose=False)
            except Exception as exc:
                raise DetectorError(f"inference failed: {_short(exc)}") from exc
        result = results[0]
        names = result.names
        boxes = result.boxes
        if boxes is None or len(boxes) == 0:
            return []
        xyxy = boxes.xyxy.cpu().numpy()
        conf = boxes.conf.cpu().numpy()
        cls = boxes.cls.cpu().numpy().astype(int)
        return cfg.filter((names[int(c)], float(p), b) for b, p, c in zip(xyxy, conf, cls))
