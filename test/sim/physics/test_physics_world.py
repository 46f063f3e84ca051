"""The MuJoCo world built from scene files: bodies, layout, placement, articulations, liquids."""
from __future__ import annotations

from pathlib import Path

import mujoco  # required (requirements/physics.txt): a broken install fails here, it never skips
import pytest

from affplan_ros.core.files.scene_io import load_scene, parse_scene_text
from affplan_ros.sim.physics.world import ThingKind, build_world

ROOT = Path(__file__).resolve().parents[3]
KITCHEN = ROOT / "config" / "scenarios" / "kitchen.txt"


@pytest.fixture(scope="module")
def kitchen():
    return build_world(load_scene(KITCHEN))


def test_every_scene_object_is_built_as_its_kind(kitchen):
    w = kitchen
    kinds = {n: t.kind for n, t in w.things.items()}
    assert kinds["table0"] == kinds["counter0"] == kinds["refrigerator0"] == ThingKind.FURNITURE
    assert kinds["cup0"] == kinds["apple0"] == ThingKind.OBJECT
    assert kinds["water0"] == ThingKind.LIQUID and kinds["robot0"] == ThingKind.ROBOT
    for name, thing in w.things.items():
        if thing.kind in (ThingKind.FURNITURE, ThingKind.OBJECT):
            assert thing.body_id >= 0 and thing.geom_ids, name
            assert all(w.owner(g) == name for g in thing.geom_ids)
    # Furniture is static (welded to the world), carryable objects are free bodies.
    assert w.model.body_weldid[w.things["counter0"].body_id] == 0
    assert w.model.body_jntnum[w.things["cup0"].body_id] == 1
    assert w.model.jnt_type[w.model.body_jntadr[w.things["cup0"].body_id]] == mujoco.mjtJoint.mjJNT_FREE
    # Liquids are quantities in their container, not bodies.
    assert w.liquids["bucket0"]["water0"] > 0
    assert mujoco.mj_name2id(w.model, mujoco.mjtObj.mjOBJ_BODY, "water0") == -1


def test_objects_rest_where_the_relations_put_them(kitchen):
    w = kitchen
    for obj, support in (("cup0", "counter0"), ("sponge0", "counter0"), ("bucket0", "counter0"),
                         ("plate0", "table0"), ("bowl0", "table0"), ("apple0", "refrigerator0")):
        assert w.resting_on(obj, support), (obj, support, w.contacts(obj))
    # The apple is inside the fridge: within its inner space, behind the closed door.
    centre, rot, size = w.site("refrigerator0/inner")
    local = rot.T @ (w.position("apple0") - centre)
    assert abs(local[0]) < size[0] and abs(local[1]) < size[1] and 0 < local[2] < 0.2
    assert w.is_closed("refrigerator0") and not w.is_open("refrigerator0")
    # The banana is "in" a bowl too small for it: it lies across the rim, and the world says so.
    assert any("banana0" in warning and "bowl0" in warning for warning in w.warnings)
    assert "bowl0" in w.contacts("banana0")


def test_objects_on_one_surface_do_not_overlap(kitchen):
    w = kitchen
    on_counter = [n for n in ("cup0", "sponge0", "bucket0", "kitchen_knife0", "cutting_board0")]
    xs = {n: w.position(n) for n in on_counter}
    for i, a in enumerate(on_counter):
        for b in on_counter[i + 1:]:
            # Packing keeps footprints apart; the distance between centres exceeds the smaller half-size.
            assert ((xs[a][:2] - xs[b][:2]) ** 2).sum() ** 0.5 > 0.05, (a, b)


def test_furniture_footprints_are_apart_and_inside_the_room(kitchen):
    w = kitchen
    placed = [(n, t.placement) for n, t in w.things.items() if t.kind == ThingKind.FURNITURE]
    half = w.room_side / 2
    for name, place in placed:
        for x, y in place.footprint():
            assert abs(x) <= half + 1e-6 and abs(y) <= half + 1e-6, name
    for i, (a, pa) in enumerate(placed):
        for b, pb in placed[i + 1:]:
            ax = [p[0] for p in pa.footprint()]
            ay = [p[1] for p in pa.footprint()]
            bx = [p[0] for p in pb.footprint()]
            by = [p[1] for p in pb.footprint()]
            apart = max(ax) <= min(bx) or max(bx) <= min(ax) or max(ay) <= min(by) or max(by) <= min(ay)
            assert apart, (a, b)


def test_an_opened_fridge_starts_open_and_an_unknown_class_gets_the_default():
    text = KITCHEN.read_text().replace("closed refrigerator:0", "opened refrigerator:0")
    text = text.replace("sponge:0\n", "sponge:0\nflux_capacitor:0\n", 1)
    text = text.replace("on sponge:0 counter:0", "on sponge:0 counter:0\non flux_capacitor:0 counter:0")
    w = build_world(parse_scene_text(text))
    assert w.is_open("refrigerator0")
    assert any("flux_capacitor" in warning for warning in w.warnings)
    assert w.things["flux_capacitor0"].props == w.things["flux_capacitor0"].props.__class__(
        size=(0.1, 0.1, 0.1), mass=0.3, shape="box")
    assert w.resting_on("flux_capacitor0", "counter0")


@pytest.mark.shared
def test_autogpt_p_scenes_build(shared_datasets):
    scenes = shared_datasets / "autogpt_p" / "autogpt_p" / "data" / "evaluation" / "scenes"
    for name in ("complex_kitchen1.txt", "clean_floor.txt"):
        w = build_world(load_scene(scenes / name))
        objects = [n for n, t in w.things.items() if t.kind == ThingKind.OBJECT]
        assert objects
        # Nothing fell to the floor or through a surface while settling.
        for obj in objects:
            assert w.position(obj)[2] > 0.0, (name, obj)


def test_a_crowded_counter_holds_mop_broom_and_the_rest_each_on_the_counter(shared_datasets):
    # complex_kitchen4's 2 x 0.6 m counter: ten things, a mop and a broom among them. Packed by
    # bounding boxes, the broom was stacked on the mop and the watering can sank into it; a mop and
    # a broom lie head to tail (each head beside the other's handle), and the watering can finds
    # the gap between the front row and a handle.
    scene = shared_datasets / "autogpt_p" / "autogpt_p" / "data" / "evaluation" / "scenes" / "complex_kitchen4.txt"
    w = build_world(load_scene(scene))
    assert not [m for m in w.warnings if "counter0" in m]
    on_counter = ("paper_towel0", "bottle_opener0", "cloth0", "pan0", "cornflakes0", "pot0", "watering_can0",
                  "tape0", "mop0", "broom0")
    for obj in on_counter:
        assert w.contacts(obj) == {"counter0"}, (obj, w.contacts(obj))
        assert w.resting_on(obj, "counter0"), obj


def test_two_handle_tools_pack_head_to_tail_where_their_boxes_would_not():
    from affplan_ros.core.knowledge.objects import load_object_table
    from affplan_ros.sim.physics.world import _free_spot, _pack_parts, _Surface

    broom = load_object_table().get("broom")
    surf = _Surface("shelf", 0.0, 0.0, 0.0, 0.0, hx=0.7, hy=0.25, margin_front=0.0)
    first = _pack_parts(broom, 0.0)
    u, v = _free_spot(surf, first)
    surf.taken.extend((u + du, v + dv, hu, hv, 0.05) for du, dv, hu, hv in first)
    # Two 1.2 x 0.3 m boxes do not fit on 1.4 x 0.5 m; turned end for end, the second does.
    assert _free_spot(surf, [(0.0, 0.0, 0.6, 0.15)]) is None
    assert _free_spot(surf, _pack_parts(broom, 0.0)) is None
    assert _free_spot(surf, _pack_parts(broom, 3.141592653589793)) is not None


SAYCAN_TABLE = """SCENE-DESCRIPTION
OBJECTS
table:0
water:0
water:1
bottle:0
robot:0
END-OBJECTS
RELATIONS
on water:0 table:0
on bottle:0 table:0
liquid_in water:1 bottle:0
at robot:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 water:0 bottle:0 robot:0
END-LOCATIONS
"""


def test_water_set_on_a_table_is_a_closed_bottle_and_water_in_a_bottle_a_liquid():
    # SayCan's "water" stands on the table as a water bottle (the robot carries it); AutoGPT+P's
    # water is in a container. Before, water0 was a liquid with no container and no body at all.
    from affplan_ros.sim.physics.relations import Anchors, read_relations
    from affplan_ros.sim.physics.skills import Skills

    scene = parse_scene_text(SAYCAN_TABLE)
    w = build_world(scene)
    water = w.things["water0"]
    assert water.kind == ThingKind.OBJECT and water.props.size == (0.065, 0.065, 0.205) and water.props.mass == 0.52
    assert abs(float(w.model.body_mass[water.body_id]) - 0.52) < 1e-6
    assert w.resting_on("water0", "table0")
    assert w.things["water1"].kind == ThingKind.LIQUID and w.liquids["bottle0"]["water1"] > 0
    sk = Skills(w)
    atoms = read_relations(w, sk, scene, Anchors.of(scene))
    assert ("on", "water0", "table0") in atoms and ("liquid_in", "water1", "bottle0") in atoms
    assert sk.navigate("table0", near="water0").success
    grasped = sk.grasp("water0")
    assert grasped.success, grasped.reason
    assert ("inhand", "water0", "robot0") in read_relations(w, sk, scene, Anchors.of(scene))


def test_two_bananas_in_a_bowl_lie_side_by_side_across_its_rim():
    # A 20 cm banana does not lie flat on a 20 cm bowl's floor; two of them lie across its rim
    # side by side, each borne by the rim. Stacked one on the other (as before), taking the lower
    # one lifted both, and the upper one was then in no bowl.
    scene = parse_scene_text(
        "OBJECTS\ntable:0\nbowl:0\nbanana:0\nbanana:1\nrobot:0\nEND-OBJECTS\nRELATIONS\non bowl:0 table:0\n"
        "in banana:0 bowl:0\nin banana:1 bowl:0\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\n"
        "table0 table:0 bowl:0 banana:0 banana:1 robot:0\nEND-LOCATIONS\n")
    w = build_world(scene)
    for banana in ("banana0", "banana1"):
        assert w.contacts(banana) == {"bowl0"}, (banana, w.contacts(banana))
        assert w.resting_on(banana, "bowl0") and w.rotation(banana)[2, 2] > 0.99
    apart = w.position("banana0")[:2] - w.position("banana1")[:2]
    assert 0.06 < float((apart ** 2).sum() ** 0.5) < 0.09


def test_a_banana_across_a_bowls_rim_does_not_lie_over_the_apple_inside():
    # The scene puts the banana into the bowl before the apple (complex_kitchen2's order): laid
    # across the rim first, at its middle, it covered the apple, and no hand could take the apple
    # out from above, although the scene says nothing lies on it. What goes inside comes first;
    # the banana then lies across the rim beside it, still borne by the rim at both ends.
    scene = parse_scene_text(
        "OBJECTS\ntable:0\nbowl:0\nbanana:0\napple:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non bowl:0 table:0\n"
        "in banana:0 bowl:0\nin apple:0 bowl:0\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\n"
        "table0 table:0 bowl:0 banana:0 apple:0 robot:0\nEND-LOCATIONS\n")
    w = build_world(scene)
    assert w.contacts("banana0") == {"bowl0"}, w.contacts("banana0")
    assert w.resting_on("banana0", "bowl0") and w.rotation("banana0")[2, 2] > 0.99
    # Seen from above, the banana's 4 cm width is clear of the 8 cm apple.
    along = w.rotation("banana0")[:2, 0]
    offset = w.position("apple0")[:2] - w.position("banana0")[:2]
    across = abs(float(offset[0] * along[1] - offset[1] * along[0]))
    assert across > 0.02 + 0.04, across
    assert "apple0" not in w.contacts("banana0")


def test_a_counter_with_mop_broom_pan_pot_and_watering_can_holds_them_all():
    # dirty.txt's counter: packed long things first and then in scene order, the pan, pot and paper
    # towel left no 40 cm stretch for the watering can, which was stacked on the broom and mop.
    # Largest first, everything stands on the counter itself.
    things = ("cloth", "bottle_opener", "broom", "mop", "pan", "paper_towel", "pot", "tape", "watering_can",
              "sponge")    # in the scene's order, which is the order they were packed in
    scene = parse_scene_text(
        "OBJECTS\ncounter:0\nrobot:0\n" + "".join(f"{t}:0\n" for t in things) + "END-OBJECTS\nRELATIONS\n"
        + "".join(f"on {t}:0 counter:0\n" for t in things) + "at robot:0 counter:0\nEND-RELATIONS\nLOCATIONS\n"
        "counter0 counter:0 robot:0 " + " ".join(f"{t}:0" for t in things) + "\nEND-LOCATIONS\n")
    w = build_world(scene)
    assert not [m for m in w.warnings if "counter0" in m], w.warnings
    for t in things:
        assert w.contacts(f"{t}0") == {"counter0"}, (t, w.contacts(f"{t}0"))


def test_a_spoon_and_a_fork_on_a_plate_lie_side_by_side_on_its_floor():
    # silver_books.txt: an 18 cm spoon and a 19 cm fork on a 26 cm plate are longer than the square
    # inscribed in its round well; stacked in the middle, the fork lay on the spoon and touched no
    # plate. Within the well's circle they lie side by side, each on the plate alone.
    scene = parse_scene_text(
        "OBJECTS\ntable:0\nplate:0\nspoon:0\nfork:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non plate:0 table:0\n"
        "on spoon:0 plate:0\non fork:0 plate:0\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\n"
        "table0 table:0 plate:0 spoon:0 fork:0 robot:0\nEND-LOCATIONS\n")
    w = build_world(scene)
    assert not [m for m in w.warnings if "plate0" in m], w.warnings
    for thing in ("spoon0", "fork0"):
        assert w.contacts(thing) == {"plate0"}, (thing, w.contacts(thing))
        assert w.resting_on(thing, "plate0") and w.rotation(thing)[2, 2] > 0.99
