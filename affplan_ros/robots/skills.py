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

Skills the robot has no motion for (pour, wipe, the generic Skill) fail with a message saying
so: leave them out of ``robot_capabilities`` and the planner gives them to the person.

A closed gripper is read, not trusted: fingers that close to ``empty_grip_m`` or less hold
nothing (an empty grasp), and after the lift the gripper closes once more to feel whether the
object is still there (it slipped if not). Each failure carries the cause its driver found.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

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
from affplan_ros.nodes.base import LOCATION_PARAMS, parse_locations, run_node
from affplan_ros.nodes.convert import failure_to_msg, skill_goal_problem
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.robots.doors import carried, first_in_the_way, front, moved_to, plans, pull, sweep
from affplan_ros.robots.drivers import CANCELED, DriverUnavailable, Grip, HeldBox, Pose, Problem
from affplan_ros.robots.grasping import Grasp, grasps
from affplan_ros.robots.places import (
    container_of,
    contains,
    contains_xy,
    free_spots,
    line_up,
    obstacles_around,
    spots_inside,
    standing_places,
    support_of,
)
from affplan_ros.robots.poses import FixedPoses, Joint, OraclePoses, PoseSource, SeenObject
from affplan_ros.robots.pouring import mouth_in_hand, tips

OPEN, CLOSED = 0.08, 0.0        # gripper positions (m)
LINE_UP_MIN_M = 0.1             # a base move shorter than this to stand in front of something is not worth it
HANDOVER_FROM_PERSON_M = 0.45   # a thing is held out no further than this from the person (within their arm's reach)
FACE_PERSON_RAD = 0.5           # the base turns to a person further off its heading than this before a handover
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
               "Handover": "_handover", "Pour": "_pour", "Wipe": "_wipe"}

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
                                      cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=motion)
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
            failure = Failure(FailureCode.INVALID, skill.lower(), f"{self.robot_name} cannot {skill.lower()}",
                              f"the {self.robot_name} backend has no motion for {skill}",
                              "leave it out of robot_capabilities so that the plan gives it to the person")
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

    def _reach_xy(self) -> tuple[float, float]:
        """The point in front of the base where the arms reach best."""
        x, y, yaw = self._robot_pose()
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
        self.arm.keep_clear(self._clear_around(known, skip=[goal.object], thing=seen))
        candidates = grasps(seen, self._class_of(seen), self.max_opening, self._robot_xy(),
                            support.top if support is not None and contains_xy(support, seen.x, seen.y) else None,
                            self.approach)
        failure = self._steps(what, cancel, lambda: self._release(hand, cancel))
        if failure is not None:
            return failure
        failure, missed = self._try_grasps(goal, seen, hand, candidates, what, cancel)
        if failure is not False:
            return failure
        moved = self._step_in_front(around if around is not None and around.joint is not None else support,
                                    (seen.x, seen.y), what, cancel)
        if isinstance(moved, Failure):
            return moved
        if moved:   # nearer now: the grasps again, from where the base stands
            candidates = grasps(seen, self._class_of(seen), self.max_opening, self._robot_xy(),
                                support.top if support is not None and contains_xy(support, seen.x, seen.y) else None,
                                self.approach)
            failure, missed = self._try_grasps(goal, seen, hand, candidates, what, cancel)
            if failure is not False:
                return failure
        return Failure(FailureCode.PHYSICAL, what, f"{what} failed",
                       f"no grasp of {goal.object} the arm can reach ({len(candidates)} tried): "
                       + "; ".join(missed[:3]), f"stand closer to {goal.object} or clear what is around it",
                       recoverable=True, cause=Cause.UNREACHABLE)

    def _step_in_front(self, support: Optional[SeenObject], point: tuple[float, float], what: str,
                       cancel) -> "bool | Failure":
        """Out of reach from where the base stands: it moves (Nav2) in front of ``point`` at the
        support's face nearest to it, else at the face nearest the robot, where it has not stood
        yet. True when it moved."""
        if support is None or not support.has_box:
            return False
        x, y = self._robot_xy()
        distance = self.base_radius + self.standoff
        if support.joint is not None:   # a fridge's or cupboard's front: its way in, wherever the robot stands
            places = [line_up(support, point, distance, (x, y), front(support.joint))]
        else:
            places = [line_up(support, point, distance, point), line_up(support, point, distance, (x, y))]
        for place in places:
            if math.hypot(place.x - x, place.y - y) < LINE_UP_MIN_M:
                continue
            problem = self.navigator.go_to(place, self.nav_timeout, cancel)
            if problem is not None and problem.canceled:
                return self._problem(what, problem)
            if problem is None:
                return True
        return False

    def _clear_around(self, known: Optional[list] = None, skip=(), thing: Optional[SeenObject] = None) -> list:
        """The boxes the pose source knows within ``arm_space_m`` of the base (not what the robot
        holds, not the people, not ``skip``, not what ``thing`` lies inside): what the arm's paths
        keep clear of."""
        known = self.poses.everything() if known is None else known
        # People move, and a handover reaches towards them: they are not boxes to plan around;
        # a liquid has its container's box, which is there (or held) already.
        people = [o.name for o in known if o.kind in ("agent", "liquid")]
        return obstacles_around(self._robot_xy(), known, self.arm_space, inside_of=thing,
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
        nearest where the arm reaches best, in turn, until the arm finds a motion to one."""
        known = self.poses.everything()
        skip = [*self.holding.values(), *self.skip_names]
        props = self._class_of(target)
        into = goal.relation == "in" and props is not None and props.inner is not None
        if into:   # on its floor, as near the arm's best reach as its walls let it
            spots = spots_inside(target, props.inner, max(held.seen.size[:2]) / 2, self._reach_xy())
            floor = target.bottom + max(target.size[2] - props.inner[2], 0.0)
        else:
            spots = free_spots(target, max(held.seen.size[:2]) / 2, known, self._reach_xy(), skip=skip)
            floor = target.top
        if not spots:
            return Failure(FailureCode.PHYSICAL, what, f"{what} failed", f"no free space on {goal.target} for "
                           f"{goal.object}", f"clear a spot on {goal.target}", recoverable=True,
                           cause=Cause.NO_FREE_SPACE)
        # Onto it: its box is in the way below the hand; into it: the hand goes in (its walls are not known).
        self.arm.keep_clear(self._clear_around(known, skip=[goal.target] if into else []))
        failure, missed = self._try_spots(hand, held, spots, floor, what, cancel)
        if failure is False:
            # In front of the spot at the face of what the target stands on (a bowl or a cutting
            # board on a table), of the target itself (a counter), or of a fridge's opening.
            stand_at = target if target.joint is not None else (support_of(target, known) or target)
            moved = self._step_in_front(stand_at, spots[0], what, cancel)
            if isinstance(moved, Failure):
                return moved
            if moved:   # nearer now: the spots again, nearest where the arm reaches from here
                spots = (spots_inside(target, props.inner, max(held.seen.size[:2]) / 2, self._reach_xy()) if into
                         else free_spots(target, max(held.seen.size[:2]) / 2, known, self._reach_xy(), skip=skip))
                self.arm.keep_clear(self._clear_around(known, skip=[goal.target] if into else []))
                failure, missed = self._try_spots(hand, held, spots, floor, what, cancel)
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

    def _try_spots(self, hand: str, held: "Held", spots, floor: float, what: str, cancel):
        """(Failure or None: the put-down ended so; False: no spot could be reached, and why)."""
        group, link, g = self.groups[hand], self.links[hand], held.grasp.pose
        # The hand as it was at the grasp, seen from the base (a pose the arm reached then), the
        # thing turned about the vertical with the base (what stands on a surface may turn); then
        # turned half round, and for a round thing a quarter either way: it stands the same.
        yaw = self._robot_pose()[2] + held.turn
        size = held.seen.size
        turns = (0.0, math.pi, math.pi / 2, -math.pi / 2) if abs(size[0] - size[1]) < 0.01 else (0.0, math.pi)
        missed = []
        for x, y in spots:
            for turn in turns if g.pitch > 1.2 else (0.0,):    # a hand leaning or level keeps its heading
                pose = Pose(x, y, floor + held.above_bottom + 0.01, yaw + turn, g.frame, g.roll, g.pitch)
                problem = self._reach(group, link, cancel, (pose.offset(dz=self.approach), False), (pose, True))
                if problem is not None and self._ends_skill(problem):
                    return self._problem(what, problem), missed
                if problem is None:
                    return self._steps(what, cancel, lambda: self._release(hand, cancel),
                                       partial(self.arm.move_to, group, pose.offset(dz=self.approach), link,
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
        until it pours, held, upright again; then the pose source says where the liquid is."""
        held, group, link = self.held[hand], self.groups[hand], self.links[hand]
        g = held.grasp.pose
        turned = self._robot_pose()[2] + held.turn - g.yaw    # the base turned since the grasp
        hand_now = Rotation.from_euler("z", turned).as_matrix() @ g.matrix()[:3, :3]
        mouth = mouth_in_hand(g, held.seen)
        # Where it sits in the hand now, where the hand's frame and the thing are seen: it may
        # have sagged or turned in the fingers since the grasp, and the mouth must be over the
        # opening within a few centimetres.
        tcp = self.frames.transform(self.map_frame, link) if self.frames is not None else None
        now = self.poses.find(goal.source)
        if tcp is not None and now is not None and now.has_box:
            hand_now = tcp[:3, :3]
            mouth = hand_now.T @ (np.array([now.x, now.y, now.top]) - tcp[:3, 3])
        self.arm.keep_clear(self._clear_around())
        missed, upright_reached = [], False
        for tip in tips(mouth, held.seen.size[2], hand_now, target, self._robot_xy()):
            if not upright_reached:
                problem = self.arm.move_to(group, tip.upright, link, cancel)
                if problem is not None:
                    if self._ends_skill(problem):
                        return self._problem(what, problem)
                    missed.append(f"upright over {goal.target}: {problem.why}")
                    break
                upright_reached = True
            problem = self.arm.move_to(group, tip.tipped, link, cancel, line=True)   # the mouth comes straight down
            if problem is None:
                failure = self._steps(what, cancel, lambda: self._hold(self.pour_hold, cancel))
                if failure is not None:
                    return failure
                # Upright again where the arm finds a way; the pour is done either way.
                self.arm.move_to(group, tip.upright, link, cancel)
                return self._poured_into(goal, what)
            if self._ends_skill(problem):
                return self._problem(what, problem)
            missed.append(problem.why)
        return self._unreachable(what, f"no way to tip {goal.source} over {goal.target} the arm reaches", missed,
                                 f"stand closer to {goal.target}")

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

    def _wipe(self, goal, cancel) -> Optional[Failure]:
        """Strokes back and forth over the surface with the held tool, then lift it."""
        what = f"wipe {goal.surface} with {goal.tool}"
        hand = self._hand_with(goal.tool)
        if hand is None:
            return self._not_holding(goal.tool, what)
        pose = self._pose(goal.surface, goal.surface_pose)
        if pose is None:
            return self._no_pose(what, goal.surface)
        group, link = self.groups[hand], self.links[hand]
        contact = pose.offset(dz=0.02)
        strokes = [contact.offset(dx=sign * self.stroke) for _ in range(self.strokes) for sign in (1, -1)]
        return self._steps(what, cancel,
                           lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                           lambda: self.arm.move_to(group, contact, link, cancel),
                           *[partial(self.arm.move_to, group, stroke, link, cancel) for stroke in strokes],
                           lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel))

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
