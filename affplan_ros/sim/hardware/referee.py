"""The referee: where every thing of the physics world is, read from the simulator's state.

This is the simulator's truth, for benchmarks, tests and the oracle pose source; a real robot has
nothing like it, and the robot's software (``affplan_ros/robots``) never reads it. sim_hardware
publishes it on ``/referee/objects`` (affplan_ros/msg/RefereeObjects).

Each thing is a box in its own frame, in the map frame (MuJoCo's world frame: map -> odom is the
identity in this world, and the base's joints are its pose in it):

* an object (a carryable thing, a liquid's closed bottle): its free body's pose, which the world
  puts at the centre of the object table's size (``object_geometry``: a sphere is as deep and high
  as wide, a cylinder as deep as wide); a bar on top to carry it by rises above that size. Its
  whole orientation: a cup knocked over lies on its side here.
* furniture: its body stands on the floor, turned by its yaw; the box is its carcass from the
  floor to its top (a pedestal included, ``FurnitureGeometry.height``), as wide and deep as the
  table says; an open door or drawer sticks out of it (``open_fraction`` says how far).
* a person: the box around their body's shapes (their hands are bodies of their own, not in it).
* a liquid is not a body: it is reported with the box of the container holding most of it, and
  left out while no container holds any (all of it poured out).

The robot is not listed: its pose is on /tf already (odometry is exact in this world).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.world import PhysicsWorld, Thing, ThingKind

NOT_ARTICULATED = -1.0   # open_fraction of what does not open


@dataclass(frozen=True)
class RefereeRecord:
    """One thing as the referee reports it (the fields of affplan_ros/msg/RefereeObject)."""

    name: str
    class_name: str
    kind: str                                       # ThingKind's value: object, furniture, liquid, agent
    position: tuple[float, float, float]            # map frame: the centre of its box
    quaternion: tuple[float, float, float, float]   # the box's axes (x, y, z, w)
    size: tuple[float, float, float]                # the box's extent along them (m)
    open_fraction: float                            # door, drawer or lid: 0 closed .. 1 open; else -1
    joint: Optional["JointRecord"] = None           # a door's hinge or a drawer's slide
    inner_levels: tuple[float, ...] = ()            # map z of the surfaces inside it things stand on


@dataclass(frozen=True)
class JointRecord:
    """How a door or drawer moves, as it is now (map frame)."""

    type: str                                       # "hinge" or "slide"
    handle: tuple[float, float, float]              # the middle of its handle
    back_handle: Optional[tuple[float, float, float]]   # a room door's handle on its other face
    origin: tuple[float, float, float]              # a point on the hinge's axis (the slide's anchor)
    axis: tuple[float, float, float]                # opening turns positively about it (moves along it)
    position: float                                 # rad (m) from closed
    open: float                                     # the position when fully open


def referee_records(world: PhysicsWorld, data: Optional[mujoco.MjData] = None) -> list[RefereeRecord]:
    """Every thing of ``world`` but the robot, from ``data`` (default: the world's own; the
    caller holds the world's lock), in the order of ``world.things``."""
    data = world.data if data is None else data
    bodies: dict[str, RefereeRecord] = {}
    for name, thing in world.things.items():
        if thing.kind in (ThingKind.OBJECT, ThingKind.FURNITURE, ThingKind.AGENT) and thing.body_id >= 0:
            bodies[name] = _body_record(world, data, thing)
    out = []
    for name, thing in world.things.items():
        if name in bodies:
            out.append(bodies[name])
        elif thing.kind == ThingKind.LIQUID:
            container = _container_of(world, name)
            if container in bodies:
                box = bodies[container]
                out.append(RefereeRecord(name, thing.class_name, thing.kind.value, box.position, box.quaternion,
                                         box.size, NOT_ARTICULATED))
    return out


def _body_record(world: PhysicsWorld, data: mujoco.MjData, thing: Thing) -> RefereeRecord:
    body = thing.body_id
    origin = data.xpos[body]
    rotation = data.xmat[body].reshape(3, 3)
    if thing.kind == ThingKind.OBJECT:
        centre, size = np.zeros(3), 2 * np.asarray(object_geometry(thing.props).half)
    elif thing.kind == ThingKind.FURNITURE:
        height = thing.geometry.height if thing.geometry is not None else thing.props.size[2]
        centre, size = np.array([0.0, 0.0, height / 2]), np.array([thing.props.size[0], thing.props.size[1], height])
    else:
        centre, size = _geoms_box(world.model, body)
    position = origin + rotation @ centre
    w, x, y, z = (float(v) for v in data.xquat[body])
    inner = thing.geometry.inner if thing.kind == ThingKind.FURNITURE and thing.geometry is not None else None
    levels = () if inner is None else (float((origin + rotation @ np.array([inner.cx, inner.cy, inner.z]))[2]),)
    return RefereeRecord(thing.name, thing.class_name, thing.kind.value, _floats(position), (x, y, z, w),
                         _floats(size), open_fraction(world, thing, data), _joint_record(world, thing, data), levels)


def _joint_record(world: PhysicsWorld, thing: Thing, data: mujoco.MjData) -> Optional[JointRecord]:
    if not thing.joint or not world.has_site(thing.handle_site):
        return None
    joint = world.model.joint(thing.joint)
    kind = "hinge" if joint.type[0] == mujoco.mjtJoint.mjJNT_HINGE else "slide"
    back = f"{thing.name}/handle_back"
    return JointRecord(kind, _floats(data.site(thing.handle_site).xpos),
                       _floats(data.site(back).xpos) if world.has_site(back) else None,
                       _floats(data.xanchor[joint.id]), _floats(data.xaxis[joint.id]),
                       float(data.qpos[joint.qposadr[0]]), float(thing.joint_open))


def open_fraction(world: PhysicsWorld, thing: Thing, data: Optional[mujoco.MjData] = None) -> float:
    """How far a door or drawer is open (its joint over the value that counts as fully open,
    clipped to 0..1), a lid 0 (on) or 1 (off); -1 for what does not open."""
    data = world.data if data is None else data
    if thing.joint and thing.joint_open > 0:
        q = float(data.qpos[world.model.joint(thing.joint).qposadr[0]])
        return float(np.clip(q / thing.joint_open, 0.0, 1.0))
    if thing.props.articulation == "lid":
        return 0.0 if thing.name in world.closed_lids else 1.0
    return NOT_ARTICULATED


def _container_of(world: PhysicsWorld, liquid: str) -> Optional[str]:
    """The container holding the most of ``liquid`` (None if none holds any)."""
    held = [(litres, container) for container, contents in world.liquids.items()
            for name, litres in contents.items() if name == liquid and litres > 0]
    return max(held)[1] if held else None


def _geoms_box(model: mujoco.MjModel, body: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre and size, in the body's frame, of the box around the body's own geoms (from each
    geom's box in its frame, which MuJoCo computes when it compiles the model)."""
    corners = []
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    for g in np.flatnonzero(model.geom_bodyid == body):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.geom_quat[g])
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        local = centre + signs * half
        corners.append(model.geom_pos[g] + local @ rot.reshape(3, 3).T)
    if not corners:
        return np.zeros(3), np.zeros(3)
    points = np.vstack(corners)
    lo, hi = points.min(axis=0), points.max(axis=0)
    return (lo + hi) / 2, hi - lo


def _floats(v) -> tuple[float, float, float]:
    return float(v[0]), float(v[1]), float(v[2])
