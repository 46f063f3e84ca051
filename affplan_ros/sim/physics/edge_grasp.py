"""The edge grasp: a flat thing wider than the gripper (a 24 x 17 x 3 cm book, a 14 cm keyboard)
taken as a person or a robot takes it off a table.

A top-down grasp cannot span 17 cm with a 9 cm parallel gripper. What works instead is
non-prehensile pre-manipulation ("slide-to-edge" grasping, e.g. Kappler et al. 2010, Hang et al.
2019): the closed fingertips hook behind the object's far edge on the support and pull it towards
the robot until it overhangs the support's near edge by a few cm; then the hand, turned so that
the fingers close up and down (``horizontal_rotation(..., fingers_vertical=True)``, as round a
drawer's bar), comes in level from the robot's side, the lower finger under the overhang, the
upper above, closes and lifts. Physics judges both steps: the object must really have slid (it
is pushed, not teleported) and still rest on the support, and it must rise with the hand held by
the pads' contacts, as the top-down grasp is judged.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import atan2, pi
from typing import TYPE_CHECKING, Optional

import numpy as np

from affplan_ros.sim.physics.bodies import object_geometry
from affplan_ros.sim.physics.ik import horizontal_rotation
from affplan_ros.sim.physics.navigation import segment_clear
from affplan_ros.sim.physics.robot import PAD_HALF
from affplan_ros.sim.physics.world import BasePose, ThingKind

if TYPE_CHECKING:
    from affplan_ros.sim.physics.skills import PhysicsSkills, SkillResult

FLAT_FRACTION = 0.5     # a thing at most this fraction of the aperture thick counts as flat
OVERHANG = 0.075        # m it is pulled out over the near edge: the 6 cm pads on it, tips 5 mm clear
MIN_OVERHANG = 0.04     # m at least (a narrow keyboard keeps its centre of mass over the support)
COM_MARGIN = 0.02       # m its centre of mass stays inside the support's edge
HOOK_BEHIND = PAD_HALF[2] + 0.012   # m from the far edge to the TCP: the closed fingers' half width + room
HOOK_HEIGHT = 0.012     # m of the fingertips over the support when they pull (under a 3 cm edge)
TIP_CLEAR = 0.005       # m between the pads' tips and the support's edge when they pinch
PINCH_PRE = 0.10        # m back (towards the robot) the level hand comes from
RAISE = 0.08            # m the hand rises before and after the pull
SLID_FRACTION = 0.6     # the object must move at least this much of the pull
PRESS = 0.006           # m the fingertips are pressed into the top when they drag it by friction
PRESS_AT = (0.04, 0.08, 0.12, 0.16)   # m in from the far edge where the fingertips may press
STROKES = 3             # pulls at most
STEP_BACK = (0.0, 0.1, 0.2, 0.3)   # m the base may step back from the support for the level hand
DONE = 0.01             # m short of the overhang that is near enough


@dataclass(frozen=True)
class EdgePlan:
    """Where the near edge of the support is (a point on it, its outward normal) and how far to pull."""

    edge: np.ndarray        # a point on the near edge at the support's height (world)
    normal: np.ndarray      # horizontal unit vector out of the support, towards the robot
    pull: float             # m the object must move along ``normal``
    half_across: float      # the object's half extent along ``normal``


def is_flat_and_wide(sk: "PhysicsSkills", obj: str, width: float) -> bool:
    """Too wide for a top-down grasp, and lying flat: thinner (as it lies) than ``FLAT_FRACTION``
    of the aperture, so that the open fingers fit above and below its edge."""
    w = sk.world
    if width <= w.spec.max_aperture - 0.01:
        return False
    half = np.array(object_geometry(w.things[obj].props).half)
    thick = 2 * float(np.abs(w.rotation(obj)[2, :]) @ half)
    return thick <= FLAT_FRACTION * w.spec.max_aperture


def edge_towards_robot(sk: "PhysicsSkills", point: np.ndarray, site: str) -> tuple[np.ndarray, np.ndarray]:
    """A point on the edge of the surface ``site`` whose outward normal points most towards the
    robot from ``point``, and that normal (horizontal, unit)."""
    w = sk.world
    centre, rot, size = w.site(site)
    base = w.base_pose()
    to_robot = np.array([base.x, base.y, 0.0]) - np.array([*point[:2], 0.0])
    normals = [s * rot[:, k] * np.array([1.0, 1.0, 0.0]) for k in (0, 1) for s in (1.0, -1.0)]
    extents = [size[k] for k in (0, 1) for _ in (1.0, -1.0)]
    k = int(np.argmax([n @ to_robot / max(np.linalg.norm(n), 1e-9) for n in normals]))
    normal = normals[k] / np.linalg.norm(normals[k])
    return centre + extents[k] * normal, normal


def near_edge(sk: "PhysicsSkills", obj: str, support: str) -> Optional[EdgePlan]:
    """The support's edge nearest the robot (``edge_towards_robot``), and the pull that leaves
    ``obj`` overhanging it by ``OVERHANG`` (less for a narrow thing, so that its centre of mass
    stays ``COM_MARGIN`` inside)."""
    w = sk.world
    site = f"{support}/top"
    if not w.has_site(site):
        return None
    edge, normal = edge_towards_robot(sk, w.position(obj), site)
    half = np.array(object_geometry(w.things[obj].props).half)
    half_across = float(np.abs(w.rotation(obj).T @ normal) @ half)
    overhang = float(np.clip(half_across - COM_MARGIN, MIN_OVERHANG, OVERHANG))
    out_now = float((w.position(obj) - edge) @ normal) + half_across
    return EdgePlan(edge, normal, max(overhang - out_now, 0.0), half_across)


def _line(sk: "PhysicsSkills", side: str, points: list[np.ndarray], rot_w: np.ndarray,
          base: Optional[BasePose] = None) -> Optional[list[dict]]:
    """IK along a polyline of TCP points (world) with one hand rotation, each seeded by the last,
    from ``base`` (default: where the base stands)."""
    w = sk.world
    base = base or w.base_pose()
    rot = w.rotation_to_base(rot_w, base)
    seed, out = sk.control.joints(), []
    for p in points:
        r = sk._solve(side, w.to_base_frame(p, base), rot, seed)
        if not r.success:
            return None
        out.append(r.joints)
        seed = {**seed, **r.joints}
    return out


def _steps(a: np.ndarray, b: np.ndarray, n: int) -> list[np.ndarray]:
    return [a + (b - a) * k / n for k in range(1, n + 1)]


def _stroke_plans(sk: "PhysicsSkills", obj: str, side: str, plan: EdgePlan) -> Optional[tuple[list[dict], float]]:
    """Joint waypoints of one pull (down, along ``plan.normal``, up): the closed fingertips hooked
    behind the far edge just over the support; failing that (beyond the arm's reach: a book at
    the back of a counter), pressed ``PRESS`` into its top farther in, pulling by friction;
    the whole pull, or the part the arm reaches. (waypoints, the room the hand crosses before
    it meets the object)."""
    w = sk.world
    pos = w.position(obj)
    surface = float(plan.edge[2])
    top = float(pos[2] + np.abs(w.rotation(obj)[2, :]) @ np.array(object_geometry(w.things[obj].props).half))
    yaw = atan2(plan.normal[0], -plan.normal[1])    # closing axis along the edge: the thin side pulls
    # (offset in from the far edge along the normal, fingertip height, room: the hooked fingers
    # first cross the gap between them and the edge)
    holds = [(-HOOK_BEHIND, surface + HOOK_HEIGHT, HOOK_BEHIND - PAD_HALF[2])] + \
        [(d, top - PRESS, 0.0) for d in PRESS_AT if d < 2 * plan.half_across - 0.02]
    for off, tip, room in holds:
        p = pos + (off - plan.half_across) * plan.normal     # on the line through its centre
        start = np.array([p[0], p[1], tip + PAD_HALF[0]])
        for part in (1.0, 0.66, 0.5, 0.33):
            end = start + (part * plan.pull + room) * plan.normal
            pts = [start + np.array([0.0, 0.0, RAISE]), start] + _steps(start, end, 6) + \
                [end + np.array([0.0, 0.0, RAISE])]
            found = next((j for rot in sk._hand_rotations(side, start, [yaw, yaw + pi], False)
                          if (j := _line(sk, side, pts, rot)) is not None), None)
            if found is not None:
                return found, room
    return None


def slide_to_edge(sk: "PhysicsSkills", obj: str, support: str, side: str, plan: EdgePlan) -> Optional[str]:
    """Pull ``obj`` towards the support's near edge until it overhangs it (``near_edge``), in up to
    ``STROKES`` pulls. None when it slid so, else why not."""
    w = sk.world
    sk.control.set_gripper(side, 0.0, 0.3)
    for _ in range(STROKES):
        plan = near_edge(sk, obj, support) or plan
        if plan.pull <= DONE:
            return None
        stroke = _stroke_plans(sk, obj, side, plan)
        if stroke is None:
            local = w.to_base_frame(w.position(obj))
            return f"no arm pose hooks behind or presses on {obj} ({np.hypot(local[0], local[1]):.2f} m from the " \
                   f"base centre) to pull it {plan.pull * 100:.0f} cm to {support}'s edge"
        joints, room = stroke
        pos0 = w.position(obj)
        if not sk.move_arm(side, joints[0]).ok:
            return f"the hand did not get over {obj} (something held the arm)"
        sk.control.follow([joints[1]], speed_scale=0.4)
        hand0 = w.site(f"{side}_tcp")[0]
        sk.control.follow(joints[2:-1], speed_scale=0.3)
        pulled = float((w.site(f"{side}_tcp")[0] - hand0) @ plan.normal)     # what the hand really did
        sk.control.follow([joints[-1]], speed_scale=0.5)
        w.step(w.steps(0.3))
        moved = float((w.position(obj) - pos0) @ plan.normal)
        if moved < SLID_FRACTION * (pulled - room):
            return f"{obj} slid {moved * 100:.1f} cm of the {pulled * 100:.1f} cm the fingers pulled"
        if not w.resting_on(obj, support):
            return f"{obj} does not rest on {support} after the pull"
    plan = near_edge(sk, obj, support) or plan
    return None if plan.pull <= DONE else f"{obj} is {plan.pull * 100:.0f} cm short of overhanging {support}'s edge"


def pinch(sk: "PhysicsSkills", obj: str, support: str, side: str, plan: EdgePlan) -> Optional[str]:
    """The level hand, fingers closing up and down, round the overhanging edge; close; lift. None
    when ``obj`` rose with the hand held by both pads, else why not."""
    from affplan_ros.sim.physics.skills import LIFT  # (skills imports this module)
    w = sk.world
    pos = w.position(obj)
    heading = atan2(-plan.normal[1], -plan.normal[0])    # pointing into the support
    rot = horizontal_rotation(heading, fingers_vertical=True)
    # Opposite its centre, the pads' tips TIP_CLEAR out from the support's edge, at its mid-height.
    at = pos + (float((plan.edge - pos) @ plan.normal) + TIP_CLEAR + PAD_HALF[0]) * plan.normal
    pre = at + PINCH_PRE * plan.normal
    points = [pre, at, at + np.array([0.0, 0.0, LIFT])]
    # A level hand needs its forearm's length before the edge: the base steps back along the normal.
    here = w.base_pose()
    stand = next((b for back in STEP_BACK
                  if (b := BasePose(here.x + back * plan.normal[0], here.y + back * plan.normal[1], here.yaw))
                  and _line(sk, side, points, rot, b) is not None
                  and (back == 0.0 or segment_clear(w, (here.x, here.y), (b.x, b.y), w.spec.base_radius) is None)),
                 None)
    if stand is None:
        return f"no arm pose reaches {obj}'s overhanging edge with the hand level"
    if stand != here:
        sk._tuck()
        sk.control.drive([stand])
    joints = _line(sk, side, points, rot)
    if joints is None:
        return f"{obj}'s overhanging edge is out of the level hand's reach from where the base stopped"
    sk.control.set_gripper(side, w.spec.max_aperture, 0.3)
    if not sk.move_arm(side, joints[0]).ok:
        return f"the level hand did not get before {obj}'s edge (something held the arm)"
    if not sk.control.follow(sk._straight(side, joints[0], joints[1]), speed_scale=0.4).ok:
        return f"the open fingers did not get round {obj}'s edge (the lower one met {support})"
    z0 = w.position(obj)[2]
    sk.control.set_gripper(side, 0.0, 0.8)
    pads = sk._pads(side)
    if len(w.touching_geoms(obj, pads)) < 2:
        sk.control.set_gripper(side, w.spec.max_aperture, 0.3)
        sk.control.follow([joints[0]])
        return f"the fingers closed without holding {obj}'s edge"
    hand0 = w.site(f"{side}_tcp")[0][2]
    sk.control.follow(sk._straight(side, joints[1], joints[2]), speed_scale=0.5)
    w.step(w.steps(0.3))
    risen, hand = w.position(obj)[2] - z0, w.site(f"{side}_tcp")[0][2] - hand0
    touching = len(w.touching_geoms(obj, pads))
    if touching < 2 or hand < 0.5 * LIFT or risen < 0.8 * hand:
        return f"{obj} did not rise with the hand (rose {risen * 100:.1f} cm as the hand rose {hand * 100:.1f}; " \
               f"{touching} of 2 fingers touch it)"
    return None


def edge_grasp(sk: "PhysicsSkills", obj: str, support: Optional[str], free: list[str]) -> "SkillResult":
    """Slide ``obj`` to the near edge of ``support`` and pinch it there (module doc)."""
    from affplan_ros.core.model.failure import Cause
    w = sk.world
    support = support or next((c for c in sorted(w.contacts(obj)) if c and w.has_site(f"{c}/top")),
                              None)
    plan = near_edge(sk, obj, support) if support else None
    if plan is None:
        return sk._fail(Cause.TOO_LARGE, f"{obj} is too wide for the gripper and lies on nothing with an edge "
                        "to slide it to")
    whys = []
    for side in free:
        why = slide_to_edge(sk, obj, support, side, plan)
        if why is None:
            plan = near_edge(sk, obj, support) or plan
            why = pinch(sk, obj, support, side, plan)
        if why is None:
            sk.held[side] = obj
            return sk._ok(side=side, edge=True, aperture=sk.control.aperture(side))
        whys.append(why)
        sk._tuck()
    # (what the arm that got furthest met: an arm that reaches nothing says least)
    why = next((x for x in whys if not x.startswith("no arm pose")), whys[0] if whys else "no free arm")
    code = Cause.SLIPPED if any(x in why for x in ("slid", "rise", "closed", "short of")) else \
        Cause.BLOCKED if "did not get" in why else Cause.UNREACHABLE
    return sk._fail(code, f"edge grasp of {obj} (too wide to grasp from above): {why}")


def held_by_edge(sk: "PhysicsSkills", side: str) -> bool:
    """Whether the hand is level (its approach axis horizontal): what it holds, it holds by an edge."""
    return abs(float(sk.world.site(f"{side}_tcp")[1][2, 0])) < 0.5


def edge_place_poses(sk: "PhysicsSkills", obj: str, side: str, site: str, spot: np.ndarray,
                     gap: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """(TCP target, world rotation) to set ``obj``, held level by its edge, down on the surface
    ``site`` as it was taken: in line with ``spot`` but out at the surface's edge nearest the
    robot, the level hand pointing in and the pads' tips ``TIP_CLEAR`` beyond the edge, so that
    the lower finger under it is free to open and come away (over the surface it is trapped
    under the object, and the forearm comes down on the surface's front). None where the part
    on the surface would lie on something else."""
    w = sk.world
    edge, normal = edge_towards_robot(sk, spot, site)
    tcp, tcp_rot, _ = w.site(f"{side}_tcp")
    ahead = float((w.position(obj) - tcp) @ tcp_rot[:, 0])      # its centre beyond the TCP
    inside = ahead - TIP_CLEAR - PAD_HALF[0]
    if inside <= COM_MARGIN:
        return []
    moved = spot + (float((edge - spot) @ normal) - inside) * normal
    rot = horizontal_rotation(atan2(-normal[1], -normal[0]), fingers_vertical=True)
    target = sk._tcp_target(obj, side, rot, moved, float(w.site(site)[0][2]), gap)
    return [] if _lies_on_another(sk, obj, moved, normal) else [(target, rot)]


def _lies_on_another(sk: "PhysicsSkills", obj: str, centre: np.ndarray, normal: np.ndarray) -> bool:
    """Whether ``obj``, set down with its centre at ``centre`` (turned as it would be), would
    cover another object's centre (with that one's half size round it)."""
    w = sk.world
    half = np.array(object_geometry(w.things[obj].props).half)
    across = np.array([-normal[1], normal[0], 0.0])
    along = float(np.abs(w.rotation(obj).T @ normal) @ half)
    side = float(np.abs(w.rotation(obj).T @ across) @ half)
    for name, thing in w.things.items():
        if name == obj or thing.kind != ThingKind.OBJECT or thing.body_id < 0 or sk.holding(name):
            continue
        d = w.position(name) - centre
        if abs(d[2]) > 0.3:
            continue
        r = max(object_geometry(thing.props).half[:2])
        if abs(d @ normal) < along + r and abs(d @ across) < side + r:
            return True
    return False
