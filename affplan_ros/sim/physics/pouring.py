"""Pouring from a held container, judged by physics: ``fill`` (a liquid) and ``pour`` (a solid).

The arm carries the held source so that its mouth comes over the target's opening, tilts it
(IK for each pose; the hand keeps its grip), holds, and tilts it
back. What moves is decided by the physics state at the tilt:

* a liquid is a quantity (``PhysicsWorld.liquids``): it goes into the target only if the source's
  mouth is over the target's opening (within its inner half-width of the opening's centre, above
  its rim) and neither has a lid on; otherwise it is spilled (the source is emptied onto nothing,
  as a real spill would) and the step fails;
* a solid (cornflakes, nuts) is a body inside the source: the tilt lets it slide out under
  gravity, and it is in the target only if the physics put it there.

The step succeeded only if the target then holds it and the source is still held by contact.
"""
from __future__ import annotations

from typing import Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.skills import FailureCode, SkillResult, Skills
from affplan_ros.sim.physics.world import ThingKind

ABOVE_RIM = 0.04                 # m between the target's rim and the source's mouth at the tilt
TILTS = (1.75, 1.45, 2.05)      # rad the source is tilted (about 100, 83 and 117 degrees)
HOLD = 1.0                       # s the source is held tilted (a solid needs time to slide out)


def fill(skills: Skills, source: str, liquid: str, target: str) -> SkillResult:
    """Pour ``liquid`` from the held ``source`` into ``target``."""
    return skills._run("fill", _pour, skills, source, liquid, target, True)


def pour(skills: Skills, source: str, poured: str, target: str) -> SkillResult:
    """Pour the solid ``poured`` (a body inside the held ``source``) into ``target``."""
    return skills._run("pour", _pour, skills, source, poured, target, False)


def _pour(sk: Skills, source: str, content: str, target: str, liquid: bool) -> SkillResult:
    w = sk.world
    side = sk.holding(source)
    if side is None:
        return sk._fail(FailureCode.NOT_HELD, f"the robot does not hold {source}")
    goal = w.things.get(target)
    if goal is None or goal.kind not in (ThingKind.OBJECT, ThingKind.FURNITURE) or not w.has_site(goal.inner_site):
        return sk._fail(FailureCode.UNKNOWN, f"{target!r} is not a container in the physics world")
    for name in (source, target):
        if name in w.closed_lids:
            return sk._fail(FailureCode.CONTAINER_CLOSED, f"{name}'s lid is on")
    closed = sk._enclosing_closed(target)
    if closed:
        return sk._fail(FailureCode.CONTAINER_CLOSED, f"{target} is inside {closed}, which is closed")
    if liquid and w.liquids.get(source, {}).get(content, 0.0) <= 0.0:
        return sk._fail(FailureCode.NOT_FOUND, f"there is no {content} in {source}")
    if not liquid and not sk.inside(content, source):
        return sk._fail(FailureCode.NOT_FOUND, f"{content} is not in {source}")
    plan = _tilt_plan(sk, side, source, target)
    if plan is None:
        return sk._fail(FailureCode.UNREACHABLE, f"no arm pose holds {source}'s mouth over {target} (IK finds "
                        "no solution for the upright or the tilted pose)")
    upright, tilted = plan
    carry = sk.control.joints()
    out = sk.move_arm(side, upright)
    if out.ok:
        out = sk.control.follow([tilted], speed_scale=0.4)
    if not out.ok:
        sk.control.follow([upright, carry])
        return sk._blocked(out, f"tilting {source} over {target}")
    w.step(w.steps(HOLD))
    over = _mouth_over(sk, source, target)
    if liquid:
        litres = w.liquids[source].pop(content)
        if over:
            w.liquids.setdefault(target, {})[content] = w.liquids.get(target, {}).get(content, 0.0) + litres
    sk.control.follow([upright], speed_scale=0.4)
    sk.move_arm(side, carry)   # back round the target: the straight way swept the bottle into a pot
    w.step(w.steps(0.3))
    if len(w.touching_geoms(source, sk._pads(side))) < 2:
        sk.held[side] = None
        return sk._fail(FailureCode.SLIPPED, f"{source} slipped out of the hand while pouring")
    if liquid and not over:
        return sk._fail(FailureCode.SLIPPED, f"{content} was spilled: {source}'s mouth was not over {target}'s "
                        "opening when it tilted")
    if not liquid and not sk.inside(content, target):
        return sk._fail(FailureCode.SLIPPED, f"{content} did not land in {target} (it is at "
                        f"{', '.join(sorted(x or 'the floor' for x in w.contacts(content))) or 'nothing'})")
    return sk._ok(side=side)


def _mouth(sk: Skills, source: str) -> np.ndarray:
    """The centre of the source's opening (its top, along its own up axis), world frame."""
    w = sk.world
    half = object_geometry(w.things[source].props).half
    return w.position(source) + w.rotation(source)[:, 2] * half[2]


def _mouth_over(sk: Skills, source: str, target: str) -> bool:
    w = sk.world
    centre, rot, size = w.site(w.things[target].inner_site)
    local = rot.T @ (_mouth(sk, source) - centre)
    rim = _rim_height(sk, target)
    return abs(local[0]) <= size[0] and abs(local[1]) <= size[1] and _mouth(sk, source)[2] > rim


def _rim_height(sk: Skills, target: str) -> float:
    w = sk.world
    thing = w.things[target]
    if thing.kind == ThingKind.OBJECT:
        half = object_geometry(thing.props).half
        return float(w.position(target)[2] + abs(w.rotation(target)[2, 2]) * half[2])
    return float(w.site(thing.inner_site)[0][2] + 0.05)


def _tilt_plan(sk: Skills, side: str, source: str, target: str) -> Optional[tuple[dict, dict]]:
    """Joints for the source upright with its mouth above the target, and tilted with its mouth
    over the opening, for the first tilt the arm reaches."""
    w = sk.world
    base = w.base_pose()
    tcp, rot, _ = w.site(f"{side}_tcp")
    mouth_local = rot.T @ (_mouth(sk, source) - tcp)         # the mouth as the hand holds it
    centre, _, _ = w.site(w.things[target].inner_site)
    over = np.array([centre[0], centre[1], _rim_height(sk, target) + ABOVE_RIM])
    height = 2 * object_geometry(w.things[source].props).half[2]
    seed = sk.control.joints()
    # About the axis across the fingers' closing direction: about the closing axis itself the
    # source would pivot between the pads instead of tilting (which the physics shows).
    axis = rot[:, 2]
    for angle in TILTS:
        for sign in (1.0, -1.0):
            tilt = _rotation(axis, sign * angle) @ rot
            tilted_tcp = over - tilt @ mouth_local
            # First upright, the whole source above the rim (its bottom clear of the target), the
            # hand as it holds it now; where that is too high for the arm, already leaning (45
            # degrees) with its mouth lower. The tilt then brings the mouth down over the opening.
            for lean, rise in ((0.0, height + 0.02), (0.8, 0.75 * height + 0.02)):
                first = _rotation(axis, sign * lean) @ rot
                first_tcp = over + np.array([0.0, 0.0, rise]) - first @ mouth_local
                a = sk._solve(side, w.to_base_frame(first_tcp, base), w.rotation_to_base(first, base), seed)
                if not a.success:
                    continue
                b = sk._solve(side, w.to_base_frame(tilted_tcp, base), w.rotation_to_base(tilt, base),
                              {**seed, **a.joints})
                if b.success:
                    return a.joints, b.joints
    return None


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about ``axis`` (MuJoCo's own conversions)."""
    quat, mat = np.zeros(4), np.zeros(9)
    mujoco.mju_axisAngle2Quat(quat, np.asarray(axis, float) / np.linalg.norm(axis), angle)
    mujoco.mju_quat2Mat(mat, quat)
    return mat.reshape(3, 3)
