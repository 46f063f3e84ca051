"""Handing an object to a person and taking one from them, judged by physics (the person model:
``bodies.human_xml``).

The person is outside the robot, so it is modelled, not simulated as a body with arms: a
cooperative person standing still who reaches out with a free hand (one of two mocap hands that
touch nothing) to where the robot presents something within their reach, and closes that hand (its
own weld, ``PhysicsWorld.grip``) only on an object that is really there. What the other hand
already holds is first brought in to the person's side, out of the arm's way. With both hands
full, a hand that holds one small thing takes a second one beside it if both fit one hand
(``HAND_SPAN_TWO`` across together, ``HAND_LOAD`` together: a soda can and a bag of chips, two
cans): the person shifts the first to the side of the palm, away from the robot's fingers, and
brings the hand to the offered one; else nothing more is taken (``HAND_FULL``). The robot does the motion: the
held object is carried by IK to a point between them, the person grips it, the gripper opens, the
hand backs off and the arm tucks. The handover succeeded only if afterwards the object hangs in
the person's hand and the robot's fingers no longer touch it.

Receiving is the reverse: the person holds the object out to a point between them where a
top-down grasp of it is within the robot's reach (carried there by the weld), the robot grasps it
(``Skills.grasp``, judged as any grasp), and the person lets go as they feel it taken: as soon as
both of the robot's finger pads touch it. The robot has it only if it then rose with the hand.
"""
from __future__ import annotations

from math import atan2, cos, hypot, pi, sin
from typing import Optional

import mujoco
import numpy as np

from affplan_ros.core.knowledge.objects import ObjectProperties
from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.bodies import PERSON_HAND_HEIGHT, PERSON_HANDS, grip_name, object_geometry
from affplan_ros.sim.physics.robot import ARM_SIDES
from affplan_ros.sim.physics.skills import LIFT, PRE_GRASP, SkillResult, Skills
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

PERSON_REACH = 0.60   # m from the person's centre they reach out to (an arm's length)
ROBOT_REACH = 1.30    # m from the base centre to the person's centre beyond which nothing is tried
GRIP_DISTANCE = 0.05  # m: the person closes the hand only on an object this close to it
LONG_HALF = 0.15      # m: a thing longer than twice this is brought in before the robot's arm tucks
BACK_OFF = 0.10       # m the open hand withdraws towards the robot before the arm tucks
REST_OUT = 0.35       # m from the person's centre they keep what they hold (clear of their body)
SIDE_OUT = 0.40       # m from the person's centre, sideways, where a hand keeps what it holds aside
SIDE_HEIGHT = 0.85    # m: the height of what is held at the side (the forearm lowered)
REACH_SECONDS = 0.6   # s the person takes to move a held object to where they hold it out
# Where, between the person and the robot, the object is offered: metres from the person's centre
# (clear of their body, a 0.22 m capsule, with the fingers round the object; within their reach),
# then heights around a standing person's hand.
_ALONG = (0.40, 0.48, 0.56, 0.34)
OFFER_TURNS = (0.0, pi, pi / 2, -pi / 2)   # rad the hand may turn about the vertical to offer what it holds
_HEIGHTS = (0.0, 0.1, -0.1)
# Two things in one hand, side by side, the fingers round both: their narrowest widths together at
# most 14 cm (an adult's hand is about 19 cm long and spans about 20 cm spread, anthropometric
# means; two 6.6 cm soda cans, as people carry them, take 13 cm), and together at most 1 kg (a
# can and a 0.5 l bottle of water: 0.87 kg).
HAND_SPAN_TWO = 0.14
HAND_LOAD = 1.0
BESIDE_GAP = 0.01     # m between two things in one hand (the fingers between them)


def handover(skills: Skills, obj: str, person: str) -> SkillResult:
    """Hand the held ``obj`` to ``person`` (who must be within reach of where the robot stands)."""
    return skills._run("handover", _handover, skills, obj, person)


def _handover(sk: Skills, obj: str, person: str) -> SkillResult:
    w = sk.world
    person_xy = _person_xy(w, person)
    if person_xy is None:
        return sk._fail(Cause.UNKNOWN, f"{person!r} is not a person in the physics world")
    side = sk.holding(obj)
    if side is None:
        return sk._fail(Cause.NOT_HELD, f"the robot does not hold {obj}")
    if len(w.touching_geoms(obj, sk._pads(side))) < 2:
        sk.held[side] = None
        return sk._fail(Cause.SLIPPED, f"{obj} is no longer between the fingers (dropped on the way; it "
                        f"touches {', '.join(sorted(x or 'the floor' for x in w.contacts(obj))) or 'nothing'})")
    hand, beside = w.free_hand(person), None
    if hand is None:
        sharing = _sharing_hand(w, person, obj)
        if sharing is None:
            held = sorted(o for objs in w.held_by_hand(person).values() for o in objs)
            return sk._fail(Cause.HAND_FULL, f"{person}'s hands are full (they hold {' and '.join(held)}; "
                            f"{obj} fits in neither beside what it holds: two things in one hand are at most "
                            f"{HAND_SPAN_TWO * 100:.0f} cm across and {HAND_LOAD:g} kg together)")
        hand, beside = sharing
    gap = _gap(w, person_xy)
    if gap > ROBOT_REACH:
        return _too_far(sk, person, gap)
    # What the person already holds is brought in to their side, out of the way of the arm.
    _put_aside(w, person, person_xy)
    tcp, rot, _ = w.site(f"{side}_tcp")
    offset = w.position(obj) - tcp          # where the object hangs from the hand, kept as it is
    plan = _offer_pose(sk, side, person_xy, offset, rot)
    if plan is None:
        return sk._fail(Cause.UNREACHABLE, f"no arm pose holds {obj} out within {person}'s reach "
                        f"({gap:.2f} m apart; IK finds no solution)", distance=gap)
    meet, joints = plan
    out = sk.move_arm(side, joints, speed_scale=0.5)
    if not out.ok:
        return sk._blocked(out, f"holding {obj} out to {person}")
    # The person reaches with the free hand to where they see the object offered, and grips only
    # if it is there.
    if beside is None:
        w.reach_out(person, meet, hand)
    else:
        stuck = _bring_beside(sk, side, person, hand, beside, obj, meet)
        if stuck is not None:
            return sk._fail(Cause.BLOCKED, f"{person} could not bring {beside} beside {obj}: it stopped "
                            f"{stuck * 100:.0f} cm short (something in the way)", distance=stuck)
    miss = float(np.linalg.norm(w.position(obj) - meet))
    if miss > GRIP_DISTANCE:
        return sk._fail(Cause.UNREACHABLE, f"{obj} stopped {miss * 100:.0f} cm from {person}'s hand",
                        distance=miss)
    w.grip(person, obj, hand, beside=beside is not None)
    sk.control.set_gripper(side, w.spec.max_aperture, 0.4)
    sk.held[side] = None
    _back_off(sk, side, meet - np.array([*person_xy, meet[2]]))
    pads = sk._pads(side)
    if max(object_geometry(w.things[obj].props).half) > LONG_HALF:
        # A long thing (a 40 cm watering can) still reaches the hand's tucked place: the person
        # brings it in to their side before the arm tucks, as one takes a long thing to oneself.
        _put_aside(w, person, person_xy)
    sk._tuck()
    w.step(w.steps(0.3))
    still = float(np.linalg.norm(w.position(obj) - w.person_hand(person, hand) - _held_offset(w, person, obj)))
    if w.touching_geoms(obj, pads) or still > GRIP_DISTANCE:
        w.release(obj)
        return sk._fail(Cause.SLIPPED, f"{person} did not keep hold of {obj} (it is {still * 100:.0f} cm "
                        "from where the hand took it)")
    return sk._ok(side=side, meet=meet, person_hand=hand)


def _width(props: ObjectProperties) -> float:
    """The narrowest horizontal width of a thing standing as the table gives it (a ball's, a
    cylinder's diameter)."""
    return props.size[0] if props.shape in ("sphere", "cylinder") else min(props.size[0], props.size[1])


def _sharing_hand(w: PhysicsWorld, person: str, obj: str) -> Optional[tuple[str, str]]:
    """(hand, what it holds) of the hand that can take ``obj`` beside the one thing it holds, the
    narrowest pair first; None where no hand can (``HAND_SPAN_TWO``, ``HAND_LOAD``)."""
    new = w.things[obj].props
    options = []
    for hand, objs in sorted(w.held_by_hand(person).items()):
        if len(objs) != 1:
            continue
        held = w.things[objs[0]].props
        width = _width(held) + _width(new)
        if width <= HAND_SPAN_TWO + 1e-9 and held.mass + new.mass <= HAND_LOAD + 1e-9:
            options.append((width, hand, objs[0]))
    return (min(options)[1], min(options)[2]) if options else None


def _extent(w: PhysicsWorld, name: str, direction: np.ndarray) -> float:
    """Half the extent of ``name``'s body along the horizontal unit ``direction``, as it lies now."""
    props = w.things[name].props
    half = np.array(object_geometry(props).half)
    rot = w.rotation(name)
    if props.shape == "sphere" or (props.shape == "cylinder" and abs(rot[2, 2]) > 0.9):
        return float(half[0])
    return float(np.abs(rot.T @ direction) @ half)


def _bring_beside(sk: Skills, side: str, person: str, hand: str, held: str, obj: str,
                  meet: np.ndarray) -> Optional[float]:
    """The person takes a second thing into the ``hand`` that holds ``held``: they shift ``held`` to
    the side of the palm (the hand moves, ``held`` stays: the weld's offset changes, nothing is
    pushed), then carry it round to lie beside the offered ``obj`` at ``meet``, across from the
    robot's fingers (along their pads, not where a finger closes or opens) on the side it comes
    from, the hand ending at ``meet``. None, or how far ``held`` stopped short (in the way)."""
    w = sk.world
    pads = sk._pads(side)
    closing = w.data.geom_xpos[pads[0]] - w.data.geom_xpos[pads[1]]
    closing[2] = 0.0
    closing /= max(float(np.linalg.norm(closing)), 1e-6)
    along = np.array([-closing[1], closing[0], 0.0])
    here = w.position(held)
    if along @ (here - meet) < 0:
        along = -along
    offset = (_extent(w, held, along) + _extent(w, obj, along) + BESIDE_GAP) * along
    eq = w.model.equality(grip_name(person, hand, held)).id
    rot = w.data.body(f"{person}/hand_{hand}").xmat.reshape(3, 3)
    w.reach_out(person, here - offset, hand)
    w.model.eq_data[eq, 3:6] = rot.T @ offset
    target = meet + offset
    _carry_held(w, person, held, target)
    stuck = float(np.linalg.norm(w.position(held) - target))
    return stuck if stuck > GRIP_DISTANCE else None


def _offer_pose(sk: Skills, side: str, person_xy: np.ndarray, offset: np.ndarray,
                rot: np.ndarray) -> Optional[tuple[np.ndarray, dict[str, float]]]:
    """The first meeting point (the object's centre) within the person's reach that the arm
    reaches from where the base stands, with the hand's present orientation, and the joints that
    put it there."""
    w = sk.world
    base = w.base_pose()
    seed = sk.control.joints()
    for meet in _meeting_points(person_xy, np.array([base.x, base.y])):
        # The hand as it is, then turned about the vertical (what it holds turns with it: a
        # plate held by its rim may be offered with its middle on the far side of the hand).
        for turn in OFFER_TURNS:
            c, s_ = cos(turn), sin(turn)
            rz = np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]])
            r = sk._solve(side, w.to_base_frame(meet - rz @ offset, base), w.rotation_to_base(rz @ rot, base), seed)
            if r.success:
                return meet, r.joints
    return None


def _meeting_points(person_xy: np.ndarray, base_xy: np.ndarray) -> list[np.ndarray]:
    """Where an object may change hands (its centre): on the line from the person towards the
    robot, within the person's reach, around a standing person's hand height; best first."""
    towards = base_xy - person_xy
    length = float(np.linalg.norm(towards))
    towards = towards / length if length > 1e-6 else np.array([1.0, 0.0])
    return [np.array([*(person_xy + along * towards), PERSON_HAND_HEIGHT + dz])
            for along in _ALONG if along <= min(PERSON_REACH, length) for dz in _HEIGHTS]


def _person_xy(w: PhysicsWorld, person: str) -> Optional[np.ndarray]:
    """Where ``person`` stands, or None if there is no such person."""
    who = w.things.get(person)
    if who is None or who.kind != ThingKind.AGENT or who.placement is None or person == w.robot_name:
        return None
    return np.array([who.placement.x, who.placement.y])


def _gap(w: PhysicsWorld, person_xy: np.ndarray) -> float:
    """Metres from the robot's base centre to the person's centre."""
    base = w.base_pose()
    return float(hypot(*(person_xy - (base.x, base.y))))


def _too_far(sk: Skills, person: str, gap: float) -> SkillResult:
    return sk._fail(Cause.UNREACHABLE, f"the robot stands {gap:.2f} m from {person}; an object changes hands "
                    f"at most {ROBOT_REACH:.2f} m apart", distance=gap)


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


def _held_offset(w: PhysicsWorld, person: str, obj: str) -> np.ndarray:
    """Where the weld keeps ``obj`` relative to the person's hand, in the world frame."""
    hand = w.grip_hands[obj]
    eq = w.model.equality(grip_name(person, hand, obj)).id
    rot = w.data.body(f"{person}/hand_{hand}").xmat.reshape(3, 3)
    return rot @ w.model.eq_data[eq, 3:6]


def receive_object(skills: Skills, obj: str, person: str) -> SkillResult:
    """Take ``obj`` from the hand of ``person`` (who must be within reach of where the robot stands)."""
    return skills._run("receive_object", _receive, skills, obj, person)


def _receive(sk: Skills, obj: str, person: str) -> SkillResult:
    w = sk.world
    person_xy = _person_xy(w, person)
    if person_xy is None:
        return sk._fail(Cause.UNKNOWN, f"{person!r} is not a person in the physics world")
    if w.grips.get(obj) != person:
        return sk._fail(Cause.NOT_HELD, f"{person} does not hold {obj}")
    free = [s for s in ARM_SIDES if sk.held[s] is None]
    if not free:
        return sk._fail(Cause.HAND_FULL, "both hands are full")
    gap = _gap(w, person_xy)
    if gap > ROBOT_REACH:
        return _too_far(sk, person, gap)
    _put_aside(w, person, person_xy, keep=obj)
    meet = _taking_point(sk, obj, person_xy, free)
    if meet is None:
        return sk._fail(Cause.UNREACHABLE, f"{person} holds {obj} nowhere within their reach where an arm "
                        f"reaches a top-down grasp of it ({gap:.2f} m apart; IK finds no solution)", distance=gap)
    _carry_held(w, person, obj, meet)
    miss = float(np.linalg.norm(w.position(obj) - meet))
    if miss > GRIP_DISTANCE:
        _carry_held(w, person, obj, rest_point(person_xy))
        return sk._fail(Cause.BLOCKED, f"{person} could not hold {obj} out: it stopped {miss * 100:.0f} cm "
                        "short (something in the way)", distance=miss)
    pads = [sk._pads(s) for s in free]
    hand = w.grip_hands[obj]            # the hand that holds it out (the other may hold something)

    def let_go_when_taken() -> None:
        # The person feels the robot take it: both pads of one hand on the object.
        if obj in w.grips and any(len(w.touching_geoms(obj, p)) == 2 for p in pads):
            w.release(obj)

    w.watchers.append(let_go_when_taken)
    try:
        result = sk._grasp(obj, None, None)
    finally:
        w.watchers.remove(let_go_when_taken)
    if obj in w.grips:
        # Not taken (the fingers never closed on it): the person keeps it and draws the hand back.
        _carry_held(w, person, obj, rest_point(person_xy))
        return result
    w.reach_out(person, rest_point(person_xy), hand)
    if not result.success:
        return result       # let go, and the robot's hand did not keep it: it fell
    return sk._ok(**result.details, meet=meet)


def _taking_point(sk: Skills, obj: str, person_xy: np.ndarray, free: list[str]) -> Optional[np.ndarray]:
    """The first meeting point at which a free arm reaches a top-down grasp of ``obj`` (its
    grasp as the person holds it now, moved there)."""
    w = sk.world
    base = w.base_pose()
    _, finger_yaw, target = sk.top_down_grasp(obj)
    grasp_offset = target - w.position(obj)
    for meet in _meeting_points(person_xy, np.array([base.x, base.y])):
        at = meet + grasp_offset
        yaws = sk._grasp_yaws(base, at, finger_yaw)
        if any(sk._plan_vertical(s, at, yaws, PRE_GRASP, LIFT) is not None for s in free):
            return meet
    return None


def rest_point(person_xy: np.ndarray) -> np.ndarray:
    """Where a person keeps what they hold: in front of them, towards the room's middle."""
    norm = float(np.linalg.norm(person_xy))
    out = -person_xy / norm if norm > 1e-6 else np.array([1.0, 0.0])
    return np.array([*(person_xy + REST_OUT * out), PERSON_HAND_HEIGHT])


def _carry_held(w: PhysicsWorld, person: str, obj: str, point: np.ndarray) -> None:
    """The person moves the hand holding ``obj`` until the object's centre is at ``point``, over
    ``REACH_SECONDS``: round their body (polar about their centre: a straight line could pass
    through it), in small steps, so that the weld carries the object along without a jolt."""
    offset = _held_offset(w, person, obj)       # the object's centre from the hand, kept by the weld
    hand = w.grip_hands[obj]
    centre = np.array([*_person_xy(w, person), 0.0])
    start = w.position(obj) - centre
    goal = np.asarray(point, float) - centre
    a0, a1 = atan2(start[1], start[0]), atan2(goal[1], goal[0])
    turn = (a1 - a0 + pi) % (2 * pi) - pi
    r0, r1 = hypot(start[0], start[1]), hypot(goal[0], goal[1])
    n = 20
    for k in range(1, n + 1):
        f = k / n
        a, r = a0 + f * turn, r0 + f * (r1 - r0)
        w.reach_out(person, centre + np.array([r * cos(a), r * sin(a), start[2] + f * (goal[2] - start[2])]) - offset,
                     hand)
        w.step(w.steps(REACH_SECONDS / n))
    w.step(w.steps(0.2))


def start_in_person_hand(w: PhysicsWorld, obj: str, person: str) -> Optional[str]:
    """Set the world up with ``obj`` held by ``person`` (a scenario that starts so): the object is
    put at their hand, kept in front of them, and gripped. None, or why it could not be."""
    person_xy = _person_xy(w, person)
    thing = w.things.get(obj)
    if person_xy is None or thing is None or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
        return f"{obj!r} cannot start in {person!r}'s hand"
    hand = w.free_hand(person)
    if hand is None:
        return f"{obj!r} cannot start in {person!r}'s hand: both their hands are full"
    _put_aside(w, person, person_xy)
    rest = rest_point(person_xy)
    w.reach_out(person, rest, hand)
    joint = w.model.body_jntadr[thing.body_id]
    adr, dof = w.model.jnt_qposadr[joint], w.model.jnt_dofadr[joint]
    w.data.qpos[adr:adr + 3] = rest        # where it is, upright as it stood
    w.data.qvel[dof:dof + 6] = 0.0
    mujoco.mj_forward(w.model, w.data)
    w.grip(person, obj, hand)
    w.step(w.steps(0.2))
    return None


def side_point(w: PhysicsWorld, person_xy: np.ndarray, hand: str) -> np.ndarray:
    """Where a person keeps what one hand holds while the other takes or gives something: brought
    in at that hand's side (facing the robot), clear of their body and of the arm between them."""
    base = w.base_pose()
    facing = np.array([base.x, base.y]) - person_xy
    norm = float(np.linalg.norm(facing))
    facing = facing / norm if norm > 1e-6 else np.array([1.0, 0.0])
    right = np.array([facing[1], -facing[0]])
    lateral = right if hand == PERSON_HANDS[0] else -right
    return np.array([*(person_xy + SIDE_OUT * lateral), SIDE_HEIGHT])


def _put_aside(w: PhysicsWorld, person: str, person_xy: np.ndarray, keep: Optional[str] = None) -> None:
    """The person brings what they hold (but ``keep``) in to the side of the hand that holds it."""
    for hand, held in w.held_in(person).items():
        point = side_point(w, person_xy, hand)
        if held != keep and float(np.linalg.norm(w.position(held) - point)) > GRIP_DISTANCE:
            _carry_held(w, person, held, point)
