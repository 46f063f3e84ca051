"""Working with a held tool, judged by physics: ``chop`` (a knife) and ``wipe`` (a sponge, a cloth).

Cutting and cleaning are not simulated as material changes: the world keeps ``chopped`` and
``cleaned`` sets (like liquid quantities, changed only here), and what the physics judges is the
motion that would do it:

* chop: the held knife comes down onto the target lying on a firm support, and back up; it
  counts only if the knife touched the target on the way down while the target rested on that
  support, and the knife is still held;
* wipe: the held tool is pressed onto the surface's top and drawn back and forth; it counts
  only if the tool touched the surface in most of the strokes and is still held. A dry tool
  wipes but does not clean: the tool must be wet (``PhysicsWorld.wet``, set when it lay in water).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.bodies import object_geometry, vertical_half
from affplan_ros.sim.physics.grasps import arm_in_the_way
from affplan_ros.sim.physics.skills import LEANS, SkillResult, Skills
from affplan_ros.sim.physics.world import ThingKind

ABOVE = 0.06        # m above the target the tool starts a cut / a stroke from
CUT_DEPTH = 0.01    # m the knife is driven below the target's top
SEEK = 0.02         # m below the surface's top the tool is sought down to (where it first touches it)
# m the tool is driven below where it first touched the surface: a light press, as a person wipes
# (measured: the sponge on the table and the counter with about 12 N at the strokes' ends, all
# three strokes on it; 4 mm, 8 N, lost the table in a stroke: the IK meets a pose within 1 cm).
# Driven 2 cm below the surface's top, the sponge was pushed up and turned between the pads (1.7
# cm) and lost the surface, or slipped out of the hand.
PRESS = 0.01
SEEK_STEPS = 10     # steps of the descent onto the surface, watching for the first touch
STROKE = 0.08       # m to each side of the middle of a wiping stroke
STROKES = 3
TOOL_OPTIONS = 12   # hand orientations and tool contact points tried with IK for one motion
LEVEL = 0.985       # |cos| of the tilt (10 degrees) within which a held tool's face counts as level


def chop(skills: Skills, knife: str, target: str, support: str) -> SkillResult:
    return skills._run("chop", _chop, skills, knife, target, support)


def wipe(skills: Skills, tool: str, surface: str, along: Optional[str] = None) -> SkillResult:
    """Wipe ``surface`` with the held ``tool``; ``along``: the place the base may move along."""
    return skills._run("wipe", _wipe, skills, tool, surface, along)


def _chop(sk: Skills, knife: str, target: str, support: str) -> SkillResult:
    w = sk.world
    side = sk.holding(knife)
    if side is None:
        return sk._fail(Cause.NOT_HELD, f"the robot does not hold {knife}")
    thing = w.things.get(target)
    if thing is None or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
        return sk._fail(Cause.UNKNOWN, f"{target!r} is not an object in the physics world")
    if not w.resting_on(target, support):
        return sk._fail(Cause.NOT_FOUND, f"{target} does not lie on {support}")
    top = _top(sk, target)
    above, cut = top + np.array([0, 0, ABOVE]), top - np.array([0, 0, CUT_DEPTH])
    # The blade may lean as long as its lowest point stays above the board under the target.
    board = w.site(w.things[support].top_site)[0][2] if w.has_site(w.things[support].top_site) else top[2] - 0.02
    plan = _tool_poses(sk, side, knife, [above, cut], anywhere_along=True, ignore=(target, support),
                       room_below=max(0.01, cut[2] - board - 0.01))
    if plan is None:
        return sk._fail(Cause.UNREACHABLE, f"no arm pose brings {knife} down onto {target} (IK)")
    carry = sk.control.joints()
    out = sk.move_arm(side, plan[0])
    if not out.ok:
        return sk._blocked(out, f"bringing {knife} over {target}")
    touched = False
    # Down in small steps, watching the contacts: the cut is the knife meeting the target.
    for joints in sk._straight(side, plan[0], plan[1], n=6):
        sk.control.follow([joints], speed_scale=0.3, settle=0.05, tol=1.0)
        touched = touched or target in w.contacts(knife)
    sk.control.follow([plan[0]], speed_scale=0.5)
    sk.control.follow([carry])
    if len(w.touching_geoms(knife, sk._pads(side))) < 2:
        sk.held[side] = None
        return sk._fail(Cause.SLIPPED, f"{knife} slipped out of the hand while cutting")
    if not touched:
        return sk._fail(Cause.SLIPPED, f"{knife} never touched {target}")
    if not w.resting_on(target, support, max_speed=0.2):
        return sk._fail(Cause.SLIPPED, f"{target} was pushed off {support} by the cut")
    w.chopped.add(target)
    return sk._ok(side=side)


def _wipe(sk: Skills, tool: str, surface: str, along: Optional[str]) -> SkillResult:
    w = sk.world
    side = sk.holding(tool)
    if side is None:
        return sk._fail(Cause.NOT_HELD, f"the robot does not hold {tool}")
    thing = w.things.get(surface)
    if thing is None or not w.has_site(thing.top_site):
        return sk._fail(Cause.UNKNOWN, f"{surface!r} has no surface to wipe in the physics world")
    half = object_geometry(w.things[tool].props).half
    # A free patch as wide as the strokes (nothing standing there to sweep off), nearest where
    # the holding arm works best; from elsewhere along the place if none is within reach here.
    stroke_half = (half[0] + STROKE, half[1] + STROKE, half[2])

    def free_patches(limit: Optional[int] = 30) -> list[np.ndarray]:
        return sk._free_spots(surface, thing.top_site, None, stroke_half, w.base_pose(), side, limit=limit,
                              rotation=np.eye(3))

    def strokes_at(spot: np.ndarray) -> Optional[list[dict[str, float]]]:
        yaw = w.base_pose().yaw
        across = np.array([-np.sin(yaw), np.cos(yaw), 0.0])
        middle = np.array([spot[0], spot[1], spot[2] + _hang(sk, side, tool, half) - SEEK])
        points = [middle + np.array([0, 0, ABOVE])] + [middle + k * STROKE * across for k in (-1, 1)]
        return _tool_poses(sk, side, tool, points, centre=True, flat=True, level_only=level_only[0])

    if not free_patches():
        return sk._fail(Cause.NO_FREE_SPACE, f"no free patch of {surface} to wipe")
    # With the tool's face level, from here or from elsewhere along the place; only where that
    # is nowhere, leaning with the hand (one edge on the surface: the physics shows the strokes).
    level_only = [True]
    plan, tries = sk.reach_a_spot(free_patches, strokes_at, side, along, tries_per_place=10)
    if plan is None:
        level_only[0] = False
        plan, more = sk.reach_a_spot(free_patches, strokes_at, side, along, tries_per_place=10)
        tries += more
    if plan is None:
        return sk._fail(Cause.UNREACHABLE, f"no arm pose presses {tool} onto {surface} (IK; {tries} other "
                        "standing place(s) tried)")
    lift, left, right = plan
    carry = sk.control.joints()
    out = sk.move_arm(side, lift)
    if not out.ok:
        return sk._blocked(out, f"bringing {tool} over {surface}")
    strokes = 0
    left, right = _press_lightly(sk, side, tool, surface, lift, left, right)
    for k in range(STROKES):
        a, b = (left, right) if k % 2 == 0 else (right, left)
        touched = False
        for joints in sk._straight(side, a, b, n=4):
            sk.control.follow([joints], speed_scale=0.5, settle=0.05, tol=1.0)
            touched = touched or surface in w.contacts(tool)
        strokes += touched
    sk.control.follow([lift], speed_scale=0.5)
    sk.control.follow([carry])
    if len(w.touching_geoms(tool, sk._pads(side))) < 2:
        sk.held[side] = None
        return sk._fail(Cause.SLIPPED, f"{tool} slipped out of the hand while wiping")
    if strokes < 2:
        return sk._fail(Cause.SLIPPED, f"{tool} touched {surface} in {strokes} of {STROKES} strokes")
    if tool not in w.wet:
        return sk._fail(Cause.SLIPPED, f"{tool} is dry: it wiped {surface} without cleaning it")
    w.cleaned.add(surface)
    return sk._ok(side=side, strokes=strokes)


def _press_lightly(sk: Skills, side: str, tool: str, surface: str, lift: dict[str, float],
                   left: dict[str, float], right: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """Bring the tool down from ``lift`` towards the start of the stroke (``left``, ``SEEK`` below
    the surface's top) in small steps until it touches the surface, and return the stroke's ends
    ``PRESS`` below where it touched (the planned ends where it never does, or the arm cannot
    hold that height): pressing by position, as a force-limited wipe would."""
    w = sk.world
    for joints in sk._straight(side, lift, left, n=SEEK_STEPS):
        sk.control.follow([joints], speed_scale=0.3, settle=0.05, tol=1.0)
        if surface in w.contacts(tool):
            break
    else:
        return left, right
    # (the base frame's heights are the world's)
    planned = float(sk.ik.tcp_pose(side, {**sk.control.joints(), **left})[0][2])
    rise = float(w.site(f"{side}_tcp")[0][2]) - PRESS - planned
    out = []
    for end in (left, right):
        pos, rot = sk.ik.tcp_pose(side, {**sk.control.joints(), **end})
        r = sk.ik.solve(side, pos + np.array([0.0, 0.0, max(rise, 0.0)]), rot, {**sk.control.joints(), **end})
        if not r.success:
            return left, right
        out.append(r.joints)
    sk.control.follow([out[0]], speed_scale=0.3, settle=0.05, tol=1.0)
    return out[0], out[1]


def _levelled(hand: np.ndarray, tool: np.ndarray) -> np.ndarray:
    """The hand's rotation turned (least) so that the held tool's most nearly vertical axis is
    vertical: its face level."""
    i = int(np.argmax(np.abs(tool[2, :])))
    axis = tool[:, i] * np.sign(tool[2, i])
    turn_axis = np.cross(axis, [0.0, 0.0, 1.0])
    s, c = float(np.linalg.norm(turn_axis)), float(axis[2])
    if s < 1e-6:
        return hand
    k = turn_axis / s
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return (np.eye(3) + s * cross + (1 - c) * cross @ cross) @ hand


def _top(sk: Skills, name: str) -> np.ndarray:
    w = sk.world
    return w.position(name) + np.array([0, 0, vertical_half(w.things[name].props, w.rotation(name))])


def _hang(sk: Skills, side: str, tool: str, half) -> float:
    """How far the held tool's centre is above its bottom as it hangs now."""
    return float(np.abs(sk.world.rotation(tool)[2, :]) @ np.array(half))


def _tool_poses(sk: Skills, side: str, tool: str, points: list[np.ndarray], centre: bool = False,
                anywhere_along: bool = False, ignore: tuple[str, ...] = (),
                room_below: float = 0.01, flat: bool = False,
                level_only: bool = False) -> Optional[list[dict[str, float]]]:
    """Joints that put the held tool's tip (the middle of its lowest edge or face below the hand;
    ``centre``: its centre) at each point in turn, the hand keeping one orientation: as it is now,
    else pointing down or leaning forward or back (``Skills._hand_rotations``: reaching further,
    the tool leaning with the hand, for a board at the back of a table). ``anywhere_along``: any
    point of the tool's length may meet the points (a blade from heel to tip), the hand turned
    about the vertical as need be (a knife along the reach meets what lies beyond the hand), its
    length clear of other objects but ``ignore`` (what it cuts, what that lies on), and none of it
    more than ``room_below`` below the point that meets (above the board under what it cuts).
    ``flat``: the orientations that keep the tool's lowest face level first (a sponge wipes with
    its face; leaning with the hand 0.35 rad, it met the table with one edge, lost it in the
    strokes, and the hand pressing it turned it in the pads), the hand turned to level it too;
    ``level_only``: only those."""
    w = sk.world
    base = w.base_pose()
    tcp, rot, _ = w.site(f"{side}_tcp")
    half = np.array(object_geometry(w.things[tool].props).half)
    yaw = sk._tcp_yaw(side)
    yaws = [yaw, yaw + np.pi] + ([yaw + np.pi / 2, yaw - np.pi / 2] if anywhere_along else [])
    leans = LEANS + tuple(-lean for lean in LEANS)
    long_ = int(np.argmax(half))
    end = float(half[long_]) - 0.01
    # Where along its length it may meet the point: its middle, or a blade anywhere from heel to tip.
    spots = [0.0] + [sign * k for k in (0.05, 0.1) if anywhere_along and k <= end - 0.03 for sign in (1, -1)]
    spots += [end, -end]
    section = [np.array([0.0 if i == long_ else (a if i == (long_ + 1) % 3 else b) for i in range(3)])
               for a in (-1.0, 1.0) for b in (-1.0, 1.0)]
    width = float(sorted(half)[1]) + 0.005      # (a blade's half width, and a little room)
    options = []
    turns = [rot] + sk._hand_rotations(side, points[-1], yaws, True, leans=leans)
    if flat:
        turns = [_levelled(rot, w.rotation(tool))] + turns
    for turn in turns:
        turned = turn @ rot.T @ w.rotation(tool)
        middle = turn @ rot.T @ (w.position(tool) - tcp)      # its centre from the TCP
        axis = turned[:, long_]
        contacts = [np.zeros(3)]
        if not centre:
            # Its underside at each spot along it (the lowest edge of its cross-section there);
            # only spots at most ``room_below`` above its lowest point (a leaning knife meets
            # with its tip, or else its tip goes into the board first).
            under = min((turned @ (half * c) for c in section), key=lambda c: c[2])
            lowest = under[2] - abs(axis[2]) * float(half[long_])
            contacts = [under + a * axis for a in spots if under[2] + a * axis[2] < lowest + room_below]
            contacts = contacts if anywhere_along else contacts[:1]
        for contact in contacts:
            off = middle + contact
            wrist = w.to_base_frame(points[-1] - off - w.spec.wrist_to_tcp * turn[:, 0], base)
            if not sk._within_arm_length(side, wrist):
                continue
            # The tool's length where it ends up must not lie on something else (a knife along
            # the reach over cups in front of the board): along its middle line.
            at = points[-1] - off + middle
            line = [at + k * float(half[long_]) * axis for k in np.linspace(-1, 1, 7)]
            if anywhere_along and arm_in_the_way(w, line, width, ignore + (tool,), solid=True) is not None:
                continue
            level = float(np.max(np.abs(turned[2, :]))) > LEVEL if flat else True
            if level_only and not level:
                continue
            options.append((not level, sk._wrist_distance(side, wrist), len(options), turn, off))
    # Each option costs IK for every point: the few that ask least of the arm's length are tried.
    for _, _, _, turn, off in sorted(options, key=lambda o: o[:3])[:TOOL_OPTIONS]:
        seed = sk.control.joints()
        out = []
        for p in points:
            r = sk._solve(side, w.to_base_frame(p - off, base), w.rotation_to_base(turn, base), seed)
            if not r.success:
                break
            out.append(r.joints)
            seed = {**seed, **r.joints}
        if len(out) == len(points):
            return out
    return None
