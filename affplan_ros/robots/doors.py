"""Opening and closing a door or drawer by its handle, from how its joint moves (robots/poses.py
``Joint``): where the base stands, where the hand takes the handle, and the path the base follows
while the hand holds it.

The arm holds still and the base moves, so that the hand follows the handle along the joint's
path (an arc round the hinge, a line along the slide): the whole robot turns with the door, as
if it were part of it. A Tiago-sized arm alone cannot swing a fridge door through 90 degrees (the
hand would travel about a metre); the base can. That needs a base that moves sideways (an
omnidirectional one); a differential base would need another way (pushing the door from inside).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from affplan_ros.robots.drivers import Pose
from affplan_ros.robots.poses import Joint

HANDLE_APPROACH_M = 0.10    # m out from the handle the hand comes in from (and goes back to)
SWEEP_STEP_RAD = 0.05       # rad between two poses of the base's path round a hinge
SWEEP_STEP_M = 0.02         # m between two poses along a slide
# rad where a first pull by a door's back handle hands over to a second by its front one, in turn
# (a room door open against its wall: from its back face the base cannot follow it shut).
HAND_OVER_RAD = (0.9, 0.7, 1.1, 0.5)


@dataclass(frozen=True)
class Pull:
    """One way to move a door or drawer by its handle."""

    stand: Pose                 # the base (map) where the hand takes the handle
    grasp: Pose                 # the hand at the handle
    approach: Pose              # the hand out in front of it
    sweep: tuple[Pose, ...]     # the base's path while the joint moves to its goal (stand first)


def outward(joint: Joint) -> tuple[float, float]:
    """The horizontal direction the handle moves in as the joint starts to open: out of the leaf's
    face for a door, along the slide for a drawer."""
    ax, ay, az = joint.axis
    if joint.type == "hinge":
        rx, ry, rz = (h - o for h, o in zip(joint.handle, joint.origin))
        nx, ny = ay * rz - az * ry, az * rx - ax * rz          # axis x (handle - origin)
    else:
        nx, ny = ax, ay
    norm = math.hypot(nx, ny)
    if norm < 1e-6:
        raise ValueError("the joint's axis and handle give no horizontal direction to pull in")
    return nx / norm, ny / norm


def front(joint: Joint) -> tuple[float, float]:
    """The outward direction of the face the door or drawer closes: where to stand to reach in."""
    nx, ny = outward(joint)
    if joint.type != "hinge":
        return nx, ny
    turn = -joint.position * math.copysign(1.0, joint.axis[2])    # the leaf turned back shut
    return math.cos(turn) * nx - math.sin(turn) * ny, math.sin(turn) * nx + math.cos(turn) * ny


def carried(joint: Joint, pose: Pose, to: float) -> Pose:
    """``pose`` carried along as if fixed to the leaf, the joint moved from where it is to ``to``."""
    delta = to - joint.position
    if joint.type == "hinge":
        turn = delta * math.copysign(1.0, joint.axis[2])        # a door's hinge stands upright
        ox, oy = joint.origin[0], joint.origin[1]
        c, s = math.cos(turn), math.sin(turn)
        x, y = pose.x - ox, pose.y - oy
        return Pose(ox + c * x - s * y, oy + s * x + c * y, pose.z, pose.yaw + turn, pose.frame, pose.roll,
                    pose.pitch)
    return pose.offset(dx=joint.axis[0] * delta, dy=joint.axis[1] * delta)


def pull(joint: Joint, goal: float, ahead: float, lateral: float, frame: str = "map", back: bool = False) -> Pull:
    """The base facing the handle with the hand ``ahead`` of it and ``lateral`` to its left (to
    the right where negative), then carried with the leaf until the joint is at ``goal``.
    ``back``: by the handle on a door's other face (``joint.back_handle``), from that side."""
    nx, ny = outward(joint)
    if back:
        if joint.back_handle is None:
            raise ValueError("the joint has no handle on its back face")
        nx, ny = -nx, -ny
    heading = math.atan2(-ny, -nx)
    c, s = math.cos(heading), math.sin(heading)
    hx, hy, hz = joint.back_handle if back else joint.handle
    stand = Pose(hx - (c * ahead - s * lateral), hy - (s * ahead + c * lateral), 0.0, heading, frame)
    # A door's handle stands upright: the fingers close across it, level; a drawer's lies across.
    roll = 0.0 if joint.type == "hinge" else math.pi / 2
    grasp = Pose(hx, hy, hz, heading, frame, roll)
    approach = grasp.offset(dx=nx * HANDLE_APPROACH_M, dy=ny * HANDLE_APPROACH_M)
    return Pull(stand, grasp, approach, sweep(joint, stand, goal))


def sweep(joint: Joint, base: Pose, goal: float) -> tuple[Pose, ...]:
    """The base's path from ``base`` while it carries the handle until the joint is at ``goal``."""
    step = SWEEP_STEP_RAD if joint.type == "hinge" else SWEEP_STEP_M
    n = max(1, math.ceil(abs(goal - joint.position) / step))
    return tuple(carried(joint, base, joint.position + (goal - joint.position) * k / n) for k in range(n + 1))


def plans(joint: Joint, goal: float) -> list[list[tuple[bool, float]]]:
    """Ways to bring ``joint`` to ``goal``, each a list of pulls (by the back handle?, to where):
    one pull by the front handle; by the back one, where the door has one; and to close such a
    door, the back handle part of the way, then the front one."""
    out = [[(False, goal)]]
    if joint.back_handle is not None:
        out.append([(True, goal)])
        if joint.type == "hinge" and goal < joint.position:
            out += [[(True, middle), (False, goal)] for middle in HAND_OVER_RAD if goal < middle < joint.position]
    return out


def moved_to(joint: Joint, to: float) -> Joint:
    """``joint`` as it will be at ``to``, its handles carried along."""
    def at(point):
        if point is None:
            return None
        p = carried(joint, Pose(*point), to)
        return p.x, p.y, p.z

    return replace(joint, handle=at(joint.handle), back_handle=at(joint.back_handle), position=to)
