"""The perception pipeline without ROS: image -> detections -> objects with affordances (OAD) ->
relations (+ assumptions) -> an observation and an annotated image.

``nodes/perception.py`` wraps it around camera topics; ``affplan bench perception`` times it;
the tests run it on drawn images with the shipped detector. Settings come from a YAML file
(``config/perception_settings.yaml``): detector post-processing (synonyms, per-class thresholds,
ignore list, open vocabulary), tracking, relation geometry and the assumptions for relations a
camera cannot see.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import yaml

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.files.settings import from_mapping
from affplan_ros.core.knowledge.oam import OamDatabase
from affplan_ros.core.perception.association import CameraPose, MapNamer, one_per_thing
from affplan_ros.core.perception.detection import (
    Detection,
    Detector,
    DetectorConfig,
    DetectorError,
)
from affplan_ros.core.perception.oad import (
    ObjectAffordanceDetector,
    PerceivedObject,
    Tracker,
    annotate,
    with_positions,
)
from affplan_ros.core.perception.relations import (
    Assumptions,
    EstimatedRelation,
    RelationConfig,
    estimate_relations,
)

SECTIONS = ("detector", "tracking", "relations", "assumptions")


class PerceptionConfigError(ConfigError):
    """The perception settings file is missing, malformed or names unknown settings."""


@dataclass
class PerceptionSettings:
    detector: DetectorConfig = field(default_factory=DetectorConfig)
    tracker: dict[str, Any] = field(default_factory=dict)
    relations: RelationConfig = field(default_factory=RelationConfig)
    assumptions: Assumptions = field(default_factory=Assumptions)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], detector_overrides: Mapping[str, Any] | None = None,
                     source: str = "<settings>") -> "PerceptionSettings":
        unknown = set(data) - set(SECTIONS)
        if unknown:
            raise PerceptionConfigError(f"{source}: unknown sections {sorted(unknown)} (known: {', '.join(SECTIONS)})")
        try:
            det = {**(data.get("detector") or {}), **{k: v for k, v in (detector_overrides or {}).items()}}
            tracker = dict(data.get("tracking") or {})
            from_mapping(Tracker, tracker, "tracking")  # validates the names
            return cls(DetectorConfig.from_mapping(det), tracker,
                       RelationConfig.from_mapping(data.get("relations") or {}),
                       Assumptions.from_mapping(data.get("assumptions") or {}))
        except (DetectorError, ValueError, TypeError) as exc:
            raise PerceptionConfigError(f"{source}: {exc}") from exc

    @classmethod
    def from_file(cls, path: Union[str, Path], detector_overrides: Mapping[str, Any] | None = None
                  ) -> "PerceptionSettings":
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise PerceptionConfigError(f"cannot read perception settings {path}: {exc}") from exc
        if not isinstance(data, Mapping):
            raise PerceptionConfigError(f"{path}: expected a mapping with sections {', '.join(SECTIONS)}")
        return cls.from_mapping(data, detector_overrides, str(path))


@dataclass
class Observation:
    """What one frame showed."""

    objects: list[PerceivedObject]
    relations: list[EstimatedRelation]
    implied: list[tuple[str, str]]          # (class, name) of assumed objects (e.g. a liquid)
    unknown: list[Detection]                # detections of classes the OAM does not know
    annotated: Optional[np.ndarray] = None
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)   # seconds: detect, oad, relations, annotate
    image_size: Optional[tuple[int, int]] = None              # (width, height) of the frame


class PerceptionPipeline:
    """Detector + OAD + relations + assumptions, one frame at a time (tracking keeps state)."""

    def __init__(self, settings: PerceptionSettings, oam: OamDatabase, detector: Optional[Detector] = None):
        self.settings = settings
        self.oad = ObjectAffordanceDetector(oam, Tracker(**settings.tracker))
        self.namer = MapNamer()
        self.detector = detector

    @property
    def oam(self) -> OamDatabase:
        return self.oad.oam

    def set_oam(self, oam: OamDatabase) -> None:
        self.oad.oam = oam

    def load_detector(self, search: Sequence[Path] = ()) -> Detector:
        """Build the configured detector (open vocabulary: the OAM's classes + configured extras)."""
        cfg = self.settings.detector
        vocabulary = list(dict.fromkeys([*self.oam.classes(), *cfg.vocabulary]))
        self.detector = Detector(replace(cfg, vocabulary=vocabulary), search)
        return self.detector

    def process(self, image_bgr: np.ndarray, depth_m: Optional[np.ndarray] = None,
                intrinsics: Optional[tuple[float, float, float, float]] = None,
                draw: bool = True, camera_pose: Optional[CameraPose] = None) -> Observation:
        """One frame. With depth, intrinsics and ``camera_pose`` (the optical frame in the map),
        names come from where objects are in the map (:class:`MapNamer`: the same across views),
        else from 2D tracking."""
        if self.detector is None:
            raise DetectorError("no detector loaded")
        if depth_m is not None and depth_m.shape[:2] != image_bgr.shape[:2]:
            raise DetectorError(f"depth image {depth_m.shape[1]}x{depth_m.shape[0]} does not match the colour "
                                f"image {image_bgr.shape[1]}x{image_bgr.shape[0]} (register them first)")
        t0 = time.perf_counter()
        detections = self.detector.detect(image_bgr)
        t1 = time.perf_counter()
        oad = self.oad.process(detections)
        objects = with_positions(oad.objects, depth_m, intrinsics)
        if camera_pose is not None and depth_m is not None and intrinsics is not None:
            objects = self.namer.name(one_per_thing(objects, intrinsics[0]), camera_pose, intrinsics[0])
        t2 = time.perf_counter()
        relations = estimate_relations(objects, self.settings.relations, depth_m)
        assumed, implied = self.settings.assumptions.apply(objects)
        warnings = []
        unknown_liquids = sorted({cls for cls, _ in implied if cls not in self.oam})
        if unknown_liquids:  # an object the planner could not type: leave the assumption out
            warnings.append(f"assumed objects of classes {', '.join(unknown_liquids)} are not in the OAM; "
                            "their assumptions are left out (add the classes to the OAM)")
            drop = {name for cls, name in implied if cls in unknown_liquids}
            implied = [(c, n) for c, n in implied if n not in drop]
            assumed = [r for r in assumed if not drop & set(r.args)]
        t3 = time.perf_counter()
        image = annotate(image_bgr, objects, [str(r) for r in relations + assumed], oad.unknown) if draw else None
        t4 = time.perf_counter()
        return Observation(objects, relations + assumed, implied, oad.unknown, image, warnings,
                           {"detect": t1 - t0, "oad": t2 - t1, "relations": t3 - t2, "annotate": t4 - t3},
                           (int(image_bgr.shape[1]), int(image_bgr.shape[0])))
