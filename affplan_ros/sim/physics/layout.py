"""Where furniture stands: a square room with the furniture backed against its walls.

Scene files say which objects exist and what stands on what, not where things are, so the
physics world lays the room out itself: pieces of furniture go along the walls in scene order
(first wall filled first), each with its front facing the room centre, and the middle of the
room stays free floor for the base. The room grows until everything fits with a free centre of
at least ``MIN_FREE`` metres.

A furniture frame has its origin on the floor below the footprint centre, local x along the wall
(the class table's size x, the width), local +y out of the front towards the room (size y is the
depth), z up.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import cos, pi, sin
from typing import Sequence

import numpy as np

GAP = 0.35          # free space between neighbouring pieces along a wall (m)
MIN_FREE = 2.2      # free floor in the middle of the room, per side (m)
MIN_ROOM = 4.0


@dataclass(frozen=True)
class Placement:
    """A piece of furniture's frame in the world: floor point below its centre, and yaw."""

    x: float
    y: float
    yaw: float
    width: float      # along local x
    depth: float      # along local y

    def to_world(self, lx: float, ly: float) -> tuple[float, float]:
        c, s = cos(self.yaw), sin(self.yaw)
        return (self.x + c * lx - s * ly, self.y + s * lx + c * ly)

    def to_local(self, wx: float, wy: float) -> tuple[float, float]:
        dx, dy = wx - self.x, wy - self.y
        c, s = cos(self.yaw), sin(self.yaw)
        return (c * dx + s * dy, -s * dx + c * dy)

    def distance(self, wx, wy):
        """Distance from world point(s) (floats or numpy arrays) to the rectangle it stands on."""
        lx, ly = self.to_local(wx, wy)
        return np.hypot(np.maximum(np.abs(lx) - self.width / 2, 0.0), np.maximum(np.abs(ly) - self.depth / 2, 0.0))

    @property
    def front_normal(self) -> tuple[float, float]:
        """Unit vector out of the front (local +y) in the world."""
        return (-sin(self.yaw), cos(self.yaw))

    def footprint(self, margin: float = 0.0) -> list[tuple[float, float]]:
        """Corners in the world, grown by ``margin``."""
        hw, hd = self.width / 2 + margin, self.depth / 2 + margin
        return [self.to_world(sx * hw, sy * hd) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]


@dataclass(frozen=True)
class Wall:
    """One wall: where along it furniture starts, its direction, and the yaw that faces the room."""

    start: tuple[float, float]
    direction: tuple[float, float]
    yaw: float


def _walls(half: float) -> list[Wall]:
    # Walking clockwise seen from above (east along the north wall first): the room lies to the
    # right of each wall, and each piece's front (local +y) faces it.
    return [
        Wall((-half, half), (1.0, 0.0), pi),          # north wall, fronts face -y
        Wall((half, half), (0.0, -1.0), pi / 2),      # east wall, fronts face -x
        Wall((half, -half), (-1.0, 0.0), 0.0),        # south wall, fronts face +y
        Wall((-half, -half), (0.0, 1.0), -pi / 2),    # west wall, fronts face +x
    ]


def layout_room(footprints: Sequence[tuple[str, float, float]]) -> tuple[float, dict[str, Placement]]:
    """Place ``(name, width, depth)`` pieces along the walls; returns (room side, placements)."""
    deepest = max((d for _, _, d in footprints), default=0.6)
    side = MIN_ROOM
    while True:
        placements = _try_layout(footprints, side, deepest)
        if placements is not None:
            return side, placements
        side += 0.5


def _try_layout(footprints: Sequence[tuple[str, float, float]], side: float,
                deepest: float) -> dict[str, Placement] | None:
    if side - 2 * deepest < MIN_FREE:
        return None
    half = side / 2
    # Each wall keeps its corners free to the depth of the deepest piece, so pieces on
    # neighbouring walls cannot overlap.
    usable = side - 2 * deepest
    walls = _walls(half)
    out: dict[str, Placement] = {}
    wall, used = 0, 0.0
    for name, width, depth in footprints:
        while used + width > usable + 1e-9:
            wall, used = wall + 1, 0.0
            if wall >= len(walls) or width > usable:
                return None
        w = walls[wall]
        along = deepest + used + width / 2
        # Back against the wall: the centre is half a depth in from it.
        nx, ny = w.direction[1], -w.direction[0]      # into the room: the direction turned right
        cx = w.start[0] + w.direction[0] * along + nx * depth / 2
        cy = w.start[1] + w.direction[1] * along + ny * depth / 2
        out[name] = Placement(cx, cy, w.yaw, width, depth)
        used += width + GAP
    return out
