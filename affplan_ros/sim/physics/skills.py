"""Skills as motions, judged by the physics state (ROS-free).

Each skill moves the robot only through its actuators and decides success from what the physics
shows afterwards: a grasp succeeded if both fingers touch the object and it rose with the hand;
a place succeeded if the object rests, in contact, on the support; a door or drawer is open when
its joint says so. A failure carries a code and a reason as the physics found it, so the
executor's ``FailureObservation`` can say why (unreachable, blocked, slipped, no free space,
container closed, too large) and recovery acts on the real cause.

* navigate: A* on an occupancy grid of the room (``navigation.py``), the base driven by its
  servos along the shortened path; arms tucked (or carrying) first.
* grasp: from above (gripper pointing down, or leaning forward to reach further), at the first
  candidate of ``grasps.py`` (a narrow side, a rim, a handle; those with room for the fingers
  first) an arm reaches: IK (mink) for pre-grasp, grasp and lift poses with the forearm clear of
  objects, joint-space move to the pre-grasp, a straight descent, close, a straight lift. Side
  grasps are not there yet, so what no grasp from above takes (a cloth or a book lying flat, a
  cup on a cupboard's floor under its roof) fails as too large, unreachable or blocked.
* place: a free spot on the support's top (clear of what stands there, room for the opening
  fingers), reachable by IK with the hand down or leaning, lowered onto it, released, hand
  withdrawn.
* putin: the same onto a container's inner floor (a bowl's bottom, a fridge's shelf, a drawer's
  box), or dropped in from over the rim where the floor is out of reach or taken; fails as
  container closed (door/drawer shut, lid on), too large (the footprint as held exceeds the
  opening) or no free space, and succeeds only if the object rests inside.
* open / close: grasp the handle, then move the base along the joint's path with the arm held
  still (an arc round a door's hinge, a line along a drawer's slide), let go, step back.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from math import asin, atan2, cos, hypot, pi, sin
from typing import Callable, Mapping, Optional, Sequence, TypeVar

import mujoco
import numpy as np

from affplan_ros.core.knowledge.objects import handle_parts
from affplan_ros.core.model.failure import Cause
from affplan_ros.sim.physics import two_hands
from affplan_ros.sim.physics.arm_paths import MAX_CHECKS, ArmPathPlanner
from affplan_ros.sim.physics.bodies import object_geometry, round_well, vertical_half
from affplan_ros.sim.physics.control import MotionOutcome, RobotControl
from affplan_ros.sim.physics.edge_grasp import edge_grasp, edge_place_poses, held_by_edge, is_flat_and_wide
from affplan_ros.sim.physics.grasps import (
    OPEN_MARGIN,
    RELEASE_MARGIN,
    Grasp,
    arm_in_the_way,
    closing,
    grasp_points,
    in_the_way,
    off_centre,
    opening,
)
from affplan_ros.sim.physics.ik import ArmIK, IKResult, horizontal_rotation, tilted_rotation, top_down_rotation
from affplan_ros.sim.physics.navigation import plan_base_path, segment_clear
from affplan_ros.sim.physics.openings import inner_height, lies_in
from affplan_ros.sim.physics.rims import dish_spots, drop_points, first_plan
from affplan_ros.sim.physics.robot import (
    ARM_SIDES,
    BASE_JOINTS,
    HOME_TORSO,
    LOOK_ARM,
    TORSO_JOINT,
    arm_joints,
    home_arm,
)
from affplan_ros.sim.physics.world import BasePose, PhysicsWorld, ThingKind, approach_pose, is_long, side_poses

T = TypeVar("T")

PRE_GRASP = 0.12        # m above the grasp pose the hand comes from
LIFT = 0.10             # m an object is lifted after closing
CARRY_LIFT = 0.05       # m a held object is lifted more where its way to the carry pose is not clear,
CARRY_LIFTS = 3         # at most this many times
# A long thing (a broom, a mop) swings its whole length round to the carry pose: it is lifted up to
# this many times, clear of what stands on the counter, before it turns, as a person lifts a mop
# off a counter before turning with it (three lifts left its 1.3 m sweeping the watering can off).
CARRY_LIFTS_LONG = 8
SHORT_APPROACH = 0.06   # m: approach and lift where the full ones are out of reach (a tall object's top)
DROP_GAP = 0.04         # m between a dropped object's bottom and the bin's rim when the hand opens
RELEASE_GAP = 0.01      # m between the object's bottom and the support when the gripper opens
# m kept between the base and obstacles when driving: the tucked hands stick out ~6 cm past the
# base (its radius is 0.27 m), so the disc that must stay clear is 0.34 m.
CLEARANCE = 0.07
STAND_ASIDE = (0.0, 0.05, -0.05, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3)   # m along a place's front tried to stand, in turn
HAND_HALF_WIDTH = 0.06   # m: a carrying hand's palm and fingers round its TCP
CARRIED_ROOM = 0.03      # m kept between what is carried and a person or a tall thing on the way
DISC_MIN = 0.05          # m: the least half width of the discs a long carried thing is covered by (few discs)
TALL = 1.0               # m: furniture higher than this stands as high as what is carried (1.2 m)
CARRIED_ABOVE = 0.03     # m a carried thing's bottom is kept above lower furniture and what stands on it
BACK_OUT = (0.1, 0.2, 0.3)   # m the base backs straight out, in turn, where no path keeps a carried thing clear
PERSON_STANDOFF = 0.15   # m further from a person than from furniture the base stops (within 0.8 m: 'at' them)
CARRY = (0.30, 0.22, 1.20)   # base-frame TCP position of a hand carrying something (y mirrored per side)
# rad a long thing carried across the front is turned, its far end forward, in turn: the other
# arm's tucked wrist stands 6 cm behind the line straight across (a mop's handle met it).
ACROSS_FORWARD = (0.0, 0.15, 0.3)
# m ahead of the base centre a handle is grasped, in turn: nearer or further, the base's path round
# a door's hinge is a smaller or larger arc (one may pass where a fridge stands in the other's way).
HANDLE_REACH = (0.55, 0.45, 0.65)
HANDLE_LATERAL = (0.15, 0.0, -0.12)   # m to the grasping arm's side (mirrored per arm), tried in turn
# Closing, where no place above is free: the handle near and well to the arm's side, the base beside
# the leaf nearer the hinge, so that its arc round the hinge is the smallest (as a person at an open
# fridge's door with someone standing a step from its edge).
HANDLE_BESIDE = ((0.35, 0.4), (0.35, 0.45))
HANDLE_PRE = 0.10        # m back from the handle the hand comes from
DOOR_TARGET = 1.6        # rad a door is opened to (about 90 degrees)
PART_WAY_TOLERANCE = 0.15   # rad: a door pulled part of the way counts as there within this
OPENED = 0.7             # fraction of the joint range that counts as opened
ARM_SIDE_OFFSET = 0.2    # m to its side of the base's centre line where an arm works best
GRASP_TRIES = 3          # ways of taking a thing tried where the fingers closed on nothing
MAX_GRASPS = 6           # grasp candidates tried (each costs IK for up to four finger directions)
# The palm (robot.py: a 6 x 10 x 6 cm box 8.5 cm behind the TCP) as two balls along its width, with
# half a centimetre of room.
PALM_BACK, PALM_SPREAD, PALM_RADIUS = 0.085, 0.02, 0.035
FOREARM_RADIUS = 0.05    # m: the forearm's capsule (4 cm, robot.py) and a centimetre of room
RETRY_CHECKS = 5 * MAX_CHECKS   # an arm path's budget where the straight way was stopped (~5 s at most)
# m along a place's front, from opposite the object, and rad the base turns, for the standing
# places a grasp tries when it does not reach from where the base lined up.
STAND_LATERAL = (0.0, 0.18, -0.18, 0.3, -0.3)
STAND_TURNS = (0.0, 0.5, -0.5, 0.9, -0.9)
# rad the base turns, side on, where no stand above reaches: a shoulder towards the place (17 cm
# nearer at 1.2 rad; the arm then reaches out sideways, within its shoulder yaw), as a person turns
# side on to reach far back across a counter. Tried last: the arm works near its limits.
STAND_TURNS_WIDE = (1.2, -1.2)
STAND_BACK = (0.0, 0.15)    # m further back than usual: a thing close to the base folds the arm, its elbow up
STAND_REACH = 0.55          # m from the shoulder to the wrist the standing places nearest it are tried first
# rad: side-on, the working shoulder (18 cm to the side of the torso) comes ~18 cm forward; tried last.
STAND_SIDE_ON = (1.65, -1.65)
STAND_CLOSER = 0.03         # m nearer than usual a side-on base may stand (its driving clearance still kept)
SIDE_ON_LIMIT = 4
TIGHT = 0.0075           # m of room beside each open finger under which a grasp waits for the base to rest
LEANS = (0.35, 0.6)      # rad a hand pointing down may lean forward to reach further (wrist pitch allows ~0.8)


@dataclass
class SkillResult:
    skill: str
    success: bool
    code: Optional[Cause] = None
    reason: str = ""
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def real_time_factor(self) -> float:
        return self.sim_seconds / self.wall_seconds if self.wall_seconds > 0 else float("inf")


class Skills:
    """The robot's skills on a ``PhysicsWorld``; ``held`` maps each hand to what it holds."""

    def __init__(self, world: PhysicsWorld, ik: Optional[ArmIK] = None):
        self.world = world
        self.ik = ik or ArmIK(world.spec)
        self.control = RobotControl(world)
        self.paths = ArmPathPlanner(world)
        self.held: dict[str, Optional[str]] = {side: None for side in ARM_SIDES}
        self._forearm_blocker: Optional[str] = None    # the last object a refused arm pose's forearm met
        self.planned_moves = 0       # arm moves that went round something (a planned path)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _run(self, skill: str, body, *args, **kwargs) -> SkillResult:
        sim0, wall0 = self.world.sim_seconds, time.perf_counter()
        result: SkillResult = body(*args, **kwargs)
        result.skill = skill
        result.sim_seconds = self.world.sim_seconds - sim0
        result.wall_seconds = time.perf_counter() - wall0
        return result

    @staticmethod
    def _fail(code: Cause, reason: str, **details) -> SkillResult:
        return SkillResult("", False, code, reason, details=details)

    @staticmethod
    def _ok(**details) -> SkillResult:
        return SkillResult("", True, details=details)

    def holding(self, name: str) -> Optional[str]:
        for side, held in self.held.items():
            if held == name:
                return side
        return None

    # -- navigate ------------------------------------------------------------------------------
    def navigate(self, location: str, near: Optional[str] = None,
                 point: Optional[np.ndarray] = None) -> SkillResult:
        """Drive to stand in front of ``location``; with ``near``, opposite that object; with
        ``point`` (world xy), opposite that point."""
        return self._run("navigate", self._navigate, location, near, point)

    def _navigate(self, location: str, near: Optional[str], point: Optional[np.ndarray] = None,
                  goal: Optional[BasePose] = None) -> SkillResult:
        if location not in self.world.things or self.world.things[location].placement is None:
            return self._fail(Cause.UNKNOWN, f"{location!r} is not a place in the physics world")
        place = self.world.things[location].placement
        assert place is not None
        lateral = 0.0
        if near is not None and near in self.world.things and self.world.things[near].body_id >= 0:
            point = self.world.position(near)
            props = self.world.things[near].props
            if (props.handle is not None or props.top_handle is not None) and self.holding(near) is None:
                # Opposite where the hand takes it: a mop's handle near its head, not its middle.
                point = self.grasp_candidates(near)[0][0].target
        if point is not None:
            lateral = place.to_local(point[0], point[1])[0]
        radius = self.world.spec.base_radius + CLEARANCE

        def stand(at: float) -> BasePose:
            if self.world.things[location].kind == ThingKind.AGENT:
                # A person is met a step further off than furniture: what the robot carries (a
                # knife held across) swings round with the base as it turns to face them.
                return approach_pose(self.world.things[location], self.world.spec, at, PERSON_STANDOFF)
            return self.world.approach_pose(location, at)

        tuck = self._tuck()
        if not tuck.ok:
            return self._fail(Cause.BLOCKED, f"could not tuck the arms before driving: {tuck.joint} is held "
                              f"{tuck.error:.2f} from its target")
        start = self.world.base_pose()
        # What is carried, and the hand carrying it, may stick out past the tucked hands (a knife
        # held across, 1.2 m high): a path that keeps it clear of what stands as high on the way
        # (people, open door leaves, a fridge), where there is one.
        more = self._carried_reach() - radius
        # (Not the furniture driven to: the base stands close to its front to work there; but its
        # open door's leaf, and a person driven to, are kept clear.)
        tall = {n: more for n in self._tall_obstacles()
                if n != location or self.world.things[location].kind == ThingKind.AGENT}
        if goal is None:
            # Where the place to stand is taken (the leaf of a door opened to the side, a person
            # beside a table), a little to one side along the front, as a person steps aside.
            goals = [stand(lateral + d) for d in STAND_ASIDE]
            free = [g for g in goals if not segment_clear(self.world, (g.x, g.y), (g.x, g.y), radius)]
            goal = self._carried_clear(free, self._clear_at_goal(tall)) or next(iter(free), goals[0])
        path = plan_base_path(self.world, start, goal, radius, wider=tall) if more > 0 and tall else None
        if path is None and more > 0 and tall:
            path = self._carrying_path(start, goal, radius, list(tall))
        if path is None and more > 0 and tall:
            path = self._backing_out(start, goal, radius, tall)
        path = path or plan_base_path(self.world, start, goal, radius)
        if path is None:
            hit = segment_clear(self.world, (goal.x, goal.y), (goal.x, goal.y), radius)
            where = f"{hit} is too close to the place to stand" if hit else "every way there is blocked"
            return self._fail(Cause.BLOCKED, f"no collision-free path to {location}: {where}")
        outcome = self.control.drive(path)
        if not outcome.ok:
            pose = self.world.base_pose()
            return self._fail(Cause.BLOCKED, f"the base stopped {outcome.error:.2f} m/rad short of its goal at "
                              f"({pose.x:.2f}, {pose.y:.2f}); something is in the way")
        return self._ok(pose=self.world.base_pose())

    def _tuck(self) -> MotionOutcome:
        """Free arms to the tucked pose, arms that hold something to the carry pose (the object
        above the base, higher than furniture), torso up: the base can then drive close to
        furniture without sweeping anything off it."""
        targets: dict[str, float] = {TORSO_JOINT: HOME_TORSO}
        if two_hands.both_hands(self):
            return self.control.follow([{**targets, **(two_hands.carry_joints(self) or {})}])
        for side in ARM_SIDES:
            if self.held[side] is None:
                targets.update(zip(arm_joints(side), home_arm(side, self.world.spec)))
                continue
            carry = self._carry_pose(side)
            if carry is not None:
                self._carry_round(side, carry)
                targets.update(carry)
        return self.control.follow([targets])

    def clear_view(self) -> list[str]:
        """Free arms up out of the head camera's view (``LOOK_ARM``), each on a path clear of what
        stands about (an arm with no such path stays tucked); the sides moved, for
        :meth:`end_view`. An arm that holds something stays as it is."""
        moved = []
        for side in ARM_SIDES:
            if self.held[side] is not None:
                continue
            start = self.control.joints()
            goal = dict(zip(arm_joints(side), home_arm(side, self.world.spec, LOOK_ARM)))
            path = self.paths.path(side, start, {**start, **goal})
            if path is None:
                continue
            self.planned_moves += path.planned
            if self.control.follow([{j: wp[j] for j in goal} for wp in path.waypoints]).ok:
                moved.append(side)
        return moved

    def end_view(self, sides: Sequence[str]) -> None:
        """The arms :meth:`clear_view` raised back to the tucked pose, round what is in the way."""
        for side in sides:
            self._withdraw(side)
            home = dict(zip(arm_joints(side), home_arm(side, self.world.spec)))
            self.control.follow([home])   # where no path was found, the tuck's straight line

    def _withdraw(self, side: str) -> None:
        """The empty hand back to its tucked pose round what is in the way, where the straight
        line (the tuck's) is not clear: out of a box, the fingers' straight way back hooked its
        wall and lifted the box off the counter."""
        start = self.control.joints()
        home = dict(zip(arm_joints(side), home_arm(side, self.world.spec)))
        path = self.paths.path(side, start, {**start, **home})
        if path is not None and path.planned:
            self.planned_moves += 1
            self.control.follow([{j: wp[j] for j in home} for wp in path.waypoints])

    def _carry_round(self, side: str, carry: Mapping[str, float]) -> None:
        """Where the straight joint-space line to the carry pose (the tuck's) is not clear of what
        stands about, what the hand holds is first lifted straight up, 5 cm at a time (at most
        three times), until it is: a 22 cm bag of chips just lifted from 3 cm beside a can swept
        it over on the straight way. (Not a planned path round it: its turns of the wrist rolled a
        light cornflakes pack over between the pads.) A long thing (a broom) is lifted up to
        ``CARRY_LIFTS_LONG`` times, and where its swing is still not clear (the arm reaching out
        sideways lifts it no higher), it goes round on a planned path: held by its handle it does
        not roll, and straight, its 1.2 m swept a paper towel and the watering can off the counter."""
        obj = self.held[side]
        # (so is a thing that hangs from a handle over its top, a watering can: it cannot roll
        # over between the pads, and lifted three times its body still swept a pot beside it)
        long = obj is not None and (is_long(self.world.things[obj].props)
                                    or self.world.things[obj].props.top_handle is not None)
        for _ in range(CARRY_LIFTS_LONG if long else CARRY_LIFTS):
            start = self.control.joints()
            if self.paths.straight_clear(side, start, {**start, **carry}, held=obj) is not False:
                return
            at, rot = self.ik.tcp_pose(side, start)
            up = self.ik.solve(side, at + np.array([0.0, 0.0, CARRY_LIFT]), rot, start)
            if not up.success:
                break
            self.control.follow(self._straight(side, start, {**start, **up.joints}), speed_scale=0.5)
        if long:
            start = self.control.joints()
            path = self.paths.path(side, start, {**start, **carry}, held=obj, max_checks=RETRY_CHECKS)
            if path is not None and path.planned:
                self.planned_moves += 1
                self.control.follow([{j: wp[j] for j in carry} for wp in path.waypoints], speed_scale=0.5)

    def move_arm(self, side: str, joints: Mapping[str, float], speed_scale: float = 1.0) -> MotionOutcome:
        """Move ``side``'s arm (and the torso, if ``joints`` has it) to ``joints`` clear of
        everything, with what the hand holds (``arm_paths.py``): the straight joint-space line
        where it is clear, else an RRT-Connect path round what is in the way. Where the goal itself is
        within the clearance of something (a pre-grasp pose beside a tomato) or no path is found,
        the straight line all the same: the physics then shows whether something stops the arm."""
        start = self.control.joints()
        goal = {**start, **joints}
        path = self.paths.path(side, start, goal, held=self.held[side])
        if path is None and not self.paths.collision(side, goal, self.held[side]):
            # The goal is clear but the usual budget found no way round to it (a plate into a
            # dishwasher's low cabinet, the arm under its top): the straight way would hit
            # something, and what the hand holds turns in it. A larger budget first.
            path = self.paths.path(side, start, goal, held=self.held[side], max_checks=RETRY_CHECKS)
        if path is None or not path.planned:
            return self.control.follow([dict(joints)], speed_scale=speed_scale)
        self.planned_moves += 1
        return self.control.follow([{j: wp[j] for j in joints} for wp in path.waypoints], speed_scale=speed_scale)

    def _carry_pose(self, side: str) -> Optional[dict[str, float]]:
        sign = -1.0 if side == "r" else 1.0
        base = self.world.base_pose()
        _, rot, _ = self.world.site(f"{side}_tcp")
        rot_base = self.world.rotation_to_base(rot, base)
        yaw = atan2(rot_base[1, 1], rot_base[0, 1])
        seed = {**self.control.joints(), TORSO_JOINT: HOME_TORSO}
        # A flat thing held by its edge is carried level, the hand level too (it would hang down),
        # pointing in across the robot's front (the level hand pointing straight ahead is beyond
        # the joint limits there; left where it was, it held a book 60 cm out into the person met).
        across = self._across_hands(side)
        if held_by_edge(self, side):
            hands = [horizontal_rotation(h, fingers_vertical=True) for h in (-sign * pi / 4, -sign * pi / 8)]
        else:
            hands = across or [top_down_rotation(yaw)]
        # (a level hand from far out reaches it only from a reaching posture, as ``_solve`` does)
        seeds = [seed] + [{**seed, **dict(zip(arm_joints(side), _READY[side]))}] * (len(hands) > 1)
        first = None
        for hand in hands:
            for start in seeds:
                r = self.ik.solve(side, np.array([CARRY[0], sign * CARRY[1], CARRY[2]]), hand, start, use_torso=False)
                if r.success:
                    joints = {j: r.joints[j] for j in arm_joints(side)}
                    # (a long thing: the first way across clear of the other arm)
                    if not across or not self.paths.collision(side, {**seed, **joints}, self.held[side]):
                        return joints
                    first = first or joints
        return first

    def _across_hands(self, side: str) -> list[np.ndarray]:
        """The hand's rotations (base frame) that carry a long held thing (a broom, a mop) across
        the base's front, level, its far end towards the other arm's side, as a person carries a
        broom along the body (kept as it was taken, its 1.2 m pointed ahead into the person the
        base drove up to; a mop gripped off its balance point, left sloping 5 degrees in the grip,
        met the other arm's tucked wrist with its far end); straight across, then its far end
        turned forward (``ACROSS_FORWARD``), past the tucked wrist. Empty for anything else."""
        w, obj = self.world, self.held[side]
        if obj is None or not is_long(w.things[obj].props):
            return []
        hand = w.rotation_to_base(w.site(f"{side}_tcp")[1])
        length = w.rotation_to_base(w.rotation(obj))[:, int(np.argmax(w.things[obj].props.size[:2]))]
        if length @ (w.to_base_frame(w.position(obj)) - w.to_base_frame(w.site(f"{side}_tcp")[0])) < 0:
            length = -length                                    # towards its far end
        in_hand = hand.T @ length
        yaw = atan2(hand[1, 1], hand[0, 1])
        far = top_down_rotation(yaw) @ in_hand                  # where it points with the hand straight down
        inward = pi / 2 if side == "r" else -pi / 2
        out = []
        for forward in ACROSS_FORWARD:
            heading = inward - forward if side == "r" else inward + forward
            down = top_down_rotation(yaw + heading - atan2(far[1], far[0]))
            level = down @ in_hand
            out.append(tilted_rotation(down, atan2(level[1], level[0]), -asin(float(np.clip(level[2], -1.0, 1.0)))))
        return out

    def _clear_at_goal(self, tall: Mapping[str, float]) -> list[str]:
        """Of ``tall``, what the carried things must be clear of where the base stops: furniture
        (a person is met with the thing held towards them), and a person too while something long
        is carried (a broom pointing ahead arrived pressed into them)."""
        long = any(o is not None and is_long(self.world.things[o].props) for o in self.held.values())
        return [n for n in tall if long or getattr(self.world.things.get(n), "kind", None) != ThingKind.AGENT]

    def _carried_reach(self) -> float:
        """How far (m) from the base's centre, horizontally, what the hands hold, and the hands
        holding it, reach now."""
        w, reach = self.world, 0.0
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        for side, obj in self.held.items():
            if obj is not None:
                corners = w.position(obj) + (signs * object_geometry(w.things[obj].props).half) @ w.rotation(obj).T
                local = np.array([w.to_base_frame(c) for c in corners])
                hand = w.to_base_frame(w.site(f"{side}_tcp")[0])
                reach = max(reach, float(np.hypot(local[:, 0], local[:, 1]).max()),
                            float(np.hypot(hand[0], hand[1])) + HAND_HALF_WIDTH)
        return max([reach] + [float(np.hypot(x, y)) + r for x, y, r in two_hands.elbow_discs(self, 0.0)])

    def _carrying_path(self, start: BasePose, goal: BasePose, radius: float,
                       among: list[str]) -> Optional[list[BasePose]]:
        """Where no path keeps a carried thing's whole reach round the base clear of ``among`` (a
        plate held out 0.74 m from the base's centre, a person in the middle of the room): turn
        on the spot to the goal's heading first, then drive keeping it, on a path where what is
        carried, where it is on that side of the base, keeps clear of them. None if there is none."""
        discs = self._carried_discs()

        def turned(yaw: float) -> list[tuple[float, float, float]]:
            c, s = np.cos(yaw), np.sin(yaw)
            return [(c * x - s * y, s * x + c * y, r) for x, y, r in discs]

        here = (start.x, start.y)
        turn = (goal.yaw - start.yaw + pi) % (2 * pi) - pi        # the way the servos turn
        if any(segment_clear(self.world, here, here, 0.0, carried=turned(start.yaw + turn * k / 12), among=among)
               for k in range(13)):
            return None
        path = plan_base_path(self.world, start, goal, radius, carried=turned(goal.yaw), among=among)
        return None if path is None else [BasePose(start.x, start.y, goal.yaw)] + path

    def _carried_clear(self, goals: list[BasePose], among: list[str]) -> Optional[BasePose]:
        """The first of ``goals`` where what is carried keeps clear of ``among`` (a box carried to
        the right of the base scraped the open fridge door's leaf as the base arrived in front of
        the fridge, and was pushed from between the fingers); None where nothing is carried or
        none of them does (then where the base itself fits, as before)."""
        discs = self._carried_discs()
        if not discs or not among:
            return None

        def turned(yaw: float) -> list[tuple[float, float, float]]:
            c, s = np.cos(yaw), np.sin(yaw)
            return [(c * x - s * y, s * x + c * y, r) for x, y, r in discs]

        return next((g for g in goals if segment_clear(self.world, (g.x, g.y), (g.x, g.y), 0.0,
                                                       carried=turned(g.yaw), among=among) is None), None)

    def _carried_discs(self) -> list[tuple[float, float, float]]:
        """Each held thing with the hand holding it as a disc in the base frame: (x, y, radius); a
        long thing (a broom) as a row of discs along each of its parts (handle, head), the hand
        as one more: one disc round a 1.2 m broom held across is 1.3 m wide where the broom is a
        3 cm handle, and no place to stand before a person kept it clear."""
        w, out = self.world, []
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        for side, obj in self.held.items():
            if obj is None:
                continue
            props = w.things[obj].props
            hand = w.to_base_frame(w.site(f"{side}_tcp")[0])[:2]
            if is_long(props):
                out += _part_discs(w, obj) + [(float(hand[0]), float(hand[1]), HAND_HALF_WIDTH + CARRIED_ROOM)]
                continue
            corners = w.position(obj) + (signs * object_geometry(props).half) @ w.rotation(obj).T
            local = np.array([w.to_base_frame(c)[:2] for c in corners])
            centre = w.to_base_frame(w.position(obj))[:2]
            r = max(float(np.hypot(*(local - centre).T).max()), float(np.hypot(*(hand - centre))) + HAND_HALF_WIDTH)
            out.append((float(centre[0]), float(centre[1]), r + CARRIED_ROOM))
        return out + two_hands.elbow_discs(self, CARRIED_ROOM)

    def _tall_obstacles(self) -> list[str]:
        """The obstacles (``world.obstacles`` names) that stand as high as things are carried:
        people, the leaves of open doors, furniture taller than ``TALL``, and lower furniture
        where it, or what stands on it, reaches up to ``CARRIED_ABOVE`` below the bottom of what
        is carried (a 40 cm watering can hanging from its top handle, driven off along the
        counter it was taken from, swept into a paper towel roll standing there)."""
        out = []
        bottom = self._carried_bottom()
        reaching = self._standing_tops() if bottom is not None else {}
        for name, thing in self.world.things.items():
            if thing.placement is None:
                continue
            if thing.kind == ThingKind.AGENT or (thing.geometry is not None and thing.geometry.height > TALL):
                out.append(name)
            elif bottom is not None and thing.geometry is not None \
                    and max(thing.geometry.height, reaching.get(name, 0.0)) + CARRIED_ABOVE > bottom:
                out.append(name)
            if thing.joint.endswith("/hinge") and self.world.qpos(thing.joint) >= 0.01:
                out.append(f"{name} (open)")
        return out

    def _carried_bottom(self) -> Optional[float]:
        """The world height of the lowest point of what the hands hold (None: they hold nothing,
        or only a long thing, which is carried level across the front, clear of the counters)."""
        w = self.world
        held = [o for o in self.held.values() if o is not None and not is_long(w.things[o].props)]
        if not held:
            return None
        return min(float(w.position(o)[2]) - vertical_half(w.things[o].props, w.rotation(o)) for o in held)

    def _standing_tops(self) -> dict[str, float]:
        """For each piece of furniture no higher than ``TALL``, the highest top of the things
        standing within its footprint above it. From the bodies' positions alone: a contact query
        runs a forward pass that wakes sleeping bodies, and the simulation then goes on from a
        different state (measured: a screw's grasp three steps later came out otherwise)."""
        w, out = self.world, {}
        low = [(n, t) for n, t in w.things.items() if t.kind == ThingKind.FURNITURE and t.placement is not None
               and t.geometry is not None and t.geometry.height <= TALL]
        for name, thing in w.things.items():
            if thing.kind != ThingKind.OBJECT or self.holding(name):
                continue
            at = w.position(name)
            top = float(at[2]) + vertical_half(thing.props, w.rotation(name))
            for support, piece in low:
                if top > piece.geometry.height and piece.placement.distance(at[0], at[1]) <= 0.0:
                    out[support] = max(out.get(support, 0.0), top)
        return out

    def _backing_out(self, start: BasePose, goal: BasePose, radius: float,
                     tall: Mapping[str, float]) -> Optional[list[BasePose]]:
        """Where the base stands too close to what the carried things must keep clear of for any
        path from there (it has just taken something from that counter), straight back first,
        ``BACK_OUT`` at a time, as a person steps back from a counter before turning away with
        what they took, then a path that keeps clear; None if none does."""
        c, s_ = cos(start.yaw), sin(start.yaw)
        for d in BACK_OUT:
            back = BasePose(start.x - d * c, start.y - d * s_, start.yaw)
            if segment_clear(self.world, (start.x, start.y), (back.x, back.y), radius) is not None:
                break
            if segment_clear(self.world, (back.x, back.y), (back.x, back.y), radius, wider=tall) is not None:
                continue
            rest = plan_base_path(self.world, back, goal, radius, wider=tall)
            if rest is not None:
                return [back] + rest
        return None

    # -- grasp ---------------------------------------------------------------------------------
    def grasp(self, obj: str, source: Optional[str] = None, side: Optional[str] = None,
              along: Optional[str] = None) -> SkillResult:
        """Pick ``obj`` (from ``source``, a support or container, when given) with a top-down grasp;
        ``along``: the place the robot stands at, where it may stand elsewhere round it (turned,
        to one side, at an end) when no arm reaches the grasp from where it stands."""
        return self._run("grasp", self._grasp, obj, source, side, along)

    def _grasp(self, obj: str, source: Optional[str], side: Optional[str],
               along: Optional[str] = None) -> SkillResult:
        w = self.world
        thing = w.things.get(obj)
        if thing is None or thing.kind != ThingKind.OBJECT:
            return self._fail(Cause.UNKNOWN, f"{obj!r} is not a carryable object in the physics world")
        if self.holding(obj):
            return self._ok(side=self.holding(obj), note="already held")
        if source is not None and not self._is_at(obj, source):
            return self._fail(Cause.NOT_FOUND, f"{obj} is not on or in {source} (it touches "
                              f"{', '.join(sorted(x or 'the floor' for x in w.contacts(obj))) or 'nothing'})")
        closed = self._enclosing_closed(obj)
        if closed:
            return self._fail(Cause.CONTAINER_CLOSED, f"{obj} is inside {closed}, which is closed")
        free = [s for s in ARM_SIDES if self.held[s] is None]
        if side is not None:
            if self.held[side] is not None:
                return self._fail(Cause.HAND_FULL, f"the {side} hand holds {self.held[side]}")
            free = [side]
        if not free:
            return self._fail(Cause.HAND_FULL, "both hands are full")
        candidates = self.grasp_candidates(obj)
        if self._tight(candidates[0][0]) and not self.control.at_rest():
            # Planned from where the base stands: a drive ends within 1 cm of its goal, and a base
            # still creeping there carries the hand along (a finger with 5 mm of room beside a
            # roll of tape came down on it). Where the fingers have that little room, it waits.
            self.control.come_to_rest()
            candidates = self.grasp_candidates(obj)
        width, target = candidates[0][0].width, candidates[0][0].target
        if is_flat_and_wide(self, obj, width):
            return edge_grasp(self, obj, source, free)    # a book: slid to the edge, taken by it
        if two_hands.needs_two_hands(self, obj, width):
            return two_hands.grasp(self, obj, along)     # a salad: between both hands
        if width > w.spec.max_aperture - 0.01:
            return self._fail(Cause.TOO_LARGE, f"{obj} is {width * 100:.0f} cm across its narrowest side; the "
                              f"gripper opens {w.spec.max_aperture * 100:.0f} cm")
        # The first candidate an arm reaches, the arm on the grasp point's side of the robot first;
        # a tall object's top may be too high for the full approach and lift: then a short one.
        self._forearm_blocker = None
        found = self._find_grasp(obj, candidates, free)
        if found is None and along is not None:
            blocker = self._forearm_blocker
            found = self._grasp_elsewhere(obj, free, along)
            self._forearm_blocker = self._forearm_blocker or blocker
            candidates = self.grasp_candidates(obj)
            target = candidates[0][0].target
        if found is None:
            local = w.to_base_frame(target)
            dist = hypot(local[0], local[1])
            why = f"where IK finds a pose, the forearm or the palm would pass through {self._forearm_blocker}" \
                if self._forearm_blocker else \
                "IK finds no solution within the joint limits"
            return self._fail(Cause.UNREACHABLE, f"no arm reaches a top-down grasp of {obj} at "
                              f"{dist:.2f} m from the base centre, {target[2]:.2f} m high ({why})", distance=dist)
        # Fingers that closed on nothing (a palm stopped on a bowl's rim above a screw) are felt
        # at once, and the robot tries the next other way to take it, as long as it lies where
        # it lay; a grasp that lifted and lost it is not tried again.
        tried: list[Grasp] = []
        while True:
            side, grasp, plan = found
            result = self._take(obj, side, grasp, plan)
            if result.success or not result.details.get("missed") or len(tried) + 1 >= GRASP_TRIES:
                return result
            tried.append(grasp)
            others = [c for c in self.grasp_candidates(obj) if not any(_same_way(c[0], t) for t in tried)]
            found = self._find_grasp(obj, others, free) if others else None
            if found is None and others and along is not None:
                found = self._grasp_elsewhere(obj, free, along, avoid=tried)
            if found is None:
                return result

    def _take(self, obj: str, side: str, grasp: Grasp, plan: tuple[dict, dict, dict]) -> SkillResult:
        """One grasp of ``obj`` as planned: open, come down, close, lift; judged by the physics."""
        w = self.world
        thing = w.things[obj]
        pre, at, lifted = plan
        self.control.set_gripper(side, opening(grasp.spread, w.spec.max_aperture), 0.3)
        out = self.move_arm(side, pre)
        if not out.ok:
            return self._blocked(out, f"moving to the pre-grasp pose above {obj}")
        out = self.control.follow(self._straight(side, pre, at), speed_scale=0.5)
        if not out.ok:
            return self._blocked(out, f"approaching {obj}")
        z0 = w.position(obj)[2]
        aperture = self.control.set_gripper(side, closing(grasp, thing.props.mass), 0.8)
        pads = self._pads(side)
        touching = w.touching_geoms(obj, pads)
        if len(touching) < 2:
            self.control.set_gripper(side, w.spec.max_aperture, 0.3)
            self.control.follow([pre])
            return self._fail(Cause.SLIPPED, f"the fingers closed to {aperture * 100:.1f} cm without holding "
                              f"{obj} ({len(touching)} of 2 fingers touch it)", missed=True)
        hand0 = w.site(f"{side}_tcp")[0][2]
        out = self.control.follow(self._straight(side, at, lifted), speed_scale=0.5)
        w.step(w.steps(0.3))
        risen = w.position(obj)[2] - z0
        # With the hand: it rose (most of) what the hand rose, and the hand rose (if the descent
        # stopped early on something, the hand rises from there, less than LIFT above the target).
        hand = w.site(f"{side}_tcp")[0][2] - hand0
        touching = w.touching_geoms(obj, pads)
        if len(touching) < 2 or hand < 0.5 * SHORT_APPROACH or risen < 0.8 * hand:
            return self._fail(Cause.SLIPPED, f"{obj} did not rise with the hand (rose {risen * 100:.1f} cm as "
                              f"the hand rose {hand * 100:.1f}; {len(touching)} of 2 fingers touch it)", risen=risen)
        self.held[side] = obj
        return self._ok(side=side, risen=risen, aperture=self.control.aperture(side))

    def _tight(self, grasp: Grasp) -> bool:
        """Whether the open fingers have less than ``TIGHT`` of room on either side of ``grasp``'s
        object (an 8 cm roll of tape or an apple in the 9 cm gripper: 5 mm)."""
        return (opening(grasp.spread, self.world.spec.max_aperture) - grasp.width) / 2 < TIGHT

    def _find_grasp(self, obj: str, candidates: list[tuple[Grasp, list[float]]], free: list[str],
                    base: Optional[BasePose] = None) -> Optional[tuple[str, Grasp, tuple[dict, dict, dict]]]:
        """The first candidate an arm reaches from ``base`` (default: where it stands), the arm
        on the grasp point's side of the robot first; a tall object's top may be too high for the
        full approach and lift: then a short one. (arm, grasp, (pre, at, lifted)) or None."""
        w = self.world

        def own_side_first(grasp: Grasp) -> list[str]:
            return sorted(free, key=lambda s: (w.to_base_frame(grasp.target, base)[1] < 0) != (s == "r"))

        return next(((s, grasp, plan) for above, lift in ((PRE_GRASP, LIFT), (SHORT_APPROACH, SHORT_APPROACH))
                     for grasp, yaws in candidates for s in own_side_first(grasp)
                     if (plan := self._plan_descent(s, self._grasp_poses(s, grasp, yaws, base), above, lift, base,
                                                    taking=_palm_checked(obj, grasp))) is not None), None)

    def _grasp_elsewhere(self, obj: str, free: list[str], along: str,
                         avoid: Sequence[Grasp] = ()) -> Optional[tuple[str, Grasp, tuple[dict, dict, dict]]]:
        """Stand elsewhere at ``along`` where an arm reaches a grasp of ``obj``, and go there (as a
        person at a table steps to one side or turns a shoulder towards what lies far back). The
        base poses of ``grasp_stands`` are tried in turn, IK only (the robot does not move), the
        first with a grasp is driven to and the grasp planned again from where the base stopped;
        not the ways of taking it in ``avoid`` (tried, the fingers closed on nothing)."""

        def ways(base: Optional[BasePose] = None) -> list[tuple[Grasp, list[float]]]:
            return [c for c in self.grasp_candidates(obj, base) if not any(_same_way(c[0], a) for a in avoid)]

        for pose in self.grasp_stands(obj, free, along):
            plan = self._find_grasp(obj, ways(pose)[:3], free, pose)
            if plan is None:
                continue
            if not self._navigate(along, None, goal=pose).success:
                continue
            return self._find_grasp(obj, ways(), free)
        return None

    def grasp_stands(self, obj: str, free: list[str], along: str, limit: int = 8) -> list[BasePose]:
        """Free base poses at ``along`` (before its front, or a step further back, or at its ends,
        facing it or turned up to ``STAND_TURNS``) from which a free arm's wrist over ``obj``'s
        grasp point is nearest ``STAND_REACH`` from its shoulder (neither stretched nor folded),
        at most ``limit``; only those within the arm's length (with a lean). Turning the base
        brings one shoulder forward (it sits 18 cm to the side of the torso): ~10 cm of reach at
        0.6 rad; standing aside puts the shoulder behind the object. After them, up to ``limit``
        more turned side on (``STAND_TURNS_WIDE``, the mop far back on a counter); last, at most
        ``SIDE_ON_LIMIT``, side-on before its front (``STAND_SIDE_ON``), as near as the base
        drives (``STAND_CLOSER``), the shoulder nearest the wrist first: the shoulder 18 cm further
        forward, the arm folded with its elbow over the thing, as into a deep bucket near the
        back of a table (the forearm steep enough to clear its rim)."""
        w = self.world
        thing = w.things.get(along)
        if thing is None or thing.placement is None or thing.kind == ThingKind.AGENT:
            return []
        target = self.grasp_candidates(obj)[0][0].target
        wrist = target + np.array([0.0, 0.0, w.spec.wrist_to_tcp])
        lx, ly = thing.placement.to_local(target[0], target[1])
        fronts = [_stepped_back(w.approach_pose(along, lx + d), back) for back in STAND_BACK for d in STAND_LATERAL]
        bases = fronts + side_poses(thing, w.spec, ly)

        def reach(dist: float) -> float:
            return abs(dist - STAND_REACH)

        usual = self._free_stands(wrist, free, bases, STAND_TURNS, reach)
        wide = self._free_stands(wrist, free, bases, STAND_TURNS_WIDE, reach)
        near = [_stepped_back(w.approach_pose(along, lx + d), back) for back in (-STAND_CLOSER, 0.0)
                for d in STAND_LATERAL]
        side_on = self._free_stands(wrist, free, near, STAND_SIDE_ON, lambda dist: dist)
        return usual[:limit] + wide[:limit] + side_on[:SIDE_ON_LIMIT]

    def _free_stands(self, wrist: np.ndarray, free: list[str], bases: list[BasePose], turns: tuple[float, ...],
                     score: Callable[[float], float]) -> list[BasePose]:
        """``bases`` turned by each of ``turns`` where the base is free and a free arm's shoulder
        is within the arm's length (leaning) of ``wrist`` (world), best ``score`` of that distance
        first; not where it stands now."""
        w = self.world
        radius = w.spec.base_radius + CLEARANCE
        here = w.base_pose()
        scored = []
        for b in bases:
            for turn in turns:
                pose = BasePose(b.x, b.y, b.yaw + turn)
                dist = min(self._wrist_distance(s, w.to_base_frame(wrist, pose)) for s in free)
                if dist > w.spec.upper_arm + w.spec.forearm + 0.06:
                    continue    # (beyond the arm even leaning 0.6 rad: the wrist 8 cm nearer)
                if abs(pose.x - here.x) + abs(pose.y - here.y) < 0.02 and abs(turn) < 1e-6:
                    continue    # (where it stands: tried already)
                scored.append((score(dist), pose))
        scored.sort(key=lambda t: t[0])
        return [p for _, p in scored if segment_clear(w, (p.x, p.y), (p.x, p.y), radius) is None]

    def grasp_candidates(self, obj: str, base: Optional[BasePose] = None) -> list[tuple[Grasp, list[float]]]:
        """The top-down grasps of ``obj`` as it lies now (``grasps.py``), each with the finger yaws
        to try, seen from ``base`` (default: where the robot stands): those that leave both fingers
        room first, with the yaws that do; then, up to ``MAX_GRASPS`` in all, the others with all
        their yaws (the physics then shows whether the fingers get there); last, the clear ones
        with the hand off the middle (``grasps.off_centre``), where the fingers have room."""
        w = self.world
        base = base or w.base_pose()
        held = tuple(h for h in self.held.values() if h)

        def room(grasp: Grasp) -> list[float]:
            return [y for y in self._grasp_yaws(base, grasp.target, grasp.finger_yaw)
                    if in_the_way(w, obj, grasp.target, grasp.spread, y, w.spec.max_aperture, held) is None]

        clear, blocked = [], []
        for grasp in grasp_points(w, obj, base, w.spec.max_aperture - 0.01):
            yaws = room(grasp)
            (clear if yaws else blocked).append((grasp, yaws or self._grasp_yaws(base, grasp.target, grasp.finger_yaw)))
        off = [(g, yaws) for grasp, _ in clear for g in off_centre(w, obj, grasp, w.spec.max_aperture)
               if (yaws := room(g))]
        return (clear + blocked)[:MAX_GRASPS] + off

    def top_down_grasp(self, obj: str, base: Optional[BasePose] = None) -> tuple[float, Optional[float], np.ndarray]:
        """The best top-down grasp of ``obj`` as it lies now: the width across which the fingers
        close, their direction (None: round, any) and the TCP target (world); ``base``: where the
        robot stands (default: now)."""
        grasp = self.grasp_candidates(obj, base)[0][0]
        return grasp.width, grasp.finger_yaw, grasp.target

    def grasp_reachable(self, obj: str, base: BasePose) -> bool:
        """Would a free arm reach a top-down grasp of ``obj`` from ``base`` (IK for the pre-grasp,
        grasp and lift poses; the robot does not move)?"""
        return any(self._plan_descent(s, self._grasp_poses(s, grasp, yaws, base), PRE_GRASP, LIFT, base,
                                      taking=_palm_checked(obj, grasp)) is not None
                   for grasp, yaws in self.grasp_candidates(obj, base)[:3]
                   for s in ARM_SIDES if self.held[s] is None)

    def _grasp_poses(self, side: str, grasp: Grasp, yaws: list[float],
                     base: Optional[BasePose] = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """(TCP target, world rotation) of ``grasp`` with each finger yaw, straight down or leaning."""
        return [(grasp.target, r) for r in self._hand_rotations(side, grasp.target, yaws, False, base)]

    def start_holding(self, obj: str) -> SkillResult:
        """Set the world up with ``obj`` already in a free hand (a scenario that starts so): the arm
        goes to the carry pose, the object is put between the open fingers, and they close on it.
        Not a motion the robot makes; whether it is held is still read from the contacts."""
        w = self.world
        thing = w.things.get(obj)
        free = [s for s in ARM_SIDES if self.held[s] is None]
        if thing is None or thing.kind != ThingKind.OBJECT or thing.body_id < 0 or not free:
            return self._fail(Cause.UNKNOWN, f"{obj!r} cannot start in a hand")
        side = free[0]
        self.control.set_gripper(side, w.spec.max_aperture, 0.3)
        carry = self._carry_pose(side)
        if carry is not None:
            self.control.follow([carry])
        tcp, rot, _ = w.site(f"{side}_tcp")
        width, _, _ = self.top_down_grasp(obj)
        # Upright, its narrowest side across the fingers (rot[:, 1] is their closing axis).
        narrow_x = object_geometry(thing.props).half[0] * 2 <= width + 1e-6
        across = rot[:, 1] if narrow_x else np.array([-rot[1, 1], rot[0, 1], 0.0])
        yaw = atan2(across[1], across[0])
        quat = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        adr = w.model.jnt_qposadr[w.model.body_jntadr[thing.body_id]]
        dof = w.model.jnt_dofadr[w.model.body_jntadr[thing.body_id]]
        w.data.qpos[adr:adr + 3] = tcp
        w.data.qpos[adr + 3:adr + 7] = quat
        w.data.qvel[dof:dof + 6] = 0.0
        mujoco.mj_forward(w.model, w.data)
        self.control.set_gripper(side, 0.0, 0.6)
        w.step(w.steps(0.3))
        if len(w.touching_geoms(obj, self._pads(side))) < 2:
            return self._fail(Cause.SLIPPED, f"{obj} did not stay between the fingers")
        self.held[side] = obj
        return self._ok(side=side)

    def _grasp_yaws(self, base: BasePose, target: np.ndarray, finger_yaw: Optional[float]) -> list[float]:
        if finger_yaw is not None:
            return [finger_yaw, finger_yaw + pi]
        # Round things: fingers across the line from the robot, then the other ways round.
        across = atan2(target[1] - base.y, target[0] - base.x) + pi / 2
        return [across, across + pi, across + pi / 2, across - pi / 2]

    def _plan_vertical(self, side: str, target: np.ndarray, yaws: list[float], above: float,
                       after: float, base: Optional[BasePose] = None,
                       ignore: tuple[str, ...] = ()) -> Optional[tuple[dict, dict, dict]]:
        """``_plan_descent`` with the hand pointing straight down, the fingers along each of ``yaws``."""
        return self._plan_descent(side, [(target, top_down_rotation(y)) for y in yaws], above, after, base, ignore)

    def _plan_descent(self, side: str, poses: list[tuple[np.ndarray, np.ndarray]], above: float, after: float,
                      base: Optional[BasePose] = None, ignore: tuple[str, ...] = (),
                      taking: Optional[str] = None) -> Optional[tuple[dict, dict, dict]]:
        """IK for the hand ``above`` over a target, at it, and ``after`` over it again (a vertical
        line), for the first (target, world rotation) of ``poses`` all three are reachable with and
        where the forearm passes through no object but those held and ``ignore`` (from ``base``:
        default, where it stands); ``taking``: the object a grasp takes, whose neighbours the
        palm must clear too."""
        w = self.world
        base = base or w.base_pose()
        start = self.control.joints()
        ignore = ignore + tuple(h for h in self.held.values() if h)
        for target, rot_w in poses:
            if not self._within_arm_length(side, w.to_base_frame(target - w.spec.wrist_to_tcp * rot_w[:, 0], base)):
                continue
            # The torso where the IK puts it; where the forearm then meets something, raised to its
            # top and held there: the elbow high, the forearm steep, as a person reaching down into a
            # deep bucket straightens up (the IK alone lowered the torso and leaned the forearm
            # across the bucket's rim).
            for torso in (None, w.spec.torso_stroke):
                found, hit = self._descent(side, target, w.rotation_to_base(rot_w, base), above, after, base,
                                           start, ignore, taking, torso)
                if found is not None:
                    return found
                if not hit:
                    break
        return None

    def _descent(self, side: str, target: np.ndarray, rot: np.ndarray, above: float, after: float,
                 base: BasePose, start: Mapping[str, float], ignore: tuple[str, ...], taking: Optional[str],
                 torso: Optional[float]) -> tuple[Optional[tuple[dict, dict, dict]], bool]:
        """``_plan_descent``'s three poses for one target and hand rotation (base frame), the torso
        free or held at ``torso``: (the poses, or None; whether an arm pose was refused for
        passing through something, rather than out of the IK's reach)."""
        w = self.world
        found = []
        seed: Mapping[str, float] = start
        for dz in (above, 0.0, after):
            r = self._solve(side, w.to_base_frame(target + np.array([0, 0, dz]), base), rot, seed, torso)
            if not r.success:
                return None, False
            if self._forearm_hits(side, r.joints, base, ignore, taking):
                return None, True
            found.append(r.joints)
            seed = {**start, **r.joints}
        # The move to the first pose is a joint-space sweep: the forearm must pass clear there too.
        if any(self._forearm_hits(side, {j: q + (found[0][j] - q) * k / 4 for j, q in start.items()
                                         if j in found[0]}, base, ignore) for k in (1, 2, 3)):
            return None, True
        # A raised torso's poses reach down into a container, a few cm from its walls: checked on the
        # arm's own geometry (a forearm's four sample points passed a pose whose wrist met the wall).
        if torso is not None and any(self._arm_meets(side, {**start, **pose}, base, ignore + (taking or "",))
                                     for pose in found):
            return None, True
        return (found[0], found[1], found[2]), False

    def _arm_meets(self, side: str, joints: Mapping[str, float], base: BasePose,
                   ignore: tuple[str, ...]) -> Optional[str]:
        """What the arm in the pose ``joints``, standing at ``base``, comes within a centimetre of,
        on MuJoCo's geometry of its links and palm (not its fingers: they straddle what they take
        and reach down to its support), but ``ignore``; None where it is clear."""
        pose = {**joints, BASE_JOINTS[0]: base.x, BASE_JOINTS[1]: base.y, BASE_JOINTS[2]: base.yaw}
        hit = next((n for n in self.paths.collision(side, pose, fingers=False) if n not in ignore), None)
        self._forearm_blocker = hit or self._forearm_blocker     # (said when no pose is found)
        return hit

    def _hand_rotations(self, side: str, point: np.ndarray, yaws: list[float], any_lean: bool,
                        base: Optional[BasePose] = None, leans: tuple[float, ...] = LEANS) -> list[np.ndarray]:
        """World rotations of the hand over ``point``: pointing straight down with the fingers along
        each of ``yaws``, then leaning forward (away from the shoulder) by each of ``leans``: a hand
        that leans reaches further at the same height (a board at the back of a table). A grasp
        leans only about its closing axis (``any_lean`` False), which keeps the pads' faces
        vertical; a hand that holds something may lean any way (what it holds leans with it)."""
        w = self.world
        base = base or w.base_pose()
        c, s = np.cos(base.yaw), np.sin(base.yaw)
        sy = (-1.0 if side == "r" else 1.0) * w.spec.shoulder_offset_y
        shoulder = (base.x + c * w.spec.torso_x - s * sy, base.y + s * w.spec.torso_x + c * sy)
        heading = atan2(point[1] - shoulder[1], point[0] - shoulder[0])
        down = [top_down_rotation(y) for y in yaws]
        return down + [tilted_rotation(r, heading, lean) for lean in leans for r, y in zip(down, yaws)
                       if any_lean or abs(np.sin(y - heading)) > 0.9]

    def _holding_rotations(self, obj: str, side: str, point: np.ndarray, lean: bool = True,
                           dropping: bool = False) -> list[np.ndarray]:
        """World rotations of a hand holding ``obj`` over ``point``: its finger yaw now, or turned
        half round when the object is held at its middle (held by a rim it would swing round
        with the hand); leaning forward too (unless not ``lean``), but a container is kept
        upright (what is in it), unless it is empty and ``dropping`` (let fall into a bin, it
        lands as it will: a spoon, whose bowl makes it a container, over a box's rim)."""
        w = self.world
        if held_by_edge(self, side):    # a book held level by its edge: the hand stays level, turned to the spot
            return [horizontal_rotation(heading, fingers_vertical=True) for heading in self._headings(side, point)]
        yaw, tcp = self._tcp_yaw(side), w.site(f"{side}_tcp")[0]
        middle = np.linalg.norm((w.position(obj) - tcp)[:2]) < 0.03
        upright = not lean or (w.things[obj].props.inner is not None and not (dropping and self._empty(obj)))
        return self._hand_rotations(side, point, [yaw, yaw + pi] if middle else [yaw], True,
                                    leans=() if upright else LEANS)

    def _empty(self, container: str) -> bool:
        """Whether nothing (no liquid, no object) is in ``container``."""
        w = self.world
        return not any(w.liquids.get(container, {}).values()) and not any(
            self.inside(o, container) for o, t in w.things.items() if o != container and t.kind == ThingKind.OBJECT)

    def _headings(self, side: str, point: np.ndarray) -> list[float]:
        """Level-hand headings towards ``point``: from the shoulder, and the base's own heading."""
        w, base = self.world, self.world.base_pose()
        sy = (-1.0 if side == "r" else 1.0) * w.spec.shoulder_offset_y
        c, s = np.cos(base.yaw), np.sin(base.yaw)
        shoulder = (base.x + c * w.spec.torso_x - s * sy, base.y + s * w.spec.torso_x + c * sy)
        return [atan2(point[1] - shoulder[1], point[0] - shoulder[0]), base.yaw]

    def _tcp_target(self, obj: str, side: str, rot: np.ndarray, spot: np.ndarray, surface: float,
                    gap: float) -> np.ndarray:
        """Where the TCP must be, turned to ``rot`` (world), for the held ``obj`` to hang with its
        centre over ``spot`` and its lowest point ``gap`` above the height ``surface`` (it turns
        with the hand as it is held now)."""
        w = self.world
        tcp, tcp_rot, _ = w.site(f"{side}_tcp")
        offset = rot @ tcp_rot.T @ (w.position(obj) - tcp)
        turned = rot @ tcp_rot.T @ w.rotation(obj)
        props = w.things[obj].props
        half = np.array(object_geometry(props).half)
        hang = half[0] if props.shape == "sphere" else float(np.abs(turned[2, :]) @ half)
        return np.array([spot[0] - offset[0], spot[1] - offset[1], surface + gap + hang - offset[2]])

    def _forearm_hits(self, side: str, joints: Mapping[str, float], base: BasePose,
                      ignore: tuple[str, ...], taking: Optional[str] = None) -> Optional[str]:
        """The object the forearm would pass through in this arm pose (a tall bucket beside the
        spot where the hand goes down), or None; the arm is not planned round obstacles, so such
        a pose is not taken."""
        c, s = np.cos(base.yaw), np.sin(base.yaw)

        def world(p: np.ndarray) -> np.ndarray:
            return np.array([base.x + c * p[0] - s * p[1], base.y + s * p[0] + c * p[1], p[2]])

        hit = arm_in_the_way(self.world, [world(p) for p in self.ik.forearm_points(side, joints)], FOREARM_RADIUS,
                             ignore)
        if hit is None and taking is not None:
            hit = arm_in_the_way(self.world, [world(p) for p in self._palm_points(side, joints)], PALM_RADIUS,
                                 ignore + (taking,))
        self._forearm_blocker = hit or self._forearm_blocker     # (said when no pose is found)
        return hit

    def _palm_points(self, side: str, joints: Mapping[str, float]) -> list[np.ndarray]:
        """Two points (base frame) along the palm, between the wrist and the fingers: 10 cm across
        the closing direction, it meets a wall beside a fork that the forearm passes over."""
        tcp, rot = self.ik.tcp_pose(side, joints)
        centre = tcp - PALM_BACK * rot[:, 0]
        return [centre + d * rot[:, 1] for d in (-PALM_SPREAD, PALM_SPREAD)]

    def _within_arm_length(self, side: str, wrist: np.ndarray) -> bool:
        """Cheap test before the IK: can the wrist point be within the arm's length of the shoulder
        at some torso height? (Saves a few hundred IK iterations on what is plainly too far.)"""
        return self._wrist_distance(side, wrist) <= self.world.spec.upper_arm + self.world.spec.forearm + 0.01

    def _wrist_distance(self, side: str, wrist: np.ndarray) -> float:
        """Distance of a wrist point (base frame) from the shoulder at the nearest torso height."""
        spec = self.world.spec
        sy = (-1.0 if side == "r" else 1.0) * spec.shoulder_offset_y
        low, high = spec.shoulder_height, spec.shoulder_height + spec.torso_stroke
        dz = max(low - wrist[2], 0.0, wrist[2] - high)
        return hypot(hypot(wrist[0] - spec.torso_x, wrist[1] - sy), dz)

    def _solve(self, side: str, position: np.ndarray, rotation: np.ndarray, seed: Mapping[str, float],
               torso: Optional[float] = None) -> IKResult:
        """IK from the given seed, then from a reaching posture (a second start escapes the
        local minima a tucked arm starts in); ``torso``: the lift held there (the arm alone moves)."""
        if torso is not None:
            seed = {**seed, TORSO_JOINT: torso}
        r = self.ik.solve(side, position, rotation, seed, use_torso=torso is None)
        if not r.success:
            ready = dict(seed)
            ready.update(zip(arm_joints(side), _READY[side]))
            r = self.ik.solve(side, position, rotation, ready, use_torso=torso is None)
        if torso is not None:
            r.joints[TORSO_JOINT] = torso
        return r

    def _straight(self, side: str, a: Mapping[str, float], b: Mapping[str, float], n: int = 4) -> list[dict]:
        """Joint waypoints along the straight TCP line from a to b (IK at each, seeded by the previous)."""
        pa, ra = self.ik.tcp_pose(side, a)
        pb, _ = self.ik.tcp_pose(side, b)
        out, seed = [], dict(a)
        for k in range(1, n + 1):
            p = pa + (pb - pa) * k / n
            r = self.ik.solve(side, p, ra, {**self.control.joints(), **seed})
            seed = r.joints if r.success else dict(b)
            out.append(seed)
        out[-1] = dict(b)
        return out

    def _pads(self, side: str) -> list[int]:
        m = self.world.model
        return [m.geom(f"{side}_pad_a").id, m.geom(f"{side}_pad_b").id]

    def _blocked(self, out, doing: str) -> SkillResult:
        return self._fail(Cause.BLOCKED, f"{doing}: {out.joint} stopped {out.error:.2f} from its target "
                          "(a collision held the arm)", joint=out.joint)

    def _enclosing_closed(self, obj: str) -> Optional[str]:
        """A closed cabinet/drawer whose inner space holds ``obj``, or a container with its lid on."""
        w = self.world
        p = w.position(obj)
        for name, thing in w.things.items():
            if thing.kind != ThingKind.FURNITURE or not thing.joint or not w.has_site(thing.inner_site):
                continue   # (furniture only: a carried container's lid is in closed_lids, below)
            centre, rot, size = w.site(thing.inner_site)
            local = rot.T @ (p - centre)
            # Up to the roof, not the inner height from the shelf: what stands on top is outside.
            if abs(local[0]) <= size[0] + 0.02 and abs(local[1]) <= size[1] + 0.02 and \
                    -0.02 <= local[2] <= inner_height(w, name):
                if not w.is_open(name, OPENED):
                    return name
        for name in w.closed_lids:
            if name != obj and name in w.things and w.things[name].body_id >= 0 and w.has_site(f"{name}/inner"):
                centre, rot, size = w.site(f"{name}/inner")
                local = rot.T @ (p - centre)
                if abs(local[0]) <= size[0] + 0.01 and abs(local[1]) <= size[1] + 0.01 and local[2] >= -0.01 \
                        and local[2] <= 2 * w.things[name].props.size[2]:
                    return name
        return None

    def _is_at(self, obj: str, place: str) -> bool:
        """Whether ``obj`` touches ``place`` or lies inside its inner space (a bowl, a fridge)."""
        w = self.world
        if place in w.contacts(obj):
            return True
        site = f"{place}/inner"
        if place not in w.things or not w.has_site(site):
            return False
        centre, rot, size = w.site(site)
        local = rot.T @ (w.position(obj) - centre)
        return abs(local[0]) <= size[0] + 0.02 and abs(local[1]) <= size[1] + 0.02 and -0.02 <= local[2] <= 0.5

    # -- place ---------------------------------------------------------------------------------
    def place(self, obj: str, support: str, along: Optional[str] = None) -> SkillResult:
        """Put the held ``obj`` down on a free spot of ``support``'s top surface. ``along``: the
        place the robot stands at (a table under a board); when no free spot is within reach, the
        base moves along it to stand opposite the nearest free spots (a few tries)."""
        return self._run("place", self._place, obj, support, "top", along)

    def putin(self, obj: str, container: str, along: Optional[str] = None) -> SkillResult:
        """Put the held ``obj`` into ``container``: a free spot on its inner floor (a bowl's bottom, a
        fridge's shelf, a drawer's box), which must be open; the object must fit its opening."""
        return self._run("putin", self._putin, obj, container, along)

    def _putin(self, obj: str, container: str, along: Optional[str] = None) -> SkillResult:
        w = self.world
        side = self.holding(obj)
        if side is None:
            return self._fail(Cause.NOT_HELD, f"the robot does not hold {obj}")
        thing = w.things.get(container)
        if thing is None or thing.kind not in (ThingKind.FURNITURE, ThingKind.OBJECT):
            return self._fail(Cause.UNKNOWN, f"{container!r} is not in the physics world")
        site = thing.inner_site
        if not w.has_site(site):
            return self._fail(Cause.NO_FREE_SPACE, f"{container} has no inner space to put things in")
        if thing.joint and not w.is_open(container, OPENED):
            return self._fail(Cause.CONTAINER_CLOSED, f"{container} is closed (its "
                              f"{'door' if thing.joint.endswith('/hinge') else 'drawer'} is at "
                              f"{w.qpos(thing.joint):.2f} of {thing.joint_open:.2f})")
        if container in w.closed_lids:
            return self._fail(Cause.CONTAINER_CLOSED, f"{container}'s lid is on")
        enclosing = self._enclosing_closed(container) if thing.kind == ThingKind.OBJECT else None
        if enclosing:
            return self._fail(Cause.CONTAINER_CLOSED, f"{container} is inside {enclosing}, which is closed")
        # The footprint as the hand holds the object (the hand only turns it by half turns) against
        # the opening: what does not fit would rest on the rim, not inside. Into a carryable
        # container (a bowl) it may go leaning, sticking out, as the planner's ``fits`` has it
        # (a banana in a bowl); the physics then shows whether it comes to rest inside.
        _, rot, size = w.site(site)
        props = w.things[obj].props
        foot = _footprint(rot, w.rotation(obj), object_geometry(props).half, props.shape == "sphere")
        fits = props.fits_into(thing.props) if thing.kind == ThingKind.OBJECT else \
            foot[0] <= size[0] + 0.005 and foot[1] <= size[1] + 0.005
        if not fits:
            return self._fail(Cause.TOO_LARGE, f"{obj} ({2 * foot[0] * 100:.0f} x {2 * foot[1] * 100:.0f} cm as "
                              f"held) does not fit the {2 * size[0] * 100:.0f} x {2 * size[1] * 100:.0f} cm inside "
                              f"of {container}", footprint=foot)
        # A hand level round a book's edge cannot go down inside past the wall: it lets go over the rim.
        result = self._place(obj, container, "inner", along) \
            if two_hands.both_hands(self, obj) or not held_by_edge(self, side) else \
            self._fail(Cause.UNREACHABLE, "held by its edge")
        if result.code in (Cause.UNREACHABLE, Cause.NO_FREE_SPACE) and thing.kind == ThingKind.OBJECT:
            # The floor of a deep bin is out of reach, or a bowl's floor is taken (a tomato in
            # it): let it drop in from over the rim, as a person throws something away or adds
            # an apple to a fruit bowl; where it lands is the physics' business.
            result = self._drop_into(obj, container, along)
        if result.success and not self.inside(obj, container):
            return self._fail(Cause.SLIPPED, f"{obj} came to rest on {container} but not inside it")
        return result

    def _drop_into(self, obj: str, container: str, along: Optional[str] = None) -> SkillResult:
        """Open the hand with ``obj`` over the middle of ``container``'s opening; ``along``: the
        place the base may line up at first (placing may have moved it along the place)."""
        w = self.world
        side = self.holding(obj)
        if side is None:
            return self._fail(Cause.NOT_HELD, f"the robot does not hold {obj}")
        if two_hands.both_hands(self, obj):
            return two_hands.put(self, obj, container, "inner", along, drop=True)
        centre, _, _ = w.site(w.things[container].inner_site)
        rim = centre[2] + inner_height(w, container) - 0.05

        def plan_over(point: np.ndarray) -> Optional[tuple[dict, dict, dict]]:
            return self._plan_descent(side, [(self._tcp_target(obj, side, r, point, rim, DROP_GAP), r)
                                             for r in self._holding_rotations(obj, side, point, dropping=True)],
                                      SHORT_APPROACH, SHORT_APPROACH)

        def plan_drop() -> Optional[tuple[dict, dict, dict]]:
            # Beside what lies across the rim (a hammer across a box), not onto it.
            return first_plan(drop_points(w, obj, container, rim), plan_over)

        plan = plan_drop()
        if plan is None and along is not None and self._navigate(along, container).success:
            plan = plan_drop()
        if plan is None:
            return self._fail(Cause.UNREACHABLE, f"neither {container}'s floor nor a point over its rim is "
                              "within the arm's reach from where the base stands")
        pre, at, after = plan
        out = self.move_arm(side, pre)
        if out.ok:
            out = self.control.follow(self._straight(side, pre, at), speed_scale=0.5)
        if not out.ok:
            return self._blocked(out, f"holding {obj} over {container}")
        self.control.set_gripper(side, w.spec.max_aperture, 0.5)
        self.held[side] = None
        self.control.follow(self._straight(side, at, after), speed_scale=0.5)
        self._tuck()
        w.step(w.steps(1.0))
        return self._ok(side=side, dropped=True)

    def inside(self, obj: str, container: str) -> bool:
        return lies_in(self.world, obj, container)

    def _place(self, obj: str, support: str, surface: str, along: Optional[str] = None) -> SkillResult:
        w = self.world
        side = self.holding(obj)
        if side is None:
            return self._fail(Cause.NOT_HELD, f"the robot does not hold {obj}")
        if support not in w.things:
            return self._fail(Cause.UNKNOWN, f"{support!r} is not in the physics world")
        site = f"{support}/{surface}"
        if not w.has_site(site):
            return self._fail(Cause.NO_FREE_SPACE, f"{support} has no {surface} surface to put things on")
        if two_hands.both_hands(self, obj):
            return two_hands.put(self, obj, support, surface, along)
        if len(w.touching_geoms(obj, self._pads(side))) < 2:
            self.held[side] = None
            return self._fail(Cause.SLIPPED, f"{obj} is no longer between the fingers (dropped on the way)")
        centre, rot, size = w.site(site)
        geo = object_geometry(w.things[obj].props)

        def free_spots(limit: Optional[int] = 30) -> list[np.ndarray]:
            return self._free_spots(support, site, obj, geo.half, w.base_pose(), side, limit=limit)

        if not free_spots():
            return self._fail(Cause.NO_FREE_SPACE, f"no free spot on {support} for {obj} "
                              f"({2 * geo.half[0] * 100:.0f} x {2 * geo.half[1] * 100:.0f} cm)")
        yaw_now, held_width = self._tcp_yaw(side), self.control.aperture(side)
        plans: dict[tuple[float, ...], Optional[tuple[dict, dict, dict]]] = {}

        # Into a carryable container (a box) the hand goes down straight: leaning, the fingers
        # came down on its near wall (a nail let go near it, held at the finger tips).
        lean = surface != "inner" or w.things[support].kind != ThingKind.OBJECT

        def plan_at(spot: np.ndarray) -> Optional[tuple[dict, dict, dict]]:
            # Per spot and where the base stands: from another standing place it may be in reach.
            base = w.base_pose()
            key = tuple(np.round([*spot, base.x, base.y, base.yaw], 4))
            if key not in plans:
                plans[key] = plan_spot(spot)
            return plans[key]

        def plan_spot(spot: np.ndarray) -> Optional[tuple[dict, dict, dict]]:
            if held_by_edge(self, side):    # a book held by its edge: set down out at the edge, as taken
                poses = edge_place_poses(self, obj, side, site, spot, RELEASE_GAP)
                return self._plan_descent(side, poses, PRE_GRASP, PRE_GRASP) if poses else None
            # Across a dish's rim (rims.dish_spots) it comes down onto the rim's top, not the floor.
            surface = spot[2] if spot[2] > centre[2] + 0.005 else centre[2]
            poses = [(self._tcp_target(obj, side, r, spot, surface, RELEASE_GAP), r)
                     for r in self._holding_rotations(obj, side, spot, lean)]
            # The fingers need room where they open, as where they close (a tall bucket beside the spot).
            if self._release_width(obj, side, poses[0][0], held_width, yaw_now) is None:
                return None
            # Out of a box the hand rises PRE_GRASP, then goes back round its wall (_withdraw).
            return self._plan_descent(side, poses, PRE_GRASP, PRE_GRASP)

        def clear_plan_at(spot: np.ndarray) -> Optional[tuple[dict, dict, dict]]:
            # IK does not see furniture: over a fridge's shelf the cucumber held above a spot by
            # the side wall would be in the wall. Such a spot goes after those with room round
            # what is held, above the spot where the descent starts.
            found = plan_at(spot)
            return None if found is None or self.paths.collision(side, {**self.control.joints(), **found[0]},
                                                                  held=obj) else found

        plan, tries = self.reach_a_spot(free_spots, clear_plan_at, side, None)
        if plan is None:
            plan, tries = self.reach_a_spot(free_spots, plan_at, side, along)
        if plan is None:
            return self._fail(Cause.UNREACHABLE, f"{len(free_spots())} free spot(s) on {support}, none within "
                              f"the arm's reach from where the base stands ({tries} other standing place(s) tried)")
        pre, at, after = plan
        out = self.move_arm(side, pre)
        if not out.ok:
            return self._blocked(out, f"carrying {obj} over {support}")
        out = self.control.follow(self._straight(side, pre, at), speed_scale=0.5)
        if not out.ok:
            return self._blocked(out, f"lowering {obj} onto {support}")
        lean = self._lean(side)
        release = self._release_width(obj, side, w.site(f"{side}_tcp")[0], held_width, yaw_now)
        self.control.set_gripper(side, release or opening(held_width, w.spec.max_aperture, RELEASE_MARGIN), 0.5)
        self.held[side] = None
        self.control.follow(self._straight(side, at, after), speed_scale=0.5)
        self._withdraw(side)
        self._tuck()
        w.step(w.steps(0.5))
        if not w.resting_on(obj, support):
            return self._fail(Cause.SLIPPED, f"{obj} does not rest on {support} after release (touches "
                              f"{', '.join(sorted(x or 'the floor' for x in w.contacts(obj))) or 'nothing'})")
        return self._ok(side=side, position=w.position(obj), lean=lean)

    def _release_width(self, obj: str, side: str, tcp: np.ndarray, held_width: float,
                       yaw: float) -> Optional[float]:
        """How wide the fingers open to let go of the held ``obj`` with the TCP at ``tcp``: as wide
        as they took it, or, where that would meet a neighbour, just enough to part from it
        (``RELEASE_MARGIN``); None where a finger meets something either way."""
        w = self.world
        held = tuple(h for h in self.held.values() if h)
        return next((opening(held_width, w.spec.max_aperture, margin) for margin in (OPEN_MARGIN, RELEASE_MARGIN)
                     if in_the_way(w, obj, tcp, held_width, yaw, w.spec.max_aperture, held, margin) is None), None)

    def _lean(self, side: str) -> float:
        """How far (rad) the hand's approach axis leans from pointing straight down, as it is now."""
        return float(np.arccos(np.clip(-self.world.site(f"{side}_tcp")[1][2, 0], -1.0, 1.0)))

    def _tcp_yaw(self, side: str) -> float:
        _, rot, _ = self.world.site(f"{side}_tcp")
        return atan2(rot[1, 1], rot[0, 1])

    def reach_a_spot(self, free_spots: Callable[..., list[np.ndarray]], plan_at: Callable[[np.ndarray], Optional[T]],
                     side: Optional[str], along: Optional[str], tries_per_place: int = 30) -> tuple[Optional[T], int]:
        """The first plan ``plan_at`` finds for a spot of ``free_spots()`` from where the base
        stands; failing that, from standing opposite other free spots along ``along`` (what a
        person does at a long table: the holding arm's side towards it; ``side`` None: both
        hands hold it, the spot straight ahead). (plan, places tried)."""
        def first() -> Optional[T]:
            for spot in free_spots()[:tries_per_place]:
                found = plan_at(spot)
                if found is not None:
                    return found
            return None

        plan, tries = first(), 0
        if plan is not None or along is None:
            return plan, tries
        spots = self._spots_to_stand_at(free_spots(None), along)
        # In front of other free spots, then at the place's ends (where a wall leaves room).
        poses: list[Optional[BasePose]] = [None] * len(spots)
        if spots:
            place = self.world.things[along].placement
            depth = place.to_local(spots[0][0], spots[0][1])[1]
            poses += side_poses(self.world.things[along], self.world.spec, depth)
            spots += [spots[0]] * (len(poses) - len(spots))
        for spot, pose in zip(spots, poses):
            tries += 1
            ahead = spot - self._arm_offset(side) if side is not None else spot
            if self._navigate(along, None, ahead, goal=pose).success:
                plan = first()
                if plan is not None:
                    break
        return plan, tries

    def _arm_offset(self, side: str) -> np.ndarray:
        """World xy from the base's line of sight to the arm's side (where that hand works best)."""
        yaw = self.world.base_pose().yaw
        sign = -1.0 if side == "r" else 1.0
        return ARM_SIDE_OFFSET * sign * np.array([-np.sin(yaw), np.cos(yaw), 0.0])

    def _spots_to_stand_at(self, spots: list[np.ndarray], along: Optional[str]) -> list[np.ndarray]:
        """Up to three free spots, at least 25 cm apart, that lie least deep from where the robot
        would stand opposite each (none without a place to move along)."""
        w = self.world
        if along is None or along not in w.things or w.things[along].placement is None:
            return []
        place = w.things[along].placement

        def depth(spot: np.ndarray) -> float:
            pose = w.approach_pose(along, place.to_local(spot[0], spot[1])[0])
            return float(np.cos(pose.yaw) * (spot[0] - pose.x) + np.sin(pose.yaw) * (spot[1] - pose.y))

        picked: list[np.ndarray] = []
        for spot in sorted(spots, key=depth):
            if all(np.hypot(*(spot[:2] - p[:2])) > 0.25 for p in picked):
                picked.append(spot)
            if len(picked) == 3:
                break
        return picked

    def _free_spots(self, support: str, site: str, obj: Optional[str], half: tuple[float, float, float],
                    base: BasePose, side: Optional[str] = None, limit: Optional[int] = 30,
                    rotation: Optional[np.ndarray] = None) -> list[np.ndarray]:
        """Free spots on a surface (world xy) where the object's footprint, as the hand holds it
        now, plus a gap overlaps nothing standing there; those nearest the arm's comfortable reach
        (half a metre ahead of the base, to the side of the arm that holds it) first. ``obj`` None:
        a free spot for a footprint of ``half`` turned by ``rotation`` (a question, nothing held)."""
        w = self.world
        centre, rot, size = w.site(site)

        # An object in the world as it is turned now; else (``obj`` None) a footprint at ``rotation``.
        mine = _footprint(rot, w.rotation(obj) if obj is not None else rotation, half,
                          obj is not None and w.things[obj].props.shape == "sphere")
        others = []
        for name, thing in w.things.items():
            # The support itself is no obstacle on its own surface (a board's or a bowl's body
            # lies under its top or inner surface, and would otherwise cover all of it).
            if name in (obj, support) or thing.kind != ThingKind.OBJECT:
                continue
            local = rot.T @ (w.position(name) - centre)
            ext = _footprint(rot, w.rotation(name), object_geometry(thing.props).half, thing.props.shape == "sphere")
            if abs(local[0]) < size[0] + ext[0] and abs(local[1]) < size[1] + ext[1] and -0.02 < local[2] < 0.6:
                others.append((local[0], local[1], ext[0], ext[1]))
        gap = 0.02
        spots = []

        def grid(room: float) -> list[float]:
            # Every 3 cm from the middle, and the edges themselves (the spot nearest the robot
            # may lie between the last grid line and the edge).
            n = int(room / 0.03 + 1e-9)
            return sorted({round(k * 0.03, 6) for k in range(-n, n + 1)} | {room, -room}) if room >= 0 else []

        def free(u: float, v: float) -> bool:
            return all(abs(u - ou) >= mine[0] + ex + gap or abs(v - ov) >= mine[1] + ey + gap
                       for ou, ov, ex, ey in others)

        def scan(room: tuple[float, float], within: Callable[[float, float], bool]) -> None:
            for u in grid(room[0] - mine[0]):
                for v in grid(room[1] - mine[1]):
                    if within(u, v) and free(u, v):
                        spots.append(centre + rot @ np.array([u, v, 0.0]))

        scan((size[0], size[1]), lambda u, v: True)
        well = _round_well(w, support)
        if not spots and well is not None:
            # The site is the square inscribed in a round floor: what does not fit it (a banana
            # on a plate) may still lie within the circle, its corners clear of the wall.
            scan((well, well), lambda u, v: np.hypot(abs(u) + mine[0], abs(v) + mine[1]) <= well)
        if not spots and well is not None:
            # Too long for a plate's well with room round it (a 22 cm knife): along its middle,
            # against the wall or across the rim (the spot's height says which).
            spots = [centre + rot @ np.array(p) for p in dish_spots(w, support, mine, free)]
        sweet = np.array([base.x + 0.5 * np.cos(base.yaw), base.y + 0.5 * np.sin(base.yaw)])
        if side is not None:
            sweet = sweet + self._arm_offset(side)[:2]
        spots.sort(key=lambda p: float(np.hypot(*(p[:2] - sweet))))
        return spots[:limit]

    # -- open / close -------------------------------------------------------------------------
    def open(self, furniture: str) -> SkillResult:
        return self._run("open", self._articulate, furniture, True)

    def close(self, furniture: str) -> SkillResult:
        from affplan_ros.sim.physics.closing import close_articulated

        return self._run("close", close_articulated, self, furniture)

    def _articulate(self, furniture: str, opening: bool, to: Optional[float] = None,
                    plan_only: bool = False, beside: bool = False) -> SkillResult:
        """Grasp the handle, then move the base so that the hand follows the joint's path (an arc
        round the hinge, a line along the slide) with the arm held still; release and step back.
        Moving the whole robot, not the arm alone, is what lets a Tiago-sized arm swing a fridge
        door through 90 degrees (the hand would otherwise have to travel ~1 m). ``to``: a joint
        position part of the way (closing a door in two pulls); ``plan_only``: only say whether
        a handle, an arm and a free place to stand are found (no motion; detail ``stand``);
        ``beside``: stand only beside the leaf (``HANDLE_BESIDE``), the smallest arc."""
        w = self.world
        verb = "open" if opening else "close"
        thing = w.things.get(furniture)
        if thing is None or not thing.joint:
            return self._fail(Cause.NOT_ARTICULATED, f"{furniture!r} has no door or drawer to {verb}")
        if (opening and w.is_open(furniture, OPENED)) or (not opening and w.is_closed(furniture)):
            return self._ok(note=f"already {'open' if opening else 'closed'}", joint=w.qpos(thing.joint))
        free = [s for s in ("r", "l") if self.held[s] is None]
        if not free:
            return self._fail(Cause.HAND_FULL, f"both hands are full; none is free to {verb} {furniture}")
        door = thing.joint.endswith("/hinge")
        jid = w.model.joint(thing.joint).id
        goal = min(DOOR_TARGET, thing.joint_open) if (opening and door) else (thing.joint_open if opening else 0.0)
        goal = goal if to is None else to

        # 1. Choose a handle (a room door has one on each face), an arm and where to stand: the
        #    handle where that arm grasps it best, a free path there, and free floor for the base
        #    all along the joint's path.
        radius = w.spec.base_radius + CLEARANCE
        q0 = w.qpos(thing.joint)
        anchor, axis = w.data.xanchor[jid].copy(), w.data.xaxis[jid].copy()
        rot_b = horizontal_rotation(0.0, fingers_vertical=not door)    # facing the handle, in the base frame
        handles = [(thing.handle_site, 1.0)] + [(f"{furniture}/handle_back", -1.0)] * w.has_site(
            f"{furniture}/handle_back")
        choice, why_not = None, "no free place to stand at its handle"
        tries = [(h, r, s, lat) for h in handles for r in HANDLE_REACH for s in free for lat in HANDLE_LATERAL]
        tries = tries if not beside else [(h, r, s, lat) for h in handles for r, lat in HANDLE_BESIDE for s in free]
        for (site, face), reach, candidate, lateral in tries:
            handle, _, _ = w.site(site)
            normal = face * self._outward_normal(thing)
            heading = atan2(-normal[1], -normal[0])
            c, s_ = np.cos(heading), np.sin(heading)
            off = (reach, (-1.0 if candidate == "r" else 1.0) * lateral)
            # Can this arm grasp the handle from there? (In the base frame the answer does not
            # depend on where the base is.)
            seed = self.control.joints()
            at = self._solve(candidate, np.array([off[0], off[1], handle[2]]), rot_b, seed)
            pre = self._solve(candidate, np.array([off[0] - HANDLE_PRE, off[1], handle[2]]), rot_b,
                              {**seed, **at.joints})
            if not (at.success and pre.success):
                why_not = f"its handle ({handle[2]:.2f} m high) is out of the arm's reach"
                continue
            start = BasePose(float(handle[0] - (c * off[0] - s_ * off[1])),
                             float(handle[1] - (s_ * off[0] + c * off[1])), heading)
            path = plan_base_path(w, w.base_pose(), start, radius)
            if path is None:
                why_not = "no free path to a place to stand at its handle"
                continue
            sweep = _joint_sweep(start, q0, goal, anchor, axis, door)
            hit = next((h for wp in sweep if (h := segment_clear(w, (wp.x, wp.y), (wp.x, wp.y),
                                                                  w.spec.base_radius, (furniture,)))), None)
            if hit is not None:
                why_not = f"to {verb} it the base would have to go where {hit} stands"
                continue
            choice = (candidate, path, sweep, at, pre, site, normal, heading)
            break
        if choice is None:
            return self._fail(Cause.BLOCKED, f"cannot {verb} {furniture}: {why_not}", stand=False)
        if plan_only:
            return self._ok(stand=True, handle=choice[5])
        side, path, sweep, at, pre, site, normal, heading = choice
        tuck = self._tuck()
        if not tuck.ok or not self.control.drive(path).ok:
            return self._fail(Cause.BLOCKED, f"the base stopped short of the handle of {furniture}")

        # 2. Grasp the handle, the IK redone from where the base actually stopped.
        handle, _, _ = w.site(site)
        base = w.base_pose()
        rot_w = w.rotation_to_base(horizontal_rotation(heading, fingers_vertical=not door), base)
        seed = self.control.joints()
        at = self._solve(side, w.to_base_frame(handle, base), rot_w, {**seed, **at.joints})
        pre = self._solve(side, w.to_base_frame(handle + HANDLE_PRE * normal * np.array([1, 1, 0]), base), rot_w,
                          {**seed, **pre.joints})
        if not (at.success and pre.success):
            return self._fail(Cause.UNREACHABLE, f"the handle of {furniture} is out of reach from where the "
                              "base stopped")
        self.control.set_gripper(side, w.spec.max_aperture, 0.3)
        out = self.move_arm(side, pre.joints)
        if out.ok:
            out = self.control.follow(self._straight(side, pre.joints, at.joints), speed_scale=0.5)
        if not out.ok:
            return self._blocked(out, f"reaching for the handle of {furniture}")
        self.control.set_gripper(side, 0.0, 0.6)
        handle_geom = w.model.geom(site).id
        pads = self._pads(side)
        if not self._pads_on(pads, handle_geom):
            self._let_go(side, pre.joints)
            return self._fail(Cause.SLIPPED, f"the fingers closed without holding the handle of {furniture}")

        # 3. Move the base along the joint's path, the arm still: the hand drags the handle.
        self._drive_slowly(sweep)
        held = self._pads_on(pads, handle_geom)

        # 4. Let go and step back.
        reached = w.qpos(thing.joint)
        self._let_go(side, None)
        w.step(w.steps(0.3))
        final = w.qpos(thing.joint)
        ok = w.is_open(furniture, OPENED) if opening else w.is_closed(furniture)
        if to is not None:    # part of the way: near enough for the next pull to take over
            ok = abs(final - to) < PART_WAY_TOLERANCE
        if not ok:
            why = "the hand slipped off the handle" if not held else "the joint did not follow the hand"
            return self._fail(Cause.SLIPPED if not held else Cause.BLOCKED,
                              f"{furniture} is at {final:.2f} of {thing.joint_open:.2f} after trying to {verb} it: "
                              f"{why}", joint=final, reached=reached)
        return self._ok(side=side, joint=final)

    def _outward_normal(self, thing) -> np.ndarray:
        """The handle side's outward direction now: the door leaf's (or drawer front's) local +y."""
        body = f"{thing.name}/door" if thing.joint.endswith("/hinge") else f"{thing.name}/drawer"
        return self.world.data.body(body).xmat.reshape(3, 3)[:, 1].copy()

    def _pads_on(self, pads: list[int], geom: int) -> bool:
        touching = set()
        for g1, g2 in self.world.contact_pairs():
            if g1 == geom and g2 in pads:
                touching.add(g2)
            elif g2 == geom and g1 in pads:
                touching.add(g1)
        return len(touching) == 2

    def _let_go(self, side: str, back_to: Optional[Mapping[str, float]]) -> None:
        """Open the hand, pull it straight back out of the handle, tuck."""
        w = self.world
        self.control.set_gripper(side, w.spec.max_aperture, 0.4)
        tcp, rot, _ = w.site(f"{side}_tcp")
        base = w.base_pose()
        back = tcp - HANDLE_PRE * rot[:, 0]
        r = self._solve(side, w.to_base_frame(back, base), w.rotation_to_base(rot, base), self.control.joints())
        if back_to is None and r.success:
            back_to = r.joints
        if back_to is not None:
            self.control.follow([dict(back_to)], speed_scale=0.5)
        self._tuck()

    def _drive_slowly(self, waypoints: list[BasePose]) -> None:
        """Base set-points along many short segments at a walking pace for a door."""
        for wp in waypoints:
            self.control.drive([wp], settle=0.0)
        self.control.drive([waypoints[-1]], settle=0.5)


def _palm_checked(obj: str, grasp: Grasp) -> Optional[str]:
    """``obj`` where a grasp's palm must clear its neighbours; None for a rim grasp, whose palm
    hangs over the container's own contents (a banana across a bowl's top; the physics shows
    whether it presses them)."""
    return None if grasp.kind == "rim" else obj


def _part_discs(w: PhysicsWorld, obj: str) -> list[tuple[float, float, float]]:
    """Discs (base frame x, y, radius) covering each part of ``obj`` as it lies now (a handle
    object's handle and head, else its box), ``CARRIED_ROOM`` wider: a row along the part's
    longer side, each the circle round its share of the part."""
    props = w.things[obj].props
    parts = handle_parts(props) if props.handle is not None else [((0.0, 0.0, 0.0), object_geometry(props).half)]
    pos, rot = w.position(obj), w.rotation(obj)
    out = []
    for centre, half in parts:
        i = int(np.argmax(half[:2]))
        across = max(half[1 - i], half[2])
        n = max(1, int(np.ceil(half[i] / max(across, DISC_MIN))))
        r = float(np.hypot(half[i] / n, across)) + CARRIED_ROOM
        for k in range(n):
            local = np.array(centre, float)
            local[i] += half[i] * (2 * k + 1 - n) / n
            x, y = w.to_base_frame(pos + rot @ local)[:2]
            out.append((float(x), float(y), r))
    return out


def _same_way(a: Grasp, b: Grasp) -> bool:
    """Whether two grasps take a thing the same way: as wide, the fingers closing along the same
    line (a point further along it is no other way)."""
    if abs(a.width - b.width) > 1e-3 or (a.finger_yaw is None) != (b.finger_yaw is None):
        return False
    return a.finger_yaw is None or abs(sin(a.finger_yaw - b.finger_yaw)) < 0.1


def _stepped_back(pose: BasePose, back: float) -> BasePose:
    """``pose`` moved ``back`` metres away from what it faces."""
    return BasePose(pose.x - back * np.cos(pose.yaw), pose.y - back * np.sin(pose.yaw), pose.yaw)


def _footprint(surface: np.ndarray, rot: np.ndarray, half, ball: bool = False) -> tuple[float, float]:
    """Half extents, in the frame of a surface turned by ``surface``, of the box round the
    footprint of an object turned by ``rot`` (all three of its axes: it may lie on its side as
    the hand holds it); a ball's is its radius however it has rolled."""
    if ball:
        return half[0], half[0]
    m = np.abs(surface.T[:2, :] @ rot) @ np.asarray(half)
    return float(m[0]), float(m[1])


def _round_well(world: PhysicsWorld, support: str) -> Optional[float]:
    """``bodies.round_well`` of a carryable ``support``; None for anything else."""
    thing = world.things.get(support)
    return round_well(thing.props) if thing is not None and thing.kind == ThingKind.OBJECT else None


def _joint_sweep(base0: BasePose, q0: float, goal: float, anchor: np.ndarray, axis: np.ndarray,
                 door: bool) -> list[BasePose]:
    """Base poses that keep the hand's grip on the handle as the joint goes from q0 to goal: a
    rotation round a (vertical) hinge, or a translation along a slide."""
    n = max(2, int(abs(goal - q0) / (0.08 if door else 0.03)))
    out = []
    for k in range(1, n + 1):
        dq = (goal - q0) * k / n
        if door:
            ang = dq * axis[2]
            ca, sa = np.cos(ang), np.sin(ang)
            rx, ry = base0.x - anchor[0], base0.y - anchor[1]
            out.append(BasePose(anchor[0] + ca * rx - sa * ry, anchor[1] + sa * rx + ca * ry, base0.yaw + ang))
        else:
            out.append(BasePose(base0.x + axis[0] * dq, base0.y + axis[1] * dq, base0.yaw))
    return out


# A reaching posture (arm forward, elbow bent, gripper down): the second IK seed. Its yaw and roll
# joints are zero, so the mirrored left arm has the same values.
_READY = {"r": (0.0, -0.5, 0.0, 0.9, 0.0, 1.15, 0.0), "l": (0.0, -0.5, 0.0, 0.9, 0.0, 1.15, 0.0)}
