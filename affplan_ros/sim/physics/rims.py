"""What lies across a container's rim, and where something dropped in still falls clear of it.

A spatula and a hammer too long for a box's floor lie across its rim (``world._rim_spot``). A
person adding a tissue to that box lets it fall in beside them, not onto them: over the middle
of the opening it would land on the hammer and slide off onto the floor.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from affplan_ros.core.knowledge.objects import handle_parts
from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

Rect = tuple[float, float, float, float]   # (u, v, half u, half v) in a surface's frame

RIM_BAND = 0.01    # m: a thing whose lowest point is no further below the rim than this rests on it
DROP_STEP = 0.01   # m between candidate drop points over the opening
DROP_ROOM = 0.005  # m kept between what falls and what lies across (it falls straight, held level)


def _half_extents(site_rot: np.ndarray, rot: np.ndarray, half: np.ndarray) -> tuple[float, float]:
    """Half extents in the site's frame of a box of ``half`` turned by ``rot`` (world)."""
    m = np.abs(site_rot.T[:2, :] @ rot) @ half
    return float(m[0]), float(m[1])


def _parts(world: PhysicsWorld, name: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(world centre, half extents) of the boxes a thing covers: a handle tool's handle and head
    (its 3 cm handle leaves room beside it that its 12 cm head's box would hide), else its box."""
    props, pos, rot = world.things[name].props, world.position(name), world.rotation(name)
    if props.handle is not None:
        return [(pos + rot @ np.asarray(c), np.asarray(h)) for c, h in handle_parts(props)]
    return [(pos, np.asarray(object_geometry(props).half))]


def across_rim(world: PhysicsWorld, container: str, rim: float) -> list[Rect]:
    """Rectangles, in the frame of ``container``'s inner site, of the carryable things over its
    opening whose lowest point is at or above its ``rim`` height (less ``RIM_BAND``): what lies
    across it, not what is in it."""
    centre, site_rot, size = world.site(world.things[container].inner_site)
    out: list[Rect] = []
    for name, thing in world.things.items():
        if name == container or thing.kind != ThingKind.OBJECT:
            continue
        for pos, half in _parts(world, name):
            hu, hv = _half_extents(site_rot, world.rotation(name), half)
            bottom = pos[2] - float(np.abs(world.rotation(name)[2, :]) @ half)
            u, v, _ = site_rot.T @ (pos - centre)
            if bottom >= rim - RIM_BAND and abs(u) < size[0] + hu and abs(v) < size[1] + hv:
                out.append((float(u), float(v), hu, hv))
    return out


def drop_points(world: PhysicsWorld, obj: str, container: str, rim: float,
                limit: int = 8) -> list[np.ndarray]:
    """World points (at the inner floor's height) over ``container``'s opening to let the held
    ``obj`` fall from: its middle where nothing lies across the rim (as before); else those where
    ``obj``'s footprint, as it is turned now, lies within the opening and clear of what lies
    across, nearest the middle first (the middle itself last, when none is)."""
    centre, site_rot, size = world.site(world.things[container].inner_site)
    across = across_rim(world, container, rim)
    if not across:
        return [centre]
    mine = _half_extents(site_rot, world.rotation(obj), np.asarray(object_geometry(world.things[obj].props).half))

    def grid(room: float, axis: int) -> list[float]:
        # Every DROP_STEP from the middle, and the places just clear of each thing across and of
        # the walls: a tissue has 1.2 cm to spare between a spatula and the box's wall.
        if room < 0:
            return []
        n = int(room / DROP_STEP + 1e-9)
        edges = [r[axis] + s * (mine[axis] + r[axis + 2] + DROP_ROOM) for r in across for s in (-1, 1)]
        return sorted({k * DROP_STEP for k in range(-n, n + 1)} | {room, -room}
                      | {e for e in edges if abs(e) <= room})

    clear = [(u, v) for u in grid(size[0] - mine[0], 0) for v in grid(size[1] - mine[1], 1)
             if all(abs(u - a) >= mine[0] + hu + DROP_ROOM - 1e-6 or abs(v - b) >= mine[1] + hv + DROP_ROOM - 1e-6
                    for a, b, hu, hv in across)]
    clear.sort(key=lambda p: np.hypot(*p))
    return [centre + site_rot @ np.array([u, v, 0.0]) for u, v in clear[:limit]] + [centre]


def first_plan(points: list[np.ndarray], plan_at) -> Optional[tuple]:
    """The first plan ``plan_at`` finds over ``points``."""
    for p in points:
        found = plan_at(p)
        if found is not None:
            return found
    return None


RIM_BEARING = 0.005   # m a thing across a rim reaches past the wall's inner face at each end (world._rim_spot)


def dish_spots(world: PhysicsWorld, dish: str, mine: tuple[float, float],
               clear: Callable[[float, float], bool], step: float = 0.01) -> list[tuple[float, float, float]]:
    """Where on a round dish whose well leaves no ``ROUND_ROOM`` round a long thing (a 22 cm
    dinner knife on a 26 cm plate, its well 22.4 cm across the wall's flats) it lies, its middle
    over the dish's: in the well where it still fits inside the wall, else across the rim, each
    end borne ``RIM_BEARING`` past the wall, as a knife lies across a plate. (u, v, height above
    the well's floor) in the frame of the dish's top site, nearest the middle first, where
    ``clear(u, v)`` (on the floor where any is); none for anything but a dish (a container takes
    things inside instead)."""
    thing = world.things.get(dish)
    if thing is None or thing.kind != ThingKind.OBJECT or thing.props.shape != "cylinder" \
            or thing.props.inner is not None:
        return []
    geo = object_geometry(thing.props)
    if geo.hollow is None:
        return []
    ri = geo.half[0] * np.cos(np.pi / 8) - geo.wall[0]    # the wall's inner flats (bodies.object_xml)
    along = 0 if mine[0] >= mine[1] else 1
    half_len, half_wid = mine[along], mine[1 - along]
    out = []
    for k in range(int(ri / step) + 1):
        for off in {k * step, -k * step}:
            edge = abs(off) + half_wid
            if edge >= ri:
                continue
            if np.hypot(half_len, edge) <= ri:
                dz = 0.0                  # inside the wall, on the floor
            elif half_len >= np.sqrt(ri * ri - edge * edge) + RIM_BEARING:
                dz = geo.hollow[2]        # across the rim, at its top
            else:
                continue                  # would end on the wall's top edge: it would tip in
            u, v = (0.0, off) if along == 0 else (off, 0.0)
            if clear(u, v):
                out.append((u, v, float(dz)))
    # On the floor where it fits there at all: across the rim towards the side its ends bear on
    # little of the wall.
    return [p for p in out if p[2] == 0.0] or out
