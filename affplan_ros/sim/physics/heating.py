"""Warming a liquid (``heat_liquid``) on a stove or in a microwave or an oven, judged by physics.

The robot presses the appliance's start button (a sprung button on its front, ``bodies.py``): it
stands where an arm reaches the button pointing straight at it, comes in with the fingers closed
until the button has gone in, draws back and tucks. The press counts only if the physics shows
the button pushed in (``PRESSED`` of its travel); a hand stopped by something else first is
``blocked``. The appliance then runs for the time the robot sets for the amount of liquid (at
most its ``max_run_s``) and the world steps through that time. A thermal model warms the liquid,
second by second, only while the physics shows its container where the appliance heats: standing
on a stove's top, inside a microwave or an oven with the door shut (one whose door is open does
not start, as a real one refuses; opened while running, it stops). A container standing in or on
something that is heated (a cup in a pot on the hob) is heated too. The temperature lives in
``PhysicsWorld.temperatures`` and goes with the liquid when it is poured; ``relations.py`` reads
``liquid_warm`` from it. Nothing cools within a run.

The heater of a plan step may also be a vessel the OAM says heats (a pan): it warms nothing by
itself, only standing on or in an appliance, which is then the one the robot starts.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import atan2, cos, hypot, sin

import numpy as np

from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.bodies import BUTTON_TRAVEL
from affplan_ros.sim.physics.ik import horizontal_rotation
from affplan_ros.sim.physics.navigation import plan_base_path
from affplan_ros.sim.physics.relations import WARM_C, resting_place
from affplan_ros.sim.physics.robot import PAD_HALF
from affplan_ros.sim.physics.skills import CLEARANCE, SkillResult, Skills
from affplan_ros.sim.physics.world import BasePose, ThingKind

SPECIFIC_HEAT_J_PER_KG_K = 4186.0   # water; milk (3.9 kJ/(kg K)) and other drinks are near enough
DENSITY_KG_PER_L = 1.0
TARGET_C = 65.0            # °C the robot sets the run time for (a hot drink)
BOILING_C = 100.0          # °C a liquid does not get above
CHECK_S = 1.0              # s of simulated time between looks at where the container is
PRESSED = 0.6              # of the button's travel: it clicked
PRESS_PRE = 0.08           # m out from the button the fingertips come from
PRESS_PAST = BUTTON_TRAVEL + 0.01   # m past the button's face the fingertips are sent
PRESS_REACH = (0.50, 0.58, 0.44)    # m from the base centre to the button, tried in turn
PRESS_LATERAL = (0.18, 0.08, 0.28, 0.36)   # m to the pressing arm's side (mirrored per arm), tried in turn
PRESS_MAX_DRIVE = 1.2      # m the base may move to stand at the button (farther: not at the heater)
PRESS_STEPS = 6            # waypoints of the push, each checked for a click


@dataclass(frozen=True)
class HeaterModel:
    heats: str            # "top": what stands on it; "inside": what is in it, with its door shut
    power_w: float        # W that reaches what it heats
    max_run_s: float      # s the robot lets it run at most


# One per class of bodies.HEATER_BUTTONS (what has a start button).
HEATERS = {
    # A hob of about 1.5 kW; some two thirds of it goes into the pot.
    "stove": HeaterModel("top", 1000.0, 600.0),
    # An 800 W magnetron; a drink absorbs about three quarters of it.
    "microwave": HeaterModel("inside", 600.0, 300.0),
    # Hot air warms a pot slowly.
    "oven": HeaterModel("inside", 300.0, 900.0),
}


def heat_liquid(sk: Skills, liquid: str, container: str, heater: str) -> SkillResult:
    """Warm ``liquid`` in ``container`` with ``heater`` (an appliance, or a vessel standing on one)."""
    return sk._run("heat_liquid", _heat_liquid, sk, liquid, container, heater)


def _heat_liquid(sk: Skills, liquid: str, container: str, heater: str) -> SkillResult:
    w = sk.world
    for name in (container, heater):
        if name not in w.things:
            return sk._fail(Cause.UNKNOWN, f"the physics world has no {name!r}")
    if w.liquids.get(container, {}).get(liquid, 0.0) <= 0:
        return sk._fail(Cause.NOT_FOUND, f"{container} holds no {liquid}")
    appliance = _appliance(sk, heater)
    if isinstance(appliance, SkillResult):
        return appliance
    model = HEATERS[w.things[appliance].class_name]
    press = press_button(sk, appliance)
    if not press.success:
        return press
    if model.heats == "inside" and w.things[appliance].joint and not w.is_closed(appliance):
        thing = w.things[appliance]
        return sk._fail(Cause.DOOR_OPEN, f"{appliance}'s door is open ({w.qpos(thing.joint):.2f} of "
                        f"{thing.joint_open:.2f} rad): a {thing.class_name} does not run with its door open, so "
                        f"{liquid} stayed at {w.temperature(liquid):.0f} °C", **press.details)
    return _run(sk, liquid, container, appliance, model, press.details)


def _appliance(sk: Skills, heater: str) -> str | SkillResult:
    """The appliance that does the heating: ``heater`` itself, or the one a vessel stands on or in."""
    w = sk.world
    thing = w.things[heater]
    if thing.kind == ThingKind.FURNITURE and thing.class_name in HEATERS:
        return heater
    if thing.kind != ThingKind.OBJECT:
        return sk._fail(Cause.NOT_A_HEATER, f"{heater} ({thing.class_name}) warms nothing in the physics "
                        f"world: only a {', a '.join(sorted(HEATERS))} does")
    for name, other in w.things.items():
        if other.kind == ThingKind.FURNITURE and other.class_name in HEATERS and _heated_at(sk, heater, name):
            return name
    return sk._fail(Cause.NOT_HEATED, f"{heater} ({thing.class_name}) does not warm by itself: only on a "
                    f"stove or in a microwave or oven, and {_where(sk, heater)}")


def _heated_at(sk: Skills, obj: str, appliance: str) -> bool:
    """Whether the physics has ``obj``, or what it stands in or on, where ``appliance`` heats now."""
    w = sk.world
    model = HEATERS[w.things[appliance].class_name]
    seen: set[str] = set()
    while obj not in seen and sk.holding(obj) is None:
        seen.add(obj)
        place = resting_place(w, sk, obj)
        if place is None:
            return False
        how, under = place
        if under == appliance:
            return how == ("on" if model.heats == "top" else "in") and (
                model.heats == "top" or not w.things[appliance].joint or w.is_closed(appliance))
        if w.things[under].kind != ThingKind.OBJECT:
            return False
        obj = under
    return False


def _where(sk: Skills, obj: str) -> str:
    if sk.holding(obj) is not None:
        return f"the robot holds {obj}"
    place = resting_place(sk.world, sk, obj)
    if place is None:
        return f"{obj} rests on nothing the world knows"
    return f"{obj} {'stands on' if place[0] == 'on' else 'is in'} {place[1]}"


def _run(sk: Skills, liquid: str, container: str, appliance: str, model: HeaterModel, press: dict) -> SkillResult:
    """Let the appliance run for the time set for the amount, stepping the physics; warm the
    container's liquids only while the physics has the container where it heats."""
    w = sk.world
    start_c = w.temperature(liquid)
    litres = sum(w.liquids.get(container, {}).values())
    joules_per_k = litres * DENSITY_KG_PER_L * SPECIFIC_HEAT_J_PER_KG_K
    run_s = min(max(TARGET_C - start_c, 0.0) * joules_per_k / model.power_w, model.max_run_s)
    ran, heated, stopped = 0.0, 0.0, ""
    while ran < run_s:
        chunk = min(CHECK_S, run_s - ran)
        if model.heats == "inside" and w.things[appliance].joint and not w.is_closed(appliance):
            stopped = f"; it stopped after {ran:.0f} s when its door was opened"
            break
        inside = _heated_at(sk, container, appliance)
        w.step(w.steps(chunk))
        ran += chunk
        if inside:
            heated += chunk
            for name in w.liquids.get(container, {}):
                warmer = w.temperature(name) + model.power_w * chunk / joules_per_k
                w.temperatures[name] = min(warmer, BOILING_C)
    end_c = w.temperature(liquid)
    details = dict(press, appliance=appliance, ran_s=ran, heated_s=heated, start_c=start_c, end_c=end_c)
    if end_c >= WARM_C:
        return sk._ok(**details)
    if heated == 0.0:
        how = "on the top of" if model.heats == "top" else "inside"
        why = f"{container} was not {how} {appliance} ({_where(sk, container)})"
    else:
        why = f"{container} was heated for {heated:.0f} of the {ran:.0f} s"
    return sk._fail(Cause.NOT_HEATED, f"{liquid} is at {end_c:.0f} °C after {appliance} ran {ran:.0f} s: "
                    f"{why}{stopped}", **details)


def press_button(sk: Skills, appliance: str) -> SkillResult:
    """Press ``appliance``'s start button with the closed fingers of a free hand, pointing straight
    at it; judged by how far the button went in."""
    return sk._run("press", _press, sk, appliance)


def _press(sk: Skills, appliance: str) -> SkillResult:
    w = sk.world
    site, joint = f"{appliance}/button", f"{appliance}/button"
    if not w.has_site(site):
        return sk._fail(Cause.NOT_FOUND, f"{appliance} has no button to start it")
    free = [s for s in ("r", "l") if sk.held[s] is None]
    if not free:
        return sk._fail(Cause.HAND_FULL, f"both hands are full; none is free to press {appliance}'s button")
    face, rot, _ = w.site(site)
    normal = rot[:, 1]                       # the button's face looks out along its local +y
    heading = atan2(-normal[1], -normal[0])  # the robot faces the button
    rot_base = horizontal_rotation(0.0)
    tip = PAD_HALF[0]                        # the fingertips lie this far beyond the TCP
    here = w.base_pose()
    choice, why_not = None, "its button is out of the arm's reach"
    for side in free:
        sign = -1.0 if side == "r" else 1.0
        for lateral in PRESS_LATERAL:
            for reach in PRESS_REACH:
                at = sk._solve(side, np.array([reach - tip + PRESS_PAST, sign * lateral, face[2]]), rot_base,
                               sk.control.joints())
                pre = sk._solve(side, np.array([reach - tip - PRESS_PRE, sign * lateral, face[2]]), rot_base,
                                {**sk.control.joints(), **at.joints})
                if not (at.success and pre.success):
                    continue
                c, s = cos(heading), sin(heading)
                stand = BasePose(float(face[0] - c * reach + s * sign * lateral),
                                 float(face[1] - s * reach - c * sign * lateral), heading)
                if hypot(stand.x - here.x, stand.y - here.y) > PRESS_MAX_DRIVE:
                    why_not = (f"the robot would have to move {hypot(stand.x - here.x, stand.y - here.y):.2f} m "
                               "to press it: it is not at the heater")
                    continue
                # Without the margin where it starts within it (beside a door it has just opened).
                path = plan_base_path(w, here, stand, w.spec.base_radius + CLEARANCE) or plan_base_path(
                    w, here, stand, w.spec.base_radius)
                if path is None:
                    why_not = "no free place to stand in front of its button"
                    continue
                choice = (side, path)
                break
            if choice:
                break
        if choice:
            break
    if choice is None:
        return sk._fail(Cause.UNREACHABLE, f"cannot press {appliance}'s button ({face[2]:.2f} m high): "
                        f"{why_not}")
    side, path = choice
    if not sk._tuck().ok or not sk.control.drive(path).ok:
        return sk._fail(Cause.BLOCKED, f"the base stopped short of the place to press {appliance}'s button")
    # The IK again from where the base stopped.
    base = w.base_pose()
    rot_w = w.rotation_to_base(horizontal_rotation(heading), base)
    seed = sk.control.joints()
    poses = []
    for out in (-tip - PRESS_PRE, -tip + PRESS_PAST):
        r = sk._solve(side, w.to_base_frame(face - out * normal, base), rot_w, seed)
        if not r.success:
            return sk._fail(Cause.UNREACHABLE, f"{appliance}'s button is out of reach from where the base "
                            "stopped")
        poses.append(r.joints)
        seed = {**seed, **r.joints}
    pre, pushed = poses
    sk.control.set_gripper(side, 0.0, 0.3)
    out = sk.control.follow([pre])
    travel = 0.0
    if out.ok:
        for waypoint in sk._straight(side, pre, pushed, n=PRESS_STEPS):
            sk.control.follow([waypoint], speed_scale=0.3, settle=0.1)
            travel = max(travel, w.qpos(joint))
            if travel >= PRESSED * BUTTON_TRAVEL:
                break
    touched = sorted(n for n in w.contacts(w.robot_name) if n and n != appliance)
    sk.control.follow([pre], speed_scale=0.5)
    sk._tuck()
    if not out.ok:
        return sk._blocked(out, f"reaching for {appliance}'s button")
    if travel < PRESSED * BUTTON_TRAVEL:
        what = f" (the hand touches {', '.join(touched)})" if touched else ""
        return sk._fail(Cause.BLOCKED, f"{appliance}'s button went in {travel * 1000:.0f} mm of "
                        f"{BUTTON_TRAVEL * 1000:.0f}: the fingers did not press it{what}", travel=travel)
    return sk._ok(side=side, travel=travel)
