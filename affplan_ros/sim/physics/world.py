"""A MuJoCo world built from a ``Scene`` (an AutoGPT+P scene file, or any loader yielding one)
and the object class table.

``build_world(scene)`` lays the room out (``layout.py``), writes one MJCF with the furniture, the
objects (``bodies.py``) and the robot (``robot.py``), compiles it, puts doors in the state the
scene's ``opened``/``closed`` relations say, and lets everything settle. ``PhysicsWorld`` keeps
the map from scene names to MuJoCo ids and answers the questions the skills ask of the physics
(what touches what, what rests, where a surface is) and counts simulated against wall time.

Placement rules: ``on x y`` puts x on y's top surface, ``in x c`` on c's inner floor (a tall
cabinet's shelf, a drawer's bottom); objects listed under a location without either relation
go on that location's top. Objects on one surface are packed without overlap, front row first,
from the middle outwards (where a robot standing in front reaches them). Liquids are not bodies:
``liquid_in w c`` becomes a quantity in ``PhysicsWorld.liquids[c]``. What the world could not
do as the scene says (no room left on a surface, an object too large for its container, a class
the table lacks) is listed in ``PhysicsWorld.warnings``; it never fails silently.

Layout: furniture and carryable location anchors that stand on nothing (a basket) go along the
walls; a door hangs on the edge with more free floor beside it (opening it, the robot walks
round the hinge); a person stands beside their location, out beyond where the robot stands.
The robot starts in front of the location of its ``at`` relation, arms tucked.

Speed: MuJoCo's sleeping is on, so objects at rest cost nothing until something awake touches
them; ``contacts`` therefore recomputes contacts with sleeping off before it answers.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from enum import Enum
from math import atan2, cos, hypot, pi, sin, sqrt
from typing import Callable, Iterable, Optional

import mujoco
import numpy as np

from affplan_ros.core.knowledge.objects import ObjectProperties, ObjectTable, handle_parts, load_object_table
from affplan_ros.core.model.scene import Scene
from affplan_ros.sim.physics.bodies import (
    DOOR_OPEN,
    PERSON_HANDS,
    FurnitureGeometry,
    Rect,
    drawer_box,
    furniture_kind,
    furniture_xml,
    grip_name,
    grip_xml,
    hollow_of,
    human_xml,
    object_geometry,
    object_xml,
    round_well,
)
from affplan_ros.sim.physics.layout import Placement, layout_room
from affplan_ros.sim.physics.robot import (
    ARM_SIDES,
    HOME_TORSO,
    TIAGO_PP,
    TORSO_JOINT,
    WORLD_COLLISION,
    RobotSpec,
    arm_joints,
    home_arm,
    robot_actuator_xml,
    robot_body_xml,
)

TIMESTEP = 0.002
ROOM_C = 20.0             # °C: what every liquid starts at (and stays at until something heats it)
STANDOFF = 0.10           # free space between the base and the front of the furniture it stands at
PACK_GAP = 0.03           # free space between objects packed on a surface
FRONT_MARGIN = 0.04       # objects keep this far from a furniture top's front edge
WELL_STEP = 0.005         # m: the grid on a round floor (a spoon and a fork fit a plate side by side; on 1 cm, not)
LONG_OBJECT = 0.6         # m: an object this long (a mop) lies along the back of a surface, where the arm reaches least
INNER_MARGIN = 0.05       # and this far from the front wall inside a drawer or cabinet (room for a finger)


class ThingKind(Enum):
    FURNITURE = "furniture"
    OBJECT = "object"
    AGENT = "agent"
    ROBOT = "robot"
    LIQUID = "liquid"


@dataclass
class Thing:
    """One scene object as the physics world holds it."""

    name: str
    class_name: str
    props: ObjectProperties
    kind: ThingKind
    body_id: int = -1
    geom_ids: tuple[int, ...] = ()
    placement: Optional[Placement] = None          # furniture and floor-standing things
    geometry: Optional[FurnitureGeometry] = None   # furniture
    joint: str = ""                                # door hinge / drawer slide
    joint_open: float = 0.0

    @property
    def top_site(self) -> str:
        return f"{self.name}/top"

    @property
    def inner_site(self) -> str:
        return f"{self.name}/inner"

    @property
    def handle_site(self) -> str:
        return f"{self.name}/handle"


@dataclass
class _Surface:
    """A support surface in the world while the world is laid out (before compiling)."""

    owner: str
    cx: float
    cy: float
    z: float
    yaw: float
    hx: float
    hy: float
    margin_front: float
    taken: list[tuple[float, float, float, float, float]] = field(default_factory=list)  # (u, v, hu, hv, top z)
    stack: float = 0.0     # height of what had to be stacked because the surface was full


@dataclass(frozen=True)
class BasePose:
    x: float
    y: float
    yaw: float


class PhysicsWorld:
    """The compiled world and what the skills ask of it."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, things: dict[str, Thing], robot_name: str,
                 room_side: float, spec: RobotSpec, warnings: list[str]):
        self.model, self.data = model, data
        self.things = things
        self.robot_name = robot_name
        self.room_side = room_side
        self.spec = spec
        self.warnings = warnings
        self.liquids: dict[str, dict[str, float]] = {}     # container -> liquid -> litres
        # liquid -> °C, only for liquids something heated (the rest are at ROOM_C); kept by the
        # liquid's name, so it goes with the liquid when it is poured. Nothing cools within a run.
        self.temperatures: dict[str, float] = {}
        self.closed_lids: set[str] = set()                 # containers whose lid is on (not bodies)
        self.grips: dict[str, str] = {}                    # object -> the person whose hand holds it
        self.grip_hands: dict[str, str] = {}               # object -> which of their hands (PERSON_HANDS)
        # States no body shows, changed only by the motion (or the contact) that causes them.
        self.chopped: set[str] = set()
        self.cleaned: set[str] = set()
        self.wet: set[str] = set()
        self.wall_seconds = 0.0
        self.sim_seconds = 0.0
        self.watchers: list[Callable[[], None]] = []      # called after every step (a video recorder)
        self._owner = np.full(model.ngeom, "", dtype=object)
        for thing in things.values():
            for g in thing.geom_ids:
                self._owner[g] = thing.name
        robot_root = model.body("base").id
        for g in range(model.ngeom):
            if self._root_of(int(model.geom_bodyid[g])) == robot_root:
                self._owner[g] = robot_name
        self._actuator = {model.actuator(i).name: i for i in range(model.nu)}

    # -- time ------------------------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Advance the physics ``n`` steps, counting simulated and wall time."""
        start = time.perf_counter()
        mujoco.mj_step(self.model, self.data, nstep=n)
        self.wall_seconds += time.perf_counter() - start
        self.sim_seconds += n * self.model.opt.timestep
        for watch in self.watchers:
            watch()

    def steps(self, seconds: float) -> int:
        return max(1, int(round(seconds / self.model.opt.timestep)))

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall second spent in ``mj_step`` so far."""
        return self.sim_seconds / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    # -- names and ids -----------------------------------------------------------------------
    def _root_of(self, body: int) -> int:
        while self.model.body_parentid[body] != 0:
            body = int(self.model.body_parentid[body])
        return body

    def thing(self, name: str) -> Thing:
        try:
            return self.things[name]
        except KeyError:
            raise KeyError(f"the physics world has no {name!r}") from None

    def owner(self, geom: int) -> str:
        """The scene name a geom belongs to ('' for the floor and walls)."""
        return str(self._owner[geom])

    def position(self, name: str) -> np.ndarray:
        return self.data.xpos[self.thing(name).body_id].copy()

    def rotation(self, name: str) -> np.ndarray:
        return self.data.xmat[self.thing(name).body_id].reshape(3, 3).copy()

    def velocity(self, name: str) -> float:
        """Linear speed (m/s) of a body's origin."""
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, self.thing(name).body_id, vel, 0)
        return float(np.linalg.norm(vel[3:]))

    def site(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World position, rotation and half-size of a site (surfaces, handles, the TCP)."""
        s = self.data.site(name)
        return s.xpos.copy(), s.xmat.reshape(3, 3).copy(), self.model.site(name).size.copy()

    def has_site(self, name: str) -> bool:
        return mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, name) >= 0

    def temperature(self, liquid: str) -> float:
        """°C of a liquid now."""
        return self.temperatures.get(liquid, ROOM_C)

    # -- contacts ----------------------------------------------------------------------------
    def refresh_contacts(self) -> None:
        """Recompute every contact. Sleeping bodies have none listed (their pairs are skipped),
        so queries first run one forward pass with sleeping off; it does not advance time, and
        the woken bodies fall asleep again within a few steps."""
        flag = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        self.model.opt.enableflags &= ~flag
        try:
            mujoco.mj_forward(self.model, self.data)
        finally:
            self.model.opt.enableflags |= flag

    def contact_pairs(self) -> Iterable[tuple[int, int]]:
        self.refresh_contacts()
        for i in range(self.data.ncon):
            c = self.data.contact[i]
            if c.dist <= 0.002:
                yield int(c.geom1), int(c.geom2)

    def contacts(self, name: str) -> set[str]:
        """Names of what touches ``name`` ('' is the floor or a wall)."""
        out = set()
        for g1, g2 in self.contact_pairs():
            o1, o2 = self.owner(g1), self.owner(g2)
            if o1 == name and o2 != name:
                out.add(o2)
            elif o2 == name and o1 != name:
                out.add(o1)
        return out

    def touching_geoms(self, name: str, geoms: Iterable[int]) -> set[int]:
        """Which of ``geoms`` touch the object ``name``."""
        wanted = set(geoms)
        out = set()
        for g1, g2 in self.contact_pairs():
            if g1 in wanted and self.owner(g2) == name:
                out.add(g1)
            elif g2 in wanted and self.owner(g1) == name:
                out.add(g2)
        return out

    def resting_on(self, name: str, support: str, max_speed: float = 0.02) -> bool:
        """Whether ``name`` is at rest and touching ``support``."""
        return self.velocity(name) < max_speed and support in self.contacts(name)

    # -- joints and actuators ----------------------------------------------------------------
    def qpos(self, joint: str) -> float:
        return float(self.data.qpos[self.model.joint(joint).qposadr[0]])

    def set_ctrl(self, actuator: str, value: float) -> None:
        self.data.ctrl[self._actuator[actuator]] = value

    def ctrl(self, actuator: str) -> float:
        return float(self.data.ctrl[self._actuator[actuator]])

    def base_pose(self) -> BasePose:
        return BasePose(self.qpos("base_x"), self.qpos("base_y"), self.qpos("base_yaw"))

    def is_open(self, name: str, fraction: float = 0.6) -> bool:
        """A door/drawer counts as open past ``fraction`` of its range (0.6: a robot arm fits in)."""
        thing = self.thing(name)
        return bool(thing.joint) and self.qpos(thing.joint) >= fraction * thing.joint_open

    def is_closed(self, name: str) -> bool:
        thing = self.thing(name)
        return not thing.joint or self.qpos(thing.joint) <= 0.05 * thing.joint_open

    # -- where the robot stands ----------------------------------------------------------------
    # -- people's hands ----------------------------------------------------------------------
    def person_hand(self, person: str, hand: str = PERSON_HANDS[0]) -> np.ndarray:
        return self.data.site(f"{person}/hand_{hand}").xpos.copy()

    def held_in(self, person: str) -> dict[str, str]:
        """What ``person`` holds: hand -> object (from the active grips; of two in one hand, the
        first taken)."""
        out: dict[str, str] = {}
        for obj, who in self.grips.items():
            if who == person:
                out.setdefault(self.grip_hands[obj], obj)
        return out

    def held_by_hand(self, person: str) -> dict[str, list[str]]:
        """Everything ``person`` holds: hand -> the objects in it, in the order taken."""
        out: dict[str, list[str]] = {}
        for obj, who in self.grips.items():
            if who == person:
                out.setdefault(self.grip_hands[obj], []).append(obj)
        return out

    def free_hand(self, person: str) -> Optional[str]:
        """A hand of ``person`` that holds nothing, or None if both are full."""
        held = self.held_in(person)
        return next((hand for hand in PERSON_HANDS if hand not in held), None)

    def reach_out(self, person: str, point: np.ndarray, hand: str = PERSON_HANDS[0]) -> None:
        """The person's hand goes to ``point`` (a mocap body: placed, not pushed; it touches nothing)."""
        body = self.model.body(f"{person}/hand_{hand}").id
        self.data.mocap_pos[self.model.body_mocapid[body]] = np.asarray(point, float)
        mujoco.mj_forward(self.model, self.data)

    def grip(self, person: str, obj: str, hand: str = PERSON_HANDS[0], beside: bool = False) -> None:
        """``person``'s ``hand`` closes on ``obj`` as they are now: the weld's reference pose is set to
        their present relative pose, then the weld is switched on. A hand holds one thing, or with
        ``beside`` a second one next to it (whether both fit one hand, ``handover`` decides)."""
        if not beside and self.held_in(person).get(hand, obj) != obj:
            raise ValueError(f"{person}'s {hand} hand already holds {self.held_in(person)[hand]}")
        eq = self.model.equality(grip_name(person, hand, obj)).id
        body_hand, body = self.data.body(f"{person}/hand_{hand}"), self.data.body(obj)
        rot = body_hand.xmat.reshape(3, 3)
        rel_quat = np.zeros(4)
        inv = np.zeros(4)
        mujoco.mju_negQuat(inv, body_hand.xquat)
        mujoco.mju_mulQuat(rel_quat, inv, body.xquat)
        self.model.eq_data[eq, 0:3] = 0.0                          # anchor: body2's origin
        self.model.eq_data[eq, 3:6] = rot.T @ (body.xpos - body_hand.xpos)
        self.model.eq_data[eq, 6:10] = rel_quat
        self.data.eq_active[eq] = 1
        self.grips[obj] = person
        self.grip_hands[obj] = hand

    def release(self, obj: str) -> None:
        person = self.grips.pop(obj, None)
        hand = self.grip_hands.pop(obj, None)
        if person is not None and hand is not None:
            self.data.eq_active[self.model.equality(grip_name(person, hand, obj)).id] = 0

    def approach_pose(self, location: str, lateral: float = 0.0) -> BasePose:
        """Base pose in front of a piece of furniture (or a floor-standing thing), facing it;
        ``lateral`` shifts it along the piece's width (its local x)."""
        thing = self.thing(location)
        # An open drawer sticks out of the front: stand back by as much.
        out = self.qpos(thing.joint) + 0.03 if thing.joint.endswith("/slide") else 0.0
        return approach_pose(thing, self.spec, lateral, out)

    def obstacles(self, exclude: Iterable[str] = ()) -> list[tuple[str, Placement]]:
        """Footprints the base must keep clear of: furniture, people, floor-standing things, and
        the leaves of doors that stand open (where they are now)."""
        skip = set(exclude)
        out = [(n, t.placement) for n, t in self.things.items()
               if t.placement is not None and n not in skip and t.kind != ThingKind.ROBOT]
        for name, thing in self.things.items():
            if not thing.joint or name in skip or self.qpos(thing.joint) < 0.01:
                continue
            door = thing.joint.endswith("/hinge")
            g = self.model.geom(f"{name}/door_panel" if door else f"{name}/drawer_box").id
            x, y = self.data.geom_xpos[g][:2]
            rot = self.data.geom_xmat[g].reshape(3, 3)
            half = self.model.geom_size[g]
            # A drawer's box plus its front panel and handle (6 cm more at the front, and at the
            # back, which is inside the cabinet anyway).
            depth = 2 * half[1] if door else 2 * half[1] + 0.12
            yaw = atan2(rot[1, 0], rot[0, 0])
            out.append((f"{name} (open)", Placement(float(x), float(y), yaw, 2 * half[0], depth)))
        return out

    def to_base_frame(self, point: np.ndarray, pose: Optional[BasePose] = None) -> np.ndarray:
        pose = pose or self.base_pose()
        c, s = cos(pose.yaw), sin(pose.yaw)
        dx, dy = point[0] - pose.x, point[1] - pose.y
        return np.array([c * dx + s * dy, -s * dx + c * dy, point[2]])

    def rotation_to_base(self, rot: np.ndarray, pose: Optional[BasePose] = None) -> np.ndarray:
        pose = pose or self.base_pose()
        c, s = cos(pose.yaw), sin(pose.yaw)
        rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        return rz.T @ rot


def side_poses(thing: Thing, spec: RobotSpec, depth: float = 0.0) -> list[BasePose]:
    """Base poses at the left and right ends of a piece of furniture, facing it, ``depth`` along
    its depth from its middle (a table that stands free on a side can be reached from there)."""
    place = thing.placement
    if place is None:
        return []
    depth = max(-place.depth / 2, min(place.depth / 2, depth))
    out = []
    for sign in (-1.0, 1.0):
        x, y = place.to_world(sign * (place.width / 2 + spec.base_radius + STANDOFF), depth)
        out.append(BasePose(x, y, place.yaw + (pi if sign > 0 else 0.0)))
    return out


def approach_pose(thing: Thing, spec: RobotSpec, lateral: float = 0.0, extra: float = 0.0) -> BasePose:
    place = thing.placement
    if place is None:
        raise KeyError(f"{thing.name!r} is not something the robot can stand in front of")
    along = max(-place.width / 2, min(place.width / 2, lateral))
    x, y = place.to_world(along, place.depth / 2 + spec.base_radius + STANDOFF + extra)
    nx, ny = place.front_normal
    return BasePose(x, y, atan2(-ny, -nx))


# -- building ------------------------------------------------------------------------------------

def _anchor(scene: Scene, location: str) -> Optional[str]:
    """The object a location is named after (``table0`` for location ``table0``)."""
    if location in scene.objects:
        return location
    loc = scene.locations.get(location)
    return loc.objects[0] if loc is not None and loc.objects else None


def _footprint(props: ObjectProperties) -> tuple[float, float]:
    sx, sy, _ = props.size
    if props.shape in ("sphere", "cylinder"):
        sy = sx
    return sx, sy


class _Builder:
    def __init__(self, scene: Scene, table: ObjectTable, spec: RobotSpec):
        self.scene, self.table, self.spec = scene, table, spec
        self.warnings: list[str] = []
        self.things: dict[str, Thing] = {}
        self.surfaces: dict[tuple[str, str], _Surface] = {}
        self.poses: dict[str, tuple[float, float, float, float]] = {}   # object -> x, y, z, yaw
        self.xml: list[str] = []
        self.grips: list[str] = []
        self.robot_name = "robot0"
        self.robot_at: Optional[str] = None
        self.humans: dict[str, Optional[str]] = {}
        self.on: dict[str, str] = {}
        self.inside: dict[str, str] = {}
        self.liquid_in: dict[str, str] = {}
        self.opened: set[str] = set()
        self.closed: set[str] = set()

    # The scene --------------------------------------------------------------------------------
    def read_scene(self) -> None:
        for rel in self.scene.relations:
            a = rel.args
            if rel.predicate == "on" and len(a) == 2:
                self.on[a[0]] = a[1]
            elif rel.predicate == "in" and len(a) == 2:
                self.inside[a[0]] = a[1]
            elif rel.predicate == "liquid_in" and len(a) == 2:
                self.liquid_in[a[0]] = a[1]
            elif rel.predicate == "opened" and len(a) == 1:
                self.opened.add(a[0])
            elif rel.predicate == "closed" and len(a) == 1:
                self.closed.add(a[0])
        unknown = sorted({o.class_name for o in self.scene.objects.values()
                          if not o.is_agent and o.class_name not in self.table})
        if unknown:
            self.warnings.append(f"classes not in the object table {self.table.source or ''}, built with its "
                                 f"declared default: {', '.join(unknown)}")
        for name, obj in self.scene.objects.items():
            props = self.table.get(obj.class_name)
            if obj.is_agent:
                if obj.class_name == "robot":
                    self.robot_name = name
                    self.robot_at = self.scene.location_of(name)
                    self.things[name] = Thing(name, "robot", props, ThingKind.ROBOT)
                else:
                    self.humans[name] = self.scene.location_of(name)
                    self.things[name] = Thing(name, obj.class_name, props, ThingKind.AGENT)
            elif props.liquid and self._bottled(name, props):
                # The scene puts the liquid itself on a place: it is its closed bottle there.
                self.things[name] = Thing(name, obj.class_name, props.bottled, ThingKind.OBJECT)  # type: ignore[arg-type]
            elif props.liquid:
                self.things[name] = Thing(name, obj.class_name, props, ThingKind.LIQUID)
            elif props.fixed:
                self.things[name] = Thing(name, obj.class_name, props, ThingKind.FURNITURE)
            else:
                self.things[name] = Thing(name, obj.class_name, props, ThingKind.OBJECT)

    def _bottled(self, name: str, props: ObjectProperties) -> bool:
        """Whether the liquid ``name`` is carried as its closed bottle: the scene sets it on or in
        a place, or lists it at a location, and no container holds it (``liquid_in``)."""
        placed = name in self.on or name in self.inside or self.scene.location_of(name) is not None
        return props.bottled is not None and name not in self.liquid_in and placed

    def _support_of(self, name: str) -> Optional[tuple[str, str]]:
        """(support, "top" | "inner") for a carryable object, or None when it stands on the floor."""
        if name in self.on and self.on[name] in self.things:
            return self.on[name], "top"
        if name in self.inside and self.inside[name] in self.things:
            return self.inside[name], "inner"
        loc = self.scene.location_of(name)
        anchor = _anchor(self.scene, loc) if loc else None
        if anchor and anchor != name and anchor in self.things:
            kind = self.things[anchor].kind
            if kind == ThingKind.FURNITURE:
                # Things listed at a fridge, sink or drawer without a relation are kept inside it.
                inside = furniture_kind(self.things[anchor].class_name, self.things[anchor].props) != "slab"
                return anchor, "inner" if inside and self.things[anchor].props.inner is not None else "top"
            if kind == ThingKind.OBJECT:
                return anchor, "inner" if self.things[anchor].props.inner is not None else "top"
        return None

    # Furniture --------------------------------------------------------------------------------
    def lay_out(self) -> float:
        floor: list[tuple[str, float, float]] = []
        for name, thing in self.things.items():
            if thing.kind == ThingKind.FURNITURE or (thing.kind == ThingKind.OBJECT and self._support_of(name) is None):
                w, d = _footprint(thing.props)
                floor.append((name, w, d))
        side, placements = layout_room(floor)
        for name, place in placements.items():
            thing = self.things[name]
            thing.placement = place
            if thing.kind == ThingKind.FURNITURE:
                body, geo = furniture_xml(name, thing.class_name, thing.props, place,
                                          _hinge_side(name, place, placements, side))
                thing.geometry, thing.joint, thing.joint_open = geo, geo.joint, geo.joint_open
                self.xml.append(body)
                for label, rect in (("top", geo.top), ("inner", geo.inner)):
                    if rect is not None:
                        self._add_surface(name, label, place.x, place.y, 0.0, place.yaw, rect,
                                          FRONT_MARGIN if label == "top" else INNER_MARGIN)
                if geo.kind == "drawer":
                    props = thing.props
                    ix, iy, _ = props.inner  # type: ignore[misc]
                    inner_cy = -props.size[1] / 2 + max(props.size[1] - iy, 0.01) + iy / 2
                    z = drawer_box(thing.class_name, props, geo.height - props.size[2])[0] + 0.006
                    self._add_surface(name, "inner", place.x, place.y, 0.0, place.yaw,
                                      Rect(0, inner_cy, z, ix / 2 - 0.02, iy / 2 - 0.02), INNER_MARGIN)
            else:   # a carryable thing standing on the floor against a wall
                h = thing.props.size[2] if thing.props.shape != "sphere" else thing.props.size[0]
                self.poses[name] = (place.x, place.y, h / 2 + 0.002, place.yaw)
                self._object_surfaces(name)
        return side

    def _add_surface(self, owner: str, label: str, x: float, y: float, z0: float, yaw: float, rect: Rect,
                     margin: float) -> None:
        c, s = cos(yaw), sin(yaw)
        cx, cy = x + c * rect.cx - s * rect.cy, y + s * rect.cx + c * rect.cy
        self.surfaces[(owner, label)] = _Surface(owner, cx, cy, z0 + rect.z, yaw, rect.hx, rect.hy, margin)

    def _object_surfaces(self, name: str) -> None:
        x, y, z, yaw = self.poses[name]
        geo = object_geometry(self.things[name].props)
        self._add_surface(name, "top", x, y, z, yaw, geo.top, 0.0)
        if geo.inner is not None:
            self._add_surface(name, "inner", x, y, z, yaw, geo.inner, 0.0)

    # Objects ----------------------------------------------------------------------------------
    def place_objects(self) -> None:
        saved = (copy.deepcopy(self.surfaces), dict(self.poses), list(self.warnings))
        crowded = self._place_objects(set())
        if crowded:
            # Something had to be stacked: pack those surfaces again with the long things (a mop, a
            # broom) first; laid down after the rest, they find no room left between small things.
            self.surfaces, self.poses, self.warnings = copy.deepcopy(saved[0]), dict(saved[1]), list(saved[2])
            still = self._place_objects(crowded)
            if still:
                # Still stacked: the big things next, largest footprint first, and the small ones in
                # the gaps left (dirty.txt's counter: the watering can found no 40 cm stretch left
                # between a pan, a paper towel and a broom's head). Kept only where it stacks nothing.
                second = (copy.deepcopy(self.surfaces), dict(self.poses), list(self.warnings))
                self.surfaces, self.poses, self.warnings = copy.deepcopy(saved[0]), dict(saved[1]), list(saved[2])
                if self._place_objects(crowded, largest_first=still):
                    self.surfaces, self.poses, self.warnings = second

    def _place_objects(self, long_first: set[tuple[str, str]],
                       largest_first: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset()
                       ) -> set[tuple[str, str]]:
        """Place every object not placed yet, those long ones on a ``long_first`` surface before the
        rest, then on a ``largest_first`` surface the others by footprint, largest first; returns
        the surfaces on which something found no free spot."""
        crowded: set[tuple[str, str]] = set()
        pending = [n for n, t in self.things.items() if t.kind == ThingKind.OBJECT and n not in self.poses]

        def order(n: str) -> tuple[bool, bool, float]:
            support, props = self._support_of(n), self.things[n].props
            area = _footprint(props)[0] * _footprint(props)[1] if support in largest_first else 0.0
            # What must lie across a container's rim comes after what goes inside, so that it can
            # be laid beside what is in there, not over it.
            return self._lies_across(n), not (is_long(props) and support in long_first), -area

        pending.sort(key=order)
        while pending:
            progress = False
            for name in list(pending):
                support = self._support_of(name)
                assert support is not None   # floor-standing ones were laid out already
                if self._lies_across(name) and any(self._support_of(o) == support and not self._lies_across(o)
                                                   for o in pending):
                    continue    # what goes inside first (see order)
                if support not in self.surfaces:
                    if support[0] in pending or support[0] not in self.things:
                        continue
                    self.warnings.append(f"{name}: {support[0]} has no {support[1]} surface; put on its top")
                    support = (support[0], "top")
                    if support not in self.surfaces:
                        continue
                if not self._pack(name, self.surfaces[support]):
                    crowded.add(support)
                self._object_surfaces(name)
                pending.remove(name)
                progress = True
            if not progress:
                for name in pending:   # a cycle of on/in relations: break it on the floor
                    self.warnings.append(f"{name}: its support could not be placed first (cycle); put on the floor")
                    self.poses[name] = (0.0, 0.0, self.things[name].props.size[2] / 2 + 0.002, 0.0)
                    self._object_surfaces(name)
                pending = []
        return crowded

    def _lies_across(self, name: str) -> bool:
        """Whether ``name`` goes into a container whose floor it cannot lie on any way round."""
        support = self._support_of(name)
        if support is None or support[1] != "inner" or support[0] not in self.things:
            return False
        hollow = hollow_of(self.things[support[0]].props)
        if hollow is None:
            return False
        props = self.things[name].props
        return not any(all(abs(du) + hu <= hollow[0] / 2 and abs(dv) + hv <= hollow[1] / 2
                           for du, dv, hu, hv in _pack_parts(props, yaw)) for yaw in _pack_yaws(props))

    def _pack(self, name: str, surf: _Surface) -> bool:
        """Put ``name`` on ``surf`` at the free spot nearest the front middle; False where it had to
        be stacked on what is there."""
        props = self.things[name].props
        h = props.size[2] if props.shape != "sphere" else props.size[0]
        z = surf.z + h / 2 + 0.002
        spots = [(spot, yaw_offset, parts) for yaw_offset in _pack_yaws(props)
                 for parts in [_pack_parts(props, yaw_offset)]
                 for spot in [_free_spot(surf, parts, from_back=is_long(props))] if spot is not None]
        well = round_well(self.things[surf.owner].props) if surf.owner in self.things else None
        if not spots and well is not None:
            # Longer than a round floor's inscribed square: within its circle (a spoon and a fork
            # side by side on a plate, as the robot's placing lays them: skills._free_spots).
            spots = [(spot, yaw_offset, parts) for yaw_offset in _pack_yaws(props)
                     for parts in [_pack_parts(props, yaw_offset)]
                     for spot in [_well_spot(surf, parts, well)] if spot is not None]
        if is_long(props):     # the way round that lies furthest back (a broom head beside a mop's handle)
            spots.sort(key=lambda s: s[0][1])
        for (u, v), yaw_offset, parts in spots[:1]:
            surf.taken.extend((u + du, v + dv, hu, hv, z + h / 2) for du, dv, hu, hv in parts)
            c, s = cos(surf.yaw), sin(surf.yaw)
            self.poses[name] = (surf.cx + c * u - s * v, surf.cy + s * u + c * v, z, surf.yaw + yaw_offset)
            return True
        top = self.surfaces.get((surf.owner, "top"))
        if top is not None and top is not surf:
            # Too large for the container's floor: it rests across the rim (a banana on a bowl),
            # beside what already lies across it where the rim still bears it at both ends (two
            # bananas lie side by side across a 20 cm bowl), else on top of it.
            self.warnings.append(f"{name}: does not fit inside {surf.owner}; resting on its rim")
            parts = _pack_parts(props, 0.0)
            v = _rim_spot(top, parts, self.things[surf.owner].props, inside=surf)
            if v is None:
                self.poses[name] = (top.cx, top.cy, top.z + top.stack + h / 2 + 0.005, surf.yaw)
                top.stack += h + 0.005
                return True
            z = top.z + h / 2 + 0.005
            top.taken.extend((du, v + dv, hu, hv, z + h / 2) for du, dv, hu, hv in parts)
            top.stack = max(top.stack, h + 0.005)
            self.poses[name] = (top.cx - sin(top.yaw) * v, top.cy + cos(top.yaw) * v, z, surf.yaw)
            return True
        # No free spot: stand it on the middle, on top of the highest thing it would overlap there
        # (not inside it: the physics would shove them apart), and say so.
        fw, fd = _footprint(props)
        below = [t[4] for t in surf.taken if abs(t[0]) < fw / 2 + t[2] and abs(t[1]) < fd / 2 + t[3]]
        bottom = max(below, default=surf.z) + 0.01
        self.warnings.append(f"{name}: no free space on {surf.owner}'s surface; stacked in the middle")
        self.poses[name] = (surf.cx, surf.cy, bottom + h / 2, surf.yaw)
        surf.taken.append((0.0, 0.0, fw / 2, fd / 2, bottom + h))
        return False

    # Agents and the MJCF ------------------------------------------------------------------------
    def robot_pose(self) -> BasePose:
        anchor = _anchor(self.scene, self.robot_at) if self.robot_at else None
        if anchor and anchor in self.things and self.things[anchor].placement is not None:
            return approach_pose(self.things[anchor], self.spec)
        return BasePose(0.0, 0.0, 0.0)

    def human_bodies(self) -> None:
        for i, (name, loc) in enumerate(self.humans.items()):
            anchor = _anchor(self.scene, loc) if loc else None
            place = self.things[anchor].placement if anchor and anchor in self.things else None
            if place is not None:
                # Beside the location and out beyond where the robot stands at it, so that the robot can
                # still reach every part of the location's front.
                x, y = place.to_world(-(place.width / 2 + 0.3), place.depth / 2 + 1.1)
            else:
                x, y = 0.8 * i, 0.0
            self.things[name].placement = Placement(x, y, 0.0, 0.44, 0.44)
            self.xml.append(human_xml(name, x, y))

    def object_bodies(self) -> None:
        for name, (x, y, z, yaw) in self.poses.items():
            thing = self.things[name]
            self.xml.append(object_xml(name, thing.class_name, thing.props, (x, y, z), yaw))
        # Each person's hand can hold each carryable object (a weld, off until handed over).
        self.grips = [grip_xml(person, name) for person in self.humans for name in self.poses
                      if self.things[name].kind == ThingKind.OBJECT]


def _hinge_side(name: str, place: Placement, placements: dict[str, Placement], room_side: float) -> int:
    """Hang a door on the edge with more free floor beside it: opening it, the robot walks round
    the hinge, so that side must be clear (the nearest other footprint or wall, 1 m out in front)."""
    best, side = -1.0, 1
    for s in (1, -1):
        hx, hy = place.to_world(s * (place.width / 2 + 0.5), place.depth / 2 + 0.8)
        free = room_side / 2 - max(abs(hx), abs(hy))
        for other, p in placements.items():
            if other == name:
                continue
            lx, ly = p.to_local(hx, hy)
            dx, dy = max(abs(lx) - p.width / 2, 0.0), max(abs(ly) - p.depth / 2, 0.0)
            free = min(free, (dx * dx + dy * dy) ** 0.5)
        if free > best + 1e-9:
            best, side = free, s
    return side


def _pack_yaws(props: ObjectProperties) -> tuple[float, ...]:
    # A tool with a handle is turned end for end too: two brooms lie head to tail, each head
    # beside the other's handle, as a person lays them down on a counter.
    return (0.0, pi, pi / 2, -pi / 2) if props.handle is not None else (0.0, pi / 2)


def _pack_parts(props: ObjectProperties, yaw: float) -> list[tuple[float, float, float, float]]:
    """The rectangles an object covers on its support, (du, dv, hu, hv) about its centre, turned by
    ``yaw`` (a multiple of pi/2): a handle tool's handle and head, else its footprint."""
    if props.handle is not None:
        parts = [(c[0], c[1], e[0], e[1]) for c, e in handle_parts(props)]
    else:
        fw, fd = _footprint(props)
        parts = [(0.0, 0.0, fw / 2, fd / 2)]
    c, s = round(cos(yaw)), round(sin(yaw))
    return [(c * du - s * dv, s * du + c * dv, abs(c) * hu + abs(s) * hv, abs(s) * hu + abs(c) * hv)
            for du, dv, hu, hv in parts]


def is_long(props: ObjectProperties) -> bool:
    """A mop, a broom: laid along the back of a surface; carried across the robot's front."""
    return max(props.size[0], props.size[1]) >= LONG_OBJECT


def _rim_spot(top: _Surface, parts: list[tuple[float, float, float, float]],
              container: ObjectProperties, inside: Optional[_Surface] = None) -> Optional[float]:
    """Where across a container's rim (``top``) something too long for its floor lies: the offset
    v across its length (along the surface's y) nearest the middle, 1 cm steps, where it is clear
    of what already lies across (``PACK_GAP``) and still longer than the opening there, so the rim
    bears both its ends; None where there is no such place. Where the rim offers a choice, it does
    not lie over what is already ``inside`` (an apple in the bowl): a person would not bury it, and
    the scene does not say that anything is on it, so the planner may take it out first."""
    half_len = min(du + hu for du, _, hu, _ in parts)
    candidates = [v for v in _rim_offsets(top, parts, container, half_len) if _is_free(top, parts, 0.0, v)]
    if inside is not None:
        # The inner floor's frame: the same yaw, its centre maybe offset from the rim's.
        c, s = cos(inside.yaw), sin(inside.yaw)
        dx, dy = top.cx - inside.cx, top.cy - inside.cy
        u0, v0 = c * dx + s * dy, -s * dx + c * dy
        clear = [v for v in candidates if _is_free(inside, parts, u0, v0 + v)]
        candidates = clear or candidates
    return candidates[0] if candidates else None


def _rim_offsets(top: _Surface, parts: list[tuple[float, float, float, float]],
                 container: ObjectProperties, half_len: float) -> list[float]:
    """The offsets across the rim, nearest the middle first, where the rim bears both ends."""
    inner = hollow_of(container)
    ri = inner[0] / 2 if inner is not None else 0.0
    step, k, out = 0.01, 0, []
    while k * step <= top.hy:
        for v in ((k * step, -k * step) if k else (0.0,)):
            edge = max(abs(v + dv) + hv for _, dv, _, hv in parts)
            if edge > top.hy + 1e-9:
                continue
            # Half the opening's width where the object's outer edge crosses it (a round one's chord).
            opening = (sqrt(max(ri * ri - edge * edge, 0.0)) if container.shape == "cylinder" else ri)
            if half_len >= opening + 0.005:
                out.append(v)
        k += 1
    return out


def _is_free(surf: _Surface, parts: list[tuple[float, float, float, float]], u: float, v: float) -> bool:
    """Whether rectangles ``parts`` about (u, v) keep ``PACK_GAP`` from everything on ``surf``."""
    return all(abs(u + du - tu) >= hu + thu + PACK_GAP or abs(v + dv - tv) >= hv + thv + PACK_GAP
               for du, dv, hu, hv in parts for tu, tv, thu, thv, _ in surf.taken)


def _well_spot(surf: _Surface, parts: list[tuple[float, float, float, float]],
               radius: float) -> Optional[tuple[float, float]]:
    """Surface coordinates of the free spot nearest the front middle of a round floor (``WELL_STEP`` grid,
    as ``_free_spot``: what comes next has the room behind it) where rectangles ``parts`` lie
    within ``radius`` of its centre."""
    n = int(radius / WELL_STEP)
    grid = sorted(((i * WELL_STEP, j * WELL_STEP) for i in range(-n, n + 1) for j in range(-n, n + 1)),
                  key=lambda p: (-p[1], abs(p[0]), -p[0]))
    return next(((u, v) for u, v in grid
                 if all(hypot(abs(u + du) + hu, abs(v + dv) + hv) <= radius for du, dv, hu, hv in parts)
                 and _is_free(surf, parts, u, v)), None)


def _free_spot(surf: _Surface, parts: list[tuple[float, float, float, float]],
               from_back: bool = False) -> Optional[tuple[float, float]]:
    """Surface coordinates (u along the width, v towards the front) of the free spot nearest the
    front middle (the back middle ``from_back``) where rectangles ``parts`` (offsets and half
    extents about the spot) fit."""
    ulo = -surf.hx - min(du - hu for du, _, hu, _ in parts)
    uhi = surf.hx - max(du + hu for du, _, hu, _ in parts)
    vmax = surf.hy - max(dv + hv for _, dv, _, hv in parts) - surf.margin_front
    vmin = -surf.hy - min(dv - hv for _, dv, _, hv in parts)
    if uhi < ulo - 1e-6 or vmax < vmin - 1e-6:
        return None
    vmax = max(vmax, vmin)
    # On a 2 cm grid from the middle outwards (+u before -u); the middle of the range where it
    # holds no grid point.
    steps = int(max(abs(ulo), abs(uhi)) / 0.02 + 1e-6)
    us = sorted((k * 0.02 for k in range(-steps, steps + 1) if ulo - 1e-6 <= k * 0.02 <= uhi + 1e-6),
                key=lambda u: (abs(round(u / 0.02)), -u)) or [(ulo + uhi) / 2]
    vs, v = [], vmax
    while v >= vmin - 1e-9:
        vs.append(v)
        v -= 0.02
    if from_back:
        vs.reverse()

    def free(u: float, v: float) -> bool:
        return _is_free(surf, parts, u, v)

    for v in vs:
        for u in us:
            if free(u, v):
                return u, v
    # A crowded surface: the gaps the grid steps over, flush against what is there (a watering can
    # between the front row and a broom's handle).
    eps = 1e-6
    vs += [tv + sign * (thv + hv + PACK_GAP + eps) - dv for _, tv, _, thv, _ in surf.taken
           for _, dv, _, hv in parts for sign in (1, -1)]
    us += [tu + sign * (thu + hu + PACK_GAP + eps) - du for tu, _, thu, _, _ in surf.taken
           for du, _, hu, _ in parts for sign in (1, -1)]
    vs = sorted((v for v in vs if vmin - eps <= v <= vmax + eps), reverse=not from_back)
    us = sorted((u for u in us if ulo - eps <= u <= uhi + eps), key=abs)
    for v in vs:
        for u in us:
            if free(u, v):
                return u, v
    return None


def _scene_xml(builder: _Builder, side: float, spec: RobotSpec) -> str:
    half = side / 2
    walls = "".join(
        f'<geom type="box" pos="{x} {y} 1.2" size="{sx} {sy} 1.2" {WORLD_COLLISION} rgba="0.92 0.92 0.88 1"/>'
        for x, y, sx, sy in ((0, half + 0.05, half + 0.1, 0.05), (0, -half - 0.05, half + 0.1, 0.05),
                             (half + 0.05, 0, 0.05, half + 0.1), (-half - 0.05, 0, 0.05, half + 0.1)))
    return (
        '<mujoco model="affplan_physics_world">'
        '<compiler angle="radian" autolimits="true"/>'
        # implicitfast: stable with the stiff position servos and heavy joint damping used here.
        # Sleeping: bodies at rest drop out of the computation until something awake touches them,
        # which is what keeps a room full of objects several times faster than real time.
        f'<option timestep="{TIMESTEP}" integrator="implicitfast" cone="elliptic" impratio="5">'
        '<flag sleep="enable"/></option>'
        '<visual><global offwidth="640" offheight="480"/></visual>'
        '<worldbody>'
        '<light pos="0 0 3" dir="0 0 -1" diffuse="0.8 0.8 0.8"/>'
        f'<geom name="floor" type="plane" size="{half + 0.2} {half + 0.2} 0.1" {WORLD_COLLISION} '
        'rgba="0.7 0.7 0.7 1"/>'
        + walls + "".join(builder.xml)
        # The base body stays at the origin: its slide and hinge values are its world pose.
        + robot_body_xml(spec, mobile=True)
        + '</worldbody>'
        + (f'<equality>{"".join(builder.grips)}</equality>' if builder.grips else '')
        + f'<actuator>{robot_actuator_xml(spec, mobile=True)}</actuator>'
        '</mujoco>'
    )


def build_world(scene: Scene, table: Optional[ObjectTable] = None, spec: RobotSpec = TIAGO_PP,
                settle: float = 0.5) -> PhysicsWorld:
    """Build, compile and settle the physics world of ``scene``."""
    table = table or load_object_table()
    b = _Builder(scene, table, spec)
    b.read_scene()
    side = b.lay_out()
    b.place_objects()
    b.human_bodies()
    b.object_bodies()
    robot = b.robot_pose()
    model = mujoco.MjModel.from_xml_string(_scene_xml(b, side, spec))
    data = mujoco.MjData(model)
    for name, thing in b.things.items():
        if thing.kind in (ThingKind.FURNITURE, ThingKind.OBJECT, ThingKind.AGENT):
            thing.body_id = model.body(name).id
            thing.geom_ids = tuple(g for g in range(model.ngeom)
                                   if _is_under(model, int(model.geom_bodyid[g]), thing.body_id))
    world = PhysicsWorld(model, data, b.things, b.robot_name, side, spec, b.warnings)
    if b.robot_name in world.things:
        world.things[b.robot_name].body_id = model.body("base").id
    _initial_state(world, b, robot)
    world.step(world.steps(settle))
    return world


def _is_under(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body != 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return False


def _initial_state(world: PhysicsWorld, b: _Builder, robot: BasePose) -> None:
    m, d = world.model, world.data
    for name, thing in b.things.items():
        if thing.joint and thing.kind == ThingKind.FURNITURE:
            # A scene that says nothing leaves doors closed (the planner's default too).
            value = min(DOOR_OPEN, thing.joint_open) if name in b.opened else 0.0
            d.qpos[m.joint(thing.joint).qposadr[0]] = value
    # Liquids: half the container's inner volume, in litres.
    for liquid, container in b.liquid_in.items():
        inner = b.things[container].props.inner if container in b.things else None
        litres = 0.5 * float(np.prod(inner)) * 1000 if inner else 0.25
        world.liquids.setdefault(container, {})[liquid] = litres
    for name in b.closed:
        thing = b.things.get(name)
        if thing is not None and thing.props.articulation == "lid":
            world.closed_lids.add(name)
    targets = {"base_x": robot.x, "base_y": robot.y, "base_yaw": robot.yaw, TORSO_JOINT: HOME_TORSO}
    for side in ARM_SIDES:
        targets.update(zip(arm_joints(side), home_arm(side, world.spec)))
        for finger in (f"{side}_finger_a", f"{side}_finger_b"):
            targets[finger] = world.spec.finger_stroke
    for joint, value in targets.items():
        adr = m.joint(joint).qposadr[0]
        d.qpos[adr] = value
        world.set_ctrl(joint, value)
    mujoco.mj_forward(m, d)
