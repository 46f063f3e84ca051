"""Things lying across a container's rim: what is dropped in falls beside them, not onto them."""
from __future__ import annotations

import numpy as np

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.physics.rims import across_rim, drop_points
from affplan_ros.sim.physics.skills import inner_height
from affplan_ros.sim.physics.world import build_world


def _box_with_tools_across():
    # simple_kitchen_counter_clearing: a 30 cm spatula and a 32 cm hammer are "in" a box whose
    # floor is 29 cm long: they lie across its rim, and a tissue is to go in.
    scene = parse_scene_text(
        "OBJECTS\ncounter:0\nbox:0\nspatula:0\nhammer:0\ntissue:0\nrobot:0\nEND-OBJECTS\nRELATIONS\n"
        "on box:0 counter:0\nin spatula:0 box:0\nin hammer:0 box:0\non tissue:0 counter:0\n"
        "at robot:0 counter:0\nEND-RELATIONS\nLOCATIONS\n"
        "counter0 counter:0 box:0 spatula:0 hammer:0 tissue:0 robot:0\nEND-LOCATIONS\n")
    return build_world(scene)


def test_a_tissue_is_dropped_into_a_box_beside_the_tools_across_its_rim():
    w = _box_with_tools_across()
    centre, rot, size = w.site(w.things["box0"].inner_site)
    rim = centre[2] + inner_height(w, "box0") - 0.05
    across = across_rim(w, "box0", rim)
    assert len(across) >= 2    # the spatula, the hammer's handle and head
    points = drop_points(w, "tissue0", "box0", rim)
    assert len(points) > 1 and not np.allclose(points[0], centre)
    # The tissue's footprint (as it lies now) over the first point is inside the opening and
    # clear of everything across the rim; over the middle it would land on the hammer.
    half = np.abs(rot.T[:2, :] @ w.rotation("tissue0")) @ (np.array(w.things["tissue0"].props.size) / 2)
    u, v, _ = rot.T @ (points[0] - centre)
    assert abs(u) + half[0] <= size[0] + 1e-6 and abs(v) + half[1] <= size[1] + 1e-6
    for a, b, hu, hv in across:
        assert abs(u - a) >= half[0] + hu or abs(v - b) >= half[1] + hv


def test_nothing_across_the_rim_drops_over_the_middle():
    scene = parse_scene_text(
        "OBJECTS\ncounter:0\nbox:0\ntissue:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non box:0 counter:0\n"
        "on tissue:0 counter:0\nat robot:0 counter:0\nEND-RELATIONS\nLOCATIONS\n"
        "counter0 counter:0 box:0 tissue:0 robot:0\nEND-LOCATIONS\n")
    w = build_world(scene)
    centre, _, _ = w.site(w.things["box0"].inner_site)
    points = drop_points(w, "tissue0", "box0", centre[2] + inner_height(w, "box0") - 0.05)
    assert len(points) == 1 and np.allclose(points[0], centre)


def test_a_dinner_knife_has_a_place_on_a_plate_along_its_middle():
    # A 22 cm dinner knife on a 26 cm plate (its well 22.4 cm across the wall's flats): no spot
    # with ROUND_ROOM round it, but it lies along the middle, on the floor inside the wall.
    from affplan_ros.sim.physics.bodies import object_geometry
    from affplan_ros.sim.physics.skills import Skills

    scene = parse_scene_text(
        "OBJECTS\ntable:0\nplate:0\ndinner_knife:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non plate:0 table:0\n"
        "on dinner_knife:0 table:0\nat robot:0 table:0\nEND-RELATIONS\nLOCATIONS\n"
        "table0 table:0 plate:0 dinner_knife:0 robot:0\nEND-LOCATIONS\n")
    w = build_world(scene)
    sk = Skills(w)
    half = object_geometry(w.things["dinner_knife0"].props).half
    spots = sk._free_spots("plate0", "plate0/top", None, half, w.base_pose(), rotation=np.eye(3))
    centre, _, _ = w.site("plate0/top")
    assert spots and np.linalg.norm(spots[0][:2] - centre[:2]) < 0.011 and abs(spots[0][2] - centre[2]) < 1e-3


def test_a_kitchen_knife_lies_across_a_plates_rim():
    # A 30 cm kitchen knife reaches past the plate's wall at both ends: it lies across the rim,
    # the spot at the rim's top (2.5 cm above the well's floor).
    from affplan_ros.sim.physics.rims import dish_spots

    scene = parse_scene_text(
        "OBJECTS\ntable:0\nplate:0\nrobot:0\nEND-OBJECTS\nRELATIONS\non plate:0 table:0\n"
        "at robot:0 table:0\nEND-RELATIONS\nLOCATIONS\ntable0 table:0 plate:0 robot:0\nEND-LOCATIONS\n")
    w = build_world(scene)
    spots = dish_spots(w, "plate0", (0.15, 0.02), lambda u, v: True)
    assert spots[0] == (0.0, 0.0, spots[0][2]) and abs(spots[0][2] - 0.025) < 1e-6
    assert dish_spots(w, "plate0", (0.15, 0.02), lambda u, v: False) == []
