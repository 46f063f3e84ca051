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

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.skills import FailureCode, SkillResult, Skills
from affplan_ros.sim.physics.world import ThingKind

ABOVE = 0.06        # m above the target the tool starts a cut / a stroke from
CUT_DEPTH = 0.01    # m the knife is driven below the target's top
PRESS = 0.02        # m the tool is driven below the surface's top while wiping: the servos press it down
STROKE = 0.08       # m to each side of the middle of a wiping stroke
STROKES = 3


def chop(skills: Skills, knife: str, target: str, support: str) -> SkillResult:
    return skills._run("chop", _chop, skills, knife, target, support)


def wipe(skills: Skills, tool: str, surface: str, along: Optional[str] = None) -> SkillResult:
    """Wipe ``surface`` with the held ``tool``; ``along``: the place the base may move along."""
    return skills._run("wipe", _wipe, skills, tool, surface, along)


def _chop(sk: Skills, knife: str, target: str, support: str) -> SkillResult:
    w = sk.world
    side = sk.holding(knife)
    if side is None:
        return sk._fail(FailureCode.NOT_HELD, f"the robot does not hold {knife}")
    thing = w.things.get(target)
    if thing is None or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
        return sk._fail(FailureCode.UNKNOWN, f"{target!r} is not an object in the physics world")
    if not w.resting_on(target, support):
        return sk._fail(FailureCode.NOT_FOUND, f"{target} does not lie on {support}")
    top = _top(sk, target)
    above, cut = top + np.array([0, 0, ABOVE]), top - np.array([0, 0, CUT_DEPTH])
    plan = _tool_poses(sk, side, knife, [above, cut])
    if plan is None:
        return sk._fail(FailureCode.UNREACHABLE, f"no arm pose brings {knife} down onto {target} (IK)")
    carry = sk.control.joints()
    out = sk.control.follow([plan[0]])
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
        return sk._fail(FailureCode.SLIPPED, f"{knife} slipped out of the hand while cutting")
    if not touched:
        return sk._fail(FailureCode.SLIPPED, f"{knife} never touched {target}")
    if not w.resting_on(target, support, max_speed=0.2):
        return sk._fail(FailureCode.SLIPPED, f"{target} was pushed off {support} by the cut")
    w.chopped.add(target)
    return sk._ok(side=side)


def _wipe(sk: Skills, tool: str, surface: str, along: Optional[str]) -> SkillResult:
    w = sk.world
    side = sk.holding(tool)
    if side is None:
        return sk._fail(FailureCode.NOT_HELD, f"the robot does not hold {tool}")
    thing = w.things.get(surface)
    if thing is None or not w.has_site(thing.top_site):
        return sk._fail(FailureCode.UNKNOWN, f"{surface!r} has no surface to wipe in the physics world")
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
        middle = np.array([spot[0], spot[1], spot[2] + _hang(sk, side, tool, half) - PRESS])
        points = [middle + np.array([0, 0, ABOVE])] + [middle + k * STROKE * across for k in (-1, 1)]
        return _tool_poses(sk, side, tool, points, centre=True)

    if not free_patches():
        return sk._fail(FailureCode.NO_FREE_SPACE, f"no free patch of {surface} to wipe")
    plan, tries = sk.reach_a_spot(free_patches, strokes_at, side, along, tries_per_place=10)
    if plan is None:
        return sk._fail(FailureCode.UNREACHABLE, f"no arm pose presses {tool} onto {surface} (IK; {tries} other "
                        "standing place(s) tried)")
    lift, left, right = plan
    carry = sk.control.joints()
    out = sk.control.follow([lift])
    if not out.ok:
        return sk._blocked(out, f"bringing {tool} over {surface}")
    strokes = 0
    sk.control.follow(sk._straight(side, lift, left), speed_scale=0.4, tol=1.0)
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
        return sk._fail(FailureCode.SLIPPED, f"{tool} slipped out of the hand while wiping")
    if strokes < 2:
        return sk._fail(FailureCode.SLIPPED, f"{tool} touched {surface} in {strokes} of {STROKES} strokes")
    if tool not in w.wet:
        return sk._fail(FailureCode.SLIPPED, f"{tool} is dry: it wiped {surface} without cleaning it")
    w.cleaned.add(surface)
    return sk._ok(side=side, strokes=strokes)


def _top(sk: Skills, name: str) -> np.ndarray:
    w = sk.world
    half = np.array(object_geometry(w.things[name].props).half)
    return w.position(name) + np.array([0, 0, float(np.abs(w.rotation(name)[2, :]) @ half)])


def _hang(sk: Skills, side: str, tool: str, half) -> float:
    """How far the held tool's centre is above its bottom as it hangs now."""
    return float(np.abs(sk.world.rotation(tool)[2, :]) @ np.array(half))


def _tool_poses(sk: Skills, side: str, tool: str, points: list[np.ndarray],
                centre: bool = False) -> Optional[list[dict[str, float]]]:
    """Joints that put the held tool's tip (its lowest point below the hand; ``centre``: its
    centre) at each point in turn, the hand keeping its orientation."""
    w = sk.world
    base = w.base_pose()
    tcp, rot, _ = w.site(f"{side}_tcp")
    offset = w.position(tool) - tcp
    if not centre:
        half = np.array(object_geometry(w.things[tool].props).half)
        offset = offset - np.array([0, 0, float(np.abs(w.rotation(tool)[2, :]) @ half)])
    seed = sk.control.joints()
    out = []
    for p in points:
        r = sk._solve(side, w.to_base_frame(p - offset, base), w.rotation_to_base(rot, base), seed)
        if not r.success:
            return None
        out.append(r.joints)
        seed = {**seed, **r.joints}
    return out
