"""sim_world: the default robot. Serves every skill action against a simulated ground truth.

The world is loaded from a scenario (an AutoGPT+P scene file or the project's YAML scenario,
see sim/world_scenario.py; a recovery scenario of config/scenarios/recovery/ brings its hidden
ground truth: ``ScenarioWorld`` enforces the preconditions the robot's model lacks). Each skill
goal is mapped back to the PDDL actions it may stand for (config/skills.yaml), checked against
the true state, and applied; a false precondition fails the skill with what / why / suggestion.
Skills take a realistic time (scaled by ``time_scale``) and can be canceled midway, leaving the
world as it was before the step.

It is also the simulated camera: the ``observe`` service (Observe) reports the objects at the
robot's location with their affordances, relations and a bounding box in a virtual image, and
publishes the view on ``observation`` (latched SceneObservation, what a perception node
publishes), so memory merges it. Objects at locations the scenario marks unexplored are in the
world but unknown to the robot until it looks there.

With ``physics:=true`` the world is a MuJoCo physics world built from the same scene
(sim/physics/served.py): a skill goal runs the step's motions, and the physics state, not the
planner's model, says whether it worked; the camera reads what it sees from the physics too.
With ``perception`` as well (launch argument ``perception:=true``), ``observe`` does not read the
physics: it turns the head (straight at the place, then to either side), waits for frames taken
after each turn, and asks the perception node (YOLO on the rendered head camera) what it sees there.

With ``video`` set (physics only), the world is recorded while it moves: an MP4 of a view from
above beside the annotated head camera, the step as a caption, and a contact sheet beside it
(.png). ``finish_video`` (std_srvs/Trigger) stops recording and finishes the file without
waiting: it answers success=false while frames are still rendering, true once the file is
complete. A node that stops finishes it too, dropping what is not rendered within
``VIDEO_STOP_S`` (its supervisor kills it a few seconds after asking it to stop).

``grounding`` (Ground) answers IALP's grounding predicates (reachable, graspable,
detected, placeable; core/recovery/data/grounding.yaml) for every object of the world from its
ground truth: a recovery scenario's ``unreachable``/``ungraspable``/... entries, the physics
world's IK and contacts (sim/physics/grounding.py); in the plain symbolic world every one holds
(it refuses no step for reach or grip). The planning node asks it when ``grounding`` is on; the
encoding is in clients/grounding.py.

``reset_world`` (std_srvs/Trigger) puts the world back as the scenario starts (with
ResetMemory, a fresh start for tests and benchmarks without restarting anything).
"""
from __future__ import annotations

import os
import time
from functools import partial

from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import RegionOfInterest
from std_srvs.srv import Trigger

from affplan_ros.core.knowledge.capabilities import agents_for_scene, parameter_names
from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.core.knowledge.skills import SkillMap
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.limits import name_problem
from affplan_ros.env import config_file
from affplan_ros.interfaces import interface_types
from affplan_ros.msg import SceneObservation
from affplan_ros.nodes.base import (
    AGENT_PARAMS,
    LATCHED_QOS,
    RELIABLE_SENSOR_QOS,
    RESULT_KEEP_S,
    agent_profiles,
    guarded_execute,
    run_node,
    serve,
)
from affplan_ros.nodes.convert import (
    camera_info_msg,
    failure_to_msg,
    image_msg,
    message_fields,
    skill_goal_problem,
)
from affplan_ros.nodes.convert_memory import relation_to_msg, scene_object_msg
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.sim.executor import SimulatedExecutor
from affplan_ros.sim.recovery_world import ScenarioExecutor
from affplan_ros.sim.world_scenario import load_scenario
from affplan_ros.srv import Ground, Observe

# The virtual camera image the simulated detections' bounding boxes refer to.
IMAGE_WIDTH, IMAGE_HEIGHT = 640, 480

CAMERA_FRAME = "head_camera_optical"  # the physics camera's frames (z forward, x right, y down)

PERCEPTION_OBSERVE = "perception/observe"  # the perception node's Observe, beside this node
# Observe through the perception node: its answer (a frame, inference), and a detector still
# loading right after start (the node's detector_wait_s, 30 s, then observe_timeout_s).
PERCEPTION_TIMEOUT_S = 50.0

VIDEO_FPS = 5.0       # frames per simulated second of the physics video
# A stopping node renders what is queued this long, then finishes the file: within the 5 s
# `ros2 launch` gives a node before SIGTERM (`affplan up`: 10 s before SIGKILL).
VIDEO_STOP_S = 4.0

# Seconds a real robot would take per skill, before time_scale.
DURATIONS = {"Navigate": 4.0, "Grasp": 3.0, "Place": 2.5, "Pour": 4.0, "Handover": 3.0,
             "Wipe": 6.0, "Open": 3.0, "Close": 2.5, "Skill": 4.0}


PARAMS = (
    Param("scenario", "", "scenario of the simulated world: an AutoGPT+P scene file or a YAML "
          "scenario (default: config/scenarios/kitchen.txt)"),
    Param("skills_file", "", "PDDL action -> skill action mapping (default: config/skills.yaml)"),
    Param("oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)"),
    Param("time_scale", 1.0, "multiplies every skill's duration (0 = instant)", minimum=0),
    Param("robot_agent", "robot0", "the robot's name in the plans"),
    Param("physics", False, "judge every skill by a MuJoCo physics world (sim/physics) instead of the "
          "symbolic ground truth: motions, contacts and a camera that does not see through doors"),
    Param("camera_rate_hz", 0.0, "physics: head camera frames per second on camera/image_raw, "
          "camera/depth/image_raw, camera/camera_info, camera/pose (0 = none)", minimum=0),
    Param("camera_width", 320, "physics: camera image width, pixels", minimum=16),
    Param("camera_height", 240, "physics: camera image height, pixels", minimum=16),
    Param("perception", False, "physics: observe aims the head and asks the perception node watching the "
          f"head camera (its {PERCEPTION_OBSERVE} service) what the camera shows, instead of reading the "
          "physics state (needs camera_rate_hz > 0)"),
    Param("video", "", "physics: record the run into this MP4 file (absolute path; a view from above beside "
          "the annotated head camera, the step as a caption) and a contact sheet beside it (.png); "
          "'' = none. Finished by the finish_video service or when the node stops"),
)


class SimWorldNode(Node):
    def __init__(self) -> None:
        super().__init__("sim_world")
        p = declare_params(self, PARAMS + AGENT_PARAMS)
        self.time_scale, self.robot, self.physics = p.time_scale, p.robot_agent, p.physics
        profiles = agent_profiles(p)
        path = config_file("scenarios/kitchen.txt", p.scenario)
        try:
            loaded = load_scenario(path)
            scene = loaded.scene
            if p.physics and loaded.recovery is not None:
                raise ValueError(f"{path} is a recovery scenario: its hidden rules are symbolic, the physics "
                                 "world cannot enforce them (run it with physics:=false)")
            if p.perception and not (p.physics and p.camera_rate_hz > 0):
                raise ValueError("perception: the perception node needs the "
                                 "physics world's camera (physics:=true, camera_rate_hz > 0)")
            if p.video and not p.physics:
                raise ValueError(f"video {p.video!r}: only the physics world is recorded (physics:=true)")
            if p.physics:
                self.sim = self._physics_world(scene, load_oam(p.oam_file or None), agents_for_scene(scene, profiles),
                                               p.video)
            elif loaded.recovery is not None:
                # A recovery scenario: its hidden rules hold in this world, and a failed skill
                # reports the structured observation (violated literals, observed facts).
                self.sim = ScenarioExecutor(loaded.recovery)
                self.sim.robot = self.robot
            else:
                # The simulated executor holds the ground-truth world and what a camera sees in it.
                self.sim = SimulatedExecutor(scene, oam=load_oam(p.oam_file or None),
                                             agents=agents_for_scene(scene, profiles), robot=self.robot)
            # The physics adapter is both the world the skills act on and the camera.
            self.world = self.sim if p.physics else self.sim.world
            self.skill_map = SkillMap.from_file(config_file("skills.yaml", p.skills_file))
        except (OSError, ValueError) as exc:  # ScenarioError, SkillMapError, OamFormatError are ValueErrors
            raise ValueError(f"cannot load the simulated world: {exc}") from exc
        self.parameters = parameter_names(self.world.task.capabilities)
        types = interface_types("action")
        group = ReentrantCallbackGroup()
        self._skill_servers = [
            ActionServer(self, types[skill], self.skill_map.server(skill),
                         execute_callback=guarded_execute(self, types[skill], skill,
                                                          partial(self._execute, skill, types[skill])),
                         cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group,
                         result_timeout=RESULT_KEEP_S)
            for skill in self.skill_map.skill_types()
        ]
        self.observation_pub = self.create_publisher(SceneObservation, "observation", LATCHED_QOS)
        self.stream = None
        if self.physics and p.camera_rate_hz > 0:
            self._camera_publishers()
            from affplan_ros.sim.physics.served import FrameStream

            self.stream = FrameStream(self.sim, self._publish_frame, p.camera_rate_hz, p.camera_width,
                                      p.camera_height, on_error=self.get_logger().error)
        # Explore's view through the real perception node: its service is called from observe's
        # callback, so the client has a group of its own.
        self.perception = (self.create_client(Observe, PERCEPTION_OBSERVE,
                                              callback_group=MutuallyExclusiveCallbackGroup())
                           if p.perception else None)
        serve(self, Observe, "observe", self._on_observe, group)
        serve(self, Ground, "grounding", self._on_grounding, group)
        serve(self, Trigger, "reset_world", self._on_reset, group)
        serve(self, Trigger, "finish_video", self._on_finish_video, group)
        self.get_logger().info(f"simulated world from {path}: {len(self.world.task.object_types)} objects, "
                               f"{len(self._skill_servers)} skill servers, "
                               + ("physics (MuJoCo)" if p.physics else f"time_scale {self.time_scale}"))

    def _physics_world(self, scene, oam, agents, video_path: str):
        # Imported here: MuJoCo and mink load only when the physics world is asked for.
        from affplan_ros.sim.physics.executor import PhysicsExecutor
        from affplan_ros.sim.physics.served import PhysicsSkillWorld
        from affplan_ros.sim.physics.video import RunVideo

        if video_path and not os.path.isabs(video_path):
            raise ValueError(f"video {video_path!r}: give an absolute path (a node's working folder is not yours)")
        video = RunVideo(video_path, fps=VIDEO_FPS, on_error=self.get_logger().error) if video_path else None
        world = PhysicsSkillWorld(lambda: PhysicsExecutor(scene, oam=oam, agents=agents, robot=self.robot), video)
        self.get_logger().info(f"physics world built in {world.build_seconds:.1f} s"
                               + (f"; recording {video_path}" if video else ""))
        for warning in world.warnings:
            self.get_logger().warn(f"physics world: {warning}")
        return world

    def _execute(self, skill: str, action_type, goal_handle):
        problem = skill_goal_problem(goal_handle.request)
        if problem:
            goal_handle.abort()
            self.get_logger().warn(f"{skill} goal rejected: {problem}")
            return self._result(action_type, False, time.monotonic(), Failure(
                FailureCode.INVALID, skill.lower(), f"the {skill} goal was rejected", problem))
        fields = message_fields(goal_handle.request)
        candidates = self.skill_map.candidates(skill, fields, self.parameters)
        # The plan step named in the goal (if any) is the variant meant: try it first.
        intended = goal_handle.request.step.action
        candidates.sort(key=lambda c: c[0] != intended)
        started = time.monotonic()
        # The physics takes the time its motions take; the symbolic world waits as a robot would.
        duration = 0.0 if self.physics else DURATIONS.get(skill, 3.0) * self.time_scale
        # Move "in real time" first; the effect happens at the end, so a cancel leaves no trace.
        while time.monotonic() - started < duration:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return self._result(action_type, False, started, Failure(
                    FailureCode.CANCELED, skill, f"{skill.lower()} was canceled", "cancel requested"))
            progress = (time.monotonic() - started) / duration if duration else 1.0
            goal_handle.publish_feedback(action_type.Feedback(phase="moving", progress=float(progress)))
            time.sleep(min(0.1, duration / 10))
        outcome = self.world.execute(candidates)
        if outcome.success:
            goal_handle.succeed()
            self.get_logger().info(f"{skill}: applied {outcome.action} {fields}")
        else:
            goal_handle.abort()
            self.get_logger().warn(f"{skill} failed: {outcome.failure.feedback()}")
        return self._result(action_type, outcome.success, started, outcome.failure)

    def _camera_publishers(self) -> None:
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import CameraInfo, Image

        # Reliable, as many camera drivers publish: a best-effort reader (RViz) still takes it.
        self.image_pub = self.create_publisher(Image, "camera/image_raw", RELIABLE_SENSOR_QOS)
        self.depth_pub = self.create_publisher(Image, "camera/depth/image_raw", RELIABLE_SENSOR_QOS)
        self.info_pub = self.create_publisher(CameraInfo, "camera/camera_info", RELIABLE_SENSOR_QOS)
        self.pose_pub = self.create_publisher(PoseStamped, "camera/pose", RELIABLE_SENSOR_QOS)

    def _publish_frame(self, frame) -> None:
        """One rendered frame as a real RGB-D camera driver publishes it (optical frame)."""
        from geometry_msgs.msg import PoseStamped
        from std_msgs.msg import Header

        if not self.context.ok():
            return  # stopping: the stop signal shut the context down; no large sends into a teardown
        header = Header(stamp=self.get_clock().now().to_msg(), frame_id=CAMERA_FRAME)
        self.image_pub.publish(image_msg(frame.rgb, "rgb8", header))
        if frame.depth is not None:
            self.depth_pub.publish(image_msg(frame.depth, "32FC1", header))
        self.info_pub.publish(camera_info_msg(frame, header))
        pose = PoseStamped(header=Header(stamp=header.stamp, frame_id="map"))
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (float(v) for v in frame.position)
        o = pose.pose.orientation
        o.x, o.y, o.z, o.w = frame.quaternion_xyzw
        self.pose_pub.publish(pose)

    def destroy_node(self):
        if self.stream is not None:
            self.stream.stop()
        if self._video is not None:
            self._video.close(VIDEO_STOP_S)
        return super().destroy_node()

    @property
    def _video(self):
        """The physics world's recording, if any (none for the symbolic world)."""
        return getattr(getattr(self, "sim", None), "video", None)

    def _on_finish_video(self, _request, response):
        """Stop recording and finish the file; never waits (call again until success)."""
        video = self._video
        if video is None:
            response.success, response.message = False, "no video is recorded (parameter video is empty)"
            return response
        video.finish()
        response.success = video.done
        if not video.done:
            response.message = f"rendering: {video.pending} frame(s) left, {video.frames} done"
        elif video.error:
            response.message = f"error: {video.error}"
        else:
            response.message = (f"{video.frames} frames ({video.seconds:.1f} s) of {video.simulated_seconds:.1f} s "
                                "of simulated motion" + (f", {video.dropped} dropped" if video.dropped else ""))
        return response

    def _on_reset(self, _request, response):
        self.world.reset()  # waits for a running skill's effect (the world's lock)
        response.success, response.message = True, "the simulated world is as the scenario starts"
        self.get_logger().info(response.message)
        return response

    def _grounding_provider(self):
        from affplan_ros.core.recovery.grounding import CallbackGrounding, load_grounding

        if self.physics:
            from affplan_ros.sim.physics.grounding import PhysicsGrounding

            return PhysicsGrounding(self.sim.executor)
        if isinstance(self.sim, ScenarioExecutor):
            return self.sim   # the scenario's hidden ground truth
        return CallbackGrounding({name: (lambda *_args: True) for name in load_grounding()})

    def _on_grounding(self, request, response):
        """IALP's grounding predicates for every object of the world, as it is now."""
        from affplan_ros.clients.grounding import facts_to_response
        from affplan_ros.core.recovery.grounding import judge, load_grounding

        known = load_grounding()
        unknown = sorted(set(request.predicates) - set(known))
        if unknown:
            response.success = False
            response.message = f"unknown grounding predicates {unknown} (known: {sorted(known)})"
            return response
        wanted = {n: p for n, p in known.items() if not request.predicates or n in request.predicates}
        with self.world.lock:  # a consistent state while skills may be running
            objects = sorted(n for n, o in self.sim.scene.objects.items() if not o.is_agent)
            facts = judge(self._grounding_provider(), objects, wanted)
        facts_to_response(facts, response)
        response.success = True
        response.message = (f"{len(facts.facts)} facts on {len(objects)} objects, {len(response.fails)} infeasible"
                            + (f"; not available: {', '.join(sorted(facts.unavailable))}" if facts.unavailable else ""))
        return response

    def _on_observe(self, request, response):
        here = self.sim.location_of_robot() or ""
        where = request.location or here
        if request.location and name_problem(request.location, "location"):
            response.success, response.message = False, name_problem(request.location, "location")
            return response
        if where not in self.sim.scene.locations:
            response.success = False
            known = ", ".join(sorted(self.sim.scene.locations))
            response.message = f"{where!r} is not a location of the simulated world ({known})"
            return response
        if where != here:
            response.success = False
            response.message = (f"the robot is at {here or 'no known location'}, it cannot see {where}; "
                                "navigate there first")
            return response
        if self.perception is not None:  # it turns the head itself, three times
            return self._observe_through_perception(where, response)
        if self.physics:
            self.sim.look_at(where)  # the head turns to the place, so the camera frames show it
        with self.world.lock:  # a consistent view while skills may be running
            seen = self.sim.observe(where)
        msg = SceneObservation(location=where)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = "camera"
        objects = [o for o in seen.objects if o.name != where]
        for record in seen.objects:
            obj = scene_object_msg(record, where, source="simulated")
            obj.bbox = self._bbox(objects.index(record), len(objects)) if record in objects else \
                RegionOfInterest(x_offset=0, y_offset=IMAGE_HEIGHT // 2, width=IMAGE_WIDTH, height=IMAGE_HEIGHT // 2)
            msg.objects.append(obj)
        msg.relations = [relation_to_msg(r) for r in seen.relations]
        self.observation_pub.publish(msg)
        response.success, response.observation = True, msg
        response.message = f"{len(objects)} objects seen at {where}"
        return response

    def _observe_through_perception(self, where: str, response):
        """What the perception node makes of the head camera's views of ``where`` (only what
        stands there: Observe with a location): straight at it and turned to either side
        (``HEAD_SWEEP``, as ``PerceivingExecutor`` looks, the free arms raised out of the view),
        each asked once two frames taken after the turn have gone out (the node answers with a
        frame at most one period old)."""
        from affplan_ros.nodes.base import call_service
        from affplan_ros.nodes.convert import merged_observation
        from affplan_ros.sim.physics.perceiving import HEAD_SWEEP

        views = []
        raised = self.sim.clear_view()   # the tucked arms hide much of a view turned to their side
        try:
            for pan in HEAD_SWEEP:
                self.sim.look_at(where, pan)
                rendered, deadline = self.stream.frames, time.monotonic() + 5.0
                while self.stream.frames < rendered + 2 and time.monotonic() < deadline:
                    time.sleep(0.02)
                got, error = call_service(self.perception, Observe.Request(location=where), PERCEPTION_TIMEOUT_S,
                                          wait_s=PERCEPTION_TIMEOUT_S, node=self)
                if got is None or not got.success:
                    response.success = False
                    response.message = f"the perception node did not report a view of {where}: {error or got.message}"
                    return response
                views.append(got.observation)
        finally:
            self.sim.end_view(raised)
        self.sim.look_at(where)
        msg = merged_observation(views)
        self.observation_pub.publish(msg)
        response.success, response.observation = True, msg
        things = [o for o in msg.objects if o.name != where]
        response.message = f"{len(things)} objects seen at {where} (perception node, {len(views)} views)"
        return response

    @staticmethod
    def _bbox(index: int, count: int) -> RegionOfInterest:
        """Objects side by side in the upper half of the virtual image (the furniture is the lower half)."""
        width = IMAGE_WIDTH // max(count, 1)
        return RegionOfInterest(x_offset=index * width, y_offset=IMAGE_HEIGHT // 4, width=max(1, width - 4),
                                height=IMAGE_HEIGHT // 4)

    @staticmethod
    def _result(action_type, success: bool, started: float, failure: Failure | None):
        return action_type.Result(success=success, failure=failure_to_msg(failure),
                                  duration_s=time.monotonic() - started)


def main(args=None) -> int:
    return run_node(SimWorldNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
