"""Opening and closing a container's lid (a bottle's cap, a carton's), judged by physics.

A cap's thread is not modelled: the lid stays the world's flag (``PhysicsWorld.closed_lids``).
What the physics judges is the motion a screw cap needs: the hand comes down on the container's
top, closes on the cap (both finger pads must touch the container there), turns the wrist by a
quarter turn and more while holding it, lets go and withdraws. The flag changes only if the pads
held the cap through the turn and the container is left standing where it stood (not dragged
round, not knocked over). The container must stand on something, not be held: turning a cap
needs the container to stay still (a one-handed robot cannot hold both).
"""
from __future__ import annotations

import numpy as np

from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.robot import arm_joints
from affplan_ros.sim.physics.skills import SkillResult, Skills
from affplan_ros.sim.physics.world import ThingKind

TURN = 1.4            # rad the wrist turns the cap (a bit less than half a turn)
CAP_DEPTH = 0.02      # m below the container's top where the pads close on the cap
DRAGGED = 0.03        # m the container may move while its cap is turned
CAP_APPROACH = 0.06   # m above the cap the hand comes from (a cap needs less room than an object)


def turn_lid(skills: Skills, container: str, opening: bool) -> SkillResult:
    """Open (``opening``) or close the lid of ``container`` standing within reach."""
    return skills._run("open" if opening else "close", _turn_lid, skills, container, opening)


def _turn_lid(sk: Skills, container: str, opening: bool) -> SkillResult:
    w = sk.world
    thing = w.things.get(container)
    if thing is None or thing.kind != ThingKind.OBJECT or thing.props.articulation != "lid":
        return sk._fail(Cause.NOT_ARTICULATED, f"{container} has no lid to turn")
    if (container in w.closed_lids) != opening:
        return sk._ok(note=f"{container}'s lid is already {'off' if opening else 'on'}")
    if sk.holding(container):
        return sk._fail(Cause.HAND_FULL, f"the robot holds {container}: put it down to turn its lid")
    free = [s for s in ("r", "l") if sk.held[s] is None]
    if not free:
        return sk._fail(Cause.HAND_FULL, "both hands are full")
    width, finger_yaw, target = sk.top_down_grasp(container)
    if width > w.spec.max_aperture - 0.01:
        return sk._fail(Cause.TOO_LARGE, f"{container}'s top is {width * 100:.0f} cm across; the gripper "
                        f"opens {w.spec.max_aperture * 100:.0f} cm")
    rot = w.rotation(container)
    if rot[2, 2] < 0.9:
        return sk._fail(Cause.BLOCKED, f"{container} is not standing upright")
    top = w.position(container)[2] + float(np.abs(rot[2, :]) @ np.array(object_geometry(thing.props).half))
    target = np.array([target[0], target[1], top - CAP_DEPTH])
    base = w.base_pose()
    yaws = sk._grasp_yaws(base, target, finger_yaw)
    side, plan = None, None
    for s in free:
        plan = sk._plan_vertical(s, target, yaws, CAP_APPROACH, 0.0)
        if plan is not None:
            side = s
            break
    if plan is None or side is None:
        dist = float(np.hypot(*w.to_base_frame(target)[:2]))
        return sk._fail(Cause.UNREACHABLE, f"no arm reaches the top of {container} at {dist:.2f} m from the "
                        "base centre (IK finds no solution within the joint limits)", distance=dist)
    pre, at, _ = plan
    start = w.position(container).copy()
    sk.control.set_gripper(side, w.spec.max_aperture, 0.3)
    out = sk.move_arm(side, pre)
    if out.ok:
        out = sk.control.follow(sk._straight(side, pre, at), speed_scale=0.5)
    if not out.ok:
        return sk._blocked(out, f"reaching the top of {container}")
    sk.control.set_gripper(side, 0.0, 0.6)
    pads = sk._pads(side)
    held = len(w.touching_geoms(container, pads)) == 2
    if held:
        # Turn towards the middle of the wrist's range, so the turn fits in it either way.
        roll = arm_joints(side)[-1]
        lo, hi = w.model.joint(roll).range
        now = w.qpos(roll)
        turned = {**at, roll: now + (TURN if now < (lo + hi) / 2 else -TURN)}
        sk.control.follow([turned], speed_scale=0.4)
        held = len(w.touching_geoms(container, pads)) == 2
    sk.control.set_gripper(side, w.spec.max_aperture, 0.4)
    sk.control.follow([pre], speed_scale=0.5)
    _draw_back(sk, side)
    sk._tuck()
    w.step(w.steps(0.3))
    if not held:
        return sk._fail(Cause.SLIPPED, f"the fingers did not keep hold of {container}'s cap through the turn")
    moved = float(np.hypot(*(w.position(container) - start)[:2]))
    if w.rotation(container)[2, 2] < 0.9 or moved > DRAGGED:
        return sk._fail(Cause.BLOCKED, f"turning the cap moved {container} ({moved * 100:.0f} cm"
                        f"{', knocked over' if w.rotation(container)[2, 2] < 0.9 else ''})")
    if opening:
        w.closed_lids.discard(container)
    else:
        w.closed_lids.add(container)
    return sk._ok(side=side)



def _draw_back(sk: Skills, side: str, distance: float = 0.2) -> None:
    """Pull the open hand back towards the robot at its height before the arm tucks: tucking
    straight from above the container would sweep the forearm through it."""
    w = sk.world
    base = w.base_pose()
    tcp, rot, _ = w.site(f"{side}_tcp")
    towards = np.array([base.x, base.y]) - tcp[:2]
    towards /= max(float(np.linalg.norm(towards)), 1e-6)
    back = tcp + distance * np.array([towards[0], towards[1], 0.0])
    r = sk._solve(side, w.to_base_frame(back, base), w.rotation_to_base(rot, base), sk.control.joints())
    if r.success:
        sk.control.follow([r.joints], speed_scale=0.5)
