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

from dataclasses import dataclass
from typing import Optional

import mujoco
import numpy as np

from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.openings import has_spout, mouth, mouth_over, rim_height
from affplan_ros.sim.physics.skills import SkillResult, Skills
from affplan_ros.sim.physics.world import ThingKind

ABOVE_RIM = 0.04                 # m between the target's rim and the source's mouth, held upright above it
# m the mouth is held above the target's rim at the tilt, lowest first: with a top-down grasp the
# lower finger and the palm hang beside the mouth (the grip is 4.5 cm below the top), so over a
# cup the lowest height meets the rim with the hand (measured: the palm knocked a plastic cup 3
# cm aside); the first height at which the arm, the hand and the source are clear is taken.
POUR_HEIGHTS = (0.04, 0.07, 0.10, 0.13)
HIGHER_POURS = (0.16, 0.19)      # m, tried where none lower is reached (a bottle over a watering can's handle)
TILTS = (1.75, 1.45, 2.05)      # rad the source is tilted (about 100, 83 and 117 degrees)
# rad a watering can is tipped forward: its spout, rising from the front of its body, pours once
# its tip is below the water in the body, at about 30 degrees; tipped as far as a bottle, its
# 40 cm body went down into the bucket it poured into and met the floor beyond.
SPOUT_TILTS = (0.7, 0.55, 0.9)
SPOUT_DOWN = 0.3                # the least downward slope (sine) of a tipped watering can's length
# Fraction of full speed the arm brings the source over the target at: at full speed the servos
# lag the joint path by up to 0.04 rad (3 cm at the hand), more than the planner's 1 cm clearance
# (measured: a bottle's bottom brushed a watering can's top edge and tipped it over).
APPROACH_SPEED = 0.5
TILT_SPEED = 0.4
# m the source sinks in the grip as the tilt turns the fingers' closing direction upright (the
# lower pad gives under its weight; measured: a bottle of water slid 1.1 cm and its side met a
# wine glass's rim that the planned pose cleared by 1 cm): the tilted pose must be clear of it too.
SAG = 0.02
AIM_INSET = 0.02                 # m inside the edge of the opening the mouth may be aimed
COME_FROM_ABOVE = 0.08           # m above its upright pose the source comes from
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
        return sk._fail(Cause.NOT_HELD, f"the robot does not hold {source}")
    goal = w.things.get(target)
    if goal is None or goal.kind not in (ThingKind.OBJECT, ThingKind.FURNITURE) or not w.has_site(goal.inner_site):
        return sk._fail(Cause.UNKNOWN, f"{target!r} is not a container in the physics world")
    for name in (source, target):
        if name in w.closed_lids:
            return sk._fail(Cause.CONTAINER_CLOSED, f"{name}'s lid is on")
    closed = sk._enclosing_closed(target)
    if closed:
        return sk._fail(Cause.CONTAINER_CLOSED, f"{target} is inside {closed}, which is closed")
    if liquid and w.liquids.get(source, {}).get(content, 0.0) <= 0.0:
        return sk._fail(Cause.NOT_FOUND, f"there is no {content} in {source}")
    if not liquid and not sk.inside(content, source):
        return sk._fail(Cause.NOT_FOUND, f"{content} is not in {source}")
    plan = _tilt_plan(sk, side, source, target)
    if plan is None:
        return sk._fail(Cause.UNREACHABLE, f"no arm pose holds {source}'s mouth over {target} (IK finds "
                        "no solution for the upright or the tilted pose)")
    carry = sk.control.joints()
    above = _above(sk, side, plan.upright, source, target)
    out = sk.move_arm(side, above, speed_scale=APPROACH_SPEED)
    if out.ok:
        out = sk.move_arm(side, plan.upright, speed_scale=APPROACH_SPEED)
    if out.ok:
        out = sk.move_arm(side, _aim_again(sk, side, source, plan), speed_scale=TILT_SPEED)
    if not out.ok:
        sk.move_arm(side, plan.upright, speed_scale=TILT_SPEED)
        sk.move_arm(side, above)
        sk.move_arm(side, carry)
        return sk._blocked(out, f"tilting {source} over {target}")
    w.step(w.steps(HOLD))
    over = mouth_over(sk.world, source, target)
    if liquid:
        litres = w.liquids[source].pop(content)
        if over:
            w.liquids.setdefault(target, {})[content] = w.liquids.get(target, {}).get(content, 0.0) + litres
    sk.move_arm(side, plan.upright, speed_scale=TILT_SPEED)
    sk.move_arm(side, above)
    sk.move_arm(side, carry)   # each planned round the target: the straight way swept the bottle into a pot
    w.step(w.steps(0.3))
    if len(w.touching_geoms(source, sk._pads(side))) < 2:
        sk.held[side] = None
        return sk._fail(Cause.SLIPPED, f"{source} slipped out of the hand while pouring")
    if liquid and not over:
        return sk._fail(Cause.SLIPPED, f"{content} was spilled: {source}'s mouth was not over {target}'s "
                        "opening when it tilted")
    if not liquid and not sk.inside(content, target):
        return sk._fail(Cause.SLIPPED, f"{content} did not land in {target} (it is at "
                        f"{', '.join(sorted(x or 'the floor' for x in w.contacts(content))) or 'nothing'})")
    return sk._ok(side=side)


def _mouth_in_hand(sk: Skills, side: str, source: str) -> np.ndarray:
    """The mouth in the TCP frame, as the hand holds the source now."""
    tcp, rot, _ = sk.world.site(f"{side}_tcp")
    return rot.T @ (mouth(sk.world, source) - tcp)


@dataclass(frozen=True)
class TiltPlan:
    """Joints with the source upright above the target and tilted over its opening, and where the
    tilt puts the mouth (``over``) with the hand turned as ``rotation`` (world)."""

    upright: dict[str, float]
    tilted: dict[str, float]
    over: np.ndarray
    rotation: np.ndarray


def _tilt_plan(sk: Skills, side: str, source: str, target: str) -> Optional[TiltPlan]:
    """The first tilt the arm reaches with its mouth over the opening, the arm, the hand and the
    source clear of everything (the target's rim included), as low over the rim as that allows;
    where none is clear, the lowest the arm reaches. Where it reaches none, the source first held
    upright beside the target instead of above it, and tilts from up to ``HIGHER_POURS`` above
    the rim (both only then: where a tilt was found before, it is kept)."""
    return _tilt_search(sk, side, source, target, POUR_HEIGHTS, None) or \
        _tilt_search(sk, side, source, target, POUR_HEIGHTS + HIGHER_POURS, _beside(sk, source, target))


def _tilt_search(sk: Skills, side: str, source: str, target: str, heights: tuple[float, ...],
                 beside: Optional[np.ndarray]) -> Optional[TiltPlan]:
    w = sk.world
    base = w.base_pose()
    _, rot, _ = w.site(f"{side}_tcp")
    mouth_local = _mouth_in_hand(sk, side, source)
    rim = rim_height(sk.world, target)
    height = 2 * object_geometry(w.things[source].props).half[2]
    seed = sk.control.joints()
    # About the axis across the fingers' closing direction: about the closing axis itself the
    # source would pivot between the pads instead of tilting (which the physics shows). But a
    # thing held by the bar of a handle over its top (a watering can) is tilted about the closing
    # axis, along the bar, as a person tips one: its weight hangs straight under the bar, and the
    # pads along the bar hold it from turning, whereas about the bar's own axis its weight rolls
    # the bar between the pads and forces them apart (measured: it turned out of the grip).
    spout = has_spout(w.things[source].props)
    axis = rot[:, 1] if spout else rot[:, 2]
    length_in_hand = rot.T @ w.rotation(source)[:, 0]
    first: Optional[TiltPlan] = None
    for centre in _aims(sk, target):
        uprights: dict[float, list[dict[str, float]]] = {}
        for above in heights:
            over = np.array([centre[0], centre[1], rim + above])
            for angle in SPOUT_TILTS if spout else TILTS:
                for sign in (1.0, -1.0):
                    if spout and (_rotation(axis, sign * angle) @ rot @ length_in_hand)[2] > -SPOUT_DOWN:
                        continue            # the spout's end tipped up, not down
                    if sign not in uprights:
                        uprights[sign] = _uprights(sk, side, base, rot, axis, sign, mouth_local,
                                                   np.array([centre[0], centre[1], rim + ABOVE_RIM]), height, seed,
                                                   beside)
                    tilt = _rotation(axis, sign * angle) @ rot
                    tilted_tcp = over - tilt @ mouth_local
                    for upright in uprights[sign]:
                        b = sk._solve(side, w.to_base_frame(tilted_tcp, base), w.rotation_to_base(tilt, base),
                                      {**seed, **upright})
                        if not b.success:
                            continue
                        if _clear_sagging(sk, side, source, tilted_tcp, tilt, {**seed, **b.joints}):
                            return TiltPlan(upright, b.joints, over, tilt)
                        first = first or TiltPlan(upright, b.joints, over, tilt)
    # None clear (a carton stands close beside a bowl): the lowest tilt the arm reaches, and the
    # physics shows what it meets.
    return first


def _aims(sk: Skills, target: str) -> list[np.ndarray]:
    """Where over the target's opening the mouth is aimed, in turn: its centre, then (a wide one:
    a pan, a sink) the point of it nearest the robot, ``AIM_INSET`` inside its edge (a pan's
    centre 0.64 m ahead is beyond the arm with a cup held upright above it; its near part is not)."""
    w = sk.world
    centre, rot, size = w.site(w.things[target].inner_site)
    base = w.base_pose()
    local = rot.T @ (np.array([base.x, base.y, centre[2]]) - centre)
    inset = np.maximum(np.asarray(size[:2]) - AIM_INSET, 0.0)
    local[:2] = np.clip(local[:2], -inset, inset)
    near = centre + rot @ np.array([local[0], local[1], 0.0])
    return [centre] + ([near] if np.linalg.norm(near - centre) > 0.02 else [])


def _clear_sagging(sk: Skills, side: str, source: str, tcp: np.ndarray, rot: np.ndarray,
                   joints: dict[str, float]) -> bool:
    """Whether the arm, the hand and the source are clear of everything at the tilted pose, and
    still where the source has sunk ``SAG`` in the grip (where the arm reaches that pose)."""
    if sk.paths.collision(side, joints, held=source):
        return False
    w = sk.world
    r = sk.ik.solve(side, w.to_base_frame(tcp - np.array([0.0, 0.0, SAG])), w.rotation_to_base(rot), joints)
    return not r.success or not sk.paths.collision(side, {**joints, **r.joints}, held=source)


def _uprights(sk: Skills, side: str, base, rot: np.ndarray, axis: np.ndarray, sign: float,
              mouth_local: np.ndarray, over: np.ndarray, height: float, seed: dict,
              beside: Optional[np.ndarray]) -> list[dict[str, float]]:
    """Joints holding the source with its mouth above ``over`` before the tilt: upright, the whole
    source above the rim (its bottom clear of the target), the hand as it holds it now; where that
    is too high for the arm, already leaning (45 degrees) with its mouth lower. The tilt then
    brings the mouth down over the opening. Where neither is reached (a 25 cm bottle held at its
    neck above a watering can on a counter: the hand would be at 1.4 m), upright ``beside`` the
    target at the height of its rim, as a person holds a bottle before pouring; the arm's path
    planner takes it from there over the opening."""
    w = sk.world
    out = []
    for lean, rise in ((0.0, height + 0.02), (0.8, 0.75 * height + 0.02)):
        first = _rotation(axis, sign * lean) @ rot
        first_tcp = over + np.array([0.0, 0.0, rise]) - first @ mouth_local
        a = sk._solve(side, w.to_base_frame(first_tcp, base), w.rotation_to_base(first, base), seed)
        if a.success:
            out.append(a.joints)
    if not out and beside is not None:
        a = sk._solve(side, w.to_base_frame(over + beside - rot @ mouth_local, base), w.rotation_to_base(rot, base),
                      seed)
        if a.success and not sk.paths.collision(side, {**seed, **a.joints}):
            out.append(a.joints)
    return out


def _clearance(sk: Skills, source: str, target: str) -> tuple[np.ndarray, float]:
    """The horizontal direction (base frame) from the target towards the robot, and how far the
    source must be drawn back that way to be clear of the target's near edge."""
    w = sk.world
    toward = -w.to_base_frame(w.position(target))[:2]
    toward /= max(float(np.linalg.norm(toward)), 1e-6)
    back = _extent(sk, target, w.rotation_to_base(np.eye(3)).T @ np.array([*toward, 0.0])) \
        + object_geometry(w.things[source].props).half[0] + 0.03
    return toward, back


def _beside(sk: Skills, source: str, target: str) -> np.ndarray:
    """The world shift from over the target's opening to upright beside it, on the robot's side."""
    toward, back = _clearance(sk, source, target)
    return sk.world.rotation_to_base(np.eye(3)).T @ np.array([*(back * toward), 0.0])


def _above(sk: Skills, side: str, upright: dict[str, float], source: str, target: str) -> dict[str, float]:
    """A pose from which the source comes straight onto its upright place above the target, clear
    of everything: ``COME_FROM_ABOVE`` higher, or where the arm does not reach that, as high but
    drawn back towards the robot until the source is clear of the target's near edge. A path
    from the carry pose straight to the upright one may sweep the source's bottom past the
    target's top edge (measured: the planned path went round behind a watering can, brushed its
    far edge and tipped it); the upright pose itself where neither is reachable and clear."""
    joints = {**sk.control.joints(), **upright}
    pos, rot = sk.ik.tcp_pose(side, joints)
    toward, back = _clearance(sk, source, target)
    for shift in (np.array([0.0, 0.0, COME_FROM_ABOVE]), np.array([0.0, 0.0, COME_FROM_ABOVE / 2]),
                  np.array([*(back * toward), 0.0])):
        r = sk.ik.solve(side, pos + shift, rot, joints)
        if r.success and not sk.paths.collision(side, {**joints, **r.joints}, held=source):
            return r.joints
    return upright


def _extent(sk: Skills, target: str, direction: np.ndarray) -> float:
    """How far the target reaches from its centre along a horizontal world ``direction``."""
    w = sk.world
    thing = w.things[target]
    if thing.kind == ThingKind.OBJECT:
        half = object_geometry(thing.props).half
        rot = w.rotation(target)
    else:
        _, rot, half = w.site(thing.inner_site)
        half = np.array([half[0] + 0.05, half[1] + 0.05, 0.0])      # its walls round the opening
    return float(sum(abs(float(rot[:, i] @ direction)) * half[i] for i in range(3)))


def _aim_again(sk: Skills, side: str, source: str, plan: TiltPlan) -> dict[str, float]:
    """The tilted pose for the grip as it is now, above the target: the source may have turned
    or slid in the pads on the way (the plan took the mouth where the hand held it before). The
    same point and turn of the hand; the planned pose where the arm does not reach that or it is
    not clear."""
    w = sk.world
    seed = sk.control.joints()
    tcp = plan.over - plan.rotation @ _mouth_in_hand(sk, side, source)
    r = sk._solve(side, w.to_base_frame(tcp), w.rotation_to_base(plan.rotation), seed)
    if r.success and not sk.paths.collision(side, {**seed, **r.joints}, held=source):
        return r.joints
    return plan.tilted


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about ``axis`` (MuJoCo's own conversions)."""
    quat, mat = np.zeros(4), np.zeros(9)
    mujoco.mju_axisAngle2Quat(quat, np.asarray(axis, float) / np.linalg.norm(axis), angle)
    mujoco.mju_quat2Mat(mat, quat)
    return mat.reshape(3, 3)
