"""Closing a door in two pulls where one pull is blocked, judged by physics as any close.

A door opened into a room's corner (AutoGPT+P's simple kitchen: the room door swung 90 degrees
into the room, 0.8 m from the wall beside it) cannot be closed in one pull. The handle that faces
the room when the door is shut faces the corner while it stands open, with no room there for the
base; and following the other face's handle all the way round the hinge would take the base
through the wall the door closes into. A person pulls such a door part of the way by the handle
they reach, lets go, steps round the leaf and closes it from its other face. So does the robot:
the angle where the first pull ends is one from which both pulls find a handle, an arm and free
floor for the base all along its arc (the second pull is checked with the door at that angle on
the world's state, which is then restored exactly: a look ahead, nothing moves). Each pull is the
ordinary close motion (``Skills._articulate``): the physics still says whether the door followed.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Optional

import mujoco

from affplan_ros.sim.physics.skills import SkillResult, Skills
from affplan_ros.sim.physics.world import PhysicsWorld

# Fractions of the present opening angle tried, in turn, as where the first pull ends: the middle
# first (each pull then has half the arc), then nearer either end.
MIDWAY = (0.5, 0.65, 0.35, 0.8, 0.2)


def close_articulated(sk: Skills, furniture: str) -> SkillResult:
    """Close a door or drawer in one pull, or, where no place to stand for one pull is free, in
    two pulls from the door's two faces, or else in one pull standing close beside the leaf."""
    whole = sk._articulate(furniture, False)
    if whole.success or whole.details.get("stand", True):
        return whole
    midway = _midway(sk, furniture)
    if midway is None:
        beside = sk._articulate(furniture, False, beside=True)
        return whole if beside.details.get("stand") is False else beside
    first = sk._articulate(furniture, False, to=midway)
    if not first.success:
        return first
    return sk._articulate(furniture, False)


def _midway(sk: Skills, furniture: str) -> Optional[float]:
    """A hinge angle where a first pull can end and a second one can start, or None."""
    w = sk.world
    thing = w.things[furniture]
    if not thing.joint.endswith("/hinge"):
        return None
    q0 = w.qpos(thing.joint)
    for fraction in MIDWAY:
        q = fraction * q0
        if not sk._articulate(furniture, False, to=q, plan_only=True).success:
            continue
        with joint_at(w, thing.joint, q):
            second = sk._articulate(furniture, False, plan_only=True)
        if second.success:
            return q
    return None


@contextmanager
def joint_at(world: PhysicsWorld, joint: str, q: float) -> Iterator[None]:
    """The world's state with ``joint`` at ``q`` for a look ahead, restored exactly afterwards."""
    saved = mujoco.MjData(world.model)
    mujoco.mj_copyData(saved, world.model, world.data)
    try:
        world.data.qpos[world.model.joint(joint).qposadr[0]] = q
        mujoco.mj_forward(world.model, world.data)
        yield
    finally:
        mujoco.mj_copyData(world.data, world.model, saved)


__all__ = ["MIDWAY", "close_articulated", "joint_at"]
