"""The simulated robot's description as URDF, written from the compiled physics model, so that
``/robot_description`` and the physics can never disagree about a link length or a joint limit.

No library writes URDF from a MuJoCo model (MuJoCo reads URDF but does not export it; yourdfpy and
urchin read and write URDF but know no MJCF), so the few elements URDF has are written here:
links with inertia and primitive shapes, joints with origin, axis and limits, and fixed frames
(the footprint, the grasping frames, the camera's link and optical frame).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

from affplan_ros.sim.hardware.names import HardwareNames

# A MuJoCo camera looks along its -z with +y up; a ROS camera link looks along +x with +z up, and
# its optical frame along +z with +y down. Columns: the link's and the optical frame's axes in
# the MuJoCo camera's frame.
CAMERA_TO_LINK = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
LINK_TO_OPTICAL = CAMERA_TO_LINK.T @ np.diag([1.0, -1.0, -1.0])


def _origin(parent: ET.Element, pos, rot: np.ndarray) -> None:
    rpy = Rotation.from_matrix(rot).as_euler("xyz")     # URDF's rpy: fixed axes x, then y, then z
    ET.SubElement(parent, "origin", xyz=" ".join(f"{v:.6g}" for v in pos), rpy=" ".join(f"{v:.6g}" for v in rpy))


def _quat_mat(quat) -> np.ndarray:
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, np.asarray(quat, dtype=float))
    return mat.reshape(3, 3)


def _shape(model: mujoco.MjModel, g: int) -> ET.Element | None:
    kind, size = int(model.geom_type[g]), model.geom_size[g]
    geometry = ET.Element("geometry")
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        ET.SubElement(geometry, "box", size=" ".join(f"{2 * v:.6g}" for v in size))
    elif kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        ET.SubElement(geometry, "sphere", radius=f"{size[0]:.6g}")
    elif kind in (mujoco.mjtGeom.mjGEOM_CYLINDER, mujoco.mjtGeom.mjGEOM_CAPSULE):
        # URDF has no capsule: its cylinder with the caps' length added keeps the reach.
        extra = 2 * size[0] if kind == mujoco.mjtGeom.mjGEOM_CAPSULE else 0.0
        ET.SubElement(geometry, "cylinder", radius=f"{size[0]:.6g}", length=f"{2 * size[1] + extra:.6g}")
    else:
        return None
    return geometry


def _link(robot: ET.Element, name: str, model: mujoco.MjModel | None = None, body: int = -1) -> None:
    link = ET.SubElement(robot, "link", name=name)
    if model is None:
        return
    if model.body_mass[body] > 0:
        inertial = ET.SubElement(link, "inertial")
        _origin(inertial, model.body_ipos[body], _quat_mat(model.body_iquat[body]))
        ET.SubElement(inertial, "mass", value=f"{model.body_mass[body]:.6g}")
        ixx, iyy, izz = model.body_inertia[body]
        ET.SubElement(inertial, "inertia", ixx=f"{ixx:.6g}", iyy=f"{iyy:.6g}", izz=f"{izz:.6g}",
                      ixy="0", ixz="0", iyz="0")
    for g in range(model.ngeom):
        if int(model.geom_bodyid[g]) != body:
            continue
        geometry = _shape(model, g)
        if geometry is None:
            continue
        for tag in ("visual", "collision"):
            element = ET.SubElement(link, tag)
            _origin(element, model.geom_pos[g], _quat_mat(model.geom_quat[g]))
            element.append(geometry)
            if tag == "visual":
                rgba = model.geom_rgba[g]
                material = ET.SubElement(element, "material", name=f"{name}_{g}")
                ET.SubElement(material, "color", rgba=" ".join(f"{v:.3g}" for v in rgba))


@dataclass(frozen=True)
class FixedFrame:
    """A frame fixed to its parent: a URDF fixed joint, and a transform on /tf_static."""

    parent: str
    child: str
    position: np.ndarray
    rotation: np.ndarray     # 3x3


def fixed_frames(model: mujoco.MjModel, names: HardwareNames) -> list[FixedFrame]:
    """The footprint under the base, bodies without a joint, the grasping frames and the camera."""
    out = [FixedFrame(names.footprint_frame, names.base_link, np.zeros(3), np.eye(3))]
    for body in range(model.nbody):
        name = model.body(body).name
        if name in names.links and name != "base" and not _body_joints(model, body):
            out.append(FixedFrame(names.links[model.body(int(model.body_parentid[body])).name], names.links[name],
                                  model.body_pos[body].copy(), _quat_mat(model.body_quat[body])))
    for site, frame in names.tool_frames.items():
        s = model.site(site).id
        out.append(FixedFrame(names.links[model.body(int(model.site_bodyid[s])).name], frame,
                              model.site_pos[s].copy(), _quat_mat(model.site_quat[s])))
    cam = model.camera(names.camera.model_camera).id
    out.append(FixedFrame(names.links[model.body(int(model.cam_bodyid[cam])).name], names.camera.link,
                          model.cam_pos[cam].copy(), _quat_mat(model.cam_quat[cam]) @ CAMERA_TO_LINK))
    out.append(FixedFrame(names.camera.link, names.camera.optical_frame, np.zeros(3), LINK_TO_OPTICAL))
    return out


def _body_joints(model: mujoco.MjModel, body: int) -> list[int]:
    return [j for j in range(model.njnt) if int(model.jnt_bodyid[j]) == body]


def robot_urdf(model: mujoco.MjModel, names: HardwareNames, robot_name: str = "tiago") -> str:
    """The URDF of the robot in ``model`` (every body under ``base``), in the ROS names of ``names``."""
    names.check(model)
    robot = ET.Element("robot", name=robot_name)
    base = model.body("base").id
    _link(robot, names.footprint_frame)
    actuated = {int(model.actuator_trnid[a, 0]): a for a in range(model.nu)}
    for body in range(model.nbody):
        name = model.body(body).name
        if name not in names.links:
            continue
        _link(robot, names.links[name], model, body)
        if body == base:
            continue     # its joints are the base's motion on the floor: odom -> base_footprint
        parent = model.body(int(model.body_parentid[body])).name
        if parent not in names.links:
            raise ValueError(f"body {name}: its parent {parent} has no link name")
        joints = _body_joints(model, body)
        pos, rot = model.body_pos[body], _quat_mat(model.body_quat[body])
        if not joints:
            continue     # a fixed frame, below
        if len(joints) > 1 or np.any(model.jnt_pos[joints[0]] != 0):
            raise ValueError(f"body {name}: URDF takes one joint at the link's origin")
        j = joints[0]
        kind = {mujoco.mjtJoint.mjJNT_HINGE: "revolute", mujoco.mjtJoint.mjJNT_SLIDE: "prismatic"}.get(
            int(model.jnt_type[j]))
        jname = model.joint(j).name
        if kind is None or jname not in names.joints:
            raise ValueError(f"joint {jname}: not a named hinge or slide")
        joint = ET.SubElement(robot, "joint", name=names.joints[jname], type=kind)
        _origin(joint, pos, rot)
        ET.SubElement(joint, "parent", link=names.links[parent])
        ET.SubElement(joint, "child", link=names.links[name])
        ET.SubElement(joint, "axis", xyz=" ".join(f"{v:.6g}" for v in model.jnt_axis[j]))
        lo, hi = model.jnt_range[j]
        a = actuated.get(j)
        effort = float(model.actuator_forcerange[a, 1]) if a is not None else 0.0
        ET.SubElement(joint, "limit", lower=f"{lo:.6g}", upper=f"{hi:.6g}", effort=f"{effort:.6g}",
                      velocity="1.0")
    linked = {names.links[b] for b in names.links}
    for frame in fixed_frames(model, names):
        if frame.child not in linked:
            _link(robot, frame.child)
        joint = ET.SubElement(robot, "joint", name=f"{frame.child}_joint", type="fixed")
        _origin(joint, frame.position, frame.rotation)
        ET.SubElement(joint, "parent", link=frame.parent)
        ET.SubElement(joint, "child", link=frame.child)
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
