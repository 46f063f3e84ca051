"""The two-handed hold: what is wider than the gripper and not flat (a 15 cm head of salad) is
taken between both hands, as a person takes a ball or a melon.

A 9 cm parallel gripper cannot span it, and there is no edge to pinch. Both arms reach it level
from the robot's side, the closed fingers' outer faces (the pads' sides: the hands are turned so
that the fingers close up and down, ``horizontal_rotation(..., fingers_vertical=True)``) beside
its widest part, one hand on either side; the hands move in together until each presses
``SQUEEZE`` into it (the arms' position servos then push with a few newtons, a light squeeze) and
lift. It is held by friction alone: the physics judges it as a grasp is judged (it rose with the
hands, each hand's pads on it, off its support). It is carried in front of the robot, both hands
moving together (their straight lines solved in step, so that they keep their distance), set
down on a free spot of a surface (or let fall into a bowl from just over its rim), and let go by
moving the hands apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import atan2
from typing import TYPE_CHECKING, Optional

import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.ik import horizontal_rotation
from affplan_ros.sim.physics.robot import ARM_SIDES, HOME_TORSO, PAD_HALF, TORSO_JOINT, arm_joints
from affplan_ros.sim.physics.world import BasePose

if TYPE_CHECKING:
    from affplan_ros.sim.physics.skills import SkillResult, Skills

SQUEEZE = 0.008      # m each hand is driven into the object past touching it: a light squeeze
BEHIND = 0.015       # m the TCPs stay behind its centre: the pads' front halves on it, the palms clear
APART = 0.05         # m further out each hand comes in from and goes back to
BACK = 0.10          # m back towards the robot the hands come in from
LIFT = 0.10          # m it is lifted off its support
CARRY_AT = ((0.42, 1.15), (0.48, 1.15), (0.42, 1.05), (0.52, 1.05))   # base-frame (x, z) of its centre carried
DROP_GAP = 0.04      # m between its bottom and a bowl's rim where the hands let it fall
RELEASE_GAP = 0.01   # m between its bottom and the surface where the hands open
ELBOW_RADIUS = 0.05  # m: the elbow's ball (robot.py)
STEPS = 5            # IK waypoints along a straight move of both hands
TORSOS = (None, 0.30, 0.20, 0.10, 0.0, 0.35)   # torso heights tried (None: where it is now)


@dataclass(frozen=True)
class Hold:
    """Both hands round a thing: its centre (world), the heading the hands point along and how
    far (m) each hand's TCP is from its centre line across that heading."""

    centre: np.ndarray
    heading: float
    reach: float

    def tcp(self, side: str) -> np.ndarray:
        fwd = np.array([np.cos(self.heading), np.sin(self.heading), 0.0])
        left = np.array([-fwd[1], fwd[0], 0.0])
        sign = -1.0 if side == "r" else 1.0
        return self.centre + sign * self.reach * left - BEHIND * fwd

    def moved(self, by: Optional[np.ndarray] = None, out: float = 0.0) -> "Hold":
        """This hold shifted ``by`` (world) with the hands ``out`` further apart each."""
        return Hold(self.centre + (np.zeros(3) if by is None else by), self.heading, self.reach + out)


def both_hands(sk: "Skills", obj: Optional[str] = None) -> Optional[str]:
    """What both hands hold together (``obj`` if given and so held), else None."""
    held = sk.held.get("r")
    return held if held is not None and held == sk.held.get("l") and obj in (None, held) else None


def needs_two_hands(sk: "Skills", obj: str, width: float) -> bool:
    """Wider than the gripper's opening (the caller takes flat things by their edge)."""
    return width > sk.world.spec.max_aperture - 0.01 and sk.world.things[obj].props.shape != "box"


def touching_hands(sk: "Skills", obj: str) -> int:
    """How many hands touch ``obj`` with a pad."""
    w = sk.world
    return sum(bool(w.touching_geoms(obj, sk._pads(side))) for side in ARM_SIDES)


def half_width(sk: "Skills", obj: str) -> float:
    return float(object_geometry(sk.world.things[obj].props).half[0])


def _solve_hold(sk: "Skills", hold: Hold, seed: dict, base: BasePose) -> Optional[dict]:
    """Both arms' joints (the torso as in ``seed``) for the hands level round ``hold``."""
    w, out = sk.world, dict(seed)
    rot = w.rotation_to_base(horizontal_rotation(hold.heading, fingers_vertical=True), base)
    for side in ARM_SIDES:
        r = sk.ik.solve(side, w.to_base_frame(hold.tcp(side), base), rot, out, use_torso=False)
        if not r.success:
            return None
        out.update({j: r.joints[j] for j in arm_joints(side)})
    return out


def elbow_discs(sk: "Skills", room: float) -> list[tuple[float, float, float]]:
    """Both elbows as discs (base frame x, y, radius): holding something between the hands, an
    elbow may stand out beside the base (it hit an open fridge door as the base turned)."""
    joints = sk.control.joints()
    return [(float(e[0]), float(e[1]), ELBOW_RADIUS + room)
            for e in (sk.ik.elbow(side, joints) for side in ARM_SIDES)]


def _line(sk: "Skills", a: Hold, b: Hold, seed: dict, base: BasePose, n: int = STEPS) -> Optional[list[dict]]:
    """Joint waypoints of both arms along the straight line from hold ``a`` to ``b`` (each solved
    from the last: the hands keep their distance all the way)."""
    out = []
    for k in range(1, n + 1):
        s = k / n
        step = Hold(a.centre + (b.centre - a.centre) * s, a.heading, a.reach + (b.reach - a.reach) * s)
        seed = _solve_hold(sk, step, seed, base)
        if seed is None:
            return None
        out.append(seed)
    return out


def _plan(sk: "Skills", holds: list[Hold], torsos: tuple = TORSOS) -> Optional[list[list[dict]]]:
    """The first hold alone, then the straight lines between consecutive ``holds``, at one torso
    height (the first of ``torsos`` with all of them; None: where it is now), or None."""
    base = sk.world.base_pose()
    now = _commanded(sk)
    for torso in torsos:
        seed = {**now, TORSO_JOINT: now[TORSO_JOINT] if torso is None else torso}
        first = _solve_hold(sk, holds[0], seed, base)
        if first is None:
            continue
        legs, last = [[first]], first
        for a, b in zip(holds, holds[1:]):
            leg = _line(sk, a, b, last, base)
            if leg is None:
                break
            legs.append(leg)
            last = leg[-1]
        if len(legs) == len(holds):
            return legs
    return None


def _commanded(sk: "Skills") -> dict:
    """The torso's and arms' servo targets: where they press on something, the joints stand short
    of them (and may stand past a limit, where IK cannot start)."""
    return {j: sk.world.ctrl(j) for j in sk.control.joints()}


def _arms(joints: dict) -> dict:
    return {j: joints[j] for side in ARM_SIDES for j in arm_joints(side)} | {TORSO_JOINT: joints[TORSO_JOINT]}


def _reach_first(sk: "Skills", joints: dict, obj: Optional[str]) -> bool:
    """Each arm to its part of ``joints`` round what is in the way (``move_arm``), then the torso."""
    for side in ARM_SIDES:
        goal = {j: joints[j] for j in arm_joints(side)} | {TORSO_JOINT: joints[TORSO_JOINT]}
        if not sk.move_arm(side, goal).ok:
            return False
    return True


def _follow(sk: "Skills", leg: list[dict], speed: float = 0.4) -> bool:
    return sk.control.follow([_arms(j) for j in leg], speed_scale=speed).ok


def _heading(sk: "Skills", point: np.ndarray) -> float:
    base = sk.world.base_pose()
    return atan2(point[1] - base.y, point[0] - base.x)


def grasp(sk: "Skills", obj: str, source: Optional[str]) -> "SkillResult":
    """Take ``obj`` between both hands (module doc)."""
    from affplan_ros.sim.physics.skills import FailureCode
    w = sk.world
    busy = [f"the {s} hand holds {sk.held[s]}" for s in ARM_SIDES if sk.held[s] is not None]
    radius = half_width(sk, obj)
    if busy:
        return sk._fail(FailureCode.HAND_FULL, f"{obj} is {2 * radius * 100:.0f} cm across, wider than the "
                        f"gripper: it takes both hands, and {' and '.join(busy)}")
    centre = w.position(obj)
    hold = Hold(centre, _heading(sk, centre), radius + PAD_HALF[2] - SQUEEZE)
    fwd = np.array([np.cos(hold.heading), np.sin(hold.heading), 0.0])
    pre = hold.moved(-BACK * fwd, APART + SQUEEZE)
    beside = hold.moved(out=APART + SQUEEZE)
    lifted = hold.moved(np.array([0.0, 0.0, LIFT]))
    legs = _plan(sk, [pre, beside, hold, lifted])
    if legs is None:
        local = w.to_base_frame(centre)
        return sk._fail(FailureCode.UNREACHABLE, f"no pose of both arms holds {obj} between the hands at "
                        f"{np.hypot(local[0], local[1]):.2f} m from the base centre, {centre[2]:.2f} m high")
    for side in ARM_SIDES:
        sk.control.set_gripper(side, 0.0, 0.2)
    if not _reach_first(sk, legs[0][0], obj) or not _follow(sk, legs[1]):
        sk._tuck()
        return sk._fail(FailureCode.BLOCKED, f"the hands did not get either side of {obj} (something held an arm)")
    z0 = w.position(obj)[2]
    _follow(sk, legs[2], 0.2)      # (pressing: the servos stop short of their targets by design)
    if touching_hands(sk, obj) < 2:
        _release(sk, beside)
        return sk._fail(FailureCode.SLIPPED, f"the hands closed in on {obj} without both touching it")
    hand0 = w.site("r_tcp")[0][2]
    _follow(sk, legs[3], 0.3)
    w.step(w.steps(0.3))
    risen, hand = w.position(obj)[2] - z0, w.site("r_tcp")[0][2] - hand0
    if touching_hands(sk, obj) < 2 or hand < 0.5 * LIFT or risen < 0.8 * hand:
        _release(sk, None)
        return sk._fail(FailureCode.SLIPPED, f"{obj} did not rise between the hands (rose {risen * 100:.1f} cm "
                        f"as the hands rose {hand * 100:.1f})", risen=risen)
    sk.held.update({side: obj for side in ARM_SIDES})
    return sk._ok(side="r", sides=ARM_SIDES, two_hands=True, risen=risen)


def _release(sk: "Skills", back: Optional[Hold]) -> None:
    """Both hands apart by ``APART`` (from where they are), then tucked."""
    held = both_hands(sk)
    sk.held.update({side: None for side in ARM_SIDES})
    now = _hold_now(sk) if held else None
    if now is not None:
        legs = _plan(sk, [now, now.moved(out=APART), now.moved(np.array([0.0, 0.0, BACK]), APART)], (None,))
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

    heading = base.yaw + atan2(rot[1, 0], rot[0, 0])
    fwd = np.array([np.cos(heading), np.sin(heading), 0.0])
    return Hold((world(r) + world(l)) / 2 + BEHIND * fwd, heading, float(np.linalg.norm((l - r)[:2])) / 2)


def carry_joints(sk: "Skills") -> Optional[dict]:
    """Both arms' joints with what they hold in front of the robot, above furniture (``CARRY_AT``,
    with the torso at ``HOME_TORSO``); the hands are moved there along straight lines first (back
    towards the robot at the height it is held, then up). None where no pose is found."""
    obj = both_hands(sk)
    if obj is None:
        return None
    w = sk.world
    now = _hold_now(sk)
    base = w.base_pose()
    torso = _commanded(sk)[TORSO_JOINT]
    c, s = np.cos(base.yaw), np.sin(base.yaw)
    for x, z in CARRY_AT:
        at = np.array([base.x + c * x, base.y + s * x, z - (HOME_TORSO - torso)])
        back = np.array([at[0], at[1], max(now.centre[2], min(at[2], now.centre[2]))])
        holds = [now, Hold(back, base.yaw, now.reach), Hold(at, base.yaw, now.reach)]
        legs = _plan(sk, holds, (None,))
        if legs is not None:
            _follow(sk, legs[1] + legs[2], 0.4)
            return {j: legs[2][-1][j] for side in ARM_SIDES for j in arm_joints(side)}
    return None


def put(sk: "Skills", obj: str, support: str, surface: str, drop: bool = False) -> "SkillResult":
    """Set what both hands hold down on a free spot of ``support``'s ``surface`` (``drop``: let
    it fall from just over the rim of a bowl), then let go by moving the hands apart."""
    from affplan_ros.sim.physics.skills import FailureCode
    w = sk.world
    site = f"{support}/{surface}"
    if touching_hands(sk, obj) < 2:
        sk.held.update({side: None for side in ARM_SIDES})
        return sk._fail(FailureCode.SLIPPED, f"{obj} is no longer between the hands (dropped on the way)")
    now = _hold_now(sk)
    radius = half_width(sk, obj)
    centre, _, _ = w.site(site)
    spots = sk._free_spots(support, site, obj, object_geometry(w.things[obj].props).half, w.base_pose(), None)
    if drop:
        from affplan_ros.sim.physics.skills import inner_height
        spots = [np.array([centre[0], centre[1], centre[2] + inner_height(w, support) - 0.05 + DROP_GAP])]
    else:
        spots = [np.array([p[0], p[1], centre[2] + RELEASE_GAP]) for p in spots]
    for spot in spots[:12]:
        at = Hold(spot + np.array([0.0, 0.0, radius]), _heading(sk, spot), now.reach)
        above = at.moved(np.array([0.0, 0.0, LIFT]))
        legs = _plan(sk, [now, above, at, at.moved(out=APART), at.moved(np.array([0.0, 0.0, BACK]), APART)], (None,))
        if legs is None:
            continue
        if not _follow(sk, legs[1]) or not _follow(sk, legs[2], 0.2):
            return sk._fail(FailureCode.BLOCKED, f"carrying {obj} over {support}: something held an arm")
        sk.held.update({side: None for side in ARM_SIDES})
        _follow(sk, legs[3], 0.3)
        _follow(sk, legs[4], 0.4)
        sk._tuck()
        w.step(w.steps(1.0 if drop else 0.5))
        if not drop and not w.resting_on(obj, support):
            return sk._fail(FailureCode.SLIPPED, f"{obj} does not rest on {support} after the hands let go "
                            f"(touches {', '.join(sorted(x or 'the floor' for x in w.contacts(obj))) or 'nothing'})")
        return sk._ok(side="r", sides=ARM_SIDES, two_hands=True, position=w.position(obj), dropped=drop)
    return sk._fail(FailureCode.UNREACHABLE, f"no free spot on {support} where both hands reach to set {obj} down "
                    "from where the base stands")
