"""Where the robot stands to work at something, and where on a surface a thing can be put down,
from the boxes a pose source gives (robots/poses.py)."""
from __future__ import annotations

import math
from typing import Iterable, Optional

from affplan_ros.robots.doors import front as closing_face
from affplan_ros.robots.drivers import Box, Pose
from affplan_ros.robots.poses import SeenObject

SPOT_STEP = 0.03        # m between the candidate spots on a surface
SPOT_GAP = 0.03         # m kept between what is put down and what stands there already
EDGE_INSET = 0.04       # m kept from a surface's edges, besides the thing's own half width
TIGHT_GAP = 0.01        # m kept from what stands there where the usual margins leave no room
BASE_HEIGHT_M = 0.4     # what reaches lower than this is in the base's way
# Where the base may stand to reach a point on something: along each face, from straight in front
# of the point (m), and turned from facing the face (rad). Turned side on, the arm's shoulder
# (beside the torso) comes forward, as a person turns a shoulder to reach across a counter.
STAND_SHIFTS_M = (0.0, 0.15, -0.15, 0.3, -0.3)
STAND_TURNS_RAD = (0.0, 0.6, -0.6, 1.2, -1.2, 1.57, -1.57)


def _faces(box: SeenObject):
    """Each side face of ``box``: its outward normal in the map (wx, wy), how far it is from the
    middle and half its width."""
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    half_x, half_y = box.size[0] / 2, box.size[1] / 2
    for nx, ny, half, across in ((1, 0, half_x, half_y), (-1, 0, half_x, half_y), (0, 1, half_y, half_x),
                                 (0, -1, half_y, half_x)):
        yield c * nx - s * ny, s * nx + c * ny, half, across


def _face_toward(faces, direction: tuple[float, float]):
    """Of ``_faces``, the one whose outward normal is nearest ``direction``."""
    return max(faces, key=lambda f: f[0] * direction[0] + f[1] * direction[1])


FRONT_SHIFTS_M = (0.0, 0.2, -0.2, 0.35, -0.35)   # along a front, where its middle is taken (an open door)


def standing_places(seen: SeenObject, distance: float, robot_xy: tuple[float, float],
                    front: Optional[tuple[float, float]] = None) -> list[Pose]:
    """Base poses in front of each face of ``seen``'s box, ``distance`` from it and facing it,
    the nearest to the robot first (the others are behind or beside it: tried when Nav2 cannot
    reach the first). ``front``: the outward direction of its way in (a fridge's door side):
    that face first, in its middle and then shifted along it (its open door may stand in the
    middle's way)."""
    faces = list(_faces(seen))
    out = [Pose(seen.x + wx * (half + distance), seen.y + wy * (half + distance), 0.0, math.atan2(-wy, -wx),
                seen.frame) for wx, wy, half, _ in faces]
    out.sort(key=lambda p: math.hypot(p.x - robot_xy[0], p.y - robot_xy[1]))
    if front is None:
        return out
    wx, wy, half, across = _face_toward(faces, front)
    tx, ty = -wy, wx
    ahead = [Pose(seen.x + wx * (half + distance) + tx * shift, seen.y + wy * (half + distance) + ty * shift, 0.0,
                  math.atan2(-wy, -wx), seen.frame) for shift in FRONT_SHIFTS_M if abs(shift) <= across]
    return ahead + [p for p in out if all(math.hypot(p.x - a.x, p.y - a.y) > 1e-6 for a in ahead)]


def line_up(support: SeenObject, point: tuple[float, float], distance: float,
            robot_xy: tuple[float, float], facing: Optional[tuple[float, float]] = None) -> Pose:
    """The base pose in front of the face of ``support`` nearest the robot (``facing``: the face
    whose outward normal is nearest that direction, a fridge's open front), ``distance`` from it,
    facing it, straight in front of ``point`` (a thing on it; clamped to the face's width)."""
    faces = list(_faces(support))
    wx, wy, half, across = _face_toward(faces, facing) if facing is not None else min(
        faces, key=lambda f: math.hypot(support.x + f[0] * f[2] - robot_xy[0], support.y + f[1] * f[2] - robot_xy[1]))
    tx, ty = -wy, wx                                                     # along the face
    along = (point[0] - support.x) * tx + (point[1] - support.y) * ty
    along = max(-across, min(across, along))
    x = support.x + wx * (half + distance) + tx * along
    y = support.y + wy * (half + distance) + ty * along
    return Pose(x, y, 0.0, math.atan2(-wy, -wx), support.frame)


def stands_around(support: SeenObject, point: tuple[float, float], distance: float,
                  facing: Optional[tuple[float, float]] = None) -> list[Pose]:
    """Base poses ``distance`` from each face of ``support`` (``facing``: only the face whose
    outward normal is nearest that direction, a fridge's open front), along it near ``point``
    (``STAND_SHIFTS_M``, within its width) and turned from facing it (``STAND_TURNS_RAD``); the
    faces nearest ``point`` first. Which of them the arm reaches from is the arm's to tell."""
    faces = list(_faces(support))
    if facing is not None:
        faces = [_face_toward(faces, facing)]
    else:
        # By how far the point is from each face (its depth behind it).
        faces.sort(key=lambda f: f[2] - ((point[0] - support.x) * f[0] + (point[1] - support.y) * f[1]))
    out = []
    for wx, wy, half, across in faces:
        tx, ty = -wy, wx
        along = (point[0] - support.x) * tx + (point[1] - support.y) * ty
        seen: list[float] = []
        for shift in STAND_SHIFTS_M:
            at = max(-across, min(across, along + shift))
            if any(abs(at - a) < 0.05 for a in seen):
                continue
            seen.append(at)
            x = support.x + wx * (half + distance) + tx * at
            y = support.y + wy * (half + distance) + ty * at
            out += [Pose(x, y, 0.0, math.atan2(-wy, -wx) + turn, support.frame) for turn in STAND_TURNS_RAD]
    return out


def first_in_the_way(sweep: Iterable[Pose], radius: float, known: Iterable[SeenObject],
                     skip: Iterable[str] = ()) -> Optional[str]:
    """The first thing whose box the base (a disc of ``radius``) would meet along ``sweep``, of
    what reaches down to the base; None where the way is clear."""
    skipped = set(skip)
    boxes = [o for o in known if o.name not in skipped and o.has_box and o.bottom < BASE_HEIGHT_M]
    for pose in sweep:
        for box in boxes:
            if _box_distance(box, pose.x, pose.y) < radius:
                return box.name
    return None


def _box_distance(box: SeenObject, x: float, y: float) -> float:
    """How far the point is from ``box``'s footprint (0 inside it)."""
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    dx, dy = x - box.x, y - box.y
    u, v = c * dx + s * dy, -s * dx + c * dy
    return math.hypot(max(abs(u) - box.size[0] / 2, 0.0), max(abs(v) - box.size[1] / 2, 0.0))



def support_of(thing: SeenObject, known: Iterable[SeenObject], tolerance: float = 0.05) -> Optional[SeenObject]:
    """What ``thing`` stands on: the highest box below it whose top is at its bottom and under
    its middle; None if nothing known is."""
    under = [o for o in known if o.name != thing.name and o.has_box
             and abs(o.top - thing.bottom) <= tolerance and contains_xy(o, thing.x, thing.y)]
    return max(under, key=lambda o: o.top, default=None)


def level_under(container: SeenObject, thing: SeenObject, tolerance: float = 0.05) -> Optional[float]:
    """The highest of ``container``'s inner levels (its floor, its shelves) at or below
    ``thing``'s bottom: what it stands on in there; None where the source knows none."""
    return max((z for z in container.inner_levels if z <= thing.bottom + tolerance), default=None)


def container_of(thing: SeenObject, known: Iterable[SeenObject]) -> Optional[SeenObject]:
    """The smallest box ``thing``'s middle lies inside (an apple in a fridge), or None."""
    around = [o for o in known if o.name != thing.name and o.has_box and contains(o, thing.x, thing.y, thing.z)]
    return min(around, key=lambda o: o.size[0] * o.size[1] * o.size[2], default=None)


def stand_target(thing: SeenObject, known: Iterable[SeenObject]) -> SeenObject:
    """What the base stands at to work on ``thing``: a thing with a door itself (before its
    opening); else what it lies in that has one (a plate on a fridge's shelf: before the
    fridge's opening, not round the plate, which stands inside the fridge's footprint); else
    what it stands on; else the thing itself."""
    if thing.joint is not None:
        return thing
    around = container_of(thing, known)
    if around is not None and around.joint is not None:
        return around
    return support_of(thing, known) or thing


def contains(box: SeenObject, x: float, y: float, z: float) -> bool:
    """Whether the point lies inside ``box`` (a thing in a fridge lies inside the fridge's box)."""
    return contains_xy(box, x, y) and abs(z - box.z) <= box.size[2] / 2


def as_box(seen: SeenObject, margin: float = 0.005) -> Box:
    return Box(seen.name, (seen.x, seen.y, seen.z), tuple(v / 2 + margin for v in seen.size), seen.yaw, seen.frame)


def obstacles_around(xy: tuple[float, float], known: Iterable[SeenObject], radius: float,
                     skip: Iterable[str] = (), inside_of: Optional[SeenObject] = None,
                     hollow: Iterable[str] = ()) -> list[Box]:
    """Boxes of what reaches within ``radius`` of ``xy`` (not ``skip``, not what has no extent):
    what the arm must keep clear of there. What is ``hollow`` (a fridge, a cupboard: a box with a
    door) is its walls and its door's leaf as it stands (``cabinet_boxes``); of other things,
    what ``inside_of`` lies inside (a bowl it lies in) is left out."""
    skipped, hollow = set(skip), set(hollow)
    out = []
    for other in known:
        if other.name in skipped or not other.has_box:
            continue
        if math.hypot(other.x - xy[0], other.y - xy[1]) > radius + max(other.size[:2]) / 2:
            continue
        if other.name in hollow and other.joint is not None and other.joint.type == "hinge":
            out += cabinet_boxes(other)
            continue
        if inside_of is not None and contains(other, inside_of.x, inside_of.y, inside_of.z):
            continue
        out.append(as_box(other))
    return out


# A pose source gives a cabinet's outer box; how thick its walls and door are is taken to be this.
WALL_M = 0.03
LEAF_M = 0.04


def cabinet_boxes(cabinet: SeenObject) -> list[Box]:
    """A cabinet with a hinged door (a fridge, a cupboard, an oven) as the arm must keep clear
    of it: its walls, open at the face its door closes (``WALL_M`` thick, inside its box), its
    shelves (``WALL_M`` thick, under its inner levels above its floor), and the door's leaf
    (``LEAF_M`` thick, outside that face) turned about its hinge as it stands.
    Its whole box would leave the arm no way in; no box at all, a way through its walls and
    its open door."""
    joint = cabinet.joint
    if joint is None or joint.type != "hinge":
        raise ValueError(f"{cabinet.name} has no hinged door")
    faces = list(_faces(cabinet))
    opening = _face_toward(faces, closing_face(joint))
    c, s = math.cos(cabinet.yaw), math.sin(cabinet.yaw)
    hx, hy, hz = (v / 2 for v in cabinet.size)
    out = []
    for k, face in enumerate(faces):
        if face is opening:
            continue
        wx, wy, half, _ = face
        along_x = abs(c * wx + s * wy) > 0.5              # the face's normal is the box's own x axis
        wall_half = (WALL_M / 2, hy, hz) if along_x else (hx, WALL_M / 2, hz)
        inset = half - WALL_M / 2
        out.append(Box(f"{cabinet.name} wall {k}", (cabinet.x + wx * inset, cabinet.y + wy * inset, cabinet.z),
                       wall_half, cabinet.yaw, cabinet.frame))
    for part, sz in (("roof", 1), ("floor", -1)):
        out.append(Box(f"{cabinet.name} {part}", (cabinet.x, cabinet.y, cabinet.z + sz * (hz - WALL_M / 2)),
                       (hx, hy, WALL_M / 2), cabinet.yaw, cabinet.frame))
    for k, level in enumerate(z for z in cabinet.inner_levels if z > cabinet.bottom + 2 * WALL_M):
        out.append(Box(f"{cabinet.name} shelf {k}", (cabinet.x, cabinet.y, level - WALL_M / 2),
                       (hx - WALL_M, hy - WALL_M, WALL_M / 2), cabinet.yaw, cabinet.frame))
    # The leaf, shut, runs along the opening from the hinge towards the middle; it turns about
    # the hinge's upright axis as the joint opens.
    wx, wy, _, across = opening
    ox, oy = joint.origin[0], joint.origin[1]
    tx, ty = -wy, wx
    if tx * (cabinet.x - ox) + ty * (cabinet.y - oy) < 0:
        tx, ty = -tx, -ty
    turn = joint.position * math.copysign(1.0, joint.axis[2])
    ct, st = math.cos(turn), math.sin(turn)
    dx, dy = ct * tx - st * ty, st * tx + ct * ty
    nx, ny = ct * wx - st * wy, st * wx + ct * wy
    width = 2 * across
    centre = (ox + dx * width / 2 + nx * LEAF_M / 2, oy + dy * width / 2 + ny * LEAF_M / 2, cabinet.z)
    out.append(Box(f"{cabinet.name} door", centre, (width / 2, LEAF_M / 2, hz), math.atan2(dy, dx), cabinet.frame))
    return out


def free_spots(surface: SeenObject, footprint: float, known: Iterable[SeenObject], near_xy: tuple[float, float],
               skip: Iterable[str] = (), limit: int = 8, round_top: bool = False) -> list[tuple[float, float]]:
    """Points of ``surface``'s top where a thing of radius ``footprint`` stands clear of what is
    already there, the nearest to ``near_xy`` first (where the arm reaches best), at most
    ``limit``, spread at least ``SPOT_STEP * 2`` apart; empty if it is full. Where the usual
    margins leave no room (a plate with a sponge on it), the tight ones: what stands there kept
    ``TIGHT_GAP`` off as its own box, the thing's middle anywhere its footprint stays on the top
    (within a circle where ``round_top``)."""
    skipped = set(skip) | {surface.name}
    on_it = [o for o in known if o.name not in skipped and o.has_box
             and abs(o.bottom - surface.top) < 0.05 and contains_xy(surface, o.x, o.y)]
    spots = _spots(surface, footprint, near_xy, EDGE_INSET, False,
                   lambda x, y: all(math.hypot(x - o.x, y - o.y) >= footprint + max(o.size[:2]) / 2 + SPOT_GAP
                                    for o in on_it))
    if not spots:
        spots = _spots(surface, footprint, near_xy, 0.0, round_top,
                       lambda x, y: all(_box_distance(o, x, y) >= footprint + TIGHT_GAP for o in on_it))
    out: list[tuple[float, float]] = []
    for x, y in spots:
        if all(math.hypot(x - a, y - b) >= 2 * SPOT_STEP for a, b in out):
            out.append((x, y))
            if len(out) == limit:
                break
    return out


def _spots(surface: SeenObject, footprint: float, near_xy: tuple[float, float], inset: float, round_top: bool,
           clear) -> list[tuple[float, float]]:
    """The grid points of ``surface``'s top ``footprint + inset`` in from its edges where
    ``clear(x, y)``, the nearest to ``near_xy`` first."""
    c, s = math.cos(surface.yaw), math.sin(surface.yaw)
    hu = max(surface.size[0] / 2 - footprint - inset, 0.0)
    hv = max(surface.size[1] / 2 - footprint - inset, 0.0)
    radius = min(hu, hv)
    spots = []
    nu, nv = int(hu / SPOT_STEP), int(hv / SPOT_STEP)
    for i in range(-nu, nu + 1):
        for j in range(-nv, nv + 1):
            u, v = i * SPOT_STEP, j * SPOT_STEP
            if round_top and math.hypot(u, v) > radius + 1e-9:
                continue
            x, y = surface.x + c * u - s * v, surface.y + s * u + c * v
            if clear(x, y):
                spots.append((math.hypot(x - near_xy[0], y - near_xy[1]), x, y))
    return [(x, y) for _, x, y in sorted(spots)]


def spots_inside(container: SeenObject, inner: tuple[float, float, float], footprint: float,
                 near_xy: tuple[float, float]) -> list[tuple[float, float]]:
    """Where a thing of radius ``footprint`` goes into ``container`` (its opening ``inner`` wide
    along its own axes): the point of the opening nearest ``near_xy`` (where the arm reaches
    best) that keeps it clear of the walls, then the middle."""
    c, s = math.cos(container.yaw), math.sin(container.yaw)
    dx, dy = near_xy[0] - container.x, near_xy[1] - container.y
    u, v = c * dx + s * dy, -s * dx + c * dy
    room_u = max(inner[0] / 2 - footprint - SPOT_GAP, 0.0)
    room_v = max(inner[1] / 2 - footprint - SPOT_GAP, 0.0)
    u, v = max(-room_u, min(room_u, u)), max(-room_v, min(room_v, v))
    near = (container.x + c * u - s * v, container.y + s * u + c * v)
    middle = (container.x, container.y)
    return [near, middle] if math.hypot(near[0] - middle[0], near[1] - middle[1]) > 0.01 else [middle]


def set_down_poses(grasp: Pose, seen: SeenObject, above_bottom: float, turn: float, spot: tuple[float, float],
                   floor: float, base_yaw: float) -> list[Pose]:
    """The hand's poses that set a thing down with its middle at ``spot`` and its bottom on
    ``floor``, from a base heading ``base_yaw``. It was taken with the hand at ``grasp``
    (``above_bottom`` over its bottom, heading ``turn`` from the base's heading then) where it was
    ``seen``. First the hand as it was at the grasp, seen from the base (a pose the arm reached
    then), the thing turned about the vertical with the base (what stands on a surface may turn);
    then turned half round, and for a round thing a quarter either way: it stands the same. A
    hand leaning or level keeps its heading. A thing held off its middle (a bowl by its rim)
    turns round the hand."""
    turns = (0.0, math.pi, math.pi / 2, -math.pi / 2) if abs(seen.size[0] - seen.size[1]) < 0.01 else (0.0, math.pi)
    z = floor + above_bottom + 0.01
    dx, dy = seen.x - grasp.x, seen.y - grasp.y          # the thing's middle from the hand, as taken
    out = []
    for extra in turns if grasp.pitch > 1.2 else (0.0,):
        yaw = base_yaw + turn + extra
        c, s = math.cos(yaw - grasp.yaw), math.sin(yaw - grasp.yaw)
        out.append(Pose(spot[0] - (c * dx - s * dy), spot[1] - (s * dx + c * dy), z, yaw, grasp.frame, grasp.roll,
                        grasp.pitch))
    return out


def blade_over(grasp: Pose, knife: SeenObject, above_bottom: float, turn: float, target: SeenObject, depth: float,
               base_yaw: float) -> list[Pose]:
    """The hand's poses that hold a knife (taken at ``grasp`` where it was seen as ``knife``, as
    ``set_down_poses`` says) level, its edge ``depth`` below the top of ``target`` and a point of
    its blade over the target's middle: the point half way from its middle to either end along
    its length (a knife held by its middle cuts with either half)."""
    length_x = knife.size[0] >= knife.size[1]
    quarter = max(knife.size[:2]) / 4
    out = []
    for pose in set_down_poses(grasp, knife, above_bottom, turn, (target.x, target.y), target.top - depth - 0.01,
                               base_yaw):
        along = knife.yaw + (0.0 if length_x else math.pi / 2) + pose.yaw - grasp.yaw
        for sign in (1.0, -1.0):
            out.append(pose.offset(dx=-sign * quarter * math.cos(along), dy=-sign * quarter * math.sin(along)))
    return out


def contains_xy(box: SeenObject, x: float, y: float) -> bool:
    c, s = math.cos(box.yaw), math.sin(box.yaw)
    u, v = c * (x - box.x) + s * (y - box.y), -s * (x - box.x) + c * (y - box.y)
    return abs(u) <= box.size[0] / 2 and abs(v) <= box.size[1] / 2
