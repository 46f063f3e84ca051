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
