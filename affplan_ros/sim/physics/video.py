"""A video of what the robot did in the physics world: a third-person view and the head camera
side by side, the current step as a caption, written as MP4 (PyAV, H.264).

Frames are taken in simulated time (``fps`` frames per simulated second), not wall time: the
physics runs tens of times faster than real time, so the video plays at the robot's real speed.
The stepping thread only copies the state (joint positions, mocap poses: a few hundred numbers)
into a bounded queue; a thread of its own renders and encodes, because an EGL context belongs to
the thread that made it and rendering is slower than the physics. A full queue drops frames (and
counts them) rather than slow the robot down.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.camera import CAMERA
from affplan_ros.sim.physics.world import PhysicsWorld

QUEUE_FRAMES = 600     # snapshots waiting to be rendered before new ones are dropped


@dataclass(frozen=True)
class _Snapshot:
    qpos: np.ndarray
    mocap_pos: np.ndarray
    mocap_quat: np.ndarray
    time: float
    caption: str
    model: mujoco.MjModel


class RunVideo:
    """Record ``world`` (and the worlds attached later, e.g. after a reset) into ``path``."""

    def __init__(self, path: str | Path, fps: float = 10.0, width: int = 320, height: int = 240,
                 on_error: Callable[[str], None] = print):
        if fps <= 0:
            raise ValueError(f"video frame rate {fps}: must be above 0")
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise ValueError(f"cannot write the video {self.path}: no folder {self.path.parent}")
        self.fps, self.width, self.height, self.on_error = fps, width, height, on_error
        self.caption = ""
        self.frames = 0
        self.dropped = 0
        self._next: dict[int, float] = {}
        self._queue: queue.Queue[Optional[_Snapshot]] = queue.Queue(QUEUE_FRAMES)
        self._thread = threading.Thread(target=self._run, name="physics_video", daemon=True)
        self._thread.start()

    # -- the stepping side ----------------------------------------------------------------------
    def attach(self, world: PhysicsWorld) -> None:
        """Take frames of ``world`` from now on (called from its stepping)."""
        world.watchers.append(lambda: self._snap(world))

    def _snap(self, world: PhysicsWorld) -> None:
        d = world.data
        due = self._next.get(id(world), 0.0)
        if d.time < due:
            return
        self._next[id(world)] = d.time + 1.0 / self.fps
        try:
            self._queue.put_nowait(_Snapshot(d.qpos.copy(), d.mocap_pos.copy(), d.mocap_quat.copy(), float(d.time),
                                             self.caption, world.model))
        except queue.Full:
            self.dropped += 1

    def close(self, timeout: float = 120.0) -> None:
        """Render what is queued (at most ``timeout`` s) and finish the file."""
        self._queue.put(None)
        self._thread.join(timeout)

    # -- the rendering side ---------------------------------------------------------------------
    def _run(self) -> None:
        import av

        container, stream = None, None
        renderers: dict[int, tuple] = {}
        try:
            container = av.open(str(self.path), "w")
            stream = container.add_stream("libx264", rate=int(round(self.fps)))
            stream.width, stream.height, stream.pix_fmt = 2 * self.width, self.height, "yuv420p"
            while True:
                snap = self._queue.get()
                if snap is None:
                    break
                image = self._render(snap, renderers)
                for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                    container.mux(packet)
                self.frames += 1
            for packet in stream.encode():
                container.mux(packet)
        except Exception as exc:  # noqa: BLE001 - said once; the robot goes on without a video
            self.on_error(f"the video {self.path} stopped: {type(exc).__name__}: {exc}")
        finally:
            for _data, third, head in renderers.values():
                third.close()
                head.close()
            if container is not None:
                container.close()

    def _render(self, snap: _Snapshot, renderers: dict[int, tuple]) -> np.ndarray:
        key = id(snap.model)
        if key not in renderers:
            renderers[key] = (mujoco.MjData(snap.model), mujoco.Renderer(snap.model, self.height, self.width),
                              mujoco.Renderer(snap.model, self.height, self.width))
        data, third, head = renderers[key]
        data.qpos[:], data.mocap_pos[:], data.mocap_quat[:], data.time = (snap.qpos, snap.mocap_pos,
                                                                          snap.mocap_quat, snap.time)
        mujoco.mj_forward(snap.model, data)
        view = mujoco.MjvCamera()
        # From behind the robot and high above it (above the 2.4 m walls), following the base.
        view.lookat[:] = data.body("base").xpos + np.array([0.0, 0.0, 0.6])
        view.distance, view.elevation = 3.4, -62.0
        view.azimuth = float(np.degrees(data.qpos[snap.model.joint("base_yaw").qposadr[0]])) + 180.0 + 30.0
        third.update_scene(data, camera=view)
        head.update_scene(data, camera=CAMERA)
        image = np.concatenate([third.render(), head.render()], axis=1)
        return _caption(image, f"t={snap.time:5.1f} s  {snap.caption}")


def _caption(image: np.ndarray, text: str) -> np.ndarray:
    """The caption in a dark band along the bottom (OpenCV's text, as the perception node's)."""
    import cv2

    out = np.ascontiguousarray(image)
    h = out.shape[0]
    out[h - 22:, :] = (out[h - 22:, :] * 0.3).astype(np.uint8)
    cv2.putText(out, text[:110], (6, h - 7), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (255, 255, 255), 1, cv2.LINE_AA)
    return out
