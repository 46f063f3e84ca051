"""Collision-free paths for the holonomic base: A* on an occupancy grid of the room, shortened.

The base is a disc, so the grid marks a cell blocked when its centre is closer than the base
radius (plus clearance) to any footprint (furniture, people, floor-standing things, open door
leaves, walls). The A* path is then shortened to the few straight segments that stay clear,
checked continuously (``segment_clear``), so the base drives straight lines between corners.
"""
from __future__ import annotations

import heapq
from math import hypot
from typing import Mapping, Optional, Sequence

import numpy as np

from affplan_ros.sim.physics.world import BasePose, PhysicsWorld

RESOLUTION = 0.05    # m per grid cell
# Something carried, as a disc at a fixed offset from the base's centre while the base keeps its
# heading: (dx, dy) in the world, radius (m).
Disc = tuple[float, float, float]


def clearance_field(world: PhysicsWorld, xs: np.ndarray, ys: np.ndarray, exclude: Sequence[str] = (),
                    wider: Optional[Mapping[str, float]] = None,
                    only: Optional[Sequence[str]] = None) -> np.ndarray:
    """Distance from each grid point to the nearest obstacle footprint or wall; ``wider``: metres
    more kept from the named obstacles; ``only``: of those named alone (and the walls)."""
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    half = world.room_side / 2
    dist = np.minimum.reduce([half - gx, half + gx, half - gy, half + gy])
    for name, place in world.obstacles(exclude):
        if only is not None and name not in only:
            continue
        dist = np.minimum(dist, place.distance(gx, gy) - (wider or {}).get(name, 0.0))
    return dist



def segment_clear(world: PhysicsWorld, a: tuple[float, float], b: tuple[float, float], radius: float,
                  exclude: Sequence[str] = (), wider: Optional[Mapping[str, float]] = None,
                  carried: Sequence[Disc] = (), among: Sequence[str] = ()) -> Optional[str]:
    """The first obstacle a disc of ``radius`` touches moving straight from a to b, or None;
    ``carried``: discs moving along with it that must keep clear of the walls and of ``among``."""
    n = max(2, int(hypot(b[0] - a[0], b[1] - a[1]) / 0.02) + 1)
    t = np.linspace(0.0, 1.0, n)
    px, py = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
    half = world.room_side / 2 - radius
    if np.any(np.abs(px) > half) or np.any(np.abs(py) > half):
        return "the wall"
    obstacles = world.obstacles(exclude)
    for name, place in obstacles:
        if np.any(place.distance(px, py) < radius + (wider or {}).get(name, 0.0)):
            return name
    for dx, dy, r in carried:
        if np.any(np.abs(px + dx) > world.room_side / 2 - r) or np.any(np.abs(py + dy) > world.room_side / 2 - r):
            return "the wall"
        for name, place in obstacles:
            if name in among and np.any(place.distance(px + dx, py + dy) < r):
                return name
    return None


def plan_base_path(world: PhysicsWorld, start: BasePose, goal: BasePose, radius: float, exclude: Sequence[str] = (),
                   wider: Optional[Mapping[str, float]] = None, carried: Sequence[Disc] = (),
                   among: Sequence[str] = ()) -> Optional[list[BasePose]]:
    """Waypoints from ``start`` to ``goal`` (the last is ``goal``), or None if the goal cannot be
    reached without touching something; ``wider``: metres more kept from the named obstacles
    on the way (not at the goal, where the base stands to work); ``carried``: discs at fixed
    offsets (the base keeps its heading) kept clear of the walls and of ``among`` on the way."""
    a, b = (start.x, start.y), (goal.x, goal.y)
    if segment_clear(world, a, b, radius, exclude, wider, carried, among) is None:
        return [goal]
    half = world.room_side / 2
    xs = np.arange(-half, half + 1e-9, RESOLUTION)
    free = clearance_field(world, xs, xs, exclude, wider) >= radius
    # (Not by excluding the others: excluding a fridge drops its open door's leaf too, and the
    # milk carried beside the base was driven into the leaf.)
    for dx, dy, r in carried:
        free &= clearance_field(world, xs + dx, xs + dy, exclude, only=among) >= r
    n = len(xs)

    def cell(p: tuple[float, float]) -> tuple[int, int]:
        return (int(np.clip(round((p[0] + half) / RESOLUTION), 0, n - 1)),
                int(np.clip(round((p[1] + half) / RESOLUTION), 0, n - 1)))

    s, g = cell(a), cell(b)
    # The goal's own clearance decides, not that of the cell centre it snaps to; the base stands
    # where it stands, even if a little close to something.
    if segment_clear(world, b, b, radius, exclude) is not None:
        return None
    free[s] = free[g] = True
    came: dict[tuple[int, int], tuple[int, int]] = {}
    cost = {s: 0.0}
    frontier = [(0.0, s)]
    steps = [(dx, dy, hypot(dx, dy)) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
    while frontier:
        _, cur = heapq.heappop(frontier)
        if cur == g:
            break
        for dx, dy, step in steps:
            nxt = (cur[0] + dx, cur[1] + dy)
            if not (0 <= nxt[0] < n and 0 <= nxt[1] < n) or not free[nxt]:
                continue
            new = cost[cur] + step
            if new < cost.get(nxt, float("inf")):
                cost[nxt], came[nxt] = new, cur
                heapq.heappush(frontier, (new + hypot(g[0] - nxt[0], g[1] - nxt[1]), nxt))
    if g not in cost:
        return None
    cells = [g]
    while cells[-1] != s:
        cells.append(came[cells[-1]])
    points = [a] + [(xs[i], xs[j]) for i, j in reversed(cells[1:-1])] + [b]
    # Shorten: from each corner, jump to the farthest point still reachable in a straight line.
    corners, i = [a], 0
    while i < len(points) - 1:
        j = len(points) - 1
        while j > i + 1 and segment_clear(world, points[i], points[j], radius * 0.98, exclude, wider, carried,
                                          among) is not None:
            j -= 1
        corners.append(points[j])
        i = j
    # A holonomic base need not face where it drives: it turns to the goal's heading on the way.
    return [BasePose(float(x), float(y), goal.yaw) for x, y in corners[1:-1]] + [goal]
