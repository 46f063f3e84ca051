"""MJCF for furniture and objects built from the class table (``core/knowledge/objects.py``).

Furniture is static (bodies without joints, welded to the world), except its doors and drawers:
* ``slab``: a solid box (table, counter, chair, ...) whose top is a support;
* ``cabinet``: a shell open at the front with a hinged door and a vertical handle (refrigerator,
  cupboard, microwave, dishwasher, oven); tall ones get a shelf at counter height, where things
  kept inside stand (a Tiago-sized robot reaches it; a real fridge has shelves);
* ``drawer``: a cabinet with a box on a slide joint and a horizontal handle;
* ``basin``: an open-topped shell (sink);
* ``panel``: a hinged panel without inner space (room door, window).
Heating appliances (``HEATER_BUTTONS``) have a start button on their front, near the top (in front
of the door's hinge edge where a door covers the front): a small body on a sprung slide that only
the robot touches, so a press is judged by how far the button went in (``sim/physics/heating.py``).
Small furniture (sink, microwave, drawer, window) stands on a pedestal so it sits at a working
height, not on the floor.

Carryable objects are free bodies: a primitive (box, cylinder, sphere), or for containers a
hollow shape (a floor and walls; a cylinder's wall is an octagon of boxes) so things go inside;
a plate (``grasp: rim``) is a dish, a floor with a low lip round it (what a gripper takes it by);
a ``grasp: handle`` object is a handle and a head (a hammer), not its bounding box; a
``grasp: top_handle`` object has a handle bar on two posts over its top (a watering can).
Lids (``articulation: lid``) are not bodies: whether a lid is closed is Python state of the world.

Every support surface is marked by a box site named ``<name>/top`` or ``<name>/inner`` (size = half
extents, z = the surface) so the skills find surfaces in the compiled model, including the ones
that move (drawers, carried trays). A handle has a site ``<name>/handle`` at its grasp point.
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from math import cos, pi, sin
from pathlib import Path
from typing import Optional

import yaml

from affplan_ros.core.knowledge.objects import ObjectProperties, balance_x, handle_parts, top_handle_parts
from affplan_ros.sim.physics.layout import Placement
from affplan_ros.sim.physics.robot import WORLD_COLLISION

# Height of the surface a piece stands on, for furniture that would not stand on the floor.
PEDESTAL = {"sink": 0.70, "microwave": 0.90, "drawer": 0.60, "window": 0.90}
# A dishwasher is built as a dish drawer (a kind of dishwasher sold as such: the rack slides out
# with the front, loaded from above): (the rack's floor, m above the ground; its wire sides' height)
# where a full-size dishwasher's upper rack runs pulled out, about 45 cm up (its lower part holds
# the machine and the lower rack). A door opening to the side left its floor 7.5 cm above the
# ground, 0.6 m into the cabinet: beyond any arm's reach from above.
RACKS = {"dishwasher": (0.45, 0.15)}
SHELF_HEIGHT = 0.88        # the shelf inside tall cabinets (m above the floor)
DOOR_THICKNESS = 0.03
DOOR_OPEN = 1.6            # rad: the angle an "opened" door starts at
DOOR_RANGE = 1.9
HANDLE_HEIGHT = 1.0        # preferred world height of a door handle
INVISIBLE = 'rgba="0 0 0 0" group="5"'
PERSON_HAND_HEIGHT = 1.0   # m: where a standing person takes or holds out an object
PERSON_HANDS = ("r", "l")  # a person's hands, the one they reach with first first
# Appliances with a start button (how each heats is modelled in sim/physics/heating.py).
HEATER_BUTTONS = frozenset({"stove", "microwave", "oven"})
# Cabinets with a lamp under the roof, as real ones have: without it the room's light from
# above leaves their inside dark, and a camera sees a dark blob where an apple lies.
LAMPS = frozenset({"refrigerator", "fridge", "microwave", "oven"})
BUTTON_HALF = (0.02, 0.01, 0.02)   # m: half extents of a button (across, out of the face, up)
BUTTON_TRAVEL = 0.008      # m a button goes in before its end stop
BUTTON_STIFFNESS = 250.0   # N/m of its return spring (2 N fully pressed, as a real push button)
BUTTON_INSET = 0.07        # m from the front's side edge to the button's centre
BUTTON_BELOW_TOP = 0.06    # m from the top of the front to the button's centre


@dataclass(frozen=True)
class Rect:
    """A horizontal rectangle in a frame: centre (cx, cy) at height z, half extents hx, hy."""

    cx: float
    cy: float
    z: float
    hx: float
    hy: float


@dataclass
class FurnitureGeometry:
    """What the world needs to know of a piece of furniture besides its MJCF."""

    kind: str
    top: Optional[Rect] = None          # in the furniture frame
    inner: Optional[Rect] = None        # in the furniture frame, drawer closed
    joint: str = ""                     # door hinge or drawer slide
    joint_open: float = 0.0             # joint value that counts as fully open
    height: float = 0.0                 # top of the piece above the floor


@functools.lru_cache(maxsize=1)
def _known_colours() -> dict[str, tuple[float, float, float]]:
    data = yaml.safe_load((Path(__file__).with_name("colours.yaml")).read_text()) or {}
    return {str(k): tuple(float(v) for v in rgb) for k, rgb in data.items()}


def colour(class_name: str) -> str:
    """A stable colour per class, so renders and debugging views are consistent: the known one
    (colours.yaml: apples red), else one from the name."""
    known = _known_colours().get(class_name)
    if known is None:
        digest = hashlib.md5(class_name.encode()).digest()
        known = tuple(0.25 + 0.6 * digest[i] / 255 for i in range(3))
    r, g, b = known
    return f'rgba="{r:.2f} {g:.2f} {b:.2f} 1"'


def _box(pos: tuple[float, float, float], half: tuple[float, float, float], attrs: str, name: str = "") -> str:
    named = f'name="{name}" ' if name else ""
    return (f'<geom {named}type="box" pos="{pos[0]:.4f} {pos[1]:.4f} {pos[2]:.4f}" '
            f'size="{max(half[0], 1e-3):.4f} {max(half[1], 1e-3):.4f} {max(half[2], 1e-3):.4f}" {attrs}/>')


def _site(name: str, pos: tuple[float, float, float], half: tuple[float, float, float]) -> str:
    return (f'<site name="{name}" type="box" pos="{pos[0]:.4f} {pos[1]:.4f} {pos[2]:.4f}" '
            f'size="{half[0]:.4f} {half[1]:.4f} {half[2]:.4f}" {INVISIBLE}/>')


def furniture_kind(class_name: str, props: ObjectProperties) -> str:
    if props.articulation == "drawer":
        return "drawer"
    if props.articulation == "door":
        return "cabinet" if props.inner is not None else "panel"
    if props.inner is not None:
        return "basin"
    return "slab"


def furniture_xml(name: str, class_name: str, props: ObjectProperties, place: Placement,
                  hinge_side: int = 1) -> tuple[str, FurnitureGeometry]:
    """The body of a piece of furniture at ``place``; a door hangs on its local +x edge
    (``hinge_side=1``) or its -x edge (-1)."""
    w, d, h = props.size
    p = PEDESTAL.get(class_name, 0.0)
    attrs = f'{WORLD_COLLISION} {colour(class_name)}'
    kind = furniture_kind(class_name, props)
    parts: list[str] = []
    if p > 0:
        parts.append(_box((0, 0, p / 2), (w / 2, d / 2, p / 2), f'{WORLD_COLLISION} rgba="0.6 0.55 0.5 1"',
                          f"{name}/pedestal"))
    geo = FurnitureGeometry(kind, height=p + h)
    if kind == "slab":
        parts.append(_box((0, 0, p + h / 2), (w / 2, d / 2, h / 2), attrs, name))
        geo.top = Rect(0, 0, p + h, w / 2, d / 2)
    elif kind in ("cabinet", "basin", "drawer"):
        ix, iy, iz = props.inner  # type: ignore[misc]
        ts, tb = max((w - ix) / 2, 0.01), max(d - iy, 0.01)
        tz = max((h - iz) / 2, 0.01)
        has_top = kind != "basin"
        bottom_t = tz if has_top else max(h - iz, 0.01)
        parts.append(_box((0, 0, p + bottom_t / 2), (w / 2, d / 2, bottom_t / 2), attrs, name))
        if has_top:
            parts.append(_box((0, 0, p + h - tz / 2), (w / 2, d / 2, tz / 2), attrs, f"{name}/roof"))
            geo.top = Rect(0, 0, p + h, w / 2, d / 2)
        for sx in (-1, 1):
            parts.append(_box((sx * (w / 2 - ts / 2), 0, p + h / 2), (ts / 2, d / 2, h / 2), attrs))
        parts.append(_box((0, -d / 2 + tb / 2, p + h / 2), (w / 2, tb / 2, h / 2), attrs))
        if kind == "basin":      # a front wall too: a sink is closed on four sides
            parts.append(_box((0, d / 2 - tb / 2, p + h / 2), (w / 2, tb / 2, h / 2), attrs))
            inner_depth = iy - tb
        else:
            inner_depth = iy
        inner_cy = -d / 2 + tb + inner_depth / 2
        floor = p + bottom_t
        if kind == "cabinet" and h > 1.2:
            parts.append(_box((0, inner_cy, SHELF_HEIGHT - 0.01), (ix / 2, inner_depth / 2, 0.01), attrs,
                              f"{name}/shelf"))
            floor = SHELF_HEIGHT
        geo.inner = Rect(0, inner_cy, floor, ix / 2 - 0.01, inner_depth / 2 - 0.01)
        if kind == "cabinet" and class_name in LAMPS:
            parts.append(f'<light name="{name}/lamp" pos="0 {inner_cy:.4f} {p + h - tz - 0.02:.4f}" dir="0 0 -1" '
                         'diffuse="0.7 0.7 0.65" attenuation="1 0 0" cutoff="80" exponent="1" castshadow="false"/>')
        if kind == "cabinet":
            parts.append(_door(name, class_name, w, h, p, d / 2, hinge_side))
            geo.joint, geo.joint_open = f"{name}/hinge", DOOR_RANGE
        elif kind == "drawer":
            parts.append(_drawer(name, class_name, props, p, inner_cy))
            if class_name in RACKS:     # the fixed strip over a rack's front
                z0, iz = drawer_box(class_name, props, p)
                strip = (p + h - z0 - iz) / 2
                parts.append(_box((0, d / 2 + 0.01, p + h - strip), (w / 2 - 0.002, 0.01, strip), attrs,
                                  f"{name}/strip"))
            geo.joint, geo.joint_open = f"{name}/slide", 0.8 * iy
            geo.inner = None   # the drawer's own site, on the moving box, is the inner surface
    elif kind == "panel":
        parts.append(_door(name, class_name, w, h, p, 0.0, hinge_side, back=True))
        geo.joint, geo.joint_open = f"{name}/hinge", DOOR_RANGE
    if class_name in HEATER_BUTTONS:
        front = d / 2 + (DOOR_THICKNESS if kind == "cabinet" else 0.0)
        parts.append(_button(name, (hinge_side * (w / 2 - BUTTON_INSET), front, p + h - BUTTON_BELOW_TOP)))
    for label, rect in (("top", geo.top), ("inner", geo.inner)):
        if rect is not None:
            parts.append(_site(f"{name}/{label}", (rect.cx, rect.cy, rect.z), (rect.hx, rect.hy, 0.001)))
    body = (f'<body name="{name}" pos="{place.x:.4f} {place.y:.4f} 0" euler="0 0 {place.yaw:.5f}">'
            + "".join(parts) + "</body>")
    return body, geo


def _door(name: str, class_name: str, w: float, h: float, p: float, front_y: float, side: int,
          back: bool = False) -> str:
    """A door hinged at the front's ``side`` * x edge, opening outwards for positive angles, with a
    vertical handle near its free edge at about ``HANDLE_HEIGHT``; ``back``: a handle on the back
    face too (``<name>/handle_back``), as a room door has."""
    t = DOOR_THICKNESS
    handle_z = min(max(HANDLE_HEIGHT - p, 0.25 * h), 0.75 * h)
    half_len = min(0.15, 0.3 * h)
    hx = side * (-w + 0.06)
    attrs = f'{WORLD_COLLISION} {colour(class_name)}'
    handle = f'{WORLD_COLLISION} rgba="0.75 0.75 0.78 1" friction="1.2 0.02 0.001"'
    return (
        f'<body name="{name}/door" pos="{side * w / 2:.4f} {front_y:.4f} {p:.4f}">'
        # The leaf lies towards -side * x: turning it outwards (+y) is a turn about -side * z.
        f'<joint name="{name}/hinge" type="hinge" axis="0 0 {-side}" range="0 {DOOR_RANGE}" damping="2" '
        'frictionloss="0.5" armature="0.1"/>'
        # The door's mass is declared, not computed from its density, so a fridge door is not 60 kg.
        + _box((-side * w / 2, t / 2, h / 2), (w / 2 - 0.002, t / 2, h / 2 - 0.002),
               f'{attrs} mass="{min(8.0, 4 * w * h):.2f}"', f"{name}/door_panel")
        + _box((hx, t + 0.0225, handle_z), (0.012, 0.012, half_len), f'{handle} mass="0.1"', f"{name}/handle")
        + _box((hx, t + 0.008, handle_z - half_len + 0.01), (0.01, 0.008, 0.01), f'{handle} mass="0.02"')
        + _box((hx, t + 0.008, handle_z + half_len - 0.01), (0.01, 0.008, 0.01), f'{handle} mass="0.02"')
        + f'<site name="{name}/handle" pos="{hx:.4f} {t + 0.0225:.4f} {handle_z:.4f}" size="0.01" {INVISIBLE}/>'
        + (_back_handle(name, hx, handle_z, half_len) if back else "")
        + "</body>"
    )


def _button(name: str, face: tuple[float, float, float]) -> str:
    """A push button whose back rests on the front face at ``face`` (furniture frame, the front
    is +y), pushed in along -y against a spring. Only the robot touches it (contype 0,
    conaffinity 2): a door swinging past or a pot on the hob does not press it. The site
    ``<name>/button`` marks the middle of its face."""
    bx, by, bz = BUTTON_HALF
    return (f'<body name="{name}/button" pos="{face[0]:.4f} {face[1] + by:.4f} {face[2]:.4f}">'
            f'<joint name="{name}/button" type="slide" axis="0 -1 0" range="0 {BUTTON_TRAVEL}" '
            f'stiffness="{BUTTON_STIFFNESS}" springref="0" damping="3" armature="0.01"/>'
            + _box((0, 0, 0), BUTTON_HALF, 'contype="0" conaffinity="2" rgba="0.8 0.15 0.1 1" mass="0.02"',
                   f"{name}/button")
            + f'<site name="{name}/button" pos="0 {by:.4f} 0" size="0.005" {INVISIBLE}/></body>')


def _back_handle(name: str, hx: float, z: float, half_len: float) -> str:
    """The handle on a door's back face. Only the robot touches it (contype 0, conaffinity 2): shut,
    the door's back lies against the wall, which would otherwise push the handle, and the door, open."""
    attrs = 'contype="0" conaffinity="2" rgba="0.75 0.75 0.78 1" friction="1.2 0.02 0.001"'
    return (_box((hx, -0.0225, z), (0.012, 0.012, half_len), f'{attrs} mass="0.1"', f"{name}/handle_back")
            + _box((hx, -0.008, z - half_len + 0.01), (0.01, 0.008, 0.01), f'{attrs} mass="0.02"')
            + _box((hx, -0.008, z + half_len - 0.01), (0.01, 0.008, 0.01), f'{attrs} mass="0.02"')
            + f'<site name="{name}/handle_back" pos="{hx:.4f} -0.0225 {z:.4f}" size="0.01" {INVISIBLE}/>')


def drawer_box(class_name: str, props: ObjectProperties, p: float) -> tuple[float, float]:
    """(height of a drawer box's floor above the ground, its walls' height): on the cabinet's
    bottom, as high as the inside; a rack (``RACKS``) where it runs."""
    h, iz = props.size[2], props.inner[2]  # type: ignore[index]
    if class_name in RACKS:
        return RACKS[class_name]
    return p + max((h - iz) / 2, 0.01) + 0.002, iz


def _drawer(name: str, class_name: str, props: ObjectProperties, p: float, inner_cy: float) -> str:
    """A box sliding out of the front (local +y) with a horizontal handle on its front panel (a
    rack's along the front's top, where a dishwasher's is)."""
    w, d, h = props.size
    ix, iy, _ = props.inner  # type: ignore[misc]
    attrs = f'{WORLD_COLLISION} {colour(class_name)}'
    handle = f'{WORLD_COLLISION} rgba="0.75 0.75 0.78 1" friction="1.2 0.02 0.001"'
    wall = 0.006
    bx, by = ix / 2 - 0.004, iy / 2 - 0.004
    z0, iz = drawer_box(class_name, props, p)
    # The front: the whole cabinet's; a rack's up to its sides' top (a fixed strip above it, as a
    # dishwasher's control panel: the hand then reaches over 15 cm of side into the rack, not over
    # the cabinet's full height), its handle along the top.
    top = z0 + iz if class_name in RACKS else p + h
    fz, fh = (p + top) / 2, (top - p) / 2
    hz = top - 0.05 if class_name in RACKS else p + h / 2
    parts = [
        _box((0, 0, z0 + wall / 2), (bx, by, wall / 2), f'{attrs} mass="0.8"', f"{name}/drawer_box"),
        _box((bx - wall / 2, 0, z0 + iz / 2), (wall / 2, by, iz / 2 - 0.004), f'{attrs} mass="0.2"'),
        _box((-bx + wall / 2, 0, z0 + iz / 2), (wall / 2, by, iz / 2 - 0.004), f'{attrs} mass="0.2"'),
        _box((0, -by + wall / 2, z0 + iz / 2), (bx, wall / 2, iz / 2 - 0.004), f'{attrs} mass="0.2"'),
        # The front panel closes the cabinet's opening.
        _box((0, d / 2 - inner_cy + 0.01, fz), (w / 2 - 0.002, 0.01, fh - 0.004), f'{attrs} mass="0.5"',
             f"{name}/drawer_front"),
        _box((0, d / 2 - inner_cy + 0.045, hz), (min(0.12, w / 3), 0.012, 0.012), f'{handle} mass="0.1"',
             f"{name}/handle"),
        f'<site name="{name}/handle" pos="0 {d / 2 - inner_cy + 0.045:.4f} {hz:.4f}" size="0.01" {INVISIBLE}/>',
        _site(f"{name}/inner", (0, 0, z0 + wall), (bx - wall, by - wall, 0.001)),
    ]
    return (f'<body name="{name}/drawer" pos="0 {inner_cy:.4f} 0">'
            f'<joint name="{name}/slide" type="slide" axis="0 1 0" range="0 {0.8 * iy:.4f}" damping="5" '
            'frictionloss="1" armature="0.2"/>' + "".join(parts) + "</body>")


MIN_WALL = 0.008     # m: thinner walls let a closing finger tunnel through in a step
ROUND_ROOM = 0.005   # m kept between what lies on a round dish's floor and its wall
DISH_FLOOR = 0.005   # m: a plate's floor under its well


@dataclass(frozen=True)
class ObjectGeometry:
    """Surfaces of a carryable object in its body frame (origin at the bounding box centre)."""

    top: Rect
    inner: Optional[Rect]
    half: tuple[float, float, float]    # half extents of the bounding box
    hollow: Optional[tuple[float, float, float]] = None   # the space its walls enclose (see hollow_of)
    wall: tuple[float, float] = (MIN_WALL, MIN_WALL)       # wall thickness across x and y (hollow ones)
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)      # centre of mass


def vertical_half(props: ObjectProperties, rot) -> float:
    """Half the height of an object turned by ``rot`` (world): its bounding box's, but a ball's
    radius however it has rolled."""
    half = object_geometry(props).half
    if props.shape == "sphere":
        return half[0]
    return float(sum(abs(rot[2][i]) * half[i] for i in range(3)))


def hollow_of(props: ObjectProperties) -> Optional[tuple[float, float, float]]:
    """The space a body's walls enclose: a container's inner space, or the well inside a plate's
    lip (``grasp: rim`` without inner space: things stand on its floor; nothing goes into it)."""
    if props.inner is not None:
        return props.inner
    if props.grasp == "rim" and props.shape != "sphere":
        sx, sy, sz = props.size
        return (sx - 2 * MIN_WALL, (sx if props.shape == "cylinder" else sy) - 2 * MIN_WALL, sz - DISH_FLOOR)
    return None


def object_geometry(props: ObjectProperties) -> ObjectGeometry:
    sx, sy, sz = props.size
    if props.shape == "sphere":
        sy = sz = sx
    if props.shape == "cylinder":
        sy = sx
    half = (sx / 2, sy / 2, sz / 2)
    top, inner, wall, com = Rect(0, 0, sz / 2, sx / 2, sy / 2), None, (MIN_WALL, MIN_WALL), (0.0, 0.0, 0.0)
    hollow = hollow_of(props)
    if hollow is not None:
        ix, iy, iz = hollow
        bottom = max(sz - iz, 0.003)
        if props.shape == "cylinder":
            wall = (max((sx - ix) / 2, MIN_WALL),) * 2
        else:
            wall = (max((sx - ix) / 2, MIN_WALL), max((sy - iy) / 2, MIN_WALL))
        # A round container's usable floor is the square inscribed in its circle.
        k = 0.7 if props.shape == "cylinder" else 1.0
        floor = Rect(0, 0, -sz / 2 + bottom, k * ix / 2, k * min(iy, ix if props.shape == "cylinder" else iy) / 2)
        if props.inner is not None:
            inner = floor
        else:
            top = floor    # a plate: what stands on it stands on the floor of its well
    if props.handle is not None or props.top_handle is not None:
        com = (balance_x(props), 0.0, 0.0)
    return ObjectGeometry(top, inner, half, hollow, wall, com)


def round_well(props: ObjectProperties) -> Optional[float]:
    """The radius a round dish's or container's floor is free to, inside the flats of its
    octagonal wall (``object_xml``) less ``ROUND_ROOM``; None for anything else. (Its floor site
    is the square inscribed in that circle: what is longer, a spoon on a plate, may still lie
    within the circle.)"""
    if props.shape != "cylinder" or hollow_of(props) is None:
        return None
    geo = object_geometry(props)
    return geo.half[0] * cos(pi / 8) - geo.wall[0] - ROUND_ROOM


# A thing thinner than THIN (a 5 mm nail or screw) has stiffer contacts, its own prevailing over
# what it meets (solmix): steel does not sink into a bowl. With the default 20 ms time constant a 5 g
# nail falling 13 cm into a bowl sank through its 1 cm floor onto the table (the contact's normal
# flips once it is past the floor's middle); 8 ms is four time steps, as stiff as stays stable.
THIN = 0.008
THIN_SOLREF = 0.008


def object_xml(name: str, class_name: str, props: ObjectProperties, pos: tuple[float, float, float], yaw: float) -> str:
    """A free body; containers are hollow (floor + walls) so that things can go into them."""
    geo = object_geometry(props)
    sx, sy, sz = (2 * v for v in geo.half)
    attrs = f'{WORLD_COLLISION} {colour(class_name)} friction="1 0.01 0.001"'
    if min(props.size) < THIN:
        attrs += f' solref="{THIN_SOLREF} 1" solmix="100"'
    parts: list[str] = []
    if props.handle is not None:
        (hc, hh), (dc, dh) = handle_parts(props)
        parts += [_box(hc, hh, attrs, name), _box(dc, dh, attrs, f"{name}/head")]
    elif geo.hollow is None:
        if props.shape == "sphere":
            # Rolling friction (condim 6): fruit is no perfect ball; without it an apple set down
            # at 1 cm/s rolls on for good (off a cutting board).
            parts.append(f'<geom name="{name}" type="sphere" size="{sx / 2:.4f}" condim="6" {attrs}/>')
        elif props.shape == "cylinder":
            parts.append(f'<geom name="{name}" type="cylinder" size="{sx / 2:.4f} {sz / 2:.4f}" {attrs}/>')
        else:
            parts.append(_box((0, 0, 0), geo.half, attrs, name))
    else:
        ix, iy, iz = geo.hollow
        bottom = max(sz - iz, 0.003)
        if props.shape == "cylinder":
            r = sx / 2
            t = geo.wall[0]
            parts.append(f'<geom name="{name}" type="cylinder" pos="0 0 {-sz / 2 + bottom / 2:.4f}" '
                         f'size="{r:.4f} {bottom / 2:.4f}" {attrs}/>')
            # An octagon of wall boxes whose corners lie on the circle (never outside it, so a
            # gripper opened to the nominal diameter clears it).
            seg = r * sin(pi / 8)
            rr = r * cos(pi / 8) - t / 2
            for k in range(8):
                a = k * pi / 4
                parts.append(f'<geom type="box" pos="{rr * cos(a):.4f} {rr * sin(a):.4f} {bottom / 2:.4f}" '
                             f'euler="0 0 {a:.4f}" size="{t / 2:.4f} {seg:.4f} {(sz - bottom) / 2:.4f}" {attrs}/>')
        else:
            tx, ty = geo.wall
            parts.append(_box((0, 0, -sz / 2 + bottom / 2), (sx / 2, sy / 2, bottom / 2), attrs, name))
            wall_h = (sz - bottom) / 2
            for s in (-1, 1):
                parts.append(_box((s * (sx / 2 - tx / 2), 0, bottom / 2), (tx / 2, sy / 2, wall_h), attrs))
                parts.append(_box((0, s * (sy / 2 - ty / 2), bottom / 2), (sx / 2 - tx, ty / 2, wall_h), attrs))
    if props.top_handle is not None:
        for k, (centre, half) in enumerate(top_handle_parts(props)):
            parts.append(_box(centre, half, attrs, f"{name}/handle" if k == 0 else ""))
    hx, hy, hz = geo.half
    m = props.mass
    # Inertia of the bounding box: the shapes are near enough for task-level physics.
    inertia = tuple(max(m / 3 * (a * a + b * b), 1e-8) for a, b in ((hy, hz), (hx, hz), (hx, hy)))
    parts.append(_site(f"{name}/top", (0, 0, geo.top.z), (geo.top.hx, geo.top.hy, 0.001)))
    if geo.inner is not None:
        parts.append(_site(f"{name}/inner", (0, 0, geo.inner.z), (geo.inner.hx, geo.inner.hy, 0.001)))
    return (f'<body name="{name}" pos="{pos[0]:.4f} {pos[1]:.4f} {pos[2]:.4f}" euler="0 0 {yaw:.5f}">'
            f'<freejoint name="{name}/free"/>'
            f'<inertial pos="{geo.com[0]:.4f} {geo.com[1]:.4f} {geo.com[2]:.4f}" mass="{m}" '
            f'diaginertia="{inertia[0]:.4e} {inertia[1]:.4e} {inertia[2]:.4e}"/>'
            + "".join(parts) + "</body>")


def human_xml(name: str, x: float, y: float) -> str:
    """A person standing (a static capsule): an obstacle for the base and a handover partner.
    Each of the two hands (``PERSON_HANDS``) is a mocap body (moved by the world, not by forces:
    the person reaches out to where the robot presents something) that touches nothing; it holds
    an object through its own weld (``PhysicsWorld.grip``)."""
    hands = "".join(
        f'<body name="{name}/hand_{hand}" mocap="true" pos="{x:.4f} {y:.4f} {PERSON_HAND_HEIGHT}">'
        '<geom type="sphere" size="0.035" contype="0" conaffinity="0" rgba="0.9 0.7 0.55 1"/>'
        f'<site name="{name}/hand_{hand}" size="0.01"/></body>' for hand in PERSON_HANDS)
    return (f'<body name="{name}" pos="{x:.4f} {y:.4f} 0">'
            f'<geom name="{name}" type="capsule" fromto="0 0 0.25 0 0 1.5" size="0.22" {WORLD_COLLISION} '
            'rgba="0.9 0.75 0.6 1"/></body>' + hands)


def grip_xml(person: str, obj: str) -> str:
    """The welds by which each of ``person``'s hands can hold ``obj``: off until the world switches
    one on, with the relative pose they have at that moment."""
    return "".join(f'<weld name="{grip_name(person, hand, obj)}" body1="{person}/hand_{hand}" body2="{obj}" '
                   'active="false"/>' for hand in PERSON_HANDS)


def grip_name(person: str, hand: str, obj: str) -> str:
    """The name of the weld by which ``person``'s ``hand`` holds ``obj``."""
    return f"{person}/grip_{hand}/{obj}"
