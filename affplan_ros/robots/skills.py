"""robot_skills: the skill action servers of a real robot (Tiago++, an ARMAR-style humanoid).

Serves the same actions as the simulated world (``skills/navigate``, ``skills/grasp``, ...)
from robot drivers (robots/drivers.py): Nav2 for the base, MoveIt for the arms, a gripper
controller per hand. Symbolic names become poses from the robot config: ``locations`` (base
poses, "name x y yaw") and ``object_poses`` ("name x y z" in the map frame: objects that do
not move, handles, surfaces to put things on); a goal's own pose field wins.

Skills the robot has no motion for (pour, wipe, the generic Skill) fail with a message saying
so: leave them out of ``robot_capabilities`` and the planner gives them to the person.

A closed gripper is read, not trusted: fingers that close to ``empty_grip_m`` or less hold
nothing (an empty grasp), and after the lift the gripper closes once more to feel whether the
object is still there (it slipped if not). Each failure carries the cause its driver found.
"""
from __future__ import annotations

import time
from functools import partial
from typing import Callable, Optional

from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node

from affplan_ros.core.knowledge.skills import SkillMap, SkillMapError
from affplan_ros.core.model.failure import Cause, Failure, FailureCode
from affplan_ros.env import config_file
from affplan_ros.interfaces import interface_types
from affplan_ros.nodes.base import LOCATION_PARAMS, parse_locations, run_node
from affplan_ros.nodes.convert import failure_to_msg, skill_goal_problem
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.robots.drivers import CANCELED, DriverUnavailable, Grip, Pose, Problem

OPEN, CLOSED = 0.08, 0.0        # gripper positions (m)


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
        self.object_poses = {}
        for entry in p.object_poses:
            words = str(entry).split()
            if len(words) != 4:
                raise ValueError(f"object_poses: {entry!r} is not 'name x y z'")
            self.object_poses[words[0]] = Pose(float(words[1]), float(words[2]), float(words[3]))
        try:
            self.skill_map = SkillMap.from_file(config_file("skills.yaml", p.skills_file))
        except (OSError, SkillMapError) as exc:
            raise ValueError(f"cannot load the skill mapping: {exc}") from exc
        group = ReentrantCallbackGroup()
        try:
            make = drivers or default_drivers
            self.navigator, self.arm, self.gripper = make(self, dict(zip(self.hands, grippers)), group)
        except DriverUnavailable as exc:
            raise ValueError(f"{self.robot_name} backend: {exc}") from exc
        self.holding: dict[str, str] = {}       # hand -> object
        types = interface_types("action")
        handlers = {skill: getattr(self, method) for skill, method in self.MOTIONS.items()}
        motion = MutuallyExclusiveCallbackGroup()  # one body: one motion at a time
        self._servers = [ActionServer(self, types[skill], self.skill_map.server(skill),
                                      execute_callback=partial(self._execute, types[skill], handlers.get(skill), skill),
                                      cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=motion)
                         for skill in self.skill_map.skill_types()]
        self.get_logger().info(f"{self.robot_name} skills: {', '.join(self.skill_map.skill_types())}; "
                               f"hands {', '.join(self.hands)}; {len(self.locations)} locations")

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
        return self.object_poses.get(name)

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
        if pose is None:
            if goal.to_location not in self.locations:
                return Failure(FailureCode.NOT_FOUND, what, f"{what} failed", f"{goal.to_location} has no pose in the "
                               "robot config", "add it to `locations` ('name x y yaw')")
            x, y, yaw = self.locations[goal.to_location]
            pose = Pose(x, y, 0.0, yaw)
        return self._problem(what, self.navigator.go_to(pose, self.nav_timeout, cancel), "check the map and obstacles")

    def _grasp(self, goal, cancel) -> Optional[Failure]:
        what = f"grasp {goal.object}"
        hand = self._free_hand(goal.hand)
        if hand is None:
            return self._no_free_hand(what)
        pose = self._pose(goal.object, goal.object_pose) or self.object_poses.get(goal.support)
        if pose is None:
            return Failure(FailureCode.NOT_FOUND, what, f"{what} failed",
                           f"no pose for {goal.object} or {goal.support}",
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
        pose = self._pose(goal.target, goal.target_pose)
        if pose is None:
            return self._no_pose(what, goal.target)
        group, link = self.groups[hand], self.links[hand]
        failure = self._steps(what, cancel,
                              lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel),
                              lambda: self.arm.move_to(group, pose.offset(dz=0.02), link, cancel),
                              lambda: self._release(hand, cancel),
                              lambda: self.arm.move_to(group, pose.offset(dz=self.approach), link, cancel))
        if failure is None:
            del self.holding[hand]
        return failure

    def _open(self, goal, cancel, pull: float = -0.3) -> Optional[Failure]:
        what = f"{'open' if pull < 0 else 'close'} {goal.object}"
        hand = self._free_hand("")
        if hand is None:
            return Failure(FailureCode.PRECONDITION, what, f"{what} failed", "both hands are full",
                           "place something first", recoverable=True)
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
        failure = self._steps(what, cancel,
                              lambda: self.arm.move_to(self.groups[hand], pose, self.links[hand], cancel),
                              lambda: self._release(hand, cancel))
        if failure is None:
            del self.holding[hand]
        return failure

    def _pour(self, goal, cancel) -> Optional[Failure]:
        """Hold the source over the target, tilt it, wait, tilt it back, lift (pour and fill)."""
        what = f"pour {goal.liquid or 'from ' + goal.source} into {goal.target}"
        hand = self._hand_with(goal.source)
        if hand is None:
            return self._not_holding(goal.source, what)
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


def default_drivers(node: RobotSkillsNode, grippers: dict[str, str], group) -> tuple:
    from affplan_ros.robots.drivers import GripperActions, MoveItArm, Nav2Navigator

    return (Nav2Navigator(node, node.nav_action, group), MoveItArm(f"{node.get_name()}_moveit"),
            GripperActions(node, grippers, group))


def main(args=None) -> int:
    return run_node(RobotSkillsNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
