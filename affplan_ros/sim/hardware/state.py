"""What the simulated robot's encoders and odometry report, read from the physics: joint states
and the frames that move (odom -> base_footprint, each link below its parent). What a real robot's
drivers and robot_state_publisher publish; never where the objects are (that is the referee's)."""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from affplan_ros.sim.hardware.names import HardwareNames
from affplan_ros.sim.physics.robot import BASE_JOINTS


@dataclass(frozen=True)
class Frame:
    """A transform: ``child`` in ``parent`` (position in m, rotation as quaternion x, y, z, w)."""

    parent: str
    child: str
    position: tuple[float, float, float]
    quaternion: tuple[float, float, float, float]


@dataclass(frozen=True)
class JointReadings:
    names: list[str]
    positions: list[float]
    velocities: list[float]
    efforts: list[float]


def quaternion_xyzw(rotation: np.ndarray) -> tuple[float, float, float, float]:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.asarray(rotation, dtype=float).reshape(9))
    w, x, y, z = quat
    return float(x), float(y), float(z), float(w)


class RobotState:
    """Reads ``model``'s robot, in the ROS names of ``names``, from its data."""

    def __init__(self, model: mujoco.MjModel, names: HardwareNames):
        names.check(model)
        self.names = names
        actuator = {int(model.actuator_trnid[a, 0]): a for a in range(model.nu)}
        self._joints = [(ros, int(model.joint(j).qposadr[0]), int(model.joint(j).dofadr[0]),
                         actuator.get(model.joint(j).id)) for j, ros in names.joints.items()]
        self._base = [int(model.joint(j).qposadr[0]) for j in BASE_JOINTS]
        # Links that move relative to their parent: one per joint of the robot below its base.
        self._moving = []
        for body, link in names.links.items():
            b = model.body(body).id
            if body != "base" and any(int(model.jnt_bodyid[j]) == b for j in range(model.njnt)):
                parent = int(model.body_parentid[b])
                self._moving.append((int(parent), b, names.links[model.body(parent).name], link))

    def joints(self, data: mujoco.MjData) -> JointReadings:
        return JointReadings([j[0] for j in self._joints],
                             [float(data.qpos[q]) for _, q, _, _ in self._joints],
                             [float(data.qvel[v]) for _, _, v, _ in self._joints],
                             [float(data.actuator_force[a]) if a is not None else 0.0 for *_, a in self._joints])

    def odometry(self, data: mujoco.MjData) -> Frame:
        """odom -> base_footprint: where the base's wheels say it went (exact in this world)."""
        x, y, yaw = (float(data.qpos[q]) for q in self._base)
        return Frame(self.names.odom_frame, self.names.footprint_frame, (x, y, 0.0),
                     (0.0, 0.0, float(np.sin(yaw / 2)), float(np.cos(yaw / 2))))

    def links(self, data: mujoco.MjData) -> list[Frame]:
        """Each moving link in its parent's frame, from the joints' present values."""
        out = []
        for parent, child, parent_name, child_name in self._moving:
            rp = data.xmat[parent].reshape(3, 3)
            position = rp.T @ (data.xpos[child] - data.xpos[parent])
            rotation = rp.T @ data.xmat[child].reshape(3, 3)
            out.append(Frame(parent_name, child_name, tuple(float(v) for v in position), quaternion_xyzw(rotation)))
        return out
