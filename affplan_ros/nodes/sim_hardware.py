"""sim_hardware: the MuJoCo world as the robot's hardware, speaking a Tiago++'s ROS 2 interfaces.

The physics steps in a thread of its own, paced to ``real_time_factor`` times real time (0: as
fast as it goes), and publishes what a Tiago++'s drivers publish, under the names of
config/hardware/<robot>.yaml:

* ``/clock`` (rosgraph_msgs/Clock): the simulated time; run the robot's nodes with
  ``use_sim_time:=true``. Every stamp below is in this time.
* ``/joint_states``: positions, velocities and efforts of the torso, head, arm and finger joints.
* ``/tf``: odom -> base_footprint (the base's odometry) and every link below its parent, from the
  joints (what robot_state_publisher does on a robot); ``/tf_static``: map -> odom (this world's
  localisation is exact), base_footprint -> base_link, the grasping frames and the head camera's
  link and optical frame.
* ``/robot_description`` (latched std_msgs/String): the robot as URDF, written from the same
  compiled model the physics runs, so the two never disagree.
* one control_msgs/FollowJointTrajectory server per joint group (``/arm_right_controller/
  follow_joint_trajectory``, the left arm's, ``/torso_controller/...``, ``/head_controller/...``),
  as ros2_controllers' joint_trajectory_controller: the trajectory from where the joints are,
  path and goal tolerances, error codes and strings, feedback, cancel and preemption
  (sim/hardware/trajectories.py).
* one control_msgs/GripperCommand server per hand (``/gripper_right_controller/gripper_cmd``, ...):
  the fingers move to the commanded opening with at most the commanded effort, and the result says
  where they stopped, whether they stalled (on something between them) and whether they reached
  the goal, as ros2_controllers' gripper controller does.

* Nav2's ``/navigate_to_pose`` (NavigateToPose): a collision-free path on the world's floor plan,
  as Nav2's planner finds on a good map, driven by the base controller; error codes and messages,
  feedback (pose, distance remaining), cancel; and ``/cmd_vel`` (geometry_msgs/Twist, in the base
  frame) while no goal drives the base.
* the head RGB-D camera, as Tiago's driver publishes it (``/head_front_camera/rgb/image_raw`` rgb8,
  ``/head_front_camera/depth_registered/image_raw`` 32FC1 metres, and the camera_info of each),
  ``camera_rate_hz`` frames per simulated second, in the optical frame on /tf_static. Rendered in a
  thread of its own from a copy of the physics state (sim/hardware/camera.py), so the physics does
  not wait for a frame; when rendering cannot keep up, frames are dropped, not queued.

And one topic no robot has: the **referee**, ``/referee/objects`` (affplan_ros/msg/RefereeObjects,
``referee_rate_hz`` per simulated second): where every thing of the world is, its box and how far
it is open, read from the physics state (sim/hardware/referee.py). It is the simulator's truth, for
benchmarks, tests and the oracle pose source; a real robot has no such topic, and the robot's
software (``affplan_ros/robots``) never reads it.

The people of the home are part of the world, not of the robot: cooperative and standing still,
they take what a robot hand holds out to them within their reach (sim/hardware/people.py). So are
its liquids: a container held tipped empties into the one its mouth is over, else is spilled
(sim/hardware/liquids.py); and its screw caps come off when a hand holds one and turns it
anticlockwise, go on turned clockwise (sim/hardware/lids.py). A held knife brought down onto food
lying on something cuts it, what lies in water gets wet, and a wet sponge drawn over a surface's
top cleans it (sim/hardware/tools.py; which things cut, are food or wipe: ``oam_file``).
"""
from __future__ import annotations

import math
import threading
import time

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from affplan_ros.core.knowledge.oam import OamFormatError, load_oam
from affplan_ros.env import config_file
from affplan_ros.nodes.base import LATCHED_QOS, RELIABLE_SENSOR_QOS, RESULT_KEEP_S, run_node
from affplan_ros.nodes.params import Param, declare_params

PARAMS = (
    Param("scenario", "", "scene of the world: an AutoGPT+P scene file or a YAML scenario "
          "(default: config/scenarios/kitchen.txt)"),
    Param("hardware_names", "", "what the robot's joints, links and controllers are called on the graph "
          "(default: config/hardware/tiago.yaml)"),
    Param("real_time_factor", 1.0, "simulated seconds per wall second (0 = as fast as the physics goes)",
          minimum=0),
    Param("state_rate_hz", 50.0, "joint states and /tf per simulated second", above=0),
    Param("clock_rate_hz", 100.0, "/clock messages per simulated second", above=0),
    Param("camera_rate_hz", 2.0, "head camera frames (colour, depth, camera_info) per simulated second, as fast "
          "as rendering allows at most (0 = no camera)", minimum=0),
    Param("camera_width", 320, "head camera image width, pixels", minimum=16),
    Param("camera_height", 240, "head camera image height, pixels", minimum=16),
    Param("oam_file", "", "object-affordance mapping: which things cut, are food, wipe (default: the built-in "
          "kitchen OAM)"),
    Param("referee_rate_hz", 10.0, "/referee/objects messages per simulated second: the simulator's truth for "
          "benchmarks and tests, never for the robot's software (0 = none)", minimum=0),
)

CONTROL_PERIOD_S = 0.01    # simulated seconds between controller updates (100 Hz, as ros2_control)
TF_STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
REFEREE_TOPIC = "/referee/objects"   # the simulator's truth (see the module's docstring)
GRIPPER_WAIT_S = 10.0      # wall seconds a gripper command may take before it is aborted
NAV_CLEARANCE_M = 0.05     # kept between the base's disc and anything, as Nav2's inflation does


class SimHardwareNode(Node):
    def __init__(self, world=None, oam=None, parameter_overrides=None) -> None:
        """``world``: a physics world already built (a benchmark that judges it afterwards);
        else the node builds the one of its ``scenario`` parameter. ``oam``: its object-affordance
        mapping (else the one of ``oam_file``)."""
        super().__init__("sim_hardware", parameter_overrides=parameter_overrides)
        p = declare_params(self, PARAMS)
        try:
            from control_msgs.action import FollowJointTrajectory, GripperCommand
            from nav2_msgs.action import FollowPath, NavigateToPose
            from rosgraph_msgs.msg import Clock
            from tf2_msgs.msg import TFMessage
        except ImportError as exc:
            raise ValueError(f"the robot's standard interfaces are not built ({exc.name}): run make setup") from exc
        from affplan_ros.sim.hardware.base import BaseController
        from affplan_ros.sim.hardware.description import fixed_frames, robot_urdf
        from affplan_ros.sim.hardware.grippers import GripperController
        from affplan_ros.sim.hardware.lids import Lids
        from affplan_ros.sim.hardware.liquids import Liquids
        from affplan_ros.sim.hardware.names import HardwareNames, HardwareNamesError
        from affplan_ros.sim.hardware.people import People
        from affplan_ros.sim.hardware.rules import HomeRules
        from affplan_ros.sim.hardware.state import RobotState
        from affplan_ros.sim.hardware.tools import Tools
        from affplan_ros.sim.hardware.trajectories import TrajectoryController
        from affplan_ros.sim.physics.world import build_world
        from affplan_ros.sim.world_scenario import load_scenario

        self._types = {"GripperCommand": GripperCommand, "FollowJointTrajectory": FollowJointTrajectory,
                       "NavigateToPose": NavigateToPose, "FollowPath": FollowPath, "Clock": Clock,
                       "TFMessage": TFMessage}
        path = config_file("scenarios/kitchen.txt", p.scenario)
        names_path = config_file("hardware/tiago.yaml", p.hardware_names)
        try:
            names = HardwareNames.from_file(names_path)
            oam = oam if oam is not None else load_oam(p.oam_file or None)
            started = time.monotonic()
            self.world = world if world is not None else build_world(load_scenario(path).scene)
            self.state = RobotState(self.world.model, names)
            urdf = robot_urdf(self.world.model, names)
        except (OSError, HardwareNamesError, OamFormatError) as exc:
            raise ValueError(f"cannot build the robot's hardware: {exc}") from exc
        except ValueError as exc:   # ScenarioError, a model URDF cannot describe
            raise ValueError(f"cannot build the robot's hardware from {path}: {exc}") from exc
        self.names, self.rate = names, p.real_time_factor
        self.lock = threading.Lock()       # MuJoCo's data is not thread-safe
        spec = self.world.spec
        self.grippers = {g.hand: GripperController(self.world.model, g.joints, spec.finger_stroke)
                         for g in names.grippers}
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String

        self.joint_pub = self.create_publisher(JointState, "/joint_states", 10)
        self.tf_pub = self.create_publisher(TFMessage, "/tf", 100)
        self.tf_static_pub = self.create_publisher(TFMessage, "/tf_static", TF_STATIC_QOS)
        self.description_pub = self.create_publisher(String, "/robot_description", LATCHED_QOS)
        self.description_pub.publish(String(data=urdf))
        self.tf_static_pub.publish(TFMessage(transforms=[self._static(f) for f in fixed_frames(self.world.model,
                                                                                             names)]
                                             + [self._map_to_odom()]))
        group = ReentrantCallbackGroup()
        self._servers = [ActionServer(self, GripperCommand, g.action,
                                      execute_callback=lambda handle, hand=g.hand: self._grip(hand, handle),
                                      goal_callback=lambda goal, hand=g.hand: self._check_grip(hand, goal),
                                      cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group,
                                      result_timeout=RESULT_KEEP_S)
                         for g in names.grippers]
        self.trajectories = {c.name: TrajectoryController(self.world.model, c.joints,
                                                          [names.joints[j] for j in c.joints])
                             for c in names.trajectory_controllers}
        self._servers += [ActionServer(self, FollowJointTrajectory, c.action,
                                       execute_callback=lambda handle, name=c.name: self._follow(name, handle),
                                       goal_callback=lambda goal, name=c.name: self._check_trajectory(name, goal),
                                       cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group,
                                       result_timeout=RESULT_KEEP_S)
                          for c in names.trajectory_controllers]
        self.base = BaseController(self.world.model, spec.base_speed, spec.base_yaw_rate)
        self.people = People(self.world)    # they take what a robot hand holds out to them
        self.liquids = Liquids(self.world)  # a tipped container's liquid flows out
        self.lids = Lids(self.world)        # a screw cap held and turned comes off (goes on)
        self.tools = Tools(self.world, oam)  # a knife cuts, water wets, a wet sponge cleans
        self.rules = HomeRules({"people": self.people, "liquids": self.liquids, "lids": self.lids,
                                "tools": self.tools}, self.get_logger().error)
        self._servers.append(ActionServer(self, NavigateToPose, names.navigate_action, execute_callback=self._navigate,
                                          goal_callback=self._check_navigation,
                                          cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group,
                                          result_timeout=RESULT_KEEP_S))
        self._servers.append(ActionServer(self, FollowPath, names.follow_path_action,
                                          execute_callback=self._follow_path, goal_callback=self._check_path,
                                          cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group,
                                          result_timeout=RESULT_KEEP_S))
        from geometry_msgs.msg import Twist

        self.create_subscription(Twist, names.cmd_vel, self._on_cmd_vel, 10)
        self._stop = threading.Event()
        self._state_every = _every(p.state_rate_hz)
        self._clock_every = _every(p.clock_rate_hz)
        self._referee_every = _every(p.referee_rate_hz) if p.referee_rate_hz > 0 else 0
        if self._referee_every:
            from affplan_ros.msg import RefereeObjects

            self.referee_pub = self.create_publisher(RefereeObjects, REFEREE_TOPIC, 10)
        self._camera_thread = None
        if p.camera_rate_hz > 0:
            self._camera_publishers()
            self._camera_thread = threading.Thread(
                target=self._camera_loop, args=(1.0 / p.camera_rate_hz, p.camera_width, p.camera_height),
                name="head_camera", daemon=True)
            self._camera_thread.start()
        self._loop = threading.Thread(target=self._run, name="physics", daemon=True)
        self._loop.start()
        source = "the world given" if world is not None else path
        self.get_logger().info(f"hardware of {source}: built in {time.monotonic() - started:.1f} s; "
                               f"{len(names.joints)} joints, grippers {', '.join(self.grippers)}, "
                               f"trajectory controllers {', '.join(self.trajectories)}; "
                               f"real-time factor {self.rate:g}" + (" (as fast as it goes)" if not self.rate else "")
                               + (f"; camera {p.camera_width}x{p.camera_height} at {p.camera_rate_hz:g} Hz"
                                  if p.camera_rate_hz > 0 else "; no camera"))

    # -- the physics loop ------------------------------------------------------------------------
    def _run(self) -> None:
        from affplan_ros.sim.hardware.referee import referee_records

        steps = self.world.steps(CONTROL_PERIOD_S)
        period = steps * self.world.model.opt.timestep
        tick, wall0, sim0 = 0, time.monotonic(), self.world.sim_seconds
        try:
            while not self._stop.is_set():
                with self.lock:
                    for controller in [*self.grippers.values(), *self.trajectories.values(), self.base]:
                        controller.update(self.world.data, period)
                    self.rules.update(self.world.data, period)
                    self.world.step(steps)
                    stamp = self._stamp()
                    state = (self.state.joints(self.world.data), self.state.odometry(self.world.data),
                             self.state.links(self.world.data)) if tick % self._state_every == 0 else None
                    referee = (referee_records(self.world) if self._referee_every
                               and tick % self._referee_every == 0 else None)
                if tick % self._clock_every == 0:
                    self.clock_pub.publish(self._types["Clock"](clock=stamp))
                if state is not None:
                    self._publish_state(stamp, *state)
                if referee is not None:
                    self._publish_referee(stamp, referee)
                tick += 1
                if self.rate > 0:   # paced: simulated time runs rate x wall time
                    ahead = (self.world.sim_seconds - sim0) / self.rate - (time.monotonic() - wall0)
                    if ahead > 0:
                        self._stop.wait(ahead)
        except Exception as exc:  # noqa: BLE001 - said; the node stays up for its supervisor to see
            self.get_logger().error(f"the physics loop stopped: {type(exc).__name__}: {exc}")

    def _stamp(self):
        return _time_msg(self.world.data.time)

    # -- the referee (the simulator's truth: never for the robot's software) -----------------------
    def _publish_referee(self, stamp, records) -> None:
        from geometry_msgs.msg import Point, Pose, Vector3
        from std_msgs.msg import Header

        from affplan_ros.msg import RefereeObject, RefereeObjects

        objects = []
        for r in records:
            pose = Pose()
            pose.position.x, pose.position.y, pose.position.z = r.position
            pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = r.quaternion
            msg = RefereeObject(name=r.name, class_name=r.class_name, kind=r.kind, pose=pose,
                                size=Vector3(x=r.size[0], y=r.size[1], z=r.size[2]), open_fraction=r.open_fraction,
                                inner_levels=list(r.inner_levels))
            if r.joint is not None:
                msg.joint_type, msg.joint_position, msg.joint_open = r.joint.type, r.joint.position, r.joint.open
                msg.handle = Point(x=r.joint.handle[0], y=r.joint.handle[1], z=r.joint.handle[2])
                if r.joint.back_handle is not None:
                    b = r.joint.back_handle
                    msg.has_back_handle, msg.back_handle = True, Point(x=b[0], y=b[1], z=b[2])
                msg.joint_origin = Point(x=r.joint.origin[0], y=r.joint.origin[1], z=r.joint.origin[2])
                msg.joint_axis = Vector3(x=r.joint.axis[0], y=r.joint.axis[1], z=r.joint.axis[2])
            objects.append(msg)
        self.referee_pub.publish(RefereeObjects(header=Header(stamp=stamp, frame_id=self.names.map_frame),
                                                objects=objects))

    # -- the head camera -------------------------------------------------------------------------
    def _camera_publishers(self) -> None:
        from sensor_msgs.msg import CameraInfo, Image

        topics = self.names.camera
        # Reliable, as sim_world's camera: a best-effort reader (RViz) still takes it.
        self.image_pub = self.create_publisher(Image, topics.rgb_topic, RELIABLE_SENSOR_QOS)
        self.depth_pub = self.create_publisher(Image, topics.depth_topic, RELIABLE_SENSOR_QOS)
        self.info_pub = self.create_publisher(CameraInfo, topics.info_topic, RELIABLE_SENSOR_QOS)
        self.depth_info_pub = self.create_publisher(CameraInfo, topics.depth_info_topic, RELIABLE_SENSOR_QOS)

    def _camera_loop(self, period: float, width: int, height: int) -> None:
        """Frames every ``period`` simulated seconds, rendered here from a copy of the state taken
        under the lock (the EGL context is this thread's)."""
        from affplan_ros.sim.hardware.camera import FrameSchedule, SnapshotCamera

        camera = None
        schedule = FrameSchedule(period)
        try:
            camera = SnapshotCamera(self.world, width, height)
            while not self._stop.is_set():
                now = float(self.world.data.time)   # a float read: no lock needed to decide whether to wait
                if not schedule.is_due(now):
                    self._stop.wait(schedule.wait_s(now, self.rate))
                    continue
                with self.lock:
                    taken = camera.copy_state()
                self._publish_frame(camera.render())
                schedule.taken(taken)
        except Exception as exc:  # noqa: BLE001 - said once; the hardware goes on without a camera
            self.get_logger().error(f"the head camera stopped: {type(exc).__name__}: {exc}")
        finally:
            if camera is not None:
                camera.close()

    def _publish_frame(self, frame) -> None:
        from std_msgs.msg import Header

        from affplan_ros.nodes.convert import camera_info_msg, image_msg

        header = Header(stamp=_time_msg(frame.sim_time), frame_id=self.names.camera.optical_frame)
        info = camera_info_msg(frame, header)
        self.image_pub.publish(image_msg(frame.rgb, "rgb8", header))
        self.info_pub.publish(info)
        if frame.depth is not None:
            self.depth_pub.publish(image_msg(frame.depth, "32FC1", header))
            self.depth_info_pub.publish(info)

    def _publish_state(self, stamp, joints, odometry, links) -> None:
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Header

        self.joint_pub.publish(JointState(header=Header(stamp=stamp), name=joints.names, position=joints.positions,
                                          velocity=joints.velocities, effort=joints.efforts))
        self.tf_pub.publish(self._types["TFMessage"](transforms=[self._transform(stamp, f)
                                                                 for f in [odometry, *links]]))

    @staticmethod
    def _transform(stamp, frame):
        from geometry_msgs.msg import TransformStamped
        from std_msgs.msg import Header

        t = TransformStamped(header=Header(stamp=stamp, frame_id=frame.parent), child_frame_id=frame.child)
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = frame.position
        r = t.transform.rotation
        r.x, r.y, r.z, r.w = frame.quaternion
        return t

    def _static(self, fixed):
        from affplan_ros.sim.hardware.state import Frame, quaternion_xyzw

        frame = Frame(fixed.parent, fixed.child, tuple(float(v) for v in fixed.position),
                      quaternion_xyzw(fixed.rotation))
        return self._transform(self._stamp(), frame)

    def _map_to_odom(self):
        from affplan_ros.sim.hardware.state import Frame

        return self._transform(self._stamp(), Frame(self.names.map_frame, self.names.odom_frame, (0.0, 0.0, 0.0),
                                                    (0.0, 0.0, 0.0, 1.0)))

    # -- controllers -----------------------------------------------------------------------------
    def _await(self, controller, handle, start, wall_s: float, feedback=None):
        """Start a controller's command (``start()``, under the world's lock) and wait for its end:
        (outcome, "") or (None, why not: "canceled", "preempted" or "timeout"). A cancel or a
        timeout stops the controller where it is; a newer goal on it preempts this one."""
        with self.lock:
            start()
            mine = controller.generation
        deadline = time.monotonic() + wall_s
        while True:
            if controller.generation != mine:
                return None, "preempted"
            if handle.is_cancel_requested or time.monotonic() > deadline:
                with self.lock:
                    controller.stop(self.world.data)
                return None, "canceled" if handle.is_cancel_requested else "timeout"
            outcome = controller.wait(0.02)
            if outcome is not None:
                return outcome, ""
            if feedback is not None:
                message = feedback()
                if message is not None:
                    handle.publish_feedback(message)

    def _grip(self, hand: str, handle):
        GripperCommand = self._types["GripperCommand"]
        gripper, command = self.grippers[hand], handle.request.command
        outcome, why = self._await(gripper, handle,
                                   lambda: gripper.command(command.position, command.max_effort, self.world.data),
                                   GRIPPER_WAIT_S, lambda: GripperCommand.Feedback(**self._fingers(hand)))
        if why == "canceled":
            handle.canceled()
        elif outcome is not None and outcome.reached_goal:
            handle.succeed()
        else:   # stalled short of the goal (as the gripper controller without allow_stalling), or preempted
            handle.abort()
        if outcome is None:
            return GripperCommand.Result(**self._fingers(hand))
        return GripperCommand.Result(position=outcome.position, effort=outcome.effort, stalled=outcome.stalled,
                                     reached_goal=outcome.reached_goal)

    def _fingers(self, hand: str) -> dict:
        with self.lock:
            position = self.grippers[hand].opening(self.world.data)
        return {"position": position, "reached_goal": False, "stalled": False}

    def _check_grip(self, hand: str, goal):
        command = goal.command
        if not (math.isfinite(command.position) and math.isfinite(command.max_effort)):
            self.get_logger().warn(f"{hand} gripper goal refused: position and max_effort must be finite numbers")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _check_navigation(self, goal):
        if not _finite(goal.pose):
            self.get_logger().warn("navigation goal refused: the pose must be finite numbers")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _check_path(self, goal):
        if not all(_finite(pose) for pose in goal.path.poses):
            self.get_logger().warn("path refused: every pose must be finite numbers")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _check_trajectory(self, name: str, goal):
        problem = self.trajectories[name].problem(goal.trajectory.joint_names, self._points(goal))
        if problem is not None:
            self.get_logger().warn(f"{name} trajectory refused: {problem.text}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    @staticmethod
    def _points(goal):
        from affplan_ros.sim.hardware.trajectories import TrajectoryPoint

        return [TrajectoryPoint(_seconds(p.time_from_start), tuple(p.positions), tuple(p.velocities))
                for p in goal.trajectory.points]

    def _follow(self, name: str, handle):
        from affplan_ros.sim.hardware.trajectories import TrajectoryError

        Result = self._types["FollowJointTrajectory"].Result
        controller, goal = self.trajectories[name], handle.request
        by_name = lambda tolerances: {t.name: t.position for t in tolerances}  # noqa: E731
        points = self._points(goal)
        end = points[-1].time_s if points else 0.0
        outcome, why = self._await(
            controller, handle,
            lambda: controller.command(goal.trajectory.joint_names, points, self.world.data,
                                       by_name(goal.path_tolerance), by_name(goal.goal_tolerance),
                                       _seconds(goal.goal_time_tolerance)),
            self._wall_s(end), lambda: self._tracking_feedback(controller))
        if why == "canceled":
            handle.canceled()
            return Result(error_code=TrajectoryError.SUCCESSFUL, error_string="canceled")
        if outcome is None:
            handle.abort()
            code = TrajectoryError.INVALID_GOAL if why == "preempted" else TrajectoryError.GOAL_TOLERANCE_VIOLATED
            return Result(error_code=int(code), error_string="preempted by a newer goal" if why == "preempted"
                          else "the simulation did not finish it in time")
        if outcome.error == TrajectoryError.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return Result(error_code=int(outcome.error), error_string=outcome.text)

    def _wall_s(self, sim_s: float) -> float:
        """Wall seconds a goal of ``sim_s`` simulated seconds may take at the slowest pace."""
        return (sim_s + 5.0) / (self.rate or 1.0) + 10.0

    def _tracking_feedback(self, controller):
        from trajectory_msgs.msg import JointTrajectoryPoint

        tracking = controller.tracking()
        if tracking is None:
            return None
        feedback = self._types["FollowJointTrajectory"].Feedback(joint_names=list(controller.names),
                                                                 index=tracking.index)
        feedback.header.stamp = self._stamp()
        feedback.desired = JointTrajectoryPoint(positions=list(tracking.desired))
        feedback.actual = JointTrajectoryPoint(positions=list(tracking.actual))
        feedback.error = JointTrajectoryPoint(positions=[d - a for d, a in zip(tracking.desired, tracking.actual)])
        return feedback

    def _navigate(self, handle):
        """Nav2's NavigateToPose: a collision-free path on the world's floor plan (what Nav2's
        planner finds on a good map), driven by the base controller."""
        from affplan_ros.sim.physics.navigation import plan_base_path

        NavigateToPose = self._types["NavigateToPose"]
        Result = NavigateToPose.Result
        goal = handle.request.pose
        if goal.header.frame_id not in (self.names.map_frame, self.names.odom_frame, ""):
            handle.abort()
            return Result(error_code=Result.TF_ERROR, error_msg=f"no transform from {goal.header.frame_id!r} "
                          f"to {self.names.map_frame!r}")
        target = _base_pose(goal)
        with self.lock:
            start = self.world.base_pose()
            path = plan_base_path(self.world, start, target, self.world.spec.base_radius + NAV_CLEARANCE_M)
        if path is None:
            handle.abort()
            return Result(error_code=Result.UNKNOWN, error_msg="no path to the goal: it is blocked or unreachable")
        began = self._stamp()
        return self._drive(handle, start, path, 10.0, lambda: self._nav_feedback(began), Result, Result.TIMEOUT,
                           Result.UNKNOWN)

    def _drive(self, handle, start, path, spare_s: float, feedback, Result, timed_out: int, held: int):
        """Drive the base along ``path`` for a Nav2 action's goal and end it: its Result, with
        ``timed_out`` or ``held`` (something stopped the base) as the error code where it failed."""
        length = sum(math.hypot(b.x - a.x, b.y - a.y) for a, b in zip([start, *path], path))
        outcome, why = self._await(self.base, handle, lambda: self.base.drive(path, self.world.data),
                                   self._wall_s(length / self.world.spec.base_speed + spare_s), feedback)
        if why == "canceled":
            handle.canceled()
            return Result(error_code=Result.NONE, error_msg="canceled")
        if outcome is not None and outcome.arrived:
            handle.succeed()
            return Result(error_code=Result.NONE)
        handle.abort()
        if outcome is None:
            return Result(error_code=Result.UNKNOWN if why == "preempted" else timed_out,
                          error_msg="preempted by a newer goal" if why == "preempted" else "did not arrive in time")
        return Result(error_code=held, error_msg=outcome.text)

    def _follow_path(self, handle):
        """Nav2's FollowPath: the base driven along the given poses as they are (what Nav2's
        controller server does with a path it is handed), stopping short where something holds it."""

        FollowPath = self._types["FollowPath"]
        Result = FollowPath.Result
        path = handle.request.path
        frames = {path.header.frame_id, *(p.header.frame_id for p in path.poses)} - {""}
        if not path.poses or not frames <= {self.names.map_frame, self.names.odom_frame}:
            handle.abort()
            return Result(error_code=Result.INVALID_PATH if not path.poses else Result.TF_ERROR,
                          error_msg="the path has no poses" if not path.poses else
                          f"no transform from {sorted(frames)} to {self.names.map_frame!r}")
        poses = [_base_pose(stamped) for stamped in path.poses]
        with self.lock:
            start = self.world.base_pose()
        # Each pose is a segment of its own (at least 0.2 s, BaseController.drive).
        return self._drive(handle, start, poses, len(poses) * 0.2 + 10.0, self._path_feedback, Result,
                           Result.CONTROLLER_TIMED_OUT, Result.FAILED_TO_MAKE_PROGRESS)

    def _path_feedback(self):
        with self.lock:
            left = self.base.remaining(self.world.data)
        return self._types["FollowPath"].Feedback(distance_to_goal=float(left))

    def _nav_feedback(self, began):
        from geometry_msgs.msg import PoseStamped
        from std_msgs.msg import Header

        feedback = self._types["NavigateToPose"].Feedback()
        with self.lock:
            pose, left, now = self.base.pose(self.world.data), self.base.remaining(self.world.data), self._stamp()
        feedback.current_pose = PoseStamped(header=Header(stamp=now, frame_id=self.names.map_frame))
        feedback.current_pose.pose.position.x, feedback.current_pose.pose.position.y = pose.x, pose.y
        o = feedback.current_pose.pose.orientation
        o.z, o.w = math.sin(pose.yaw / 2), math.cos(pose.yaw / 2)
        feedback.distance_remaining = float(left)
        elapsed = (now.sec - began.sec) + (now.nanosec - began.nanosec) * 1e-9
        feedback.navigation_time.sec = int(elapsed)
        feedback.navigation_time.nanosec = int((elapsed % 1) * 1e9)
        return feedback

    def _on_cmd_vel(self, msg) -> None:
        self.base.command_velocity(msg.linear.x, msg.linear.y, msg.angular.z)

    def destroy_node(self):
        self._stop.set()
        self._loop.join(5.0)
        if self._camera_thread is not None:
            self._camera_thread.join(5.0)
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(SimHardwareNode, args)


def _base_pose(stamped):
    """A PoseStamped as the base's pose on the floor (x, y, yaw)."""
    from affplan_ros.sim.physics.world import BasePose

    q = stamped.pose.orientation
    return BasePose(stamped.pose.position.x, stamped.pose.position.y,
                    math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z)))


def _finite(stamped) -> bool:
    p, q = stamped.pose.position, stamped.pose.orientation
    return all(math.isfinite(v) for v in (p.x, p.y, p.z, q.x, q.y, q.z, q.w))


def _seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


def _time_msg(seconds: float):
    from builtin_interfaces.msg import Time

    ns = int(round(seconds * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _every(rate_hz: float) -> int:
    """Control ticks between two messages at ``rate_hz`` per simulated second."""
    return max(1, round(1.0 / (rate_hz * CONTROL_PERIOD_S)))


if __name__ == "__main__":   # last: `python -m` runs it, and main() never returns
    raise SystemExit(main())
