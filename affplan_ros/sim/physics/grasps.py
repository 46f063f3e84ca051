"""Where a parallel gripper coming from above takes an object, and whether its fingers have room.

A grasp is the TCP target (world), the width the fingers close across and the direction they
close along (``finger_yaw``; None: round, any). The candidates follow from the object's shape and
size in the object table (``grasp`` in core/knowledge/data/objects.yaml):

* default (``top``): across a horizontal side that fits the gripper, the narrowest first (both
  sides of a square box), at its middle and then at points along its length (a cucumber with a
  salad beside its middle is taken nearer one end);
* ``rim``: a container wider than the gripper standing upright, or a plate (``grasp: rim``): the
  fingers straddle its wall or lip, the wall nearest the robot first, then its neighbours;
* ``handle``: across the handle, nearest the centre of mass first (a hammer's head is wider
  than the gripper, its handle is not);
* ``top_handle``: across the bar of a handle over its top, between its posts (a watering can).

Finger room: opened fully, each pad comes down beside the object to the grasp height and closes
towards it. A candidate where a pad would come down on, or close onto, something else (another
object, a container's wall) is tried after the clear ones, with every finger direction: the
physics then shows whether the fingers get there. Candidates are geometry only; whether a grasp
holds is still decided by the physics (both pads on the object, the object rising with the hand).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import atan2, cos, pi, sin
from typing import Optional

import numpy as np

from affplan_ros.core.knowledge.objects import HANDLE_POST, handle_parts, top_handle_parts
from affplan_ros.sim.physics.bodies import object_geometry, vertical_half
from affplan_ros.sim.physics.robot import PAD_HALF
from affplan_ros.sim.physics.world import BasePose, PhysicsWorld, ThingKind, is_long

TIP_CLEARANCE = 0.035   # m from the TCP down to above the support: the finger tips stay clear of it
THIN_TIP_GAP = 0.0015   # m the finger tips stay above the support under a thin thing (a nail)
LIGHT = 0.008           # kg: lighter than this, a grasp closes with a light squeeze
THIN_SQUEEZE = 0.002    # m inside its width the fingers of such a grasp are set to
RIM_DEPTH = 0.03        # m below its top a wall is held (the pads on its top 3 cm, the palm above)
RIM_TIP_CLEARANCE = 0.04   # the same over a plate's floor: the inner finger clears its well's floor
ALONG_STEP = 0.03       # m between grasp points along a long object or a handle
MAX_POINTS = 7          # grasp points along a length (the middle and three to each side)
COLUMN = 0.25           # m above the grasp height a finger's path down is kept clear
# m more room kept round each pad: the IK meets a pose within 1 cm, and the arm tracks the joint
# waypoints of a descent, not the straight line between them (a pad 8 mm from a bottle hit it).
MARGIN = 0.01
# m the fingers open wider than what they take (each pad 1.25 cm clear of it coming down), as a
# hand shapes itself before a grasp: a rim grasp's inner finger then stays by the wall, clear
# of what lies in the bowl.
OPEN_MARGIN = 0.025
# m the hand may come down off a low thing's middle along the closing direction, away from a
# neighbour its 10 cm palm would meet (a fork 3.5 cm in front of a box's wall): the fingers open that
# much wider to either side, the far one comes down as close by as ever, and closing, it pushes the
# thing in between the pads (a parallel gripper centres what it closes on).
OFF_CENTRE = 0.015
# m the fingers open wider than what they hold to let go of it where the full ``OPEN_MARGIN`` would
# meet a neighbour (a fork set down 2.75 cm behind a knife on a plate): parting 5 mm from it on
# either side frees it, as a person's fingers barely open to set a fork down beside a knife.
RELEASE_MARGIN = 0.01


@dataclass(frozen=True)
class Grasp:
    width: float                  # what the fingers close across (m)
    finger_yaw: Optional[float]   # world yaw of the closing direction; None: round, any
    target: np.ndarray            # TCP, world
    kind: str                     # top | rim | handle
    off: float = 0.0              # m the TCP lies off the object's middle along the closing direction

    @property
    def spread(self) -> float:
        """What the open fingers straddle coming down: the object, and the TCP's way off its middle
        on both sides (the fingers close symmetrically about the TCP)."""
        return self.width + 2 * abs(self.off)


def grasp_points(world: PhysicsWorld, obj: str, base: BasePose, max_width: float) -> list[Grasp]:
    """Candidate top-down grasps of ``obj`` as it lies now (it may have fallen over), best first;
    ``max_width``: the widest the gripper closes on. The first is the narrowest (too wide for the
    gripper: nothing this gripper takes it by)."""
    thing = world.things[obj]
    props = thing.props
    pos, rot = world.position(obj), world.rotation(obj)
    geo = object_geometry(props)
    half = np.array(geo.half)
    hz = vertical_half(props, rot)
    top, bottom = pos[2] + hz, pos[2] - hz
    if props.handle is not None and abs(rot[2, 0]) < 0.5:
        return _handle_points(world, obj, pos, rot)
    if props.top_handle is not None and rot[2, 2] > 0.9:
        return _top_handle_points(world, obj, pos, rot)
    horizontal = [i for i in range(3) if abs(rot[2, i]) < 0.5] or [int(np.argmin(np.abs(rot[2, :])))]
    axes = sorted(horizontal, key=lambda i: half[i])
    if geo.hollow is not None and rot[2, 2] > 0.9 and (2 * half[axes[0]] > max_width or props.grasp == "rim"):
        return _rim_points(world, obj, base, top, bottom)
    # Round in the horizontal plane (a sphere, an upright cylinder): any finger direction.
    round_now = props.shape == "sphere" or (props.shape == "cylinder" and abs(rot[2, 2]) > 0.9)
    # Pads centred low enough to hold, high enough that the palm stays above the object and the
    # finger tips above the support.
    z = max(pos[2], top - 0.045, bottom + tip_clearance(top - bottom))
    out = []
    fits = [a for a in axes if 2 * half[a] <= max_width] or axes[:1]
    for i in fits[:1] if round_now else fits:
        yaw = None if round_now else atan2(rot[1, i], rot[0, i])
        along = [j for j in horizontal if j != i]
        steps = [0.0]
        if along and not round_now:
            room = half[along[0]] - PAD_HALF[2]
            steps = _offsets(room)
        for d in steps:
            point = pos + d * rot[:, along[0]] if d else pos
            out.append(Grasp(2 * float(half[i]), yaw, np.array([point[0], point[1], z]), "top"))
    return out


def off_centre(world: PhysicsWorld, obj: str, grasp: Grasp, max_aperture: float) -> list[Grasp]:
    """``grasp`` with the TCP ``OFF_CENTRE`` to either side of the object's middle along the
    closing direction, where the fingers still open wide enough: only a top grasp of a low thing
    (at most a pad's length high: the far pad pushes it at its foot, so it slides, not tips)."""
    height = 2 * vertical_half(world.things[obj].props, world.rotation(obj))
    if grasp.kind != "top" or grasp.finger_yaw is None or height > 2 * PAD_HALF[0] \
            or grasp.width + 2 * OFF_CENTRE + OPEN_MARGIN > max_aperture:
        return []
    d = np.array([cos(grasp.finger_yaw), sin(grasp.finger_yaw), 0.0])
    return [Grasp(grasp.width, grasp.finger_yaw, grasp.target + sign * OFF_CENTRE * d, grasp.kind, sign * OFF_CENTRE)
            for sign in (1.0, -1.0)]


def tip_clearance(height: float) -> float:
    """How high (m) above the support the TCP stays taking something ``height`` tall lying there:
    ``TIP_CLEARANCE``, but for what is thinner than that leaves the pads (a nail or a screw lying
    flat, 5 mm) the finger tips come down to ``THIN_TIP_GAP`` above the support, as a gripper
    picks a screw from a table, so that the pads cover the lower part of it too (the tips
    5 mm up passed over a 5 mm nail and the fingers closed on nothing)."""
    return min(TIP_CLEARANCE, PAD_HALF[0] + max(THIN_TIP_GAP, 0.4 * height))


def _offsets(room: float) -> list[float]:
    """0, then ±ALONG_STEP, ±2 ALONG_STEP, ... within ``room``: the middle first."""
    out = [0.0]
    k = 1
    while k * ALONG_STEP <= room and len(out) < MAX_POINTS:
        out += [k * ALONG_STEP, -k * ALONG_STEP]
        k += 1
    return out


def _handle_points(world: PhysicsWorld, obj: str, pos: np.ndarray, rot: np.ndarray) -> list[Grasp]:
    """Across the handle, at points along it nearest the centre of mass first (less torque in the
    fingers), the pads clear of the head."""
    props = world.things[obj].props
    (hc, hh), _ = handle_parts(props)
    com = object_geometry(props).com[0]
    lo, hi = hc[0] - hh[0] + PAD_HALF[2] + 0.01, hc[0] + hh[0] - PAD_HALF[2] - 0.01
    xs = list(np.arange(lo, hi + 1e-9, ALONG_STEP))
    if is_long(props):
        # Its balance point itself, or the nearest the pads can go: 5 cm off it on the grid, a
        # 1 kg mop turned head-down between the pads on the way to the person.
        xs.append(float(np.clip(com, lo, hi)))
    xs = sorted(xs, key=lambda x: abs(x - com))[:MAX_POINTS]
    yaw = atan2(rot[1, 1], rot[0, 1])
    out = []
    for x in xs:
        point = pos + rot @ np.array([x, 0.0, 0.0])
        hz = float(np.abs(rot[2, 1:]) @ np.array(hh[1:]))
        z = max(point[2], point[2] + hz - 0.045, point[2] - hz + TIP_CLEARANCE)
        out.append(Grasp(2 * hh[1], yaw, np.array([point[0], point[1], z]), "handle"))
    return out


def _top_handle_points(world: PhysicsWorld, obj: str, pos: np.ndarray, rot: np.ndarray) -> list[Grasp]:
    """Across the bar of a handle over the top (a watering can standing upright), the pads at the
    bar's height between its posts, at points nearest the centre of mass first."""
    props = world.things[obj].props
    (bc, bh), *_ = top_handle_parts(props)
    lo = bc[0] - bh[0] + HANDLE_POST + PAD_HALF[2] + 0.005
    hi = bc[0] + bh[0] - HANDLE_POST - PAD_HALF[2] - 0.005
    com = object_geometry(props).com[0]
    xs = sorted(np.arange(lo, hi + 1e-9, ALONG_STEP / 2), key=lambda x: abs(x - com))[:MAX_POINTS]
    yaw = atan2(rot[1, 1], rot[0, 1])
    return [Grasp(2 * bh[1], yaw, pos + rot @ np.array([x, 0.0, bc[2]]), "handle") for x in xs]


def _rim_points(world: PhysicsWorld, obj: str, base: BasePose, top: float, bottom: float) -> list[Grasp]:
    """The fingers straddle the wall (a bowl's rim, a plate's lip), closing across its thickness:
    the wall nearest the robot, then the next ones round to the sides (something may lie inside
    by the first); not the far side, which the hand would reach over the whole container for."""
    props = world.things[obj].props
    geo = object_geometry(props)
    pos, rot = world.position(obj), world.rotation(obj)
    towards = np.array([base.x, base.y]) - pos[:2]
    towards /= max(float(np.linalg.norm(towards)), 1e-6)
    # The pads on the wall's top few cm; on a low lip as low as the floor of its well allows.
    z = max(top - RIM_DEPTH, bottom + RIM_TIP_CLEARANCE)
    walls: list[tuple[np.ndarray, float, float]] = []     # (outward normal, distance of the wall's middle, thickness)
    if props.shape == "cylinder":
        r, t = geo.half[0], geo.wall[0]
        # The octagon's walls (bodies.object_xml): their middles lie at r cos(pi/8) - t/2.
        yaw_obj = atan2(rot[1, 0], rot[0, 0])
        k = round((atan2(towards[1], towards[0]) - yaw_obj) / (pi / 4))
        for dk in (0, 1, -1, 2, -2):
            a = yaw_obj + (k + dk) * pi / 4
            walls.append((np.array([cos(a), sin(a)]), r * cos(pi / 8) - t / 2, t))
    else:
        for axis, h, t in ((rot[:2, 0], geo.half[0], geo.wall[0]), (rot[:2, 1], geo.half[1], geo.wall[1])):
            for sign in (1.0, -1.0):
                walls.append((sign * axis, h - t / 2, t))
        walls = sorted(walls, key=lambda wl: -float(wl[0] @ towards))[:3]
    out = []
    for normal, dist, t in walls:
        centre = pos[:2] + dist * normal
        out.append(Grasp(t, atan2(normal[1], normal[0]), np.array([centre[0], centre[1], z]), "rim"))
    return out


def closing(grasp: Grasp, mass: float) -> float:
    """The aperture ``grasp`` closes to on something of ``mass`` kg: 0, i.e. past shut, the force
    limit squeezing (40 N: a bowl's 8 mm wall does not slide down the pads); but a part lighter
    than ``LIGHT`` (a nail, a screw: 5 g) taken whole is squeezed lightly, the fingers set
    ``THIN_SQUEEZE`` inside its width, as a gripper is set to take a small part: the simulation's
    contacts are soft in proportion to the mass, and the full force drove the pads through a 5 g
    nail (across its shank and end to end alike)."""
    return max(grasp.width - THIN_SQUEEZE, 1e-4) if grasp.kind == "top" and mass < LIGHT else 0.0


def opening(width: float, max_aperture: float, margin: float = OPEN_MARGIN) -> float:
    """How wide the fingers open to take (or let go of) something ``width`` across."""
    return min(max_aperture, width + margin)


def in_the_way(world: PhysicsWorld, obj: str, target: np.ndarray, width: float, yaw: float, max_aperture: float,
               ignore: tuple[str, ...] = (), open_margin: float = OPEN_MARGIN) -> Optional[str]:
    """What a finger would come down on or close onto, taking ``obj`` (``width`` across the
    fingers) with the TCP at ``target`` and the fingers closing along ``yaw``, or opening there to
    let go of it (None: room for both fingers). Each pad's path is sampled: its footprint from the
    open position (``opening`` by ``open_margin``) in to the object, from ``COLUMN`` above down
    to its tip."""
    d = np.array([cos(yaw), sin(yaw)])
    t = np.array([-d[1], d[0]])
    low, high = target[2] - PAD_HALF[0], target[2] + COLUMN
    inner = width / 2 + 0.004

    def pad_paths(margin: float) -> list[np.ndarray]:
        outer = opening(width, max_aperture, open_margin) / 2 + 2 * PAD_HALF[1] + margin
        side = PAD_HALF[2] + margin
        return [target[:2] + sign * a * d + b * t
                for sign in (1.0, -1.0) for a in np.linspace(inner, outer, 5) for b in (-side, 0.0, side)]

    points, exact = pad_paths(MARGIN), pad_paths(0.0)
    geo, pos, rot = object_geometry(world.things[obj].props), world.position(obj), world.rotation(obj)
    for name, thing in world.things.items():
        if name == obj or name in ignore or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
            continue
        reach = max_aperture / 2 + 0.05 + float(np.linalg.norm(object_geometry(thing.props).half))
        if np.hypot(*(world.position(name)[:2] - target[:2])) > reach:
            continue    # (too far away to matter: saves the sampling)
        # What lies inside the container being taken only must not be under a pad: brushing it
        # moves it within the container.
        inside = geo.hollow is not None and rot[2, 2] > 0.9 and _in_opening(
            world.things[obj].props.shape, geo, rot.T @ (world.position(name) - pos), 0.0)
        if any(_column_hits(world, name, p, low, high) for p in (exact if inside else points)):
            return name
    return None


def arm_in_the_way(world: PhysicsWorld, points: list[np.ndarray], radius: float,
                   ignore: tuple[str, ...] = (), solid: bool = False) -> Optional[str]:
    """What a link of ``radius`` through ``points`` (world) would pass through: an object's body
    (not the open inside of a container, unless ``solid``: a knife lying across a cup meets its
    wall between any two of the points), or None."""
    for name, thing in world.things.items():
        if name in ignore or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
            continue
        reach = radius + float(np.linalg.norm(object_geometry(thing.props).half))
        pos = world.position(name)
        if all(np.linalg.norm(p - pos) > reach for p in points):
            continue
        if any(_body_near(world, name, p, radius, solid) for p in points):
            return name
    return None


def _body_near(world: PhysicsWorld, name: str, point: np.ndarray, radius: float, solid: bool = False) -> bool:
    """Is ``point`` within ``radius`` of ``name``'s body (its bounding box, a round thing's
    circle, a container's walls and floor but not the open space inside)?"""
    thing = world.things[name]
    geo = object_geometry(thing.props)
    pos, rot = world.position(name), world.rotation(name)
    half = np.array(geo.half)
    local = rot.T @ (point - pos)
    if np.any(np.abs(local) > half + radius):
        return False
    if rot[2, 2] <= 0.9:
        return True
    if thing.props.shape in ("sphere", "cylinder") and np.hypot(local[0], local[1]) > half[0] + radius:
        return False
    if solid or geo.hollow is None:
        return True
    return _wall_distance(thing.props.shape, geo, local) <= radius


def _box_distance(point: np.ndarray, centre: np.ndarray, half: np.ndarray) -> float:
    """Euclidean distance from ``point`` to a box (0 inside it)."""
    return float(np.linalg.norm(np.maximum(np.abs(point - centre) - half, 0.0)))


def _wall_distance(shape: str, geo, local: np.ndarray) -> float:
    """Distance from a point (body frame) to an upright container's walls and floor, not its open
    inside: a wrist 4 cm inside a box's wall and 4 cm over it is 5.7 cm from the wall's top edge
    (the box round the whole container, grown by the forearm's radius, took it for a hit)."""
    hx, hy, hz = geo.half
    ix, iy, iz = geo.hollow
    floor = 2 * hz - iz
    if shape == "cylinder":
        # In the (radial, height) plane: the wall a band from the inner to the outer radius.
        rz = np.array([np.hypot(local[0], local[1]), local[2], 0.0])
        wall = _box_distance(rz, np.array([(hx + ix / 2) / 2, 0.0, 0.0]), np.array([(hx - ix / 2) / 2, hz, 0.0]))
        bottom = _box_distance(rz, np.array([hx / 2, -hz + floor / 2, 0.0]), np.array([hx / 2, floor / 2, 0.0]))
        return min(wall, bottom)
    tx, ty = hx - ix / 2, hy - iy / 2
    parts = [(np.array([sx * (hx - tx / 2), 0.0, 0.0]), np.array([tx / 2, hy, hz])) for sx in (-1, 1)]
    parts += [(np.array([0.0, sy * (hy - ty / 2), 0.0]), np.array([hx, ty / 2, hz])) for sy in (-1, 1)]
    parts.append((np.array([0.0, 0.0, -hz + floor / 2]), np.array([hx, hy, floor / 2])))
    return min(_box_distance(local, c, h) for c, h in parts)


def _in_opening(shape: str, geo, local: np.ndarray, margin: float) -> bool:
    """Is a point (body frame) in an upright container's opening, ``margin`` clear of its walls
    and above its floor?"""
    ix, iy, iz = geo.hollow
    floor = -geo.half[2] + (2 * geo.half[2] - iz)
    if local[2] - margin < floor:
        return False
    if shape == "cylinder":
        return np.hypot(local[0], local[1]) + margin < ix / 2
    return abs(local[0]) + margin < ix / 2 and abs(local[1]) + margin < iy / 2


def _column_hits(world: PhysicsWorld, name: str, xy: np.ndarray, low: float, high: float) -> bool:
    """Does the vertical segment at ``xy`` from ``low`` to ``high`` pass through ``name``'s body
    (its bounding box; a round thing's circle; a container's walls, not its open inside)?"""
    thing = world.things[name]
    geo = object_geometry(thing.props)
    pos, rot = world.position(name), world.rotation(name)
    half = np.array(geo.half)
    hz = vertical_half(thing.props, rot)
    if pos[2] + hz < low or pos[2] - hz > high:
        return False
    local = rot.T @ np.array([xy[0] - pos[0], xy[1] - pos[1], 0.0])
    if rot[2, 2] > 0.9:
        round_ = thing.props.shape in ("sphere", "cylinder")
        inside = (np.hypot(local[0], local[1]) <= half[0]) if round_ else \
            (abs(local[0]) <= half[0] and abs(local[1]) <= half[1])
        if not inside:
            return False
        # In a container's opening the finger meets only its floor, below the rim.
        return geo.hollow is None or not _in_opening(thing.props.shape, geo, np.array(
            [local[0], local[1], low - pos[2]]), 0.0)
    # Tilted: where the vertical line crosses its bounding box (slabs in its own frame).
    direction = rot.T @ np.array([0.0, 0.0, 1.0])
    origin = rot.T @ np.array([xy[0] - pos[0], xy[1] - pos[1], low - pos[2]])
    t0, t1 = 0.0, high - low
    for k in range(3):
        if abs(direction[k]) < 1e-9:
            if abs(origin[k]) > half[k]:
                return False
            continue
        a, b = (-half[k] - origin[k]) / direction[k], (half[k] - origin[k]) / direction[k]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
        if t0 > t1:
            return False
    return True
