"""The robot's head RGB-D camera in the physics world: rendered frames with their intrinsics and
pose, and the head pointed at what the robot looks at.

Frames are rendered offscreen by MuJoCo on the CPU (EGL with the Mesa drivers; ``MUJOCO_GL`` is
set to ``egl`` by ``sim/physics/__init__.py`` unless the caller chose another backend). Colour
is rgb8; depth is metres along the optical axis (what a ROS 32FC1 depth image holds), rendered
from the same pose. The camera pose is given in the ROS optical convention (z forward, x right,
y down), so a pixel and its depth give a 3-D point in the world as a real camera's would.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from math import atan2, hypot, radians, tan
from typing import Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.world import PhysicsWorld

CAMERA = "head_camera"
# MuJoCo's camera frame looks along -z with +y up; the optical frame looks along +z with +y down.
_MUJOCO_TO_OPTICAL = np.diag([1.0, -1.0, -1.0])


@dataclass(frozen=True)
class CameraFrame:
    rgb: np.ndarray            # (height, width, 3) uint8
    depth: Optional[np.ndarray]  # (height, width) float32 metres, or None
    fx: float
    fy: float
    cx: float
    cy: float
    position: np.ndarray       # camera centre, world frame
    rotation: np.ndarray       # optical frame axes as columns, world frame
    sim_time: float            # the physics' clock when it was rendered

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])

    @property
    def quaternion_xyzw(self) -> tuple[float, float, float, float]:
        """The optical frame's orientation as ROS writes it (x, y, z, w)."""
        q = np.zeros(4)
        mujoco.mju_mat2Quat(q, np.ascontiguousarray(self.rotation).reshape(9))
        w, x, y, z = (float(v) for v in q)
        return x, y, z, w

    def pixel_of(self, point: np.ndarray) -> Optional[tuple[float, float, float]]:
        """(u, v, depth) of a world point, or None if it is behind the camera."""
        local = self.rotation.T @ (np.asarray(point, float) - self.position)
        if local[2] <= 1e-6:
            return None
        return (self.fx * local[0] / local[2] + self.cx, self.fy * local[1] / local[2] + self.cy, float(local[2]))


def before_rendering() -> None:
    """Call before the first MuJoCo renderer of a process. Mesa's EGL driver loads its own LLVM
    when the first context is made; triton (torch imports it with torchvision, i.e. with the
    perception's detector) loaded after that crashes the process in its LLVM. Loaded first (0.1 s)
    both live together, in either order of use. A process without torch loses nothing."""
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401


class HeadCamera:
    """Renders the head camera of ``world`` (one renderer per instance: not thread-safe, as the
    world's data is not; the caller holds the world's lock)."""

    def __init__(self, world: PhysicsWorld, width: int = 320, height: int = 240, depth: bool = True):
        if width < 16 or height < 16:
            raise ValueError(f"a camera image of {width}x{height} pixels is too small (at least 16x16)")
        self.world = world
        self.width, self.height, self.with_depth = width, height, depth
        before_rendering()
        self._renderer = mujoco.Renderer(world.model, height, width)
        self._camera = world.model.camera(CAMERA).id
        fovy = radians(float(world.model.cam_fovy[self._camera]))
        # Square pixels: MuJoCo's fovy is vertical, the horizontal follows from the aspect ratio.
        self.fy = self.fx = (height / 2) / tan(fovy / 2)
        self.cx, self.cy = (width - 1) / 2, (height - 1) / 2

    def close(self) -> None:
        self._renderer.close()

    def render(self, data: Optional[mujoco.MjData] = None) -> CameraFrame:
        """A frame of the world's data, or of ``data`` (a copy of its state with its kinematics
        computed: sim_hardware renders from one, so that the physics need not wait)."""
        data = self.world.data if data is None else data
        self._renderer.update_scene(data, camera=self._camera)
        rgb = self._renderer.render().copy()
        depth = None
        if self.with_depth:
            self._renderer.enable_depth_rendering()
            try:
                self._renderer.update_scene(data, camera=self._camera)
                depth = self._renderer.render().astype(np.float32)
            finally:
                self._renderer.disable_depth_rendering()
        position = data.cam_xpos[self._camera].copy()
        rotation = data.cam_xmat[self._camera].reshape(3, 3) @ _MUJOCO_TO_OPTICAL
        return CameraFrame(rgb, depth, self.fx, self.fy, self.cx, self.cy, position, rotation, float(data.time))


def aim_point(world: PhysicsWorld, name: str) -> np.ndarray:
    """Where to look at ``name``: into a container (a fridge's shelves), else onto its top (a table,
    a counter), else its centre (an object, a person)."""
    thing = world.things[name]
    site = next((n for n in (thing.inner_site, thing.top_site) if world.has_site(n)), None)
    return world.site(site)[0] if site else world.position(name)


def head_angles(world: PhysicsWorld, point: np.ndarray) -> tuple[float, float]:
    """Pan and tilt (within the joints' limits) that point the head camera at ``point``."""
    base = world.base_pose()
    # From the tilt axis: the camera sits ahead of it, on the line it turns, so aiming that line
    # at the point aims the camera (up to its 2 cm offset above the axis).
    d = np.asarray(point, float) - world.data.xpos[world.model.body("head_tilt_link").id]
    pan = atan2(d[1], d[0]) - base.yaw
    pan = (pan + np.pi) % (2 * np.pi) - np.pi
    # The tilt joint turns about the head's y axis: a positive angle looks down.
    tilt = atan2(-d[2], hypot(d[0], d[1]))
    spec = world.spec
    return (float(np.clip(pan, *spec.head_pan)), float(np.clip(tilt, *spec.head_tilt)))
