"""Opening a door or drawer by its handle: where the base stands and the path it follows while the
hand holds the handle (robots/doors.py), checked against the joint's own motion."""
from __future__ import annotations

import math

import pytest

from affplan_ros.robots.doors import carried, moved_to, outward, pull
from affplan_ros.robots.places import first_in_the_way
from affplan_ros.robots.poses import Joint, SeenObject

# A fridge facing +y, hinged at its right edge (x = 0.3), the handle near the left edge: opening
# (positive angles) swings the handle out towards +y, i.e. clockwise seen from above.
DOOR = Joint("hinge", handle=(-0.25, 0.05, 1.0), origin=(0.3, 0.0, 0.9), axis=(0.0, 0.0, -1.0), position=0.0,
             open=1.9)
DRAWER = Joint("slide", handle=(0.0, 0.3, 0.6), origin=(0.0, 0.0, 0.6), axis=(0.0, 1.0, 0.0), position=0.05,
               open=0.4)


def _in_base(base, point):
    c, s = math.cos(base.yaw), math.sin(base.yaw)
    dx, dy = point[0] - base.x, point[1] - base.y
    return c * dx + s * dy, -s * dx + c * dy


def _handle_at(joint: Joint, q: float):
    """The handle's position with the joint at ``q`` (rotated about the hinge, or slid)."""
    if joint.type == "slide":
        return tuple(h + a * (q - joint.position) for h, a in zip(joint.handle, joint.axis))
    turn = -(q - joint.position)     # the axis points down: opening turns clockwise
    ox, oy = joint.origin[:2]
    x, y = joint.handle[0] - ox, joint.handle[1] - oy
    return ox + math.cos(turn) * x - math.sin(turn) * y, oy + math.sin(turn) * x + math.cos(turn) * y


def test_the_handle_is_pulled_out_of_the_leaf_and_a_drawer_along_its_slide():
    nx, ny = outward(DOOR)
    assert ny > 0.99 and abs(math.hypot(nx, ny) - 1) < 1e-9
    assert outward(DRAWER) == pytest.approx((0.0, 1.0))


@pytest.mark.parametrize("joint, goal", [(DOOR, 1.6), (DOOR, 0.0), (DRAWER, 0.4)])
def test_along_the_sweep_the_handle_stays_where_the_hand_holds_it(joint, goal):
    start = joint if goal != 0.0 else Joint(**{**joint.__dict__, "position": 1.6,
                                               "handle": (*_handle_at(joint, 1.6), joint.handle[2])})
    way = pull(start, goal, ahead=0.55, lateral=0.15)
    assert _in_base(way.stand, start.handle) == pytest.approx((0.55, 0.15))
    assert way.grasp.yaw == pytest.approx(way.stand.yaw)
    # the base faces the leaf: the hand comes in from the base's side of the handle
    assert _in_base(way.stand, (way.approach.x, way.approach.y)) == pytest.approx((0.45, 0.15))
    n = len(way.sweep) - 1
    assert n >= 2
    for k, base in enumerate(way.sweep):
        q = start.position + (goal - start.position) * k / n
        assert _in_base(base, _handle_at(joint, q)) == pytest.approx((0.55, 0.15), abs=1e-6)
    first, stand = way.sweep[0], way.stand
    assert (first.x, first.y, first.yaw) == pytest.approx((stand.x, stand.y, stand.yaw))
    assert carried(start, way.grasp, goal).x == pytest.approx(_handle_at(joint, goal)[0], abs=1e-6)


def test_what_stands_in_the_arc_is_found_and_a_clear_arc_passes():
    way = pull(DOOR, 1.6, ahead=0.55, lateral=0.15)
    end = way.sweep[-1]
    chair = SeenObject("chair0", end.x, end.y, 0.45, size=(0.4, 0.4, 0.9))
    cup = SeenObject("cup0", end.x, end.y, 0.95, size=(0.08, 0.08, 0.1))    # on a table: above the base
    assert first_in_the_way(way.sweep, 0.3, [chair, cup]) == "chair0"
    assert first_in_the_way(way.sweep, 0.3, [cup]) is None
    assert first_in_the_way(way.sweep, 0.3, [chair], skip=["chair0"]) is None


def test_a_room_door_is_taken_by_its_back_handle_from_the_other_side():
    door = Joint(**{**DOOR.__dict__, "back_handle": (-0.25, -0.05, 1.0)})
    front, back = pull(door, 0.0, 0.55, 0.15), pull(door, 0.0, 0.55, 0.15, back=True)
    assert front.stand.y > 0.5 and back.stand.y < -0.5      # in front of each face
    assert _in_base(back.stand, door.back_handle) == pytest.approx((0.55, 0.15))
    with pytest.raises(ValueError, match="no handle on its back"):
        pull(DOOR, 0.0, 0.55, 0.15, back=True)


def test_the_way_into_an_open_fridge_is_its_front_whichever_way_the_door_stands():
    from affplan_ros.robots.doors import front
    from affplan_ros.robots.places import standing_places

    opened = moved_to(DOOR, 1.6)
    assert front(opened) == pytest.approx(front(DOOR), abs=1e-6) and front(DOOR)[1] > 0.99
    fridge = SeenObject("refrigerator0", 0.0, -0.35, 0.9, size=(0.6, 0.7, 1.8), joint=opened)
    places = standing_places(fridge, 0.4, robot_xy=(3.0, -0.35), front=front(opened))
    first = places[0]
    assert (first.x, first.y) == pytest.approx((0.0, 0.4)) and first.yaw == pytest.approx(-math.pi / 2)
    # then along the front, within its width (the open door may stand in the middle's way), then
    # the other three faces
    assert [(round(p.x, 2), round(p.y, 2)) for p in places[1:3]] == [(-0.2, 0.4), (0.2, 0.4)]
    assert len(places) == 3 + 3 and all(p.y < 0.4 - 1e-6 for p in places[3:])
