"""OAD (names stable across frames, affordances from the OAM), relations from 2D geometry and depth,
assumptions from configuration — on the ground truth of drawn frames, no detector involved."""
from __future__ import annotations

import numpy as np
import pytest
from deps import require_optional

require_optional("cv2", "OpenCV not installed (AFFPLAN_PERCEPTION=0): the drawn frames need it")

# E402: the imports below come after the skip on purpose (perception and the drawn frames need cv2)
from affplan_ros.core.knowledge.oam import load_oam  # noqa: E402
from affplan_ros.core.perception.detection import Detection, DetectorConfig  # noqa: E402
from affplan_ros.core.perception.oad import (  # noqa: E402
    ObjectAffordanceDetector,
    PerceivedObject,
    Tracker,
    annotate,
    with_positions,
)
from affplan_ros.core.perception.relations import (  # noqa: E402
    Assumptions,
    RelationConfig,
    estimate_relations,
)
from affplan_ros.sim.camera import Item, SceneSpec, kitchen_scene, random_scene, render  # noqa: E402

OAM = load_oam()
SYN = DetectorConfig(synonyms={"mug": "cup"})


def detections_of(frame, jitter: float = 0.0, rng=None) -> list[Detection]:
    out = []
    for o in frame.objects:
        box = np.array(o.box, float)
        if jitter:
            box += rng.normal(0, jitter, 4)
        out.append(Detection(o.label, SYN.class_of(o.label), 0.9, tuple(box)))
    return out


def test_oad_names_objects_like_the_planner_and_adds_oam_affordances():
    frame = render(kitchen_scene(), seed=3)
    result = ObjectAffordanceDetector(OAM).process(detections_of(frame))
    names = {o.name: o for o in result.objects}
    assert set(names) == {"table0", "cup0", "bowl0", "apple0", "bottle0"}
    assert names["cup0"].affordances == OAM.affordances_of("cup") and names["cup0"].label == "mug"
    assert result.unknown == []


def test_classes_the_oam_does_not_know_are_reported_not_named():
    dets = [Detection("toaster", "toaster", 0.8, (0, 0, 10, 10)), Detection("cup", "cup", 0.9, (20, 20, 30, 30))]
    result = ObjectAffordanceDetector(OAM).process(dets)
    assert [o.name for o in result.objects] == ["cup0"] and [d.class_name for d in result.unknown] == ["toaster"]


def test_names_stay_stable_while_objects_move_a_little_and_are_reused_after_they_leave():
    tracker = Tracker(iou_threshold=0.3, max_missed=1)
    oad = ObjectAffordanceDetector(OAM, tracker)
    a, b = (100, 100, 140, 150), (300, 100, 340, 150)
    first = oad.process([Detection("cup", "cup", .9, a), Detection("cup", "cup", .9, b)])
    names = {o.box: o.name for o in first.objects}
    # Next frame: listed in the other order and shifted by a few pixels -> same names.
    shifted = [Detection("cup", "cup", .9, (b[0] + 4, b[1] + 2, b[2] + 4, b[3] + 2)),
               Detection("cup", "cup", .9, (a[0] - 3, a[1], a[2] - 3, a[3]))]
    second = {o.box[0]: o.name for o in oad.process(shifted).objects}
    assert second[b[0] + 4] == names[b] and second[a[0] - 3] == names[a]
    # cup at b disappears for two frames (> max_missed): its number is free for a new cup.
    oad.process([Detection("cup", "cup", .9, a)])
    oad.process([Detection("cup", "cup", .9, a)])
    third = oad.process([Detection("cup", "cup", .9, a), Detection("cup", "cup", .9, (500, 100, 540, 150))])
    assert {o.name for o in third.objects} == {"cup0", "cup1"}
    assert next(o for o in third.objects if o.box[0] == a[0]).name == names[a]


def test_min_hits_suppresses_a_one_frame_false_positive():
    oad = ObjectAffordanceDetector(OAM, Tracker(min_hits=2))
    assert oad.process([Detection("cup", "cup", .9, (0, 0, 10, 10))]).objects == []
    assert [o.name for o in oad.process([Detection("cup", "cup", .9, (1, 0, 11, 10))]).objects] == ["cup0"]


@pytest.mark.parametrize("use_depth", [False, True])
def test_relations_of_the_reference_scene(use_depth):
    frame = render(kitchen_scene(), seed=5)
    objs = ObjectAffordanceDetector(OAM).process(detections_of(frame)).objects
    rels = estimate_relations(objs, RelationConfig(), frame.depth if use_depth else None)
    found = {(r.predicate, *r.args) for r in rels}
    assert found == {("on", "cup0", "table0"), ("on", "bowl0", "table0"), ("on", "bottle0", "table0"),
                     ("in", "apple0", "bowl0")}
    assert all(0.5 <= r.confidence <= 1.0 and not r.assumed for r in rels)
    assert {r.basis for r in rels} == ({"2d+depth"} if use_depth else {"2d"})


def test_relations_match_the_ground_truth_of_random_scenes_with_noisy_boxes():
    rng = np.random.default_rng(11)
    correct = total = wrong = 0
    for i in range(40):
        frame = render(random_scene(rng), seed=i)
        objs = ObjectAffordanceDetector(OAM).process(detections_of(frame, 2.0, rng)).objects
        truth = {(p, _name(frame, c), _name(frame, s)) for p, c, s in frame.relations}
        found = {(r.predicate, *r.args) for r in estimate_relations(objs, RelationConfig(), frame.depth)}
        correct += len(truth & found)
        wrong += len(found - truth)
        total += len(truth)
    assert correct / total >= 0.95 and wrong <= 0.05 * total, (correct, wrong, total)


def _name(frame, index):
    """The name OAD gives drawn object ``index``: new objects of a class are numbered in order."""
    label = frame.objects[index].label
    cls = SYN.class_of(label)
    k = sum(1 for o in frame.objects[:index] if o.label == label)
    return f"{cls}{k}"


def test_depth_rejects_an_object_that_only_looks_like_it_stands_on_the_table():
    # A mug held 0.8 m in front of the table: in 2D its bottom is at the table's top edge.
    spec = SceneSpec([Item("bowl", 0.7)])
    frame = render(spec, seed=1, noise=0)
    table = frame.objects[0]
    depth = frame.depth.copy()
    box = (200, table.box[1] - 60, 240, table.box[1] + 3)
    depth[box[1]:box[3], box[0]:box[2]] = 0.8
    objs = [PerceivedObject("table", 0, OAM.affordances_of("table"), .9, table.box),
            PerceivedObject("cup", 0, OAM.affordances_of("cup"), .9, box)]
    assert {r.args for r in estimate_relations(objs)} == {("cup0", "table0")}
    assert estimate_relations(objs, depth_m=depth) == []


def test_objects_that_cannot_be_carried_get_no_parent():
    table = PerceivedObject("table", 0, OAM.affordances_of("table"), .9, (0, 100, 400, 300))
    fridge = PerceivedObject("refrigerator", 0, OAM.affordances_of("refrigerator"), .9, (50, 40, 120, 105))
    assert estimate_relations([table, fridge]) == []


def test_positions_from_depth_and_intrinsics():
    depth = np.full((100, 200), 2.0, np.float32)
    obj = PerceivedObject("cup", 0, frozenset(), .9, (90, 40, 110, 60))
    (placed,) = with_positions([obj], depth, (100.0, 100.0, 100.0, 50.0))
    assert placed.position == pytest.approx((0.0, 0.0, 2.0))
    assert with_positions([obj], None, None)[0].position is None


def test_assumptions_from_configuration_are_marked_and_class_rules_win():
    config = {"by_affordance": {"open": [{"predicate": "closed", "confidence": 0.6}]},
              "by_class": {"bottle": [{"predicate": "liquid_in", "liquid": "water"}],
                           "refrigerator": ["opened"]}}
    rules = Assumptions.from_mapping(config)
    objs = [PerceivedObject("bottle", 0, OAM.affordances_of("bottle"), .9, (0, 0, 1, 1)),
            PerceivedObject("bottle", 1, OAM.affordances_of("bottle"), .9, (0, 0, 1, 1)),
            PerceivedObject("refrigerator", 0, OAM.affordances_of("refrigerator"), .9, (0, 0, 1, 1)),
            PerceivedObject("cup", 0, OAM.affordances_of("cup"), .9, (0, 0, 1, 1))]
    rels, implied = rules.apply(objs)
    found = {(r.predicate, *r.args) for r in rels}
    assert found == {("closed", "bottle0"), ("closed", "bottle1"), ("liquid_in", "water0", "bottle0"),
                     ("liquid_in", "water1", "bottle1"), ("opened", "refrigerator0")}
    assert all(r.assumed for r in rels) and implied == [("water", "water0"), ("water", "water1")]
    # The same container keeps its liquid's name in the next frame, even seen alone.
    assert rules.apply(objs[1:2])[1] == [("water", "water1")]
    with pytest.raises(ValueError, match="expected predicate"):
        Assumptions.from_mapping({"by_class": {"cup": [{"liquid": "water"}]}})


def test_annotated_image_draws_boxes_and_labels():
    frame = render(kitchen_scene(), seed=2)
    objs = ObjectAffordanceDetector(OAM).process(detections_of(frame)).objects
    out = annotate(frame.image, objs, ["(on cup0 table0)"])
    assert out.shape == frame.image.shape and frame.image is not out
    changed = np.any(out != frame.image, axis=2)
    x1, y1, x2, y2 = (int(v) for v in objs[0].box)
    assert changed[y1:y2 + 1, x1].mean() > 0.9          # the box's left edge is drawn
    assert changed[-30:, :200].any()                      # the relation list at the bottom


def test_a_view_of_a_place_keeps_what_stands_there_directly_or_not():
    from affplan_ros.core.perception.relations import placed_at

    seen = [("on", ("bowl0", "table0")), ("in", ("banana0", "bowl0")), ("on", ("cup0", "counter0")),
            ("closed", ("refrigerator0",)), ("on", ("a", "b")), ("on", ("b", "a"))]  # a cycle ends the walk
    assert placed_at("table0", seen) == {"table0", "bowl0", "banana0"}
    assert placed_at("refrigerator0", seen) == {"refrigerator0"}


def test_seen_from_above_a_thing_is_on_the_table_only_when_the_depth_shows_them_touching():
    """Looking down at a table, a cup stands in the middle of the top's box, not at its top edge."""
    table = PerceivedObject("table", 0, OAM.affordances_of("table"), 0.9, (0, 80, 320, 240))
    cup = PerceivedObject("cup", 0, OAM.affordances_of("cup"), 0.9, (140, 140, 180, 200))
    depth = np.full((240, 320), 1.0, np.float32)   # the table top, 1 m away
    depth[140:200, 140:180] = 0.97                 # the cup standing on it
    assert [str(r) for r in estimate_relations([table, cup], RelationConfig(), depth)] == ["(on cup0 table0)"]
    assert estimate_relations([table, cup], RelationConfig()) == []  # without depth: not near the top edge
    depth[140:200, 140:180] = 0.5                   # held half a metre above it
    assert estimate_relations([table, cup], RelationConfig(), depth) == []
