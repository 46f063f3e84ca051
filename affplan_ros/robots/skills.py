"""robot_skills: the skill action servers of a real robot (Tiago++, an ARMAR-style humanoid).

Serves the same actions as the simulated world (``skills/navigate``, ``skills/grasp``, ...)
from robot drivers (robots/drivers.py): Nav2 for the base, MoveIt for the arms (or, with
``arm_planner: builtin``, the robot's own planner on its URDF and FollowJointTrajectory
controllers: robots/arm.py), a gripper controller per hand.

Where things are comes from a pose source (robots/poses.py, ``pose_source``): ``config`` (the
``object_poses`` of the robot config, "name x y z" in the map frame: things that do not move) or,
in simulation only, ``oracle`` (the simulator's referee). A goal's own pose field wins. With a
source that knows a thing's extent, a grasp is planned from its box and its class in the object
table (robots/grasping.py), and a base goal for a place without a configured pose (``locations``,
"name x y yaw") is a standing place in front of it.

Of the capabilities without a typed action (the generic Skill), ``chop`` moves: the held knife's
blade comes down onto the thing from above and back up (``_chop``). Any other fails with a message
saying so: leave it out of ``robot_capabilities`` and the planner gives it to the person.

A closed gripper is read, not trusted: fingers that close to ``empty_grip_m`` or less hold
nothing (an empty grasp), and after the lift the gripper closes once more to feel whether the
object is still there (it slipped if not). Each failure carries the cause its driver found.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional, Sequence

import numpy as np
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from scipy.spatial.transform import Rotation

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.knowledge.objects import ObjectProperties, load_object_table
from affplan_ros.core.knowledge.skills import SkillMap, SkillMapError
from affplan_ros.core.model.failure import Cause, Failure, FailureCode
from affplan_ros.env import config_file
from affplan_ros.interfaces import interface_types
from affplan_ros.nodes.base import LOCATION_PARAMS, RESULT_KEEP_S, parse_locations, run_node
from affplan_ros.nodes.convert import failure_to_msg, skill_goal_problem
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.robots.doors import carried, front, moved_to, plans, pull, sweep
from affplan_ros.robots.drivers import CANCELED, DriverUnavailable, Grip, HeldBox, Pose, Problem
from affplan_ros.robots.grasping import Grasp, cap_yaws, grasps
from affplan_ros.robots.places import (
    blade_over,
    container_of,
    contains,
    contains_xy,
    first_in_the_way,
    free_spots,
    level_under,
    line_up,
    obstacles_around,
    set_down_poses,
    spots_inside,
    stand_target,
    standing_places,
    stands_around,
    support_of,
)
from affplan_ros.robots.poses import FixedPoses, Joint, OraclePoses, PoseSource, SeenObject
from affplan_ros.robots.pouring import mouth_in_hand, tips

OPEN, CLOSED = 0.08, 0.0        # gripper positions (m)
LINE_UP_MIN_M = 0.1             # a base move shorter than this to stand in front of something is not worth it ...
NEAR_MOVE_MIN_M = 0.02          # ... but where nothing at the usual distance reaches, a step this long may
STAND_CHECKS = 16               # standing places whose reach the arm's IK checks, at most, before a move
STANDS_TRIED = 3                # of those it reaches from, how many Nav2 is asked for in turn
STAND_REACH_M = 0.5             # m from the shoulder (across the floor) the arm works best
TURN_COST_M = 0.1               # m of the shoulder's distance to the work a rad of turning away from it costs
RIM_DROP_M = 0.03               # m above a container's rim a thing is let go where its floor is out of reach
SHORT_APPROACH_M = 0.05         # m above a put-down the hand comes in from where approach_height_m is out of reach
SUNK_M, DISH_M = 0.01, 0.05     # a thing whose bottom is between these below its support's top lies in its dish
# Where a hand is carried while the base moves: ahead of the base's centre and to its own side (m).
CARRY_AHEAD_M, CARRY_SIDE_M = 0.3, 0.25
CARRY_NEAR_M = 0.1              # a hand this near its carrying place stays where it is
CAP_TURN_RAD = 1.4              # a screw cap is turned this far (a bit less than half a turn) ...
CAP_DEPTH_M = 0.02              # ... held this far below the container's top ...
CAP_APPROACH_M = 0.06           # ... by a hand coming down from this far above it
HANDOVER_FROM_PERSON_M = 0.45   # a thing is held out no further than this from the person (within their arm's reach)
FACE_PERSON_RAD = 0.5           # the base turns to a person further off its heading than this before a handover
POUR_WAYS_CHECKED = 4           # ways to tip a container the arm's IK checks from each place to stand
CUT_DEPTH_M = 0.002             # a knife's edge is brought this far below the top of what it cuts ...
CUT_SPEED = 0.2                 # ... at this fraction of the arm's speed (a quick blow knocks it out of the hand)
PRESS_M = 0.004                 # a wiping tool's bottom is pressed this far into the surface ...
STROKE_SPEED = 0.4              # ... and drawn over it at this fraction of the arm's speed
OPENED_FRACTION = 0.7           # of its range, a door or drawer is open (the arm fits in) ...
CLOSED_FRACTION = 0.05          # ... and closed


@dataclass(frozen=True)
class Held:
    """What a hand holds and how: its grasp, the TCP's height above the thing's bottom, and where
    the thing was seen before it was taken (its extent)."""

    grasp: Grasp
    above_bottom: float
    seen: SeenObject
    turn: float = 0.0     # the hand's yaw at the grasp less the base's: a put-down turns it as the base turned


def _set_down(held: Held, spot: tuple[float, float], floor: float, base_yaw: float) -> list[Pose]:
    return set_down_poses(held.grasp.pose, held.seen, held.above_bottom, held.turn, spot, floor, base_yaw)


PARAMS = (
    Param("robot_name", "robot", "which robot this is (for messages)"),
    Param("robot_agent", "robot0", "the robot's name in the plans (a handover to it is a receive)"),
    Param("hands", ["right"], "hands with a gripper, e.g. ['left', 'right']"),
    Param("arm_groups", ["arm"], "MoveIt planning group per hand, in the order of `hands`"),
    Param("ee_links", ["gripper_link"], "end-effector link per hand, in the order of `hands`"),
    Param("gripper_actions", ["gripper_controller/gripper_cmd"],
          "GripperCommand action per hand, in the order of `hands`"),
    Param("nav_action", "navigate_to_pose", "Nav2 NavigateToPose action"),
    Param("nav_timeout_s", 120.0, "time limit of one base motion, seconds"),
    Param("approach_height_m", 0.12, "pre-grasp / retreat height above an object"),
    Param("gripper_effort", 40.0, "gripper max effort when closing (N)"),
    Param("empty_grip_m", 0.005, "a gripper that closes to this opening (m) or less holds nothing", minimum=0),
    Param("pour_tilt_rad", 1.9, "how far a held container is tilted about the gripper's x axis to pour", above=0),
    Param("pour_hold_s", 2.0, "how long the container stays tilted, seconds", minimum=0),
    Param("wipe_stroke_m", 0.15, "half the length of one wiping stroke along x", above=0),
    Param("wipe_strokes", 3, "strokes back and forth per wipe", minimum=1),
    Param("handover_pose", [0.6, 0.0, 1.0], "where to hold an object out to a person (x y z in the base frame)"),
    Param("base_frame", "base_link", "the robot base frame"),
    Param("skills_file", "", "PDDL action -> skill action mapping (default: config/skills.yaml)"),
    Param("object_poses", [], "fixed poses of named objects, each 'name x y z' (map frame)"),
    Param("pose_source", "config", "where things are: config (object_poses) or oracle (the simulator's referee; "
          "simulation only)", choices=("config", "oracle")),
    Param("arm_planner", "moveit", "moveit (moveit_py) or builtin (IK, OMPL and TOPP-RA on /robot_description, "
          "sent to the FollowJointTrajectory controllers)", choices=("moveit", "builtin")),
    Param("arm_controllers", ["/arm_controller/follow_joint_trajectory"],
          "builtin planner: FollowJointTrajectory action per hand, in the order of `hands`"),
    Param("torso_controller", "/torso_controller/follow_joint_trajectory", "builtin planner: the FollowJointTrajectory "
          "action of the torso, which moves with the arm ('' = the torso stays where it is)"),
    Param("torso_joints", ["torso_lift_joint"], "builtin planner: the joints of torso_controller"),
    Param("torso_max_speed", 0.07, "builtin planner: torso speed limit (m/s; a Tiago++'s lift: 0.07)", above=0),
    Param("max_joint_speed", 0.8, "builtin planner: joint speed limit (rad/s)", above=0),
    Param("max_joint_acceleration", 1.5, "builtin planner: joint acceleration limit (rad/s^2)", above=0),
    Param("max_opening_m", 0.09, "widest opening of a gripper (m)", above=0),
    Param("base_radius_m", 0.3, "the base's radius: standing places keep it this far plus standoff_m from "
          "what the robot stands at", above=0),
    Param("standoff_m", 0.1, "free space between the base and what it stands at", minimum=0),
    Param("near_standoff_m", 0.06, "free space between the base and what it stands at where the arm reaches the "
          "work from nowhere at standoff_m (at least Nav2's inflation beyond the base's radius)", minimum=0),
    Param("objects_file", "", "object table (sizes, shapes, how to grasp; default: the built-in one)"),
    Param("follow_path_action", "/follow_path", "Nav2 FollowPath action (the controller server): the base "
          "follows a door's or drawer's path on it"),
    Param("base_omnidirectional", False, "whether the base moves sideways: a door or drawer is opened by the base "
          "following its handle's path, which needs it"),
    Param("handle_reach_m", [0.55, 0.45], "how far ahead of the base a hand takes a handle, tried in turn"),
    Param("handle_lateral_m", [0.15, -0.15], "per hand: how far to the base's left that hand works best (takes a "
          "handle, holds a thing out)"),
    Param("reach_ahead_m", 0.55, "how far ahead of the base the hands work best (put-down spots nearest it "
          "first)", above=0),
    Param("carry_height_m", 1.0, "how high above the floor the bottom of what a hand holds (an empty hand's "
          "grasping frame) is carried while the base moves (above the tables and counters it passes)", above=0),
    Param("arm_space_m", 1.4, "what the pose source knows within this of the base is kept clear of by the arm",
          above=0),
    Param("hold_out_m", 0.5, "how far ahead of the base a thing is held out to a person", above=0),
    Param("handover_height_m", 1.0, "the height of the bottom of what is held out to a person (a standing "
          "person's hand)", above=0),
    Param("handover_wait_s", 1.5, "how long a thing is held still for the person to take it before the hand "
          "opens", minimum=0),
    Param("door_open_rad", 1.6, "how far a door is opened (rad; about 90 degrees: wide enough to reach in)", above=0),
)


class RobotSkillsNode(Node):
    # skill action type -> the method that moves the robot for it; the generic Skill has none
    MOTIONS = {"Navigate": "_navigate", "Grasp": "_grasp", "Place": "_place", "Open": "_open", "Close": "_close",
               "Handover": "_handover", "Pour": "_pour", "Wipe": "_wipe", "Skill": "_skill"}

    def __init__(self, drivers: Optional[Callable[["RobotSkillsNode"], tuple]] = None) -> None:
        """``drivers(node) -> (navigator, arm, gripper)``; default: Nav2, MoveIt, GripperCommand."""
        super().__init__("robot_skills")
        p = declare_params(self, PARAMS + LOCATION_PARAMS)
        self.robot_name, self.hands, self.nav_action = p.robot_name, list(p.hands), p.nav_action
        self.nav_timeout, self.approach, self.effort = p.nav_timeout_s, p.approach_height_m, p.gripper_effort
        self.empty_grip = p.empty_grip_m
        self.base_frame, self.locations = p.base_frame, parse_locations(p.locations)
        self.agent, self.pour_tilt, self.pour_hold = p.robot_agent, p.pour_tilt_rad, p.pour_hold_s
        self.stroke, self.strokes = p.wipe_stroke_m, int(p.wipe_strokes)
        groups, links, grippers, handover = p.arm_groups, p.ee_links, p.gripper_actions, p.handover_pose
        if not len(self.hands) == len(groups) == len(links) == len(grippers):
            raise ValueError("hands, arm_groups, ee_links and gripper_actions need one entry per hand")
        if len(handover) != 3:
            raise ValueError("handover_pose is [x, y, z]")
        self.groups, self.links = dict(zip(self.hands, groups)), dict(zip(self.hands, links))
        self.handover_pose = Pose(*map(float, handover), frame=self.base_frame)
        self.max_opening, self.base_radius, self.standoff = p.max_opening_m, p.base_radius_m, p.standoff_m
        self.near_standoff = min(p.near_standoff_m, p.standoff_m)
        self.arm_planner = p.arm_planner
        self.arm_controllers = dict(zip(self.hands, p.arm_controllers))
        self.torso = (p.torso_controller, tuple(p.torso_joints), p.torso_max_speed)
        self.joint_limits = (p.max_joint_speed, p.max_joint_acceleration)
        if p.arm_planner == "builtin" and len(p.arm_controllers) != len(self.hands):
            raise ValueError("arm_controllers needs one FollowJointTrajectory action per hand")
        if len(p.handle_lateral_m) != len(self.hands):
            raise ValueError("handle_lateral_m needs one offset per hand")
        if not p.handle_reach_m or min(p.handle_reach_m) <= 0:
            raise ValueError("handle_reach_m needs at least one distance, each above 0")
        self.handle_reach = [float(a) for a in p.handle_reach_m]
        self.handle_lateral = dict(zip(self.hands, map(float, p.handle_lateral_m)))
        self.omnidirectional, self.follow_path_action = p.base_omnidirectional, p.follow_path_action
        self.reach_ahead, self.arm_space, self.door_open = p.reach_ahead_m, p.arm_space_m, p.door_open_rad
        self.carry_height = p.carry_height_m
        self.hold_out, self.handover_height, self.handover_wait = p.hold_out_m, p.handover_height_m, p.handover_wait_s
        try:
            self.objects = load_object_table(p.objects_file or None)
        except (OSError, ConfigError) as exc:
            raise ValueError(f"cannot load the object table: {exc}") from exc
        self.fixed = FixedPoses(p.object_poses)
        try:
            self.skill_map = SkillMap.from_file(config_file("skills.yaml", p.skills_file))
        except (OSError, SkillMapError) as exc:
            raise ValueError(f"cannot load the skill mapping: {exc}") from exc
        group = ReentrantCallbackGroup()
        self.poses: PoseSource = OraclePoses(self, callback_group=group) if p.pose_source == "oracle" else self.fixed
        self.map_frame = "map"
        self.frames = _frame_buffer(self, group)
        # Not obstacles to the arm: the robot itself and the people (the referee knows them too).
        self.skip_names = [p.robot_agent]
        try:
            make = drivers or default_drivers
            self.navigator, self.arm, self.gripper = make(self, dict(zip(self.hands, grippers)), group)
        except DriverUnavailable as exc:
            raise ValueError(f"{self.robot_name} backend: {exc}") from exc
        self.holding: dict[str, str] = {}       # hand -> object
        self.held: dict[str, Held] = {}         # hand -> how it holds what it holds (grasps planned from a box)
        types = interface_types("action")
        handlers = {skill: getattr(self, method) for skill, method in self.MOTIONS.items()}
        motion = MutuallyExclusiveCallbackGroup()  # one body: one motion at a time
        self._servers = [ActionServer(self, types[skill], self.skill_map.server(skill),
                                      execute_callback=partial(self._execute, types[skill], handlers.get(skill), skill),
                                      cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=motion,
                                      result_timeout=RESULT_KEEP_S)
                         for skill in self.skill_map.skill_types()]
        self.get_logger().info(f"{self.robot_name} skills: {', '.join(self.skill_map.skill_types())}; "
                               f"hands {', '.join(self.hands)}; {len(self.locations)} locations; arm planner "
                               f"{p.arm_planner}; poses from {p.pose_source}"
                               + (" (the simulator's referee: simulation only)" if p.pose_source == "oracle" else ""))

    # -- framework ---------------------------------------------------------------------------
    def _execute(self, action_type, handler, skill: str, goal_handle):
        started = time.monotonic()
        cancel = lambda: goal_handle.is_cancel_requested  # noqa: E731
        problem = skill_goal_problem(goal_handle.request)
        if problem:  # nothing moves for a goal that names nothing the robot knows
            failure = Failure(FailureCode.INVALID, skill.lower(), f"the {skill} goal was rejected", problem)
        elif handler is None:
            failure = self._no_motion(skill)
        else:
            try:
                failure = handler(goal_handle.request, cancel)
            except Exception as exc:  # noqa: BLE001 - a driver error is a failed skill, not a dead node
                failure = Failure(FailureCode.PHYSICAL, skill.lower(), f"{skill.lower()} failed",
                                  f"{type(exc).__name__}: {exc}")
        if failure is not None and failure.code == FailureCode.CANCELED:
            goal_handle.canceled()
        elif failure is None:
            goal_handle.succeed()
        else:
            goal_handle.abort()
            self.get_logger().warn(failure.feedback())
        return action_type.Result(success=failure is None, failure=failure_to_msg(failure),
                                  duration_s=time.monotonic() - started)

    def _no_motion(self, skill: str) -> Failure:
        return Failure(FailureCode.INVALID, skill.lower(), f"{self.robot_name} cannot {skill.lower()}",
                       f"the {self.robot_name} backend has no motion for {skill}",
                       "leave it out of robot_capabilities so that the plan gives it to the person")

    @staticmethod
    def _problem(what: str, problem: Optional[Problem], suggestion: str = "") -> Optional[Failure]:
        if problem is None:
            return None
        if problem.canceled:
            return Failure(FailureCode.CANCELED, what, f"{what} was canceled", problem.why)
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", problem.why, suggestion, cause=problem.cause)

    def _pose(self, name: str, given) -> Optional[Pose]:
        if given:
            return Pose.from_msg(given[0])
        seen = self.poses.find(name) or self.fixed.find(name)
        return None if seen is None else Pose(seen.x, seen.y, seen.top, frame=seen.frame)

    def _free_hand(self, wanted: str) -> Optional[str]:
        if wanted:
            return wanted if wanted in self.hands and wanted not in self.holding else None
        return next((h for h in self.hands if h not in self.holding), None)

    def _hand_with(self, obj: str) -> Optional[str]:
        return next((h for h, o in self.holding.items() if o == obj), None)

    def _steps(self, what: str, cancel, *moves: Callable[[], "Optional[Problem | Failure]"]) -> Optional[Failure]:
        """Run driver calls in order; the first that fails (or a cancel) stops the skill."""
        for move in moves:
            if cancel():
                return self._problem(what, CANCELED)
            got = move()
            failure = got if isinstance(got, Failure) else self._problem(what, got)
            if failure is not None:
                return failure
        return None

    def _release(self, hand: str, cancel) -> Optional[Problem]:
        return self.gripper.command(hand, OPEN, self.effort, cancel).problem

    def _close_on(self, hand: str, thing: str, what: str, cancel, again: bool = False) -> Optional[Failure]:
        """Close the hand on ``thing`` and feel whether it is there: fingers closed to their limit
        hold nothing. ``again``: it was held before (the check after a lift), so its absence
        means it slipped out."""
        grip: Grip = self.gripper.command(hand, CLOSED, self.effort, cancel)
        if grip.problem is not None:
            return self._problem(what, grip.problem)
        if grip.position > self.empty_grip:
            return None
        if again:
            return Failure(FailureCode.PHYSICAL, what, f"{what} failed",
                           f"{thing} slipped out of the {hand} hand (the gripper now closes to "
                           f"{grip.position * 100:.1f} cm)", f"look for {thing} and grasp it again",
                           recoverable=True, cause=Cause.SLIPPED)
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed",
                       f"the {hand} gripper closed on nothing where {thing} should be (it closed to "
                       f"{grip.position * 100:.1f} cm)", f"look for {thing} again before grasping it",
                       recoverable=True, cause=Cause.EMPTY_GRASP)

    # -- skills ------------------------------------------------------------------------------
    def _navigate(self, goal, cancel) -> Optional[Failure]:
        what = f"navigate to {goal.to_location}"
        pose = Pose.from_msg(goal.goal_pose[0]) if goal.goal_pose else None
        if pose is None and goal.to_location in self.locations:
            x, y, yaw = self.locations[goal.to_location]
            pose = Pose(x, y, 0.0, yaw)
        self._fold(cancel)
        if pose is not None:
            return self._problem(what, self.navigator.go_to(pose, self.nav_timeout, cancel),
                                 "check the map and obstacles")
        seen = self.poses.find(goal.to_location)
        if seen is None or not seen.has_box:
            return Failure(FailureCode.NOT_FOUND, what, f"{what} failed", f"{goal.to_location} has no pose in the "
                           f"robot config and the {self.poses.name} pose source does not know its extent",
                           "add it to `locations` ('name x y yaw')")
        tried = []
        facing = front(seen.joint) if seen.joint is not None else None
        for place in standing_places(seen, self.base_radius + self.standoff, self._robot_xy(), facing):
            problem = self.navigator.go_to(place, self.nav_timeout, cancel)
            if problem is None or problem.canceled:
                return self._problem(what, problem)
            tried.append(f"({place.x:.2f}, {place.y:.2f}): {problem.why}")
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"no standing place in front of "
                       f"{goal.to_location} could be reached: {'; '.join(tried)}", "clear the way to it",
                       recoverable=True, cause=Cause.BLOCKED)

    def _robot_pose(self) -> tuple[float, float, float]:
        """Where the base is in the map (x, y, yaw; from /tf), or the origin while it is unknown."""
        found = self.frames.transform(self.map_frame, self.base_frame) if self.frames is not None else None
        if found is None:
            return 0.0, 0.0, 0.0
        return float(found[0, 3]), float(found[1, 3]), math.atan2(found[1, 0], found[0, 0])

    def _robot_xy(self) -> tuple[float, float]:
        return self._robot_pose()[:2]

    def _reach_xy(self, base: Optional[Pose] = None) -> tuple[float, float]:
        """The point in front of the base (standing at ``base``, else where it stands) where the
        arms reach best."""
        x, y, yaw = (base.x, base.y, base.yaw) if base is not None else self._robot_pose()
        return x + self.reach_ahead * math.cos(yaw), y + self.reach_ahead * math.sin(yaw)

    def _class_of(self, seen: SeenObject) -> Optional[ObjectProperties]:
        name = seen.class_name or seen.name.rstrip("0123456789")
        return self.objects.get(name) if name in self.objects else None

    def _grasp(self, goal, cancel) -> Optional[Failure]:
        what = f"grasp {goal.object}"
        hand = self._free_hand(goal.hand)
        if hand is None:
            return self._no_free_hand(what)
        seen = None if goal.object_pose else self.poses.find(goal.object)
        if seen is not None and seen.has_box:
            return self._grasp_seen(goal, seen, hand, what, cancel)
        if seen is None and not goal.object_pose and self.poses is not self.fixed:
            # A source that sees things does not know it: not where it was thought to be. (Only
            # with the config's points does a grasp go to the support's pose instead.)
            return Failure(FailureCode.NOT_FOUND, what, f"{what} failed", f"the {self.poses.name} pose source does "
                           f"not know where {goal.object} is", f"look for {goal.object}", recoverable=True,
                           cause=Cause.NOT_FOUND)
        pose = self._pose(goal.object, goal.object_pose) or self._pose(goal.support, [])
        if pose is None:
            return Failure(FailureCode.NOT_FOUND, what, f"{what} failed",
                           f"no pose for {goal.object} or {goal.support} (poses from {self.poses.name})",
                           "give object_pose in the goal, or add it to object_poses")
        group, link = self.groups[hand], self.links[hand]
        failure = self._steps(what, cancel,
                              lambda: self._release(hand, cancel),
                              lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                              lambda: self.arm.move_to(group, pose, link, cancel),
                              lambda: self._close_on(hand, goal.object, what, cancel),
                              lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                              lambda: self._close_on(hand, goal.object, what, cancel, again=True))
        if failure is None:
            self.holding[hand] = goal.object
        return failure

    def _grasp_seen(self, goal, seen: SeenObject, hand: str, what: str, cancel) -> Optional[Failure]:
        """A grasp planned from the thing's box: the candidates in order until one the arm reaches."""
        known = self.poses.everything()
        support = (self.poses.find(goal.support) if goal.support else None) or support_of(seen, known)
        if support is not None and contains(support, seen.x, seen.y, seen.z):
            support = support_of(seen, known)   # the goal's support is what it lies in (a fridge)
        around = container_of(seen, known)     # what it lies in: the robot steps in front of its opening
        floor = support.top if support is not None and contains_xy(support, seen.x, seen.y) else None
        skip = [goal.object]
        if floor is not None and floor - DISH_M <= seen.bottom < floor - SUNK_M:
            # Lying in a dish (a plate's, a tray's: its box is its rim): the fingers go down inside
            # its rim to the thing's middle, or a round thing held above it squirts out.
            floor, skip = seen.bottom, [goal.object, support.name]
        # What the arm keeps clear of round the thing (set again after a step: folding for the
        # move sets it without skipping the thing, which the fingers must reach).
        def keep_clear(known: list) -> None:
            self.arm.keep_clear(self._clear_around(known, skip=skip, thing=seen))

        keep_clear(known)
        if floor is None and around is not None:
            floor = level_under(around, seen)   # a shelf of the fridge it is in
        ways = partial(grasps, seen, self._class_of(seen), self.max_opening, support_top=floor,
                       approach_m=self.approach)
        candidates = ways(self._robot_xy())
        failure = self._steps(what, cancel, lambda: self._release(hand, cancel))
        if failure is not None:
            return failure
        failure, missed = self._try_grasps(goal, seen, hand, candidates, what, cancel)
        if failure is not False:
            return failure
        moved = self._step_in_front(around if around is not None and around.joint is not None else support,
                                    (seen.x, seen.y), what, cancel, hand,
                                    lambda base: [[g.approach, g.pose] for g in ways((base.x, base.y))])
        if isinstance(moved, Failure):
            return moved
        if moved:   # nearer now: the grasps again, from where the base stands
            candidates = ways(self._robot_xy())
            keep_clear(self.poses.everything())
            failure, missed = self._try_grasps(goal, seen, hand, candidates, what, cancel)
            if failure is not False:
                return failure
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed",
                       f"no grasp of {goal.object} the arm can reach ({len(candidates)} tried): "
                       + "; ".join(missed[:3]), f"stand closer to {goal.object} or clear what is around it",
                       recoverable=True, cause=Cause.UNREACHABLE)

    def _step_in_front(self, support: Optional[SeenObject], point: tuple[float, float], what: str, cancel,
                       hand: Optional[str] = None, targets=None) -> "bool | Failure":
        """Out of reach from where the base stands: it moves (Nav2) where the arm reaches. With
        ``hand`` and ``targets`` (a base pose -> the hand's ways to the work from there, each a
        list of poses in turn), the places around ``support`` the arm's IK reaches one of them
        from; where that cannot be told, in front of ``point`` at the support's face nearest to
        it, else at the face nearest the robot. True when it moved."""
        if support is None or not support.has_box:
            return False
        distance = self.base_radius + self.standoff
        facing = front(support.joint) if support.joint is not None else None

        def places_to_try():
            """The usual distance's places; then, where Nav2 brought the base to none of them or
            the arm reaches from none, nearer ones (the far side of a fridge's shelf), where the
            base may still stand."""
            if hand is None or targets is None:
                yield None
                return
            yield self._stands_that_reach(support, point, distance, facing, hand, targets)
            if self.near_standoff < self.standoff:
                yield self._stands_that_reach(support, point, self.base_radius + self.near_standoff, facing, hand,
                                              targets, min_move=NEAR_MOVE_MIN_M)

        folded = False
        for places in places_to_try():
            if places is None:   # the arm cannot tell: in front of the point
                x, y, _ = self._robot_pose()
                places = [line_up(support, point, distance, (x, y), facing)] if facing is not None \
                    else [line_up(support, point, distance, point), line_up(support, point, distance, (x, y))]
                places = [p for p in places if math.hypot(p.x - x, p.y - y) >= LINE_UP_MIN_M]
            if places and not folded:
                self._fold(cancel)
                folded = True
            for place in places:
                problem = self.navigator.go_to(place, self.nav_timeout, cancel)
                if problem is not None and problem.canceled:
                    return self._problem(what, problem)
                if problem is None:
                    return True
        return False

    def _fold(self, cancel) -> None:
        """Before the base moves: each hand that holds something comes in beside the body at
        ``carry_height_m`` (the bottom of what it holds there, held as it was taken), so that turning and driving do not
        sweep it through what stands on a table or counter. An empty hand comes in too, pointing
        down, where it reaches out past the base's front (left there by a grasp or a put-down: it
        would arrive inside what the base drives up to). A hand the arm cannot bring there stays
        where it is (the base's move is still tried)."""
        x, y, yaw = self._robot_pose()
        c, s = math.cos(yaw), math.sin(yaw)
        for hand in self.hands:
            link, held = self.links[hand], self.held.get(hand)
            shoulder, now = self.arm.shoulder(link), self.arm.hand_position(link)
            if shoulder is None or now is None or (held is None and now[0] <= self.base_radius):
                continue
            ahead, side = CARRY_AHEAD_M, math.copysign(CARRY_SIDE_M, shoulder[1])
            if math.hypot(now[0] - ahead, now[1] - side) < CARRY_NEAR_M:
                continue
            turn, roll, pitch = (held.turn, held.grasp.pose.roll, held.grasp.pose.pitch) if held is not None \
                else (0.0, 0.0, math.pi / 2)
            height = self.carry_height + (held.above_bottom if held is not None else 0.0)
            pose = Pose(x + c * ahead - s * side, y + s * ahead + c * side, height, yaw + turn,
                        self.map_frame, roll, pitch)
            self.arm.keep_clear(self._clear_around())
            problem = self.arm.move_to(self.groups[hand], pose, link, cancel)
            if problem is not None and not problem.canceled:
                self.get_logger().info(f"the {hand} hand stays out: {problem.why}")

    def _stands_that_reach(self, support: SeenObject, point: tuple[float, float], distance: float,
                           facing, hand: str, targets, min_move: float = LINE_UP_MIN_M) -> Optional[list[Pose]]:
        """Up to ``STANDS_TRIED`` free places around ``support`` from which the arm's IK reaches
        one of ``targets``' ways, the arm's shoulder nearest ``STAND_REACH_M`` from ``point``
        first, facing it rather than turned; None where the arm cannot tell (the skills then line
        up in front of it). A place nearer than ``min_move`` to the base, and as turned, is none."""
        link = self.links[hand]
        shoulder = self.arm.shoulder(link)
        if shoulder is None:
            return None
        x, y, yaw = self._robot_pose()
        known = self.poses.everything()
        skip = [*self.holding.values(), *self.skip_names, support.name]

        def shoulder_distance(base: Pose) -> float:
            c, s = math.cos(base.yaw), math.sin(base.yaw)
            return math.hypot(base.x + c * shoulder[0] - s * shoulder[1] - point[0],
                              base.y + s * shoulder[0] + c * shoulder[1] - point[1])

        bases = [b for b in stands_around(support, point, distance, facing)
                 if math.hypot(b.x - x, b.y - y) >= min_move or abs(math.remainder(b.yaw - yaw, math.tau)) > 0.3]
        # The arm works best neither stretched nor folded (a folded arm has no room for what comes
        # next: a lift, a pour); a turned base works it near its limits and sees the work from
        # aside: facing the work wins unless turning brings the shoulder TURN_COST_M per rad nearer.
        bases.sort(key=lambda b: abs(shoulder_distance(b) - STAND_REACH_M) + TURN_COST_M * abs(math.remainder(
            b.yaw - math.atan2(point[1] - b.y, point[0] - b.x), math.tau)))
        out, checked = [], 0
        for base in bases:
            if checked == STAND_CHECKS or len(out) == STANDS_TRIED:
                break
            if first_in_the_way([base], self.base_radius, known, skip=skip) is not None:
                continue
            checked += 1
            for way in targets(base):
                reached = self.arm.reaches(link, way, base)
                if reached is None:
                    return None
                if reached:
                    out.append(base)
                    break
        return out

    def _clear_around(self, known: Optional[list] = None, skip=(), thing: Optional[SeenObject] = None) -> list:
        """The boxes the pose source knows within ``arm_space_m`` of the base (not what the robot
        holds, not the people, not ``skip``; a cabinet as its walls and door, what else ``thing``
        lies inside not at all): what the arm's paths keep clear of."""
        known = self.poses.everything() if known is None else known
        # People move, and a handover reaches towards them: they are not boxes to plan around;
        # a liquid has its container's box, which is there (or held) already.
        people = [o.name for o in known if o.kind in ("agent", "liquid")]
        hollow = [o.name for o in known if (props := self._class_of(o)) is not None and props.inner is not None]
        return obstacles_around(self._robot_xy(), known, self.arm_space, inside_of=thing, hollow=hollow,
                                skip=[*self.skip_names, *self.holding.values(), *skip, *people])

    def _take_hold(self, hand: str, grasp: Grasp, seen: SeenObject) -> None:
        """The arm's planner carries the thing with the hand from now on (its box in the hand's frame)."""
        tcp = grasp.pose.matrix()
        rotation = tcp[:3, :3].T @ Pose(0.0, 0.0, 0.0, seen.yaw).matrix()[:3, :3]
        centre = tcp[:3, :3].T @ (np.array([seen.x, seen.y, seen.z]) - tcp[:3, 3])
        x, y, z, w = Rotation.from_matrix(rotation).as_quat()
        # A little smaller than seen: resting on its support as it is taken is not a collision.
        half = tuple(max(v / 2 - 0.01, 0.005) for v in seen.size)
        self.arm.hold(self.links[hand], HeldBox(seen.name, tuple(map(float, centre)), half,
                                                (float(w), float(x), float(y), float(z))))

    def _reach(self, group: str, link: str, cancel, *steps: tuple[Pose, bool]) -> Optional[Problem]:
        """The hand through ``steps`` (a pose, and whether along a straight line) in turn; the
        first problem stops it."""
        for pose, line in steps:
            problem = self.arm.move_to(group, pose, link, cancel, line=line)
            if problem is not None:
                return problem
        return None

    @staticmethod
    def _ends_skill(problem: Problem) -> bool:
        """A cancel or a controller that stopped the arm ends the skill; a motion the planner found
        no way to (unreachable, blocked) lets it try the next grasp, spot or turn."""
        return problem.canceled or problem.cause == Cause.MOTION_FAILED

    def _try_grasps(self, goal, seen: SeenObject, hand: str, candidates, what: str, cancel):
        """(Failure or None: the grasp ended so; False: no candidate could be reached, and why)."""
        group, link = self.groups[hand], self.links[hand]
        missed = []
        for grasp in candidates:
            problem = self._reach(group, link, cancel, (grasp.approach, False), (grasp.pose, True))
            if problem is not None and self._ends_skill(problem):
                return self._problem(what, problem), missed
            if problem is not None:     # no motion found: the next grasp
                missed.append(f"{grasp.kind} grasp: {problem.why}")
                continue
            lift = grasp.pose.offset(dz=self.approach)
            failure = self._steps(what, cancel,
                                  lambda: self._close_on(hand, goal.object, what, cancel),
                                  partial(self.arm.move_to, group, lift, link, cancel, line=True),
                                  lambda: self._close_on(hand, goal.object, what, cancel, again=True))
            if failure is None:
                self.holding[hand] = goal.object
                self.held[hand] = Held(grasp, grasp.pose.z - seen.bottom, seen, grasp.pose.yaw - self._robot_pose()[2])
                self._take_hold(hand, grasp, seen)
            return failure, missed
        return False, missed

    def _no_free_hand(self, what: str) -> Failure:
        return Failure(FailureCode.PRECONDITION, what, f"{what} failed", f"no free hand ({self.holding})",
                       "place what is held first", recoverable=True)

    @staticmethod
    def _no_pose(what: str, name: str) -> Failure:
        return Failure(FailureCode.NOT_FOUND, what, f"{what} failed", f"no pose for {name}", "add it to object_poses")

    def _not_holding(self, obj: str, what: str) -> Failure:
        return Failure(FailureCode.PRECONDITION, what, f"{what} failed", f"{self.robot_name} does not hold {obj}",
                       f"grasp {obj} first", recoverable=True)

    def _place(self, goal, cancel) -> Optional[Failure]:
        what = f"place {goal.object} {goal.relation or 'on'} {goal.target}"
        hand = self._hand_with(goal.object)
        if hand is None:
            return self._not_holding(goal.object, what)
        held = self.held.get(hand)
        target = None if goal.target_pose else self.poses.find(goal.target)
        if held is not None and target is not None and target.has_box:
            return self._put_down(goal, hand, held, target, what, cancel)
        pose = self._pose(goal.target, goal.target_pose)
        if pose is None:
            return self._no_pose(what, goal.target)
        pose = pose.offset(dz=0.02)
        group, link = self.groups[hand], self.links[hand]
        failure = self._steps(what, cancel,
                              lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                              lambda: self.arm.move_to(group, pose, link, cancel),
                              lambda: self._release(hand, cancel),
                              lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel))
        if failure is None:
            self._let_go(hand)
        return failure

    def _put_down(self, goal, hand: str, held: "Held", target: SeenObject, what: str, cancel) -> Optional[Failure]:
        """Set the held thing down on (or into) ``target``, held as it was taken: the free spots
        nearest where the arm reaches best, in turn, until the arm finds a motion to one. The hand
        feels first whether it still holds it (a drive may have shaken it out)."""
        slipped = self._close_on(hand, goal.object, what, cancel, again=True)
        if slipped is not None:
            return slipped
        known = self.poses.everything()
        skip = [*self.holding.values(), *self.skip_names]
        props = self._class_of(target)
        into = goal.relation == "in" and props is not None and props.inner is not None
        footprint = max(held.seen.size[:2]) / 2
        if into:   # on its floor, as near the arm's best reach as its walls let it; else let go over its rim
            spots_near = partial(spots_inside, target, props.inner, footprint)
            # Its levels as the source knows them (a fridge's shelves), the highest first: a hand
            # from above reaches it best; else its floor, from the object table's inner size.
            floors = tuple(sorted(target.inner_levels, reverse=True)) or (
                target.bottom + max(target.size[2] - props.inner[2], 0.0),)
            if target.joint is None:    # open at the top (a bowl, a box; not a fridge)
                floors += (target.top + RIM_DROP_M,)
        else:
            spots_near = partial(free_spots, target, footprint, known, skip=skip,
                                 round_top=props is not None and props.shape == "cylinder")
            floors = (target.top,)
        spots = spots_near(self._reach_xy())
        if not spots:
            return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"no free space on {goal.target} for "
                           f"{goal.object}", f"clear a spot on {goal.target}", recoverable=True,
                           cause=Cause.NO_FREE_SPACE)
        # Its box is in the way on the way there; into it, the hand then goes down in (its walls
        # are not known: its box is left out for that line).
        clear = (lambda: self._clear_around(known), lambda: self._clear_around(known, skip=[goal.target])) if into \
            else (lambda: self._clear_around(known),) * 2
        failure, missed = self._try_spots(hand, held, spots, floors, what, cancel, clear, target.top)
        if failure is False:
            # Where the arm reaches a spot: round what the target stands on (a bowl or a cutting
            # board on a table), round the target itself (a counter), or before a fridge's opening.
            stand_at = stand_target(target, known)

            aim = spots[0]

            def toward_aim(x: float, y: float) -> tuple[float, float]:
                """The point ``reach_ahead_m`` from a base at (x, y) towards the first spot."""
                heading = math.atan2(aim[1] - y, aim[0] - x)
                return x + self.reach_ahead * math.cos(heading), y + self.reach_ahead * math.sin(heading)

            def ways(base: Pose) -> list[list[Pose]]:
                return [[pose.offset(dz=dz), pose] for x, y in spots_near(toward_aim(base.x, base.y))[:2]
                        for floor in floors for pose in _set_down(held, (x, y), floor, base.yaw)
                        for dz in (self.approach, SHORT_APPROACH_M)]

            moved = self._step_in_front(stand_at, aim, what, cancel, hand, ways)
            if isinstance(moved, Failure):
                return moved
            if moved:   # nearer now: the spots again, nearest where the arm reaches from here
                spots = spots_near(toward_aim(*self._robot_xy()))
                failure, missed = self._try_spots(hand, held, spots, floors, what, cancel, clear, target.top)
        if failure is not False:
            if failure is None:
                self._let_go(hand)
            return failure
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"no free spot on {goal.target} the arm can "
                       f"reach ({len(spots)} tried): " + "; ".join(missed[:3]), f"stand closer to {goal.target}",
                       recoverable=True, cause=Cause.UNREACHABLE)

    def _let_go(self, hand: str) -> None:
        self.holding.pop(hand, None)
        self.held.pop(hand, None)
        self.arm.hold(self.links[hand], None)

    def _try_spots(self, hand: str, held: "Held", spots, floors: Sequence[float], what: str, cancel,
                   clear, top: float):
        """(Failure or None: the put-down ended so; False: no spot could be reached, and why).
        ``clear``: what the arm keeps clear of on its way above a spot, and on its line down to
        a thing's bottom below ``top`` (into a container)."""
        group, link = self.groups[hand], self.links[hand]
        above, down = clear[0](), clear[1]()
        missed = []
        for x, y in spots:
            poses = [p for floor in floors for p in _set_down(held, (x, y), floor, self._robot_pose()[2])]
            for pose in poses:
                self.arm.keep_clear(above)
                # From the usual height above; where that is out of reach (the far side of a
                # counter, over a box's rim), from nearer.
                for dz in (self.approach, SHORT_APPROACH_M):
                    problem = self.arm.move_to(group, pose.offset(dz=dz), link, cancel)
                    if problem is None or problem.cause != Cause.UNREACHABLE:
                        break
                if problem is None:
                    self.arm.keep_clear(down if pose.z - held.above_bottom < top else above)
                    problem = self.arm.move_to(group, pose, link, cancel, line=True)
                if problem is not None and self._ends_skill(problem):
                    return self._problem(what, problem), missed
                if problem is None:
                    return self._steps(what, cancel, lambda: self._release(hand, cancel),
                                       partial(self.arm.move_to, group, pose.offset(dz=dz), link,
                                               cancel, line=True)), missed
            missed.append(f"({x:.2f}, {y:.2f}): {problem.why}")
        return False, missed

    def _open(self, goal, cancel, pull: float = -0.3) -> Optional[Failure]:
        what = f"{'open' if pull < 0 else 'close'} {goal.object}"
        hand = self._free_hand("")
        if hand is None:
            return Failure(FailureCode.PRECONDITION, what, f"{what} failed", "both hands are full",
                           "place something first", recoverable=True)
        seen = None if goal.handle_pose else self.poses.find(goal.object)
        if seen is not None and seen.joint is not None:
            return self._articulate(seen, pull < 0, what, cancel)
        props = self._class_of(seen) if seen is not None and seen.has_box else None
        if props is not None and props.articulation == "lid":
            return self._turn_lid(seen, hand, pull < 0, what, cancel)
        pose = self._pose(goal.object, goal.handle_pose)
        if pose is None:
            return Failure(FailureCode.NOT_FOUND, what, f"{what} failed", f"no handle pose for {goal.object}",
                           "add it to object_poses")
        group, link = self.groups[hand], self.links[hand]
        return self._steps(what, cancel,
                           lambda: self._release(hand, cancel),
                           lambda: self.arm.move_to(group, pose, link, cancel),
                           lambda: self._close_on(hand, f"the handle of {goal.object}", what, cancel),
                           lambda: self.arm.move_to(group, pose.offset(dx=pull), link, cancel),
                           lambda: self._release(hand, cancel))

    def _turn_lid(self, seen: SeenObject, hand: str, opening: bool, what: str, cancel) -> Optional[Failure]:
        """A screw cap: the hand comes down on the container's top, closes on the cap, turns it a
        little less than half a turn (anticlockwise seen from above to open it), lets go and goes
        back up; the pose source then says whether the lid is off (on). Out of reach from where
        the base stands, it first moves where the arm's IK reaches the cap."""
        if seen.name in self.holding.values():
            return Failure(FailureCode.PRECONDITION, what, f"{what} failed", f"{self.robot_name} holds {seen.name}: "
                           "a cap turns only while the container stands still", f"put {seen.name} down first",
                           recoverable=True, cause=Cause.HAND_FULL)
        if seen.open_fraction >= 0 and (seen.open_fraction >= 0.5) == opening:
            return None      # its lid is off (on) already
        group, link = self.groups[hand], self.links[hand]
        turn = CAP_TURN_RAD if opening else -CAP_TURN_RAD

        def holds(at_xy: tuple[float, float], thing: SeenObject) -> list[list[Pose]]:
            out = []
            for yaw in cap_yaws(thing, at_xy):
                at = Pose(thing.x, thing.y, thing.top - CAP_DEPTH_M, yaw, thing.frame, pitch=math.pi / 2)
                out.append([at.offset(dz=CAP_APPROACH_M), at,
                            Pose(at.x, at.y, at.z, yaw + turn, at.frame, pitch=at.pitch)])
            return out

        missed: list[str] = []
        for attempt in range(2):
            if attempt == 1:
                moved = self._step_in_front(stand_target(seen, self.poses.everything()), (seen.x, seen.y), what,
                                            cancel, hand, lambda base: holds((base.x, base.y), seen))
                if isinstance(moved, Failure):
                    return moved
                if not moved:
                    break
            self.arm.keep_clear(self._clear_around(skip=[seen.name]))
            for above, at, turned in holds(self._robot_xy(), seen):
                problem = self._reach(group, link, cancel, (above, False), (at, True))
                if problem is not None:
                    if self._ends_skill(problem):
                        return self._problem(what, problem)
                    missed.append(problem.why)
                    continue
                failure = self._steps(what, cancel, partial(self._close_on, hand, f"the cap of {seen.name}", what,
                                                            cancel),
                                      partial(self.arm.turn_wrist, group, link, turn, cancel),
                                      lambda: self._release(hand, cancel),
                                      partial(self.arm.move_to, group, turned.offset(dz=CAP_APPROACH_M), link, cancel))
                if failure is not None and failure.cause in (Cause.UNREACHABLE, Cause.BLOCKED):
                    # The wrist had no room to turn this way round: let go, back up, the next heading.
                    self._release(hand, cancel)
                    self.arm.move_to(group, above, link, cancel, line=True)
                    missed.append(f"turning the cap: {failure.why}")
                    continue
                if failure is not None:
                    self._release(hand, cancel)
                    return failure
                after = self.poses.find(seen.name)
                if after is not None and (after.open_fraction >= 0.5) == opening:
                    return None
                return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"the cap of {seen.name} did not turn "
                               f"{'off' if opening else 'on'} with the hand", f"look at {seen.name} and try again",
                               recoverable=True, cause=Cause.DID_NOT_OPEN)
        # The latest reasons: those from where the base stood last.
        return self._unreachable(what, f"no arm reaches and turns the cap of {seen.name}", missed[::-1],
                                 f"stand closer to {seen.name}")

    def _close(self, goal, cancel) -> Optional[Failure]:
        return self._open(goal, cancel, pull=0.3)

    def _articulate(self, seen: SeenObject, opening: bool, what: str, cancel) -> Optional[Failure]:
        """Take the handle, then the base follows the handle's path (the arm still) until the
        joint is where it should be; let go, back off, and look whether it moved. A room door
        that stands open against its wall is closed in two pulls: by its back handle part of the
        way, then by its front one (``plans``)."""
        joint, name = seen.joint, seen.name
        if _articulated_as_wanted(joint, opening):
            return None
        if not self.omnidirectional:
            return Failure(FailureCode.INVALID, what, f"{what} failed", f"{self.robot_name}'s base cannot follow "
                           f"the path of {name}'s handle sideways (base_omnidirectional is false)",
                           "leave open and close out of robot_capabilities so that the plan asks the person")
        goal = joint.open if opening else 0.0
        if opening and joint.type == "hinge":
            goal = min(goal, self.door_open)
        known = self.poses.everything()
        skip = [*self.skip_names, *(o.name for o in known if o.kind == "agent")]
        tried: list[str] = []
        for plan in plans(joint, goal):
            ways = self._ways(joint, plan, known, skip, seen.frame, tried)
            if ways is None:
                continue                         # a pull of it has no clear path for the base
            now = joint
            for k, (back, to) in enumerate(plan):   # each pull from where the last one left the joint
                if k > 0:
                    ways = self._ways(now, [(back, to)], known, skip, seen.frame, tried)
                got = False if ways is None else self._pull_by_handle(now, name, ways[0], to, what, cancel, tried)
                if got is not None:
                    break
                after = self.poses.find(name)
                now = after.joint if after is not None and after.joint is not None else now
            else:
                return self._check_joint(name, opening, what, tried)
            if got is not False:
                return got                       # canceled, or the hand closed on nothing
            if abs(now.position - joint.position) > 0.05:
                return self._check_joint(name, opening, what, tried)    # moved part of the way
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"no way to take the handle of {name} and "
                       f"follow it: " + "; ".join(tried[:4]), f"clear the floor in front of {name}",
                       recoverable=True, cause=Cause.BLOCKED)

    def _ways(self, joint: Joint, plan, known, skip, frame: str, tried: list[str]) -> Optional[list]:
        """For each pull of ``plan`` from ``joint`` as it is, the (hand, Pull)s whose base path is
        clear of what the pose source knows, best first; None where a pull has none."""
        out = []
        for back, to in plan:
            options = []
            for hand, ahead in ((h, a) for h in self.hands if h not in self.holding for a in self.handle_reach):
                way = pull(joint, to, ahead, self.handle_lateral[hand], frame, back)
                hit = first_in_the_way(way.sweep, self.base_radius, known, skip=skip)
                if hit is None:
                    options.append((hand, way))
                else:
                    tried.append(f"{'back' if back else 'front'} handle to {to:.1f}, {hand} hand {ahead:.2f} m "
                                 f"ahead: the base would meet {hit}")
            if not options:
                return None
            out.append(options)
            joint = moved_to(joint, to)
        return out

    def _pull_by_handle(self, joint: Joint, name: str, options, to: float, what: str, cancel,
                        tried: list[str]) -> "Optional[Failure] | bool":
        """One pull: the first of ``options`` (hand, Pull) whose standing place and handle the
        robot reaches. None: pulled; a Failure: it ended so; False: none could be reached."""
        for hand, way in options:
            problem = self.navigator.go_to(way.stand, self.nav_timeout, cancel)
            if problem is not None:
                if problem.canceled:
                    return self._problem(what, problem)
                tried.append(f"{hand} hand at {name}'s handle: {problem.why}")
                continue
            self.arm.keep_clear(self._clear_around(skip=[name]))
            group, link = self.groups[hand], self.links[hand]
            problem = self._reach(group, link, cancel, (way.approach, False), (way.grasp, True))
            if problem is not None:
                if problem.canceled:
                    return self._problem(what, problem)
                # Also where the arm was stopped on the way: the leaf it is not told of (only its
                # handle is) may stand in the way from here, not from the next place.
                tried.append(f"{hand} hand at {name}'s handle: {problem.why}")
                continue
            failure = self._close_on(hand, f"the handle of {name}", what, cancel)
            if failure is not None:
                self._release(hand, cancel)
                self.arm.move_to(group, way.approach, link, cancel)
                return failure
            # From where the base stopped (within Nav2's tolerance), carried with the leaf.
            x, y, yaw = self._robot_pose()
            moved = self.navigator.follow(sweep(joint, Pose(x, y, 0.0, yaw, way.stand.frame), to), self.nav_timeout,
                                          cancel)
            self._release(hand, cancel)
            # The hand straight back out of the handle, wherever the leaf took it.
            self.arm.move_to(group, carried(joint, way.approach, to), link, cancel, line=True)
            if moved is not None and moved.canceled:
                return self._problem(what, moved)
            if moved is not None:
                tried.append(f"the base following {name}'s handle: {moved.why}")
            return None
        return False

    def _check_joint(self, name: str, opening: bool, what: str, tried: list[str]) -> Optional[Failure]:
        """Whether the door or drawer is now open (closed), as the pose source sees it."""
        after = self.poses.find(name)
        if after is not None and after.joint is not None and _articulated_as_wanted(after.joint, opening):
            return None
        where = f"{after.open_fraction:.0%} open" if after is not None and after.open_fraction >= 0 else "not seen"
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"{name} is {where} after the base followed "
                       "its handle" + (f" ({tried[-1]})" if tried else ""), f"look at {name} and try again",
                       recoverable=True, cause=Cause.DID_NOT_OPEN)

    def _handover(self, goal, cancel) -> Optional[Failure]:
        pose = Pose.from_msg(goal.handover_pose[0]) if goal.handover_pose else self.handover_pose
        if goal.receiver == self.agent:  # receive_object: the person gives it to the robot
            what = f"take {goal.object} from {goal.giver}"
            hand = self._free_hand("")
            if hand is None:
                return self._no_free_hand(what)
            failure = self._steps(what, cancel,
                                  lambda: self._release(hand, cancel),
                                  lambda: self.arm.move_to(self.groups[hand], pose, self.links[hand], cancel),
                                  lambda: self._close_on(hand, goal.object, what, cancel))
            if failure is None:
                self.holding[hand] = goal.object
            return failure
        what = f"hand {goal.object} to {goal.receiver}"
        hand = self._hand_with(goal.object)
        if hand is None:
            return self._not_holding(goal.object, what)
        person = None if goal.handover_pose else self.poses.find(goal.receiver)
        if hand in self.held and person is not None:
            return self._hold_out(goal, hand, person, what, cancel)
        self.arm.keep_clear(self._clear_around())
        failure = self._steps(what, cancel,
                              lambda: self.arm.move_to(self.groups[hand], pose, self.links[hand], cancel),
                              lambda: self._release(hand, cancel))
        if failure is None:
            self._let_go(hand)
        return failure

    def _hold_out(self, goal, hand: str, person: SeenObject, what: str, cancel) -> Optional[Failure]:
        """Hold the thing out towards the person, within their reach (the base steps closer when
        the arm cannot reach that far), keep it still while they take it, open, back off."""
        x, y, heading = self._robot_pose()
        distance = math.hypot(person.x - x, person.y - y)
        towards = math.atan2(person.y - y, person.x - x)
        far = distance - HANDOVER_FROM_PERSON_M > self.hold_out
        if far or abs(math.remainder(towards - heading, 2 * math.pi)) > FACE_PERSON_RAD:
            # Closer where the arm cannot reach them, and facing them: the arms work ahead of the base.
            stand = min(distance, HANDOVER_FROM_PERSON_M + self.hold_out)
            problem = self.navigator.go_to(Pose(person.x - math.cos(towards) * stand,
                                                person.y - math.sin(towards) * stand, 0.0, towards, person.frame),
                                           self.nav_timeout, cancel)
            if problem is not None and problem.canceled:
                return self._problem(what, problem)
            x, y, _ = self._robot_pose()
            distance = math.hypot(person.x - x, person.y - y)
        ux, uy = (person.x - x) / max(distance, 1e-6), (person.y - y) / max(distance, 1e-6)
        out = min(self.hold_out, max(distance - HANDOVER_FROM_PERSON_M, 0.3))
        self.arm.keep_clear(self._clear_around())
        held, yaw = self.held[hand], self._robot_pose()[2] + self.held[hand].turn
        group, link, g = self.groups[hand], self.links[hand], self.held[hand].grasp.pose
        missed = []
        # Straight ahead, then out on the hand's own side (an arm reaching across the body meets it).
        side = self.handle_lateral[hand]
        for turn, lateral in ((t, lat) for lat in (0.0, side) for t in (0.0, math.pi, math.pi / 2, -math.pi / 2)):
            pose = Pose(x + ux * out - uy * lateral, y + uy * out + ux * lateral,
                        self.handover_height + held.above_bottom, yaw + turn, g.frame, g.roll, g.pitch)
            problem = self.arm.move_to(group, pose, link, cancel)
            if problem is not None and problem.cause == Cause.MOTION_FAILED and not problem.canceled:
                # Held back on its way out with the thing still in hand: the person has taken hold
                # of it (a person reaches for what is offered within their reach), so the hand
                # lets go, as a handover's pull-to-release does.
                taken = self._close_on(hand, goal.object, what, cancel, again=True)
                if taken is not None:
                    return taken
                self.get_logger().info(f"the {hand} arm stopped holding {goal.object} out ({problem.why}): "
                                       f"{goal.receiver} has hold of it")
                problem = None
            if problem is None:
                failure = self._steps(what, cancel, lambda: self._hold(self.handover_wait, cancel),
                                      lambda: self._release(hand, cancel))
                if failure is None:
                    self._let_go(hand)
                    # Backing off is not part of the handover: the thing is given once the hand opened.
                    back = Pose(pose.x - ux * 0.1, pose.y - uy * 0.1, pose.z + 0.05, pose.yaw, pose.frame,
                                pose.roll, pose.pitch)
                    self.arm.move_to(group, back, link, cancel)
                return failure
            if self._ends_skill(problem):
                return self._problem(what, problem)
            missed.append(problem.why)
        return self._unreachable(what, f"the arm cannot hold {goal.object} out to {goal.receiver}", missed,
                                 f"ask {goal.receiver} to come closer")

    def _pour(self, goal, cancel) -> Optional[Failure]:
        """Hold the source over the target, tilt it, wait, tilt it back, lift (pour and fill)."""
        what = f"pour {goal.liquid or 'from ' + goal.source} into {goal.target}"
        hand = self._hand_with(goal.source)
        if hand is None:
            return self._not_holding(goal.source, what)
        target = None if goal.target_pose else self.poses.find(goal.target)
        if hand in self.held and target is not None and target.has_box:
            return self._pour_over(goal, hand, target, what, cancel)
        pose = self._pose(goal.target, goal.target_pose)
        if pose is None:
            return self._no_pose(what, goal.target)
        group, link = self.groups[hand], self.links[hand]
        above = pose.offset(dz=self.approach)
        return self._steps(what, cancel,
                           lambda: self.arm.move_to(group, above, link, cancel),
                           lambda: self.arm.move_to(group, above.tilted(self.pour_tilt), link, cancel),
                           lambda: self._hold(self.pour_hold, cancel),
                           lambda: self.arm.move_to(group, above, link, cancel))

    def _pour_over(self, goal, hand: str, target: SeenObject, what: str, cancel) -> Optional[Failure]:
        """The held container's mouth over the target's opening (robots/pouring.py), tipped
        until it pours, held, upright again; then the pose source says where the liquid is. Out
        of reach from where the base stands, it first moves where the arm's IK reaches a way."""
        held = self.held[hand]
        mouth, hand_now = self._mouth_in_hand(goal.source, hand)
        got, missed = self._tip_over(goal, hand, target, mouth, hand_now, what, cancel)
        if got is not False:
            return got
        g = held.grasp.pose

        def ways(base: Pose) -> list[list[Pose]]:
            # Carried in, the hand holds it as it was taken, turned with the base (``_fold``).
            carried_as = Pose(0.0, 0.0, 0.0, base.yaw + held.turn, base.frame, g.roll, g.pitch).matrix()[:3, :3]
            return [[t.upright, t.tipped] for _, t in zip(range(POUR_WAYS_CHECKED),
                                                          tips(mouth, held.seen.size[2], carried_as, target,
                                                               (base.x, base.y)))]

        stand_at = stand_target(target, self.poses.everything())
        moved = self._step_in_front(stand_at, (target.x, target.y), what, cancel, hand, ways)
        if isinstance(moved, Failure):
            return moved
        if moved:
            mouth, hand_now = self._mouth_in_hand(goal.source, hand)
            got, missed = self._tip_over(goal, hand, target, mouth, hand_now, what, cancel)
            if got is not False:
                return got
        return self._unreachable(what, f"no way to tip {goal.source} over {goal.target} the arm reaches", missed,
                                 f"stand closer to {goal.target}")

    def _mouth_in_hand(self, source: str, hand: str) -> tuple[np.ndarray, np.ndarray]:
        """(where the held thing's mouth is in the hand's frame, the hand's rotation in the map
        now). Where the hand's frame and the thing are seen, from them: it may have sagged or
        turned in the fingers since the grasp, and the mouth must be over the opening within a
        few centimetres; else as it was taken."""
        held = self.held[hand]
        g = held.grasp.pose
        turned = self._robot_pose()[2] + held.turn - g.yaw    # the base turned since the grasp
        hand_now = Rotation.from_euler("z", turned).as_matrix() @ g.matrix()[:3, :3]
        mouth = mouth_in_hand(g, held.seen)
        tcp = self.frames.transform(self.map_frame, self.links[hand]) if self.frames is not None else None
        now = self.poses.find(source)
        if tcp is not None and now is not None and now.has_box:
            hand_now = tcp[:3, :3]
            mouth = hand_now.T @ (np.array([now.x, now.y, now.top]) - tcp[:3, 3])
        return mouth, hand_now

    def _tip_over(self, goal, hand: str, target: SeenObject, mouth: np.ndarray, hand_now: np.ndarray, what: str,
                  cancel) -> "tuple[Optional[Failure] | bool, list[str]]":
        """The ways to tip it over ``target`` from where the base stands, in turn: (None or a
        Failure: the pour ended so; False: none was reached, and why)."""
        held, group, link = self.held[hand], self.groups[hand], self.links[hand]
        self.arm.keep_clear(self._clear_around())
        missed, upright_reached = [], False
        for tip in tips(mouth, held.seen.size[2], hand_now, target, self._robot_xy()):
            if not upright_reached:
                problem = self.arm.move_to(group, tip.upright, link, cancel)
                if problem is not None:
                    if self._ends_skill(problem):
                        return self._problem(what, problem), missed
                    missed.append(f"upright over {goal.target}: {problem.why}")
                    break
                upright_reached = True
            problem = self.arm.move_to(group, tip.tipped, link, cancel, line=True)   # the mouth comes straight down
            if problem is None:
                failure = self._steps(what, cancel, lambda: self._hold(self.pour_hold, cancel))
                if failure is not None:
                    return failure, missed
                # Upright again where the arm finds a way; the pour is done either way.
                self.arm.move_to(group, tip.upright, link, cancel)
                return self._poured_into(goal, what), missed
            if self._ends_skill(problem):
                return self._problem(what, problem), missed
            missed.append(problem.why)
        return False, missed

    @staticmethod
    def _unreachable(what: str, why: str, missed: list[str], suggestion: str) -> Failure:
        """No motion found for any of the ways tried: why, with the first two reasons."""
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"{why}: " + "; ".join(missed[:2]), suggestion,
                       recoverable=True, cause=Cause.UNREACHABLE)

    def _poured_into(self, goal, what: str) -> Optional[Failure]:
        """Where the pose source sees the liquid now: with the target, or spilled (not seen)."""
        if not goal.liquid or self.poses is self.fixed:
            return None     # nothing that sees liquids: the motion is all there is to go by
        liquid, target = self.poses.find(goal.liquid), self.poses.find(goal.target)
        if liquid is not None and target is not None and contains(target, liquid.x, liquid.y, liquid.z):
            return None
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"{goal.liquid} is not in {goal.target} after "
                       f"{goal.source} was tipped over it" + ("" if liquid is not None else " (it was spilled)"),
                       f"fill {goal.source} again", recoverable=True, cause=Cause.SLIPPED)

    def _skill(self, goal, cancel) -> Optional[Failure]:
        """A capability without a typed action: ``chop`` (tool, target, on, at); no other moves."""
        if goal.action == "chop" and len(goal.arguments) >= 2:
            return self._chop(goal.arguments[0], goal.arguments[1], cancel)
        return self._no_motion(goal.action or "Skill")

    def _chop(self, knife: str, target: str, cancel) -> Optional[Failure]:
        """The held knife's blade (half way between the hand and either end) down onto ``target``
        from above, ``CUT_DEPTH_M`` below its top, and back up; then the hand feels the knife
        is still there."""
        what = f"chop {target} with {knife}"
        hand = self._hand_with(knife)
        if hand is None:
            return self._not_holding(knife, what)
        group, link = self.groups[hand], self.links[hand]
        held, seen = self.held.get(hand), self.poses.find(target)
        if held is None or seen is None or not seen.has_box:   # a configured point: the hand down onto it
            pose = self._pose(target, None)
            if pose is None:
                return self._no_pose(what, target)
            return self._steps(what, cancel,
                               lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                               lambda: self.arm.move_to(group, pose, link, cancel, line=True, speed=CUT_SPEED),
                               lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel, line=True),
                               lambda: self._close_on(hand, knife, what, cancel, again=True))
        known = self.poses.everything()
        # Where to stand: round the table a cutting board lies on (or what the target lies on).
        support = support_of(seen, known)
        stand_at = stand_target(support, known) if support is not None else None

        def ways(base: Pose) -> list[list[Pose]]:
            reach = self._reach_xy(base)
            out = [[p.offset(dz=self.approach), p] for p in blade_over(held.grasp.pose, held.seen, held.above_bottom,
                                                                       held.turn, seen, CUT_DEPTH_M, base.yaw)]
            return sorted(out, key=lambda w: math.hypot(w[1].x - reach[0], w[1].y - reach[1]))

        way, failure, missed = self._press_onto(what, hand, ways, stand_at, (seen.x, seen.y), target, CUT_SPEED,
                                                cancel)
        if way is not None:
            return self._steps(what, cancel, partial(self.arm.move_to, group, way[0], link, cancel, line=True),
                               lambda: self._close_on(hand, knife, what, cancel, again=True))
        return failure or self._unreachable(what, f"no way to bring {knife} down onto {target} the arm reaches",
                                            missed, f"stand closer to {target}")

    def _press_onto(self, what: str, hand: str, ways, stand_at: Optional[SeenObject], point: tuple[float, float],
                    touched: str, speed: float, cancel) -> tuple[Optional[list[Pose]], Optional[Failure], list[str]]:
        """The held tool onto ``touched``: the first of ``ways`` (a base pose -> ways, each the
        pose above and the pose on it, ...) the arm finds a motion above and a line down to (at
        ``speed``), from where the base stands, else after it stepped in front of ``stand_at``
        towards ``point``. (The way reached, the hand now on it; or a failure; and why each way
        was missed.)"""
        group, link = self.groups[hand], self.links[hand]
        missed: list[str] = []
        for attempt in range(2):
            known = self.poses.everything()
            above, down = self._clear_around(known), self._clear_around(known, skip=[touched])
            for way in ways(Pose(*self._robot_pose())):
                self.arm.keep_clear(above)
                problem = self.arm.move_to(group, way[0], link, cancel)
                if problem is None:
                    self.arm.keep_clear(down)
                    problem = self.arm.move_to(group, way[1], link, cancel, line=True, speed=speed)
                if problem is None:
                    return way, None, missed
                if self._ends_skill(problem):
                    return None, self._problem(what, problem), missed
                missed.append(problem.why)
            if attempt == 0:
                moved = self._step_in_front(stand_at, point, what, cancel, hand, ways)
                if isinstance(moved, Failure):
                    return None, moved, missed
                if not moved:
                    break
        return None, None, missed

    def _wipe(self, goal, cancel) -> Optional[Failure]:
        """The held tool set onto a free patch of the surface as it was taken (its bottom pressed
        ``PRESS_M`` into the top), drawn ``wipe_stroke_m`` to either side across the base's
        heading ``wipe_strokes`` times, and lifted; then the hand feels it is still there. Without
        a box of the surface (a configured pose): strokes along x at its pose."""
        what = f"wipe {goal.surface} with {goal.tool}"
        hand = self._hand_with(goal.tool)
        if hand is None:
            return self._not_holding(goal.tool, what)
        group, link = self.groups[hand], self.links[hand]
        held = self.held.get(hand)
        surface = None if goal.surface_pose else self.poses.find(goal.surface)
        if held is None or surface is None or not surface.has_box:
            pose = self._pose(goal.surface, goal.surface_pose)
            if pose is None:
                return self._no_pose(what, goal.surface)
            contact = pose.offset(dz=0.02)
            strokes = [contact.offset(dx=sign * self.stroke) for _ in range(self.strokes) for sign in (1, -1)]
            return self._steps(what, cancel,
                               lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                               lambda: self.arm.move_to(group, contact, link, cancel),
                               *[partial(self.arm.move_to, group, stroke, link, cancel) for stroke in strokes],
                               lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel))
        known = self.poses.everything()
        patch = max(held.seen.size[:2]) / 2 + self.stroke     # the strokes' reach: kept clear of things on it

        def ways(base: Pose) -> list[list[Pose]]:
            reach = self._reach_xy(base)
            across = (-math.sin(base.yaw), math.cos(base.yaw))
            out = []
            for x, y in free_spots(surface, patch, known, reach, skip=[*self.holding.values(), *self.skip_names])[:3]:
                for pose in _set_down(held, (x, y), surface.top - PRESS_M, base.yaw):
                    ends = [pose.offset(dx=sign * self.stroke * across[0], dy=sign * self.stroke * across[1])
                            for sign in (1.0, -1.0)]
                    out.append([pose.offset(dz=self.approach), pose, *ends])
            return out

        point = self._reach_xy() if contains_xy(surface, *self._reach_xy()) else (surface.x, surface.y)
        way, failure, missed = self._press_onto(what, hand, ways, surface, point, goal.surface, CUT_SPEED, cancel)
        if way is not None:
            strokes = [way[2 + k % 2] for k in range(2 * self.strokes)] + [way[1]]
            return self._steps(what, cancel,
                               *[partial(self.arm.move_to, group, end, link, cancel, line=True, speed=STROKE_SPEED)
                                 for end in strokes],
                               partial(self.arm.move_to, group, way[0], link, cancel, line=True),
                               lambda: self._close_on(hand, goal.tool, what, cancel, again=True))
        if failure is not None:
            return failure
        if not missed:
            return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"no free patch of {goal.surface} to wipe",
                           f"clear {goal.surface}", recoverable=True, cause=Cause.NO_FREE_SPACE)
        return self._unreachable(what, f"no way to press {goal.tool} onto {goal.surface} the arm reaches", missed,
                                 f"stand closer to {goal.surface}")

    @staticmethod
    def _hold(seconds: float, cancel) -> Optional[Problem]:
        """Wait ``seconds`` (a cancel ends it at once)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if cancel():
                return CANCELED
            time.sleep(0.05)
        return None


def _articulated_as_wanted(joint, opening: bool) -> bool:
    if opening:
        return joint.position >= OPENED_FRACTION * joint.open
    return joint.position <= CLOSED_FRACTION * joint.open


def _frame_buffer(node, group):
    """/tf and /tf_static, where tf2_msgs is installed (else the robot's pose is not known)."""
    try:
        from affplan_ros.robots.frames import FrameBuffer

        return FrameBuffer(node, group)
    except ImportError:
        return None


def default_drivers(node: RobotSkillsNode, grippers: dict[str, str], group) -> tuple:
    from affplan_ros.robots.drivers import GripperActions, MoveItArm, Nav2Navigator

    if node.arm_planner == "builtin":
        from affplan_ros.robots.arm import ArmController, BuiltinArm, SharedController

        action, joints, speed = node.torso
        torso = SharedController(action, joints, speed, 2 * speed) if action else None
        arm = BuiltinArm(node, [ArmController(node.groups[h], node.arm_controllers[h]) for h in node.hands],
                         node.base_frame, node.map_frame, torso, () if action else joints, *node.joint_limits,
                         frames=node.frames, callback_group=group)
    else:
        arm = MoveItArm(f"{node.get_name()}_moveit")
    navigator = Nav2Navigator(node, node.nav_action, group, node.follow_path_action)
    return navigator, arm, GripperActions(node, grippers, group)


def main(args=None) -> int:
    return run_node(RobotSkillsNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
