"""The two-handed hold: what is wider than the gripper and not flat (a 15 cm head of salad) is
taken between both hands, as a person takes a ball or a melon.

A 9 cm parallel gripper cannot span it, and there is no edge to pinch. Both closed hands,
turned so that the pads' sides face it (``Hold``: pointing down, the fingers closing along the
heading; leaning forward; or level, the fingers closing up and down), come in on either side of
its widest part and move in together until each presses ``SQUEEZE`` into it (the arms' position
servos then push with a few newtons, a light squeeze), and lift. It is held by friction alone:
the physics judges it as a grasp is judged (it rose with the hands, each hand's pads on it, off
its support). Both arms always move in step: their straight lines are solved together, so that
the hands keep their distance. It is carried in front of the robot, set down on a free spot of a
surface (or let fall into a bowl from just over its rim), and let go by moving the hands apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import atan2, pi
from typing import TYPE_CHECKING, Optional

import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.ik import tilted_rotation, top_down_rotation
from affplan_ros.sim.physics.openings import inner_height
from affplan_ros.sim.physics.robot import ARM_SIDES, HOME_TORSO, PAD_HALF, TORSO_JOINT, arm_joints, home_arm
from affplan_ros.sim.physics.world import BasePose, ThingKind

if TYPE_CHECKING:
    from affplan_ros.sim.physics.skills import SkillResult, Skills

SQUEEZE = 0.008      # m each hand is driven into the object past touching it: a light squeeze
BEHIND = 0.015       # m the TCPs stay behind its centre: the pads' front halves on it, the palms clear
APART = 0.05         # m further out each hand comes in from and goes back to,
NEAR = 0.012         # or just out of touch where a neighbour stands close (a bottle beside a salad)
BACK = 0.10          # m back towards the robot the hands come in from
LIFT = 0.10          # m it is lifted off its support
CARRY_AT = ((0.42, 1.15), (0.48, 1.15), (0.42, 1.05), (0.52, 1.05))   # base-frame (x, z) of its centre carried
DROP_GAP = 0.04      # m between its bottom and a bowl's rim where the hands let it fall
RELEASE_GAP = 0.01   # m between its bottom and the surface where the hands open
ELBOW_RADIUS = 0.05  # m: the elbow's ball (robot.py)
ROOM = 0.05          # m a spot with room leaves between what is set down and its neighbours
STEPS = 5            # IK waypoints along a straight move of both hands, at least,
STEP, STEP_LEAN = 0.03, 0.15   # and at most this far (m) and turned this much (rad) apart
LEVEL = pi / 2
# (how far the hands lean, turned from the line from the base) in turn: from above first (a cucumber lying
# before a salad in the fridge is in the level hands' way), turned to clear a neighbour; then leaning
# forward to reach further (over cups before a cutting board at the back of a table), then level.
WAYS = ((0.0, 0.0), (0.0, 0.5), (0.0, -0.5), (0.6, 0.0), (1.0, 0.0), (LEVEL, 0.0))
PUT_LEANS = (0.35, 0.6, 0.8, 1.0, 1.2, LEVEL)   # rad the hands may lean further to set it down further away
TORSOS = (None, 0.1, 0.35)   # torso heights (m) a grasp is planned at (None: where it is now)


@dataclass(frozen=True)
class Hold:
    """Both hands round a thing: its centre (world), a heading (world yaw), how far (m) each
    hand's TCP is from the centre, to the right and to the left of the heading, and how far
    (rad) the hands lean forward along the heading from pointing down, the fingers closing
    along it (0), to level, pointing along it, the fingers closing up and down (pi/2). Either
    way the pads' sides face the thing."""

    centre: np.ndarray
    heading: float
    reach: float
    lean: float

    def rotation(self) -> np.ndarray:
        return tilted_rotation(top_down_rotation(self.heading), self.heading, self.lean)

    def tcp(self, side: str) -> np.ndarray:
        left = np.array([-np.sin(self.heading), np.cos(self.heading), 0.0])
        sign = -1.0 if side == "r" else 1.0
        return self.centre + sign * self.reach * left - BEHIND * self.rotation()[:, 0]

    def moved(self, by: Optional[np.ndarray] = None, out: float = 0.0) -> "Hold":
        """This hold shifted ``by`` (world) with the hands ``out`` further apart each."""
        return Hold(self.centre + (np.zeros(3) if by is None else by), self.heading, self.reach + out, self.lean)


def both_hands(sk: "Skills", obj: Optional[str] = None) -> Optional[str]:
    """What both hands hold together (``obj`` if given and so held), else None."""
    held = sk.held.get("r")
    return held if held is not None and held == sk.held.get("l") and obj in (None, held) else None


def needs_two_hands(sk: "Skills", obj: str, width: float) -> bool:
    """Wider than the gripper's opening and round (a sphere, a cylinder: the hold's width does
    not depend on how it lies); the caller takes flat things by their edge first."""
    return width > sk.world.spec.max_aperture - 0.01 and sk.world.things[obj].props.shape != "box"


def touching_hands(sk: "Skills", obj: str) -> int:
    """How many hands touch ``obj`` with a pad."""
    w = sk.world
    return sum(bool(w.touching_geoms(obj, sk._pads(side))) for side in ARM_SIDES)


def half_width(sk: "Skills", obj: str) -> float:
    """The radius of a round thing (``needs_two_hands``)."""
    return float(object_geometry(sk.world.things[obj].props).half[0])


def _solve_hold(sk: "Skills", hold: Hold, seed: dict, base: BasePose) -> Optional[dict]:
    """Both arms' joints (the torso as in ``seed``) for the hands round ``hold``."""
    w, out = sk.world, dict(seed)
    rot = w.rotation_to_base(hold.rotation(), base)
    for side in ARM_SIDES:
        r = sk.ik.solve(side, w.to_base_frame(hold.tcp(side), base), rot, out, use_torso=False)
        if not r.success:
            return None
        out.update({j: r.joints[j] for j in arm_joints(side)})
    return out


def _starts(sk: "Skills", seed: dict, fresh: bool) -> list[dict]:
    """``seed``, and where ``fresh`` (the arms go to the first hold by a joint move) the same with
    both arms in a reaching and in the tucked posture: an arm that reached far forward from one
    posture (its elbow bent the wrong way, at its limit) cannot draw the thing in again."""
    from affplan_ros.sim.physics.skills import _READY  # (skills imports this module)
    postures = [{j: q for side in ARM_SIDES for j, q in zip(arm_joints(side), pose(side))}
                for pose in (lambda s: _READY[s], lambda s: home_arm(s, sk.world.spec))]
    return [seed] + [{**seed, **p} for p in postures] * fresh


def elbow_discs(sk: "Skills", room: float) -> list[tuple[float, float, float]]:
    """Both elbows as discs (base frame x, y, radius) while something is held between the hands
    (an elbow may then stand out beside the base: it hit an open fridge door as the base turned);
    none otherwise."""
    if both_hands(sk) is None:
        return []
    joints = sk.control.joints()
    return [(float(e[0]), float(e[1]), ELBOW_RADIUS + room)
            for e in (sk.ik.elbow(side, joints) for side in ARM_SIDES)]


def _line(sk: "Skills", a: Hold, b: Hold, seed: dict, base: BasePose) -> Optional[list[dict]]:
    """Joint waypoints of both arms along the straight line from hold ``a`` to ``b``, at least
    ``STEPS``, at most ``STEP`` m and ``STEP_LEAN`` rad apart (each solved from the last: the
    hands keep their distance all the way)."""
    out = []
    turned = abs(b.lean - a.lean) + abs((b.heading - a.heading + pi) % (2 * pi) - pi)
    n = max(STEPS, int(np.ceil(max(np.linalg.norm(b.centre - a.centre) / STEP, turned / STEP_LEAN))))
    for k in range(1, n + 1):
        s = k / n
        turn = (b.heading - a.heading + pi) % (2 * pi) - pi
        step = Hold(a.centre + (b.centre - a.centre) * s, a.heading + turn * s, a.reach + (b.reach - a.reach) * s,
                    a.lean + (b.lean - a.lean) * s)
        seed = _solve_hold(sk, step, seed, base)
        if seed is None:
            return None
        out.append(seed)
    return out


def _plan(sk: "Skills", holds: list[Hold], torsos: tuple = (None,),
          base: Optional[BasePose] = None, fresh: bool = False) -> Optional[list[list[dict]]]:
    """The first hold alone, then the straight lines between consecutive ``holds``, at one torso
    height (the first of ``torsos`` with all of them; None: where it is now), from ``base``
    (default: where it stands), or None. The first hold is solved from the arms' pose now
    (they hold something and go on from there), or where ``fresh`` from other postures too."""
    base = base or sk.world.base_pose()
    now = _commanded(sk)
    for torso in torsos:
        for seed in _starts(sk, {**now, TORSO_JOINT: now[TORSO_JOINT] if torso is None else torso}, fresh):
            legs = _legs(sk, holds, seed, base)
            if legs is not None:
                return legs
    return None


def _legs(sk: "Skills", holds: list[Hold], seed: dict, base: BasePose) -> Optional[list[list[dict]]]:
    """``_plan`` from one seed."""
    first = _solve_hold(sk, holds[0], seed, base)
    if first is None:
        return None
    legs, last = [[first]], first
    for a, b in zip(holds, holds[1:]):
        leg = _line(sk, a, b, last, base)
        if leg is None:
            return None
        legs.append(leg)
        last = leg[-1]
    return legs


def _commanded(sk: "Skills") -> dict:
    """The torso's and arms' servo targets: where they press on something, the joints stand short
    of them (and may stand past a limit, where IK cannot start)."""
    return {j: sk.world.ctrl(j) for j in sk.control.joints()}


def _arms(joints: dict) -> dict:
    return {j: joints[j] for side in ARM_SIDES for j in arm_joints(side)} | {TORSO_JOINT: joints[TORSO_JOINT]}


def _reach_first(sk: "Skills", joints: dict) -> bool:
    """Each arm in turn (with the torso) to its part of ``joints``, round what is in the way
    (``Skills.move_arm``)."""
    for side in ARM_SIDES:
        goal = {j: joints[j] for j in arm_joints(side)} | {TORSO_JOINT: joints[TORSO_JOINT]}
        if not sk.move_arm(side, goal).ok:
            return False
    return True


def _follow(sk: "Skills", leg: list[dict], speed: float = 0.4) -> bool:
    return sk.control.follow([_arms(j) for j in leg], speed_scale=speed).ok


def _heading(sk: "Skills", point: np.ndarray, base: Optional[BasePose] = None) -> float:
    """The hands point from the base's centre at ``point``."""
    base = base or sk.world.base_pose()
    return atan2(point[1] - base.y, point[0] - base.x)


def _grasp_holds(sk: "Skills", obj: str, lean: float, turn: float = 0.0,
                 base: Optional[BasePose] = None, apart: float = APART) -> list[Hold]:
    """Come in along the hands (from above, pointing down; from behind, level), the hands
    apart; beside it; pressing on it; lifted; drawn in towards the robot (to where it is
    carried; planned with the rest, so that the arms take it in a posture they can draw it in
    from). ``turn``: the heading turned from the line from the base (the hands down may take it
    from any two opposite sides); ``apart``: how far out of touch the hands come in."""
    w = sk.world
    base = base or w.base_pose()
    centre = w.position(obj)
    ahead = _heading(sk, centre, base)
    hold = Hold(centre, ahead + turn, half_width(sk, obj) + PAD_HALF[2] - SQUEEZE, lean)
    come = hold.rotation()[:, 0]
    lifted = hold.moved(np.array([0.0, 0.0, LIFT]))
    near = np.array([base.x + CARRY_AT[0][0] * np.cos(ahead), base.y + CARRY_AT[0][0] * np.sin(ahead), 0.0])
    drawn = Hold(np.array([near[0], near[1], lifted.centre[2]]), lifted.heading, lifted.reach, lifted.lean)
    return [hold.moved(-BACK * come, apart + SQUEEZE), hold.moved(out=apart + SQUEEZE), hold, lifted, drawn]


def _clear_grasp(sk: "Skills", obj: str) -> Optional[tuple[list[Hold], list[list[dict]]]]:
    """The grasp's holds and joint legs from where the base stands, the first (of ``WAYS``)
    where both arms reach and are clear of everything beside it, the hands apart before they
    close in (clear of it too). (The arms get to where they come in from round what is in the
    way: ``Skills.move_arm``.)"""
    for lean, turn in WAYS:
        for apart in (APART, NEAR):
            holds = _grasp_holds(sk, obj, lean, turn, apart=apart)
            legs = _plan(sk, holds, TORSOS, fresh=True)
            if legs is None:
                break
            if not any(sk.paths.collision(side, legs[1][-1]) for side in ARM_SIDES):
                return holds, legs
    return None


def _stand_and_grasp(sk: "Skills", obj: str, along: str) -> Optional[tuple[list[Hold], list[list[dict]]]]:
    """Stand elsewhere at ``along`` (``Skills.grasp_stands``) where both arms reach ``obj``, and
    plan the grasp from there (as a person steps round a table to take a melon with both hands)."""
    for pose in sk.grasp_stands(obj, list(ARM_SIDES), along):
        # (IK of the hold alone, cheap, before driving there; the whole grasp is planned there.)
        if all(_plan(sk, _grasp_holds(sk, obj, lean, turn, pose)[2:3], TORSOS, pose, True) is None
               for lean, turn in WAYS):
            continue
        if sk._navigate(along, None, goal=pose).success and (found := _clear_grasp(sk, obj)) is not None:
            return found
    return None


def grasp(sk: "Skills", obj: str, along: Optional[str] = None) -> "SkillResult":
    """Take ``obj`` between both hands (module doc); ``along``: the place the robot stands at,
    where it may stand elsewhere to reach it."""
    from affplan_ros.core.model.failure import Cause
    w = sk.world
    busy = [f"the {s} hand holds {sk.held[s]}" for s in ARM_SIDES if sk.held[s] is not None]
    if busy:
        return sk._fail(Cause.HAND_FULL, f"{obj} is {2 * half_width(sk, obj) * 100:.0f} cm across, wider "
                        f"than the gripper: it takes both hands, and {' and '.join(busy)}")
    found = _clear_grasp(sk, obj) or (_stand_and_grasp(sk, obj, along) if along else None)
    if found is None:
        centre = w.position(obj)
        local = w.to_base_frame(centre)
        return sk._fail(Cause.UNREACHABLE, f"no pose of both arms, clear of what stands about, holds {obj} "
                        f"between the hands at {np.hypot(local[0], local[1]):.2f} m from the base centre, "
                        f"{centre[2]:.2f} m high")
    legs = found[1]
    for side in ARM_SIDES:
        sk.control.set_gripper(side, 0.0, 0.2)
    if not _reach_first(sk, legs[0][0]) or not _follow(sk, legs[1]):
        sk._tuck()
        return sk._fail(Cause.BLOCKED, f"the hands did not get either side of {obj} (something held an arm)")
    z0 = w.position(obj)[2]
    _follow(sk, legs[2], 0.2)      # (pressing: the servos stop short of their targets by design)
    if touching_hands(sk, obj) < 2:
        _release(sk)
        return sk._fail(Cause.SLIPPED, f"the hands closed in on {obj} without both touching it")
    hand0 = w.site("r_tcp")[0][2]
    _follow(sk, legs[3], 0.3)
    w.step(w.steps(0.3))
    risen, hand = w.position(obj)[2] - z0, w.site("r_tcp")[0][2] - hand0
    if touching_hands(sk, obj) < 2 or hand < 0.5 * LIFT or risen < 0.8 * hand:
        _release(sk)
        return sk._fail(Cause.SLIPPED, f"{obj} did not rise between the hands (rose {risen * 100:.1f} cm "
                        f"as the hands rose {hand * 100:.1f})", risen=risen)
    sk.held.update({side: obj for side in ARM_SIDES})
    _follow(sk, legs[4], 0.4)
    return sk._ok(side="r", sides=ARM_SIDES, two_hands=True, risen=risen)


def _release(sk: "Skills") -> None:
    """Both hands apart by ``APART`` from where they are round it, and up, then tucked (a
    joint move from beside it would sweep it off)."""
    sk.held.update({side: None for side in ARM_SIDES})
    now = _hold_now(sk)
    legs = _plan(sk, [now, now.moved(out=APART), now.moved(np.array([0.0, 0.0, BACK]), APART)])
    if legs is not None:
        _follow(sk, legs[1])
        _follow(sk, legs[2])
    sk._tuck()


def _hold_now(sk: "Skills") -> Hold:
    """The hold the arms are commanded to now (world): the middle between the TCPs, ``BEHIND``
    ahead. (Commanded, not measured: pressing, the hands stand short of their targets, and a
    hold taken from where they stand would let go of the squeeze.)"""
    w = sk.world
    base = w.base_pose()
    ctrl = _commanded(sk)
    (r, rot), (l, _) = (sk.ik.tcp_pose(side, ctrl) for side in ARM_SIDES)
    c, s = np.cos(base.yaw), np.sin(base.yaw)

    def world(p: np.ndarray) -> np.ndarray:
        return np.array([base.x + c * p[0] - s * p[1], base.y + s * p[0] + c * p[1], p[2]])

    # (the hand's z axis is the heading's right, however far it leans)
    hold = Hold((world(r) + world(l)) / 2, base.yaw + atan2(rot[0, 2], -rot[1, 2]),
                float(np.linalg.norm((l - r)[:2])) / 2, atan2(np.hypot(rot[0, 0], rot[1, 0]), -rot[2, 0]))
    return hold.moved(BEHIND * hold.rotation()[:, 0])


def carry_joints(sk: "Skills") -> Optional[dict]:
    """Both arms' joints with what they hold in front of the robot, above furniture (``CARRY_AT``,
    with the torso at ``HOME_TORSO``); the hands are moved there along straight lines first (back
    towards the robot at the height it is held, then up). None where no pose is found (the
    hands then stay where they are)."""
    obj = both_hands(sk)
    if obj is None:
        return None
    w = sk.world
    now = _hold_now(sk)
    base = w.base_pose()
    torso = _commanded(sk)[TORSO_JOINT]
    c, s = np.cos(base.yaw), np.sin(base.yaw)
    # The hands leaning as they hold it, or (far forward, they do not fold back so) turning
    # down or level on the way; turned to face ahead (taken from a base turned towards it).
    ways = [(h, lean) for h in dict.fromkeys((base.yaw, now.heading)) for lean in dict.fromkeys((now.lean, 0.0, LEVEL))]
    for (heading, lean), (x, z) in ((way, at) for way in ways for at in CARRY_AT):
        at = np.array([base.x + c * x, base.y + s * x, z - (HOME_TORSO - torso)])
        back = np.array([at[0], at[1], now.centre[2]])
        holds = [now, Hold(back, heading, now.reach, lean), Hold(at, heading, now.reach, lean)]
        legs = _plan(sk, holds)
        if legs is not None:
            _follow(sk, legs[1] + legs[2], 0.4)
            return {j: legs[2][-1][j] for side in ARM_SIDES for j in arm_joints(side)}
    return None


def _put_spots(sk: "Skills", obj: str, site: str, drop: bool, limit: Optional[int] = 30) -> list[np.ndarray]:
    """Where ``obj``'s lowest point goes: free spots on the surface ``site`` (``RELEASE_GAP`` over
    it), nearest straight ahead first; or (``drop``) the middle of a bowl's opening, ``DROP_GAP``
    over its rim."""
    w = sk.world
    support = site.split("/")[0]
    centre, _, _ = w.site(site)
    if drop:
        return [np.array([centre[0], centre[1], centre[2] + inner_height(w, support) - 0.05 + DROP_GAP])]
    half = object_geometry(w.things[obj].props).half
    spots = sk._free_spots(support, site, obj, half, w.base_pose(), None, limit=None)
    # Those with room round it first (a knife that chops a tomato beside it needs its blade's
    # room), each lot nearest first.
    spots.sort(key=lambda p: _room(sk, obj, support, p) < ROOM)
    return [np.array([p[0], p[1], centre[2] + RELEASE_GAP]) for p in spots[:limit]]


def _room(sk: "Skills", obj: str, support: str, spot: np.ndarray) -> float:
    """The least horizontal gap (m) between ``obj`` set down at ``spot`` and the other objects
    about that height (its footprint and theirs as circles round their largest half width)."""
    w = sk.world
    mine = max(object_geometry(w.things[obj].props).half[:2])
    gaps = [float(np.hypot(*(w.position(n) - spot)[:2])) - mine - max(object_geometry(t.props).half[:2])
            for n, t in w.things.items()
            if t.kind == ThingKind.OBJECT and t.body_id >= 0 and n not in (obj, support)
            and abs(w.position(n)[2] - spot[2]) < 0.3]
    return min(gaps, default=float("inf"))


def _put_plan(sk: "Skills", obj: str, spot: np.ndarray) -> Optional[list[list[dict]]]:
    """Both arms' legs from the hold now to over ``spot``, down to it, apart and up, where the
    hands are clear of what stands about there (lowering and letting go): the hands leaning as
    they hold it, or leaning further forward on the way over it (as ``LEANS``: reaching further
    at the same height, the wrists nearer)."""
    now = _hold_now(sk)
    for lean in dict.fromkeys((now.lean,) + tuple(x for x in PUT_LEANS if x > now.lean)):
        at = Hold(spot + np.array([0.0, 0.0, half_width(sk, obj)]), now.heading, now.reach, lean)
        legs = _plan(sk, [now, at.moved(np.array([0.0, 0.0, LIFT])), at, at.moved(out=APART),
                          at.moved(np.array([0.0, 0.0, BACK]), APART)])
        # (What the hands hold is left out of the check: where it is now is not where it goes,
        # and carried along with one hand it would touch the other.)
        if legs is not None and not any(set(sk.paths.collision(side, leg[-1])) - {obj} for leg in legs[2:4]
                                        for side in ARM_SIDES):
            return legs
    return None


def put(sk: "Skills", obj: str, support: str, surface: str, along: Optional[str] = None,
        drop: bool = False) -> "SkillResult":
    """Set what both hands hold down on a free spot of ``support``'s ``surface`` (``drop``: let
    it fall from just over the rim of a bowl), then let go by moving the hands apart; ``along``:
    the place the base may move along to reach a free spot."""
    from affplan_ros.core.model.failure import Cause
    w = sk.world
    site = f"{support}/{surface}"
    if touching_hands(sk, obj) < 2:
        sk.held.update({side: None for side in ARM_SIDES})
        return sk._fail(Cause.SLIPPED, f"{obj} is no longer between the hands (dropped on the way)")
    legs, tries = sk.reach_a_spot(lambda limit=30: _put_spots(sk, obj, site, drop, limit),
                                  lambda spot: _put_plan(sk, obj, spot), None, along, tries_per_place=12)
    if legs is None:
        return sk._fail(Cause.UNREACHABLE, f"no free spot on {support} where both hands reach to set {obj} "
                        f"down ({tries} other standing place(s) tried)")
    if not _follow(sk, legs[1]) or not _follow(sk, legs[2], 0.2):
        return sk._fail(Cause.BLOCKED, f"carrying {obj} over {support}: something held an arm")
    sk.held.update({side: None for side in ARM_SIDES})
    _follow(sk, legs[3], 0.3)
    _follow(sk, legs[4], 0.4)
    sk._tuck()
    w.step(w.steps(1.0 if drop else 0.5))
    if not drop and not w.resting_on(obj, support):
        return sk._fail(Cause.SLIPPED, f"{obj} does not rest on {support} after the hands let go "
                        f"(touches {', '.join(sorted(x or 'the floor' for x in w.contacts(obj))) or 'nothing'})")
    return sk._ok(side="r", sides=ARM_SIDES, two_hands=True, position=w.position(obj), dropped=drop)
