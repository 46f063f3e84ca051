"""How a parallel gripper takes a thing: grasp poses from its seen box and its class's shape in
the object table (core/knowledge/data/objects.yaml, ``grasp``), best first.

* from above, across a horizontal side that fits between the opened fingers, the narrowest
  first (both directions of the hand, the wrist chooses); then leaning forward (60 and 45
  degrees), pointing from the robot at it, which reaches further;
* by its wall, from above, where it is a container wider than the hand (``grasp: rim``, or no
  side fits): the fingers straddle the wall nearest the robot;
* from the side, the hand level and pointing from the robot at it, where it fits across;
* a thing with a handle (``grasp: handle``, a hammer, a broom) or a bar over its top
  (``top_handle``, a watering can) by that first, from above, the fingers across it, at points
  along it nearest where the thing balances (less torque between the pads).

A grasp is a TCP pose (the point between the finger pads; the gripper's x axis points where it
approaches, its y axis is where the fingers close) and the pose it comes in from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from affplan_ros.core.knowledge.objects import HANDLE_POST, ObjectProperties, balance_x, handle_parts, top_handle_parts
from affplan_ros.robots.drivers import Pose
from affplan_ros.robots.poses import SeenObject

DOWN = math.pi / 2          # pitch of a hand pointing down
TIP_CLEARANCE = 0.04        # m from the TCP down to the support: the finger tips (3 cm) stay 1 cm above it ...
FINGER_TIP_M = 0.03         # ... but under a thing thinner than the pads, they come down nearer (a knife lying
THIN_TIP_SHARE = 0.25       # flat, 2 cm: 5 mm above it), so that the pads hold more than its top edge,
TIP_GAP_MIN = 0.006         # and not nearer than this (the IK ends within 2.5 mm, and a pad's corner dips) but
                            # for a thing so thin (a nail) that the tips then pass over it: half way up it
GRIP_DEPTH = 0.04           # m below its top a thing is held, at most (its middle, if lower)
RIM_DEPTH = 0.03            # m below its top a wall is held
FIT_MARGIN = 0.01           # m the fingers open wider than what they take
LONG_RATIO = 2.5            # a thing this many times longer than wide may be held off its middle
LEANS = (math.pi / 3, math.pi / 4)   # pitches of a hand leaning forward from above (pointing down: pi/2)
PAD_HALF_M = 0.015          # half a finger pad's width along what it holds (a Tiago++'s: about 3 cm)
HANDLE_STEP = 0.03          # m between grasp points along a handle
HANDLE_POINTS = 4           # of them, the nearest the balance point


@dataclass(frozen=True)
class Grasp:
    kind: str               # "top", "lean", "rim", "side" or "handle"
    pose: Pose              # the TCP where the fingers close
    approach: Pose          # where the hand comes in from (and goes back to, without the thing)
    width: float            # across the fingers (m)


def tip_clearance(height: float) -> float:
    """How high above its support the TCP stays taking a thing ``height`` tall lying there."""
    return min(TIP_CLEARANCE, FINGER_TIP_M + max(THIN_TIP_SHARE * height, min(TIP_GAP_MIN, height / 2)))


def _extent(obj: SeenObject, props: Optional[ObjectProperties]) -> tuple[float, float, float]:
    if obj.has_box:
        return obj.size
    return props.size if props is not None else (0.06, 0.06, 0.1)


def grasps(obj: SeenObject, props: Optional[ObjectProperties], max_opening: float, robot_xy: tuple[float, float],
           support_top: Optional[float] = None, approach_m: float = 0.12) -> list[Grasp]:
    sx, sy, sz = _extent(obj, props)
    top = obj.z + sz / 2
    floor = (support_top if support_top is not None else obj.z - sz / 2) + tip_clearance(sz)
    height = max(top - min(GRIP_DEPTH, sz / 2), floor)
    out: list[Grasp] = []
    toward = math.atan2(obj.y - robot_xy[1], obj.x - robot_xy[0])   # from the robot to the thing
    rim_first = props is not None and props.grasp == "rim"
    # Across a side: the fingers close along the thing's axis ``a`` (0: its x, 1: its y).
    sides = sorted((w, a) for a, w in enumerate((sx, sy)) if w + FIT_MARGIN <= max_opening)
    for width, a in sides:
        across = obj.yaw + a * math.pi / 2
        for turn in (-math.pi / 2, math.pi / 2):    # the hand's y along ``across``, either way round
            yaw = _nearest(across + turn, toward)
            pose = Pose(obj.x, obj.y, height, yaw, obj.frame, pitch=DOWN)
            out.append(Grasp("top", pose, pose.offset(dz=approach_m), width))
    # A long thing is also taken half way to either end (where what lies beside its middle is in
    # the fingers' way), the end nearer the robot first.
    for width, a in sides:
        length = (sx, sy)[1 - a]
        if length < LONG_RATIO * width:
            continue
        along = obj.yaw + (1 - a) * math.pi / 2
        ends = sorted((length / 4 * sign for sign in (1.0, -1.0)), key=lambda d: d * math.cos(along - toward))
        yaw = _nearest(along if math.cos(along - toward) >= 0 else along + math.pi, toward)
        for d in ends:
            x, y = obj.x + d * math.cos(along), obj.y + d * math.sin(along)
            pose = Pose(x, y, height, yaw, obj.frame, pitch=DOWN)
            out.append(Grasp("top", pose, pose.offset(dz=approach_m), width))
    # Leaning forward from above, pointing from the robot at it: the hand reaches further (the
    # front of a deep counter), the fingers across the thing as seen from the robot.
    across_width = abs(sx * math.sin(toward - obj.yaw)) + abs(sy * math.cos(toward - obj.yaw))
    if across_width + FIT_MARGIN <= max_opening:
        for pitch in LEANS:
            pose = Pose(obj.x, obj.y, height, toward, obj.frame, pitch=pitch)
            back = (math.cos(pitch) * math.cos(toward), math.cos(pitch) * math.sin(toward), -math.sin(pitch))
            approach = Pose(obj.x - approach_m * back[0], obj.y - approach_m * back[1], height - approach_m * back[2],
                            toward, obj.frame, pitch=pitch)
            out.append(Grasp("lean", pose, approach, across_width))
    rims = _rim_grasps(obj, (sx, sy, sz), toward, approach_m, floor) if props is None or props.inner or not sides \
        else []
    out = rims + out if rim_first else out + rims
    if props is not None and (props.handle is not None or props.top_handle is not None):
        out = _handle_grasps(obj, props, height, toward, approach_m) + out
    # From the side: the hand level, pointing from the robot at the thing, fingers across it.
    if across_width + FIT_MARGIN <= max_opening:
        middle = max(obj.z, floor)
        pose = Pose(obj.x, obj.y, middle, toward, obj.frame)
        back = Pose(obj.x - approach_m * math.cos(toward), obj.y - approach_m * math.sin(toward), middle, toward,
                    obj.frame)
        out.append(Grasp("side", pose, back, across_width))
    return out


def _handle_grasps(obj: SeenObject, props: ObjectProperties, height: float, toward: float,
                   approach_m: float) -> list[Grasp]:
    """Across the handle (its top at the thing's, so held at ``height`` as a top grasp is) or
    across the bar over the top (at the bar's height: the finger tips pass between it and the
    body), the pads clear of the head or the bar's posts, at points along it nearest where the
    thing balances first, the hand either way round."""
    if props.handle is not None:
        (centre, half), _ = handle_parts(props)
        lo, hi = centre[0] - half[0] + PAD_HALF_M + 0.01, centre[0] + half[0] - PAD_HALF_M - 0.01
        z = height
    else:
        (centre, half), *_ = top_handle_parts(props)
        lo, hi = (centre[0] - half[0] + HANDLE_POST + PAD_HALF_M, centre[0] + half[0] - HANDLE_POST - PAD_HALF_M)
        z = obj.z + centre[2]
    balance = min(max(balance_x(props), lo), hi)
    steps = int((hi - lo) / HANDLE_STEP) if hi > lo else 0
    xs = sorted({round(lo + k * HANDLE_STEP, 4) for k in range(steps + 1)} | {round(balance, 4)},
                key=lambda x: abs(x - balance))[:HANDLE_POINTS]
    c, s = math.cos(obj.yaw), math.sin(obj.yaw)
    out = []
    for x in xs:
        for yaw in (obj.yaw, obj.yaw + math.pi):   # the hand along the handle, the fingers across it
            pose = Pose(obj.x + c * x, obj.y + s * x, z, _nearest(yaw, toward), obj.frame, pitch=DOWN)
            out.append(Grasp("handle", pose, pose.offset(dz=approach_m), 2 * half[1]))
    return out


def _rim_grasps(obj: SeenObject, size: tuple[float, float, float], toward: float, approach_m: float,
                floor: float) -> list[Grasp]:
    """The wall nearest the robot, held from above with the fingers across it."""
    sx, sy, sz = size
    radius = min(sx, sy) / 2 if abs(sx - sy) < 0.02 else None    # round: any point of its wall
    out = []
    if radius is not None:
        angle = toward + math.pi
        x, y = obj.x + radius * math.cos(angle), obj.y + radius * math.sin(angle)
    else:   # the nearer of its two walls facing the robot
        local = toward + math.pi - obj.yaw
        if abs(math.cos(local)) * sy >= abs(math.sin(local)) * sx:
            d = sx / 2 * math.copysign(1.0, math.cos(local))
            x, y = obj.x + d * math.cos(obj.yaw), obj.y + d * math.sin(obj.yaw)
            angle = obj.yaw if d > 0 else obj.yaw + math.pi
        else:
            d = sy / 2 * math.copysign(1.0, math.sin(local))
            x, y = obj.x - d * math.sin(obj.yaw), obj.y + d * math.cos(obj.yaw)
            angle = obj.yaw + (math.pi / 2 if d > 0 else -math.pi / 2)
    z = max(obj.z + sz / 2 - RIM_DEPTH, floor)
    # The fingers close across the wall: along the line from the centre to the wall.
    yaw = _nearest(angle + math.pi / 2, toward)
    pose = Pose(x, y, z, yaw, obj.frame, pitch=DOWN)
    out.append(Grasp("rim", pose, pose.offset(dz=approach_m), 0.01))
    return out


def _nearest(yaw: float, toward: float) -> float:
    """``yaw`` wrapped to within pi of ``toward`` (the hand turned the short way)."""
    return toward + math.remainder(yaw - toward, 2 * math.pi)


def cap_yaws(obj: SeenObject, robot_xy: tuple[float, float]) -> list[float]:
    """Headings of a hand from above that take a thing's top between its fingers: across each
    horizontal side of its box (a round cap: any), turned the short way from the robot, then the
    other way round (the same grip with the wrist half a turn on: room to turn it the other way)."""
    toward = math.atan2(obj.y - robot_xy[1], obj.x - robot_xy[0])
    near = [_nearest(obj.yaw + a * math.pi / 2 + math.pi / 2, toward) for a in (0, 1)]
    return near + [yaw + math.pi for yaw in near]
