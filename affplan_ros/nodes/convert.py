"""Core types <-> ROS messages. The only place that knows both sides."""
from __future__ import annotations

from typing import Iterable, Mapping

from affplan_ros.core.model.failure import Cause, Failure, FailureCode
from affplan_ros.msg import FailureObservation, Plan, PlanStep


def step_to_msg(index: int, action: str, args: Iterable[str], agent: str, cost: float = 0.0) -> PlanStep:
    return PlanStep(index=index, action=action, arguments=list(args), agent=agent, cost=float(cost))


def step_text(step: PlanStep) -> str:
    return f"{step.action}({', '.join([*([step.agent] if step.agent else []), *step.arguments])})"


def plan_to_msg(steps: Iterable, goal: str = "", cost: float = 0.0, planner: str = "", partial: bool = False) -> Plan:
    """``steps``: objects with ``action``, ``args`` and ``agent`` (core PlanStep)."""
    msgs = [step_to_msg(i, s.action, s.args, s.agent, getattr(s, "cost", 0.0)) for i, s in enumerate(steps)]
    return Plan(goal=goal, steps=msgs, cost=float(cost), planner=planner, partial=partial)


def failure_to_msg(failure: Failure | None) -> FailureObservation:
    if failure is None:
        return FailureObservation(code=FailureObservation.CODE_NONE)
    return FailureObservation(code=int(failure.code), action=failure.action, what=failure.what, why=failure.why,
                              suggestion=failure.suggestion, detail=failure.detail, recoverable=failure.recoverable,
                              cause=failure.cause.value if failure.cause is not None else "")


def failure_from_msg(msg: FailureObservation) -> Failure | None:
    if msg.code == FailureObservation.CODE_NONE:
        return None
    try:
        cause = Cause(msg.cause) if msg.cause else None
    except ValueError:  # a newer robot's cause this side does not know: its words still say it
        cause = None
    return Failure(FailureCode(msg.code), msg.action, msg.what, msg.why, msg.suggestion, msg.detail, msg.recoverable,
                   cause)


def fill_message(msg, values: Mapping[str, object]):
    """Set the named fields of ``msg``; a name the message lacks is a configuration error."""
    fields = msg.get_fields_and_field_types()
    for name, value in values.items():
        if name not in fields:
            raise ValueError(f"{type(msg).__name__} has no field {name!r} (check config/skills.yaml)")
        setattr(msg, name, value)
    return msg


def message_fields(msg) -> dict[str, object]:
    """The string and string-list fields of a message as a plain dict (poses left out)."""
    out: dict[str, object] = {}
    for name, type_name in msg.get_fields_and_field_types().items():
        if type_name == "string" or type_name == "sequence<string>":
            value = getattr(msg, name)
            out[name] = list(value) if isinstance(value, list) else value
    return out


def skill_goal_problem(goal) -> str:
    """Why a skill action goal (Grasp, Place, Skill, ...) cannot be carried out ("" when it can):
    every name it gives (agent, object, location, arguments, ...) must be a name (core/limits)."""
    from affplan_ros.core.model.limits import MAX_STEP_ARGUMENTS, name_problem

    for field_name, value in message_fields(goal).items():
        values = value if isinstance(value, list) else [value]
        if len(values) > MAX_STEP_ARGUMENTS:
            return f"{field_name} has {len(values)} entries; the limit is {MAX_STEP_ARGUMENTS}"
        for v in values:
            problem = name_problem(v, field_name) if v else ""
            if problem:
                return problem
    step = getattr(goal, "step", None)
    if step is not None and step.action:
        from affplan_ros.nodes.convert_memory import plan_step_problem

        problem = plan_step_problem(step)
        if problem:
            return f"step: {problem}"
    return ""


# -- perception ---------------------------------------------------------------------------------

def image_fields(msg):
    """sensor_msgs/Image -> core.image.ImageFields (no pixel copy yet)."""
    from affplan_ros.core.perception.image import ImageFields

    return ImageFields(int(msg.height), int(msg.width), str(msg.encoding), int(msg.step), msg.data,
                       bool(msg.is_bigendian))


def image_msg(array, encoding: str, header):
    """numpy array -> sensor_msgs/Image with ``header``."""
    from sensor_msgs.msg import Image

    from affplan_ros.core.perception.image import from_array

    f = from_array(array, encoding)
    return Image(header=header, height=f.height, width=f.width, encoding=f.encoding, is_bigendian=False,
                 step=f.step, data=f.data)


def camera_info_msg(frame, header):
    """A rendered camera frame's intrinsics (``fx, fy, cx, cy, width, height``: a
    sim.physics.camera.CameraFrame) -> sensor_msgs/CameraInfo with ``header``: a pinhole without
    distortion (plumb_bob, D all zero), the projection P the same as K."""
    from sensor_msgs.msg import CameraInfo

    fx, fy, cx, cy = (float(v) for v in (frame.fx, frame.fy, frame.cx, frame.cy))
    return CameraInfo(header=header, width=frame.width, height=frame.height, distortion_model="plumb_bob",
                      d=[0.0] * 5, k=[fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0],
                      r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                      p=[fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0])


def observation_to_msg(observation, header, location: str, oam):
    """core.perception.Observation -> SceneObservation (objects in the image's frame)."""
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import RegionOfInterest

    from affplan_ros.core.model.scene import object_name
    from affplan_ros.msg import Relation, SceneObject, SceneObservation

    objects = []
    for o in observation.objects:
        x1, y1, x2, y2 = (max(0, int(round(v))) for v in o.box)
        pose = []
        if o.position is not None:
            p = PoseStamped(header=header)
            p.pose.position.x, p.pose.position.y, p.pose.position.z = (float(v) for v in o.position)
            p.pose.orientation.w = 1.0
            pose = [p]
        objects.append(SceneObject(name=o.name, class_name=o.class_name, instance=o.instance,
                                   affordances=sorted(o.affordances), location=location,
                                   confidence=float(o.confidence), pose=pose, source="detected",
                                   bbox=RegionOfInterest(x_offset=x1, y_offset=y1, width=max(0, x2 - x1),
                                                         height=max(0, y2 - y1))))
    for cls, name in observation.implied:
        instance = int(name[len(cls):]) if name[len(cls):].isdigit() else 0
        confidence = max((r.confidence for r in observation.relations if name in r.args), default=0.5)
        objects.append(SceneObject(name=name or object_name(cls, instance), class_name=cls, instance=instance,
                                   affordances=sorted(oam.affordances_of(cls)) if cls in oam else [],
                                   location=location, confidence=float(confidence), source="config"))
    relations = [Relation(predicate=r.predicate, arguments=list(r.args), confidence=float(r.confidence),
                          assumed=r.assumed) for r in observation.relations]
    return SceneObservation(header=header, location=location, objects=objects, relations=relations)


def pose_to_matrix(pose):
    """geometry_msgs/Pose -> (3x3 rotation, position) as numpy arrays; None unless the position
    is finite and the quaternion has unit length (within 1 %)."""
    import numpy as np
    from scipy.spatial.transform import Rotation

    p, q = pose.position, pose.orientation
    position, quat = np.array([p.x, p.y, p.z], float), np.array([q.x, q.y, q.z, q.w], float)
    if not (np.isfinite(position).all() and np.isfinite(quat).all()) or abs(np.linalg.norm(quat) - 1.0) > 0.01:
        return None
    return Rotation.from_quat(quat).as_matrix(), position


def merged_observation(views):
    """Several SceneObservations of one place as one (core.perception.views.merge_sightings);
    the header and location of the first."""
    from affplan_ros.core.perception.views import merge_sightings
    from affplan_ros.msg import SceneObservation

    objects, relations = merge_sightings((o for v in views for o in v.objects),
                                         (r for v in views for r in v.relations), lambda r: r.arguments)
    return SceneObservation(header=views[0].header, location=views[0].location, objects=objects,
                            relations=relations)
