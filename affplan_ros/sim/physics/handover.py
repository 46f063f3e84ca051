"""Handing an object to a person, judged by physics (the person model: ``bodies.human_xml``).

The person is outside the robot, so it is modelled, not simulated as a body with arms: a
cooperative person standing still who reaches out (a mocap hand that touches nothing) to where the
robot presents something within their reach, and closes the hand (a weld,
``PhysicsWorld.grip``) only on an object that is really there. The robot does the motion: the
held object is carried by IK to a point between them, the person grips it, the gripper opens, the
hand backs off and the arm tucks. The handover succeeded only if afterwards the object hangs in
the person's hand and the robot's fingers no longer touch it.
"""
from __future__ import annotations

from math import hypot
from typing import Optional

import numpy as np

from affplan_ros.sim.physics.bodies import PERSON_HAND_HEIGHT
from affplan_ros.sim.physics.skills import FailureCode, SkillResult, Skills
from affplan_ros.sim.physics.world import ThingKind

PERSON_REACH = 0.60   # m from the person's centre they reach out to (an arm's length)
ROBOT_REACH = 1.30    # m from the base centre to the person's centre beyond which nothing is tried
GRIP_DISTANCE = 0.05  # m: the person closes the hand only on an object this close to it
BACK_OFF = 0.10       # m the open hand withdraws towards the robot before the arm tucks
# Where, between the person and the robot, the object is offered: metres from the person's centre
# (clear of their body, a 0.22 m capsule, with the fingers round the object; within their reach),
# then heights around a standing person's hand.
_ALONG = (0.40, 0.48, 0.56, 0.34)
_HEIGHTS = (0.0, 0.1, -0.1)


def handover(skills: Skills, obj: str, person: str) -> SkillResult:
    """Hand the held ``obj`` to ``person`` (who must be within reach of where the robot stands)."""
    return skills._run("handover", _handover, skills, obj, person)


def _handover(sk: Skills, obj: str, person: str) -> SkillResult:
    w = sk.world
    who = w.things.get(person)
    if who is None or who.kind != ThingKind.AGENT or who.placement is None or person == w.robot_name:
        return sk._fail(FailureCode.UNKNOWN, f"{person!r} is not a person in the physics world")
    side = sk.holding(obj)
    if side is None:
        return sk._fail(FailureCode.NOT_HELD, f"the robot does not hold {obj}")
    base = w.base_pose()
    person_xy = np.array([who.placement.x, who.placement.y])
    gap = float(hypot(*(person_xy - (base.x, base.y))))
    if gap > ROBOT_REACH:
        return sk._fail(FailureCode.UNREACHABLE, f"the robot stands {gap:.2f} m from {person}; a handover needs "
                        f"at most {ROBOT_REACH:.2f} m", distance=gap)
    tcp, rot, _ = w.site(f"{side}_tcp")
    offset = w.position(obj) - tcp          # where the object hangs from the hand, kept as it is
    plan = _offer_pose(sk, side, person_xy, np.array([base.x, base.y]), offset, rot)
    if plan is None:
        return sk._fail(FailureCode.UNREACHABLE, f"no arm pose holds {obj} out within {person}'s reach "
                        f"({gap:.2f} m apart; IK finds no solution)", distance=gap)
    meet, joints = plan
    out = sk.control.follow([joints], speed_scale=0.5)
    if not out.ok:
        return sk._blocked(out, f"holding {obj} out to {person}")
    # The person reaches to where they see the object offered, and grips only if it is there.
    w.reach_out(person, meet)
    miss = float(np.linalg.norm(w.position(obj) - meet))
    if miss > GRIP_DISTANCE:
        return sk._fail(FailureCode.UNREACHABLE, f"{obj} stopped {miss * 100:.0f} cm from {person}'s hand",
                        distance=miss)
    w.grip(person, obj)
    sk.control.set_gripper(side, w.spec.max_aperture, 0.4)
    sk.held[side] = None
    _back_off(sk, side, meet - np.array([*person_xy, meet[2]]))
    sk._tuck()
    w.step(w.steps(0.3))
    pads = sk._pads(side)
    still = float(np.linalg.norm(w.position(obj) - w.person_hand(person) - _held_offset(w, person, obj)))
    if w.touching_geoms(obj, pads) or still > GRIP_DISTANCE:
        w.release(obj)
        return sk._fail(FailureCode.SLIPPED, f"{person} did not keep hold of {obj} (it is {still * 100:.0f} cm "
                        "from where the hand took it)")
    return sk._ok(side=side, meet=meet)


def _offer_pose(sk: Skills, side: str, person_xy: np.ndarray, base_xy: np.ndarray, offset: np.ndarray,
                rot: np.ndarray) -> Optional[tuple[np.ndarray, dict[str, float]]]:
    """The first meeting point (the object's centre) within the person's reach that the arm
    reaches with the hand's present orientation, and the joints that put it there."""
    w = sk.world
    base = w.base_pose()
    towards = base_xy - person_xy
    length = float(np.linalg.norm(towards))
    towards = towards / length if length > 1e-6 else np.array([1.0, 0.0])
    seed = sk.control.joints()
    for along in _ALONG:
        if along > min(PERSON_REACH, length):
            continue
        for dz in _HEIGHTS:
            meet = np.array([*(person_xy + along * towards), PERSON_HAND_HEIGHT + dz])
            r = sk._solve(side, w.to_base_frame(meet - offset, base), w.rotation_to_base(rot, base), seed)
            if r.success:
                return meet, r.joints
    return None


def _back_off(sk: Skills, side: str, away: np.ndarray) -> None:
    """Withdraw the open hand straight towards the robot, so the fingers slide off the object."""
    w = sk.world
    base = w.base_pose()
    tcp, rot, _ = w.site(f"{side}_tcp")
    away = np.array([away[0], away[1], 0.0])
    away /= max(float(np.linalg.norm(away)), 1e-6)
    r = sk._solve(side, w.to_base_frame(tcp + BACK_OFF * away, base), w.rotation_to_base(rot, base),
                  sk.control.joints())
    if r.success:
        sk.control.follow([r.joints], speed_scale=0.5)


def _held_offset(w, person: str, obj: str) -> np.ndarray:
    """Where the weld keeps ``obj`` relative to the person's hand, in the world frame."""
    eq = w.model.equality(f"{person}/grip/{obj}").id
    rot = w.data.body(f"{person}/hand").xmat.reshape(3, 3)
    return rot @ w.model.eq_data[eq, 3:6]
