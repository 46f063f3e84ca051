"""Image -> detection -> OAD -> relations with real YOLO inference (the shipped detector), and the
detector's configuration and error paths with real ultralytics models."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from deps import require_optional  # noqa: E402

from affplan_ros.core.knowledge.oam import OamDatabase, load_oam
from affplan_ros.core.perception.detection import DetectorConfig, DetectorError
from affplan_ros.core.perception.pipeline import (
    PerceptionConfigError,
    PerceptionPipeline,
    PerceptionSettings,
)
from affplan_ros.env import config_file, share_dir

ultralytics = require_optional("ultralytics", "torch/ultralytics not installed (AFFPLAN_PERCEPTION=0)")
from affplan_ros.core.perception.detection import Detector  # noqa: E402

MODEL = share_dir() / "config" / "models" / "kitchen_shapes.pt"
ULTRA_CFG = Path(ultralytics.__file__).parent / "cfg" / "models"


@pytest.fixture(scope="module")
def pipeline():
    settings = PerceptionSettings.from_file(config_file("perception_settings.yaml"),
                                            {"model": str(MODEL), "confidence": 0.35})
    p = PerceptionPipeline(settings, load_oam())
    p.load_detector()
    return p


def test_the_shipped_detector_finds_the_drawn_objects_with_affordances_and_relations(pipeline):
    from affplan_ros.sim.camera import kitchen_scene, render

    frame = render(kitchen_scene(), seed=4)
    pipeline.oad.tracker.reset()
    obs = pipeline.process(frame.image, frame.depth, frame.intrinsics)
    names = {o.name: o for o in obs.objects}
    assert set(names) == {"table0", "cup0", "bowl0", "apple0", "bottle0"}
    assert names["cup0"].label == "mug" and names["cup0"].affordances == load_oam().affordances_of("cup")
    assert pipeline.detector.imgsz == 320  # imgsz 0: the size the shipped model was trained at
    for drawn in frame.objects:  # each box lies on the drawn object
        from affplan_ros.core.perception.oad import iou

        cls = {"mug": "cup"}.get(drawn.label, drawn.label)
        assert max(iou(o.box, drawn.box) for o in obs.objects if o.class_name == cls) > 0.6, drawn.label
    found = {(r.predicate, *r.args) for r in obs.relations}
    assert {("on", "cup0", "table0"), ("in", "apple0", "bowl0"), ("on", "bottle0", "table0")} <= found
    assert {("closed", "bottle0"), ("liquid_in", "water0", "bottle0")} <= found
    assert obs.annotated.shape == frame.image.shape and obs.timings["detect"] > 0
    # The next frame, the camera turned a little (everything 5 px to the right): same names.
    spec = kitchen_scene()
    spec.table_span = (spec.table_span[0] + 5 / 640, spec.table_span[1] + 5 / 640)
    again = {o.name: o for o in pipeline.process(render(spec, seed=4).image).objects}
    assert set(again) == set(names)
    assert all(again[n].box[0] > names[n].box[0] for n in ("cup0", "bottle0"))


def test_an_empty_image_gives_no_objects(pipeline):
    pipeline.oad.tracker.reset()
    assert pipeline.process(np.full((480, 640, 3), 200, np.uint8)).objects == []


def test_assumed_objects_outside_the_oam_are_left_out_with_a_warning(pipeline):
    from affplan_ros.sim.camera import kitchen_scene, render

    without_water = OamDatabase({c: a for c, a in load_oam().mapping.items() if c != "water"})
    p = PerceptionPipeline(pipeline.settings, without_water, pipeline.detector)
    obs = p.process(render(kitchen_scene(), seed=4).image)
    assert obs.implied == [] and not any(r.predicate == "liquid_in" for r in obs.relations)
    assert "water" in obs.warnings[0] and any(r.predicate == "closed" for r in obs.relations)


def test_synonyms_thresholds_and_ignore_list_apply_to_the_detectors_labels():
    cfg = DetectorConfig(confidence=0.3, synonyms={"Mug": "cup", "dining table": "table"},
                         class_confidence={"bottle": 0.8}, ignore=["banana"])
    raw = [("mug", 0.5, (0, 0, 1, 1)), ("dining table", 0.31, (0, 0, 2, 2)), ("bottle", 0.7, (0, 0, 3, 3)),
           ("banana", 0.99, (0, 0, 4, 4)), ("apple", 0.2, (0, 0, 5, 5))]
    assert [(d.label, d.class_name) for d in cfg.filter(raw)] == [("mug", "cup"), ("dining table", "table")]


def test_one_spot_called_two_classes_keeps_the_surer_and_two_things_stay_two():
    # The physics detector calls some plates pots too, on the very same box: two names for one
    # thing, one of them a thing that is not there.
    raw = [("pot", 0.48, (104, 123, 204, 198)), ("plate", 0.59, (106, 123, 206, 198)),
           ("apple", 0.6, (120, 140, 140, 160)), ("cup", 0.7, (250, 100, 280, 150)), ("cup", 0.5, (252, 100, 282, 150))]
    kept = DetectorConfig(cross_class_iou=0.8).filter(raw)
    # The apple on the plate, and two boxes of one class (NMS's business) are left alone.
    assert [d.class_name for d in kept] == ["cup", "apple", "plate", "cup"]
    assert len(DetectorConfig().filter(raw)) == 5             # 1: both kept
    with pytest.raises(DetectorError, match="cross_class_iou"):
        DetectorConfig(cross_class_iou=1.5)


def test_open_vocabulary_models_take_the_oam_classes_or_fail_clearly():
    # Real YOLO-World / YOLOE architectures (untrained, built from ultralytics' YAML without a download).
    for yaml_name, kind in (("v8/yolov8-worldv2.yaml", "yolo_world"), ("11/yoloe-11.yaml", "yoloe")):
        with pytest.raises(DetectorError, match="class list .* is empty"):
            Detector(DetectorConfig(model=str(ULTRA_CFG / yaml_name)))
        with pytest.raises(DetectorError) as err:
            Detector(DetectorConfig(model=str(ULTRA_CFG / yaml_name), vocabulary=["cup", "kitchen_knife"]))
        assert f"the {kind} model cannot set its class list" in str(err.value) and "text encoder" in str(err.value)


@pytest.mark.parametrize("model, words", [
    ("/nonexistent/weights.pt", "does not exist"),
    ("yolo11n.pt", "nothing is downloaded"),
    ("", "no detector model configured"),
])
def test_model_files_that_are_not_there_are_clear_errors(model, words):
    with pytest.raises(DetectorError, match=words):
        Detector(DetectorConfig(model=model))


def test_corrupt_and_empty_model_files_are_clear_errors(tmp_path):
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    with pytest.raises(DetectorError, match="is empty"):
        Detector(DetectorConfig(model=str(empty)))
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"PK\x03\x04 this is not a torch checkpoint")
    with pytest.raises(DetectorError, match="corrupt.pt could not be loaded"):
        Detector(DetectorConfig(model=str(corrupt)))


def test_bad_images_and_settings_are_refused(pipeline, tmp_path):
    with pytest.raises(DetectorError, match=r"BGR uint8 image of shape \(h, w, 3\)"):
        pipeline.detector.detect(np.zeros((480, 640), np.uint8))
    with pytest.raises(DetectorError, match="does not match the colour image"):
        pipeline.process(np.zeros((480, 640, 3), np.uint8), np.zeros((240, 320), np.float32))
    bad = tmp_path / "settings.yaml"
    bad.write_text("detector:\n  synonym: {mug: cup}\n")
    with pytest.raises(PerceptionConfigError, match="unknown detector settings.*synonym"):
        PerceptionSettings.from_file(bad)
    with pytest.raises(DetectorError, match="imgsz must be 0 .* or a multiple of 32"):
        DetectorConfig(imgsz=300)


def test_a_built_in_architecture_builds_an_untrained_model_without_a_download():
    detector = Detector(DetectorConfig(model="yolo11n.yaml", imgsz=320))
    assert detector.kind == "yolo" and len(detector.labels) == 80 and detector.imgsz == 320
    assert isinstance(detector.detect(np.zeros((240, 320, 3), np.uint8)), list)


def test_bench_perception_writes_timings_and_scores(tmp_path):
    import json

    from affplan_ros.cli import main

    assert main(["bench", "perception", "--frames", "4", "--warmup", "1", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["frames"] == 4 and len(result["per_frame"]) == 4
    assert result["median_ms"]["detect_ms"] > 0 and result["median_ms"]["oad_ms"] >= 0
    assert result["detection"]["precision"] >= 0.8 and result["detection"]["recall"] >= 0.8
    assert "| detector inference" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "perception_bench.png").is_file()
    assert main(["bench", "perception", "--model", str(tmp_path / "none.pt"), "--out", str(tmp_path)]) == 2
