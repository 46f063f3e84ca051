"""perception: camera image -> detector -> objects with affordances (OAD) -> relations -> memory.

Subscribes the colour image (sensor QoS; optionally a registered depth image and its camera
info), runs the pipeline of ``core/perception/pipeline.py`` on the newest frame at most ``max_rate_hz``
times a second, and publishes

* ``observation`` (SceneObservation, latched): the objects in view with affordances, bounding
  boxes (and poses with depth), estimated and assumed relations — what memory subscribes to;
* ``annotated_image`` (sensor_msgs/Image, latched): boxes and affordance labels, for RViz.

Services: ``observe`` (Observe: the next processed view, for the Explore tool; with a location,
the view of that place: what stands on or in it) and
``generate_oam`` (GenerateOam: map new classes to affordances with the LLM; cached).

The detector (torch + ultralytics) loads in the background after start-up, so the node is up
at once; a missing or corrupt model file, a frame of the wrong encoding or size, or an empty
class list is logged with what to change, and the node keeps running (Observe then answers
``success: false`` with the reason). Changing the ``model`` parameter at run time reloads it,
but only from the package's ``config/models`` or the folder of the start-up model: a weight file
is code (ultralytics unpickles it), so no peer on the network may point the node at any file.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Optional

from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image

from affplan_ros.core.knowledge.affordance_questions import OamGenerationError
from affplan_ros.core.knowledge.oam import OamDatabase, load_oam
from affplan_ros.core.knowledge.oam_generation import STRATEGIES, OamCache, generate_mapping
from affplan_ros.core.model.limits import MAX_CLASSES, MAX_NAME_CHARS, name_problem
from affplan_ros.core.perception.detection import (
    OPEN_VOCABULARY_KINDS,
    DetectorError,
    normalize_label,
    resolve_model_path,
)
from affplan_ros.core.perception.image import ImageFormatError, to_bgr, to_depth_m
from affplan_ros.core.perception.pipeline import PerceptionPipeline, PerceptionSettings
from affplan_ros.core.perception.views import at_location
from affplan_ros.env import config_file, share_dir
from affplan_ros.msg import ObjectAffordances, SceneObservation
from affplan_ros.nodes.base import (
    LATCHED_QOS,
    RELIABLE_SENSOR_QOS,
    SENSOR_QOS,
    background_log,
    run_node,
    serve,
    subscribe,
)
from affplan_ros.nodes.convert import image_fields, image_msg, observation_to_msg, pose_to_matrix
from affplan_ros.nodes.params import Param, declare_params
from affplan_ros.srv import GenerateOam, Observe

# The detector's parameters may change at run time (checked and applied by _on_set_parameters).
PARAMS = (
    Param("camera_topic", "camera/image_raw", "colour image topic (rgb8, bgr8, rgba8, bgra8, mono8)", nonempty=True),
    Param("depth_topic", "", "registered depth image topic (16UC1 mm or 32FC1 m); '' = no depth"),
    Param("camera_info_topic", "", "camera info of the depth image (intrinsics for 3D positions); '' = none"),
    Param("camera_pose_topic", "", "PoseStamped of the colour camera's optical frame in the map: with depth, an "
          "object seen again where it was keeps its name across views; '' = names from 2D tracking only"),
    Param("model", "models/kitchen_shapes.pt", "YOLO weight file; relative paths are looked up in the package's "
          "config/ folder", read_only=False),
    Param("detector_kind", "auto", "auto | yolo | yolo_world | yoloe (open vocabulary: classes from the OAM)",
          read_only=False),
    Param("confidence", 0.35, "global minimum detection confidence [0, 1]", read_only=False),
    Param("iou", 0.5, "non-maximum-suppression IoU threshold [0, 1]", read_only=False),
    Param("imgsz", 0, "detector input size in pixels (multiple of 32); 0 = the size the model was trained at",
          read_only=False),
    Param("device", "cpu", "torch device, e.g. cpu or cuda:0", read_only=False),
    Param("settings_file", "", "synonyms, per-class thresholds, ignore list, relations, "
          "assumptions (default: config/perception_settings.yaml)"),
    Param("oam_file", "", "object-affordance mapping (default: the built-in kitchen OAM)"),
    Param("oam_cache_file", "", "where LLM-generated OAM entries are cached ('' = no cache)"),
    Param("location", "", "location the camera looks at, reported with each observation"),
    Param("camera_reliability", "best_effort", "QoS of the camera subscriptions: best_effort takes any camera, as "
          "sensors are read; reliable loses no frame of a camera that publishes reliably (a simulated camera, or a "
          "UDP transport that drops a fragment of a large frame when the receiver is busy: docs/reliability.md)",
          choices=("best_effort", "reliable")),
    Param("max_rate_hz", 2.0, "most frames processed per second (newest frame wins)", above=0),
    Param("observe_timeout_s", 5.0, "Observe: how long to wait for a processed frame", above=0),
    Param("detector_wait_s", 30.0, "Observe: how long a request waits for a detector that is still loading (at "
          "start, or after a model change) before observe_timeout_s starts; then it answers that it is loading",
          minimum=0),
    Param("llm_base_url", "", "GenerateOam endpoint ('' = AFFPLAN_LLM_BASE_URL)"),
    Param("llm_model", "", "GenerateOam model ('' = AFFPLAN_LLM_MODEL)"),
    Param("llm_api_key_env", "", "NAME of the variable holding the API key "
          "('' = AFFPLAN_LLM_API_KEY_ENV or OPENAI_API_KEY; 'none' = no key)"),
    Param("affordances_file", "", "affordance questions/formulas for GenerateOam ('' = built-in)"),
)
DETECTOR_PARAMETERS = tuple(param.name for param in PARAMS if not param.read_only)


class PerceptionNode(Node):
    def __init__(self) -> None:
        super().__init__("perception")
        p = declare_params(self, PARAMS)
        self.camera_topic, self.depth_topic, self.info_topic = p.camera_topic, p.depth_topic, p.camera_info_topic
        self.pose_topic = p.camera_pose_topic
        self.cache_file, self.location = p.oam_cache_file, p.location
        self.max_rate, self.observe_timeout = p.max_rate_hz, p.observe_timeout_s
        self.detector_wait = p.detector_wait_s
        self.llm_base_url, self.llm_model, self.llm_key_env = p.llm_base_url, p.llm_model, p.llm_api_key_env
        self.affordances_file = p.affordances_file
        model = p.model

        try:
            oam = load_oam(p.oam_file or None)
            if self.cache_file:  # classes generated earlier are known from the start
                classes, _ = OamCache(self.cache_file).load()
                oam = oam.merged(OamDatabase({c: frozenset(a) for c, a in classes.items()}))
            settings = PerceptionSettings.from_file(config_file("perception_settings.yaml", p.settings_file),
                                                    self._detector_values(p.model, p.detector_kind, p.confidence, p.iou,
                                                                          p.imgsz, p.device))
        except (OSError, ValueError, OamGenerationError) as exc:  # PerceptionConfigError is a ValueError
            raise ValueError(f"cannot configure perception: {exc}") from exc
        self.pipeline = PerceptionPipeline(settings, oam)

        self._lock = threading.Lock()
        self._frame_ready = threading.Condition(self._lock)
        self._latest: Optional[Image] = None       # newest colour frame, not yet processed
        self._latest_received = 0.0
        self._depth: Optional[Image] = None
        self._intrinsics: Optional[tuple[float, float, float, float]] = None
        self._pose = None                            # (rotation optical -> map, position) of the newest camera pose
        self._last_observation = None               # (SceneObservation msg, monotonic time of its frame,
                                                    #  the pipeline's observation, the frame's header)
        self._frame_error = ("", 0.0)               # why the newest frame could not be used, and when
        self._detector_state = "loading"            # loading | ready | error
        self._detector_ready_at = 0.0               # monotonic time it became ready
        self._detector_error = ""
        self._logged: dict[str, float] = {}

        self.observation_pub = self.create_publisher(SceneObservation, "observation", LATCHED_QOS)
        self.annotated_pub = self.create_publisher(Image, "annotated_image", LATCHED_QOS)
        sensors = MutuallyExclusiveCallbackGroup()
        camera_qos = SENSOR_QOS if p.camera_reliability == "best_effort" else RELIABLE_SENSOR_QOS
        subscribe(self, Image, self.camera_topic, self._on_image, camera_qos, sensors)
        if self.depth_topic:
            subscribe(self, Image, self.depth_topic, self._on_depth, camera_qos, sensors)
        if self.info_topic:
            subscribe(self, CameraInfo, self.info_topic, self._on_info, camera_qos, sensors)
        if self.pose_topic:
            subscribe(self, PoseStamped, self.pose_topic, self._on_pose, camera_qos, sensors)
        # Inference in its own group: sensor callbacks and services stay responsive meanwhile.
        self.create_timer(1.0 / self.max_rate, self._process_newest, callback_group=MutuallyExclusiveCallbackGroup())
        services = ReentrantCallbackGroup()
        serve(self, Observe, "observe", self._on_observe, services)
        serve(self, GenerateOam, "generate_oam", self._on_generate_oam, services)
        # Where a run-time change of `model` may load weights from (see the module docstring).
        start_model = resolve_model_path(model, [share_dir() / "config", Path.cwd()]) or Path(model).expanduser()
        self._model_dirs = {(share_dir() / "config" / "models").resolve(), start_model.resolve().parent}
        self._oam_lock = threading.Lock()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._load_detector_async()
        self.get_logger().info(f"perception: camera {self.resolve_topic_name(self.camera_topic)}, model {model!r}, "
                               f"{len(oam.classes())} OAM classes, at most {self.max_rate:g} frames/s")

    # -- detector --------------------------------------------------------------------------
    @staticmethod
    def _detector_values(model, kind, confidence, iou, imgsz, device) -> dict:
        return {"model": model, "kind": kind, "confidence": float(confidence), "iou": float(iou),
                "imgsz": int(imgsz), "device": device}

    def _load_detector_async(self) -> None:
        with self._lock:
            self._detector_state, self._detector_error = "loading", ""
        threading.Thread(target=self._load_detector, name="detector-load", daemon=True).start()

    def _load_detector(self) -> None:
        try:
            detector = self.pipeline.load_detector([share_dir() / "config", Path.cwd()])
        except DetectorError as exc:
            with self._frame_ready:
                self._detector_state, self._detector_error = "error", str(exc)
                self._frame_ready.notify_all()
            background_log(self, "error", f"detector not available: {exc}")
            return
        with self._frame_ready:
            self._detector_state, self._detector_ready_at = "ready", time.monotonic()
            self._frame_ready.notify_all()
        background_log(self, "info", f"detector ready in {detector.load_seconds:.1f} s: {detector.kind} at "
                               f"{detector.imgsz} px, {len(detector.labels)} labels ({', '.join(detector.labels[:8])})")

    def _on_set_parameters(self, params) -> SetParametersResult:
        values = {p.name: p.value for p in params}
        detector_change = {k: v for k, v in values.items() if k in DETECTOR_PARAMETERS}
        if not detector_change:
            return SetParametersResult(successful=True)
        if "model" in detector_change:
            problem = self._model_problem(str(detector_change["model"]))
            if problem:
                return SetParametersResult(successful=False, reason=problem)
        current = {k: self.get_parameter(k).value for k in DETECTOR_PARAMETERS}
        current.update(detector_change)
        try:
            new = self._detector_values(current["model"], current["detector_kind"], current["confidence"],
                                        current["iou"], current["imgsz"], current["device"])
            from dataclasses import replace

            config = replace(self.pipeline.settings.detector, **new)  # validates ranges
        except (DetectorError, TypeError, ValueError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self.pipeline.settings.detector = config
        self._load_detector_async()
        return SetParametersResult(successful=True)

    def _model_problem(self, model: str) -> str:
        """Why a run-time ``model`` value is refused ("" when it may be loaded)."""
        path = resolve_model_path(model, [share_dir() / "config", Path.cwd()])
        if path is None:
            return f"no weight file {model!r}"
        if path.resolve().parent not in self._model_dirs:
            return (f"{model!r} is outside {', '.join(sorted(map(str, self._model_dirs)))}: weights from elsewhere "
                    "are loaded only at start-up (parameter file), since a weight file runs code when loaded")
        return ""

    # -- sensors ----------------------------------------------------------------------------
    def _on_image(self, msg: Image) -> None:
        with self._lock:
            self._latest, self._latest_received = msg, time.monotonic()

    def _on_depth(self, msg: Image) -> None:
        with self._lock:
            self._depth = msg

    def _on_info(self, msg: CameraInfo) -> None:
        k = list(msg.k)
        if len(k) == 9 and k[0] > 0 and k[4] > 0:
            with self._lock:
                self._intrinsics = (float(k[0]), float(k[4]), float(k[2]), float(k[5]))

    def _on_pose(self, msg: PoseStamped) -> None:
        pose = pose_to_matrix(msg.pose)
        if pose is None:
            self._log_once(f"camera pose on {self.resolve_topic_name(self.pose_topic)} rejected: not a finite pose "
                           "with a unit quaternion")
            return
        with self._lock:
            self._pose = pose

    def _log_once(self, text: str, level: str = "error", every_s: float = 30.0) -> None:
        """Bad input repeats at the camera's rate: say it once, then again after ``every_s``."""
        now = time.monotonic()
        if now - self._logged.get(text, -1e9) >= every_s:
            self._logged[text] = now
            getattr(self.get_logger(), level)(text)

    def _process_newest(self) -> None:
        with self._lock:
            msg, received, depth_msg, intrinsics = self._latest, self._latest_received, self._depth, self._intrinsics
            pose = self._pose
            ready = self._detector_state == "ready"
            if msg is None or not ready:
                return
            self._latest = None
        try:
            image = to_bgr(image_fields(msg))
            depth = None
            if depth_msg is not None:
                depth = to_depth_m(image_fields(depth_msg))
            observation = self.pipeline.process(image, depth, intrinsics if depth is not None else None,
                                                camera_pose=pose)
        except (ImageFormatError, DetectorError) as exc:
            error = f"camera frame on {self.resolve_topic_name(self.camera_topic)} rejected: {exc}"
            with self._frame_ready:
                self._frame_error = (error, time.monotonic())
                self._frame_ready.notify_all()
            self._log_once(error)
            return
        for warning in observation.warnings:
            self._log_once(warning, "warn", 300.0)
        for d in observation.unknown:
            self._log_once(f"detected class {d.class_name!r} is not in the OAM; call generate_oam to map it",
                           "warn", 300.0)
        out = observation_to_msg(observation, msg.header, self.location, self.pipeline.oam)
        self.observation_pub.publish(out)
        if observation.annotated is not None:
            self.annotated_pub.publish(image_msg(observation.annotated, "bgr8", msg.header))
        with self._frame_ready:
            self._last_observation, self._frame_error = (out, received, observation, msg.header), ("", 0.0)
            self._frame_ready.notify_all()

    # -- services ---------------------------------------------------------------------------
    def _on_observe(self, request, response):
        if request.location and name_problem(request.location, "location"):
            response.success, response.message = False, name_problem(request.location, "location")
            return response
        asked = time.monotonic()
        loaded_by = asked + self.detector_wait
        with self._frame_ready:
            while True:
                last = self._last_observation
                if last is not None and last[1] >= asked - 1.0 / self.max_rate:
                    # With a location: the view of that place (the biggest detection of its class
                    # named as the map names it; only what stands on or in it).
                    oam = self.pipeline.oam
                    out = (observation_to_msg(at_location(last[2], request.location, oam.affordances_of), last[3],
                                              request.location, oam) if request.location else last[0])
                    response.success, response.observation = True, out
                    response.message = f"{len(out.objects)} objects, {len(out.relations)} relations"
                    return response
                if self._detector_state == "error":
                    response.success, response.message = False, f"detector not available: {self._detector_error}"
                    return response
                error, when = self._frame_error
                if error and when >= asked:  # the frame that came after the request was bad
                    response.success, response.message = False, error
                    return response
                # A look asked while the detector loads (right after start, on a busy computer it
                # takes tens of seconds) waits for it; the wait for a frame starts once it is up.
                if self._detector_state == "loading":
                    remaining = loaded_by - time.monotonic()
                else:
                    remaining = max(asked, self._detector_ready_at) + self.observe_timeout - time.monotonic()
                if remaining <= 0:
                    break
                self._frame_ready.wait(min(remaining, 0.2))
            state = self._detector_state
        topic = self.resolve_topic_name(self.camera_topic)
        response.success = False
        response.message = (f"detector still loading after {self.detector_wait:g} s" if state == "loading" else
                            f"no camera image processed from {topic} within {self.observe_timeout:g} s")
        return response

    def _on_generate_oam(self, request, response):
        classes = [c.strip() for c in request.classes if c.strip()]
        strategy = request.strategy or "logic"
        if not classes:
            response.success, response.message = False, "no classes given: the class list is empty"
            return response
        if len(classes) > MAX_CLASSES:
            response.success = False
            response.message = f"{len(classes)} classes; the limit is {MAX_CLASSES} per request"
            return response
        for c in classes:
            problem = name_problem(normalize_label(c)[:MAX_NAME_CHARS + 1], "class")
            if problem:
                response.success, response.message = False, f"class {c[:40]!r} rejected: {problem}"
                return response
        if strategy not in STRATEGIES:
            response.success = False
            response.message = f"unknown strategy {strategy[:40]!r}; use {', '.join(STRATEGIES)}"
            return response
        names = [normalize_label(c) for c in classes]
        known = [c for c in names if c in self.pipeline.oam]
        new = [c for c in names if c not in self.pipeline.oam]
        mappings = [ObjectAffordances(class_name=c, affordances=sorted(self.pipeline.oam.affordances_of(c)),
                                      strategy="file", model="") for c in known]
        if new:
            try:
                results = self._generate(new, strategy)
            except Exception as exc:  # LLM, configuration or answer errors: all reported, node stays up
                response.success, response.mappings = False, mappings
                response.message = f"OAM generation failed: {exc}"
                self.get_logger().error(response.message)
                return response
            with self._oam_lock:
                added = OamDatabase({r.class_name: frozenset(r.affordances) for r in results})
                self.pipeline.set_oam(self.pipeline.oam.merged(added))
            detector = self.pipeline.detector
            if detector is not None and detector.kind in OPEN_VOCABULARY_KINDS:
                self._load_detector_async()  # the new classes join the open vocabulary
            mappings += [ObjectAffordances(class_name=r.class_name, affordances=list(r.affordances),
                                           strategy=r.strategy, model=r.model) for r in results]
        response.success, response.mappings = True, mappings
        response.message = f"{len(known)} known, {len(new)} generated ({strategy})"
        return response

    def _generate(self, classes: list[str], strategy: str):
        import os

        from affplan_ros.llm.config import (
            ENV_BASE_URL,
            ENV_KEY_NAME,
            ENV_MODEL,
            LLMConfig,
        )
        from affplan_ros.llm.oam_prompts import make_oam_generator

        base_url = self.llm_base_url or os.environ.get(ENV_BASE_URL, "")
        if not base_url:
            raise OamGenerationError(f"no LLM endpoint configured: set the llm_base_url parameter or {ENV_BASE_URL}")
        key_env = self.llm_key_env or os.environ.get(ENV_KEY_NAME, "OPENAI_API_KEY").strip()
        config = LLMConfig(base_url=base_url, model=self.llm_model or os.environ.get(ENV_MODEL, "") or LLMConfig.model,
                           api_key_env="" if key_env == "none" else key_env)
        generator, client = make_oam_generator(config, self.affordances_file or None)
        try:
            cache = OamCache(self.cache_file) if self.cache_file else None
            return generate_mapping(generator, classes, strategy, cache)
        finally:
            client.close()


def main(args=None) -> int:
    return run_node(PerceptionNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
