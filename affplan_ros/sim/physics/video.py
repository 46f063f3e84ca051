"""A video of what the robot did in the physics world: a third-person view and the annotated head
camera side by side, the current step as a caption, written as MP4 (PyAV, H.264), and a contact
sheet of it (PNG: the first frame of each step in a grid, each with its caption).

Frames are taken in simulated time (``fps`` frames per simulated second), not wall time: the
physics runs tens of times faster than real time, so the video plays at the robot's real speed.
The stepping thread only copies the state (joint positions, mocap poses: a few hundred numbers)
into a bounded queue; a thread of its own renders and encodes, because an EGL context belongs to
the thread that made it and rendering is slower than the physics. A full queue drops frames (and
counts them) rather than slow the robot down.

"Annotated": the head camera's frame carries the name of every scene thing it sees, at its
projected centre. What it sees is the physics' ground truth: a ray from the camera to the
thing's centre first meets one of the thing's own visible geoms (so nothing is named behind a
closed door or another body).

The MP4 and the sheet are written under a temporary name and renamed when complete, so a file at
``path`` is always a finished one (its container's trailer written), even if the process is
killed while rendering.
"""
from __future__ import annotations

import math
import os
import queue
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable, Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.camera import _MUJOCO_TO_OPTICAL, CAMERA, CameraFrame, before_rendering
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

QUEUE_FRAMES = 600          # snapshots waiting to be rendered before new ones are dropped
X264_PRESET = "veryfast"    # a quarter of the default's encoding time per frame, here; a slightly larger file
HOLD_MAX_S = 10.0           # the longest one state is held on screen for a jump of the physics' clock
POLL_S = 0.1                # how often the rendering thread looks whether it was asked to finish
CAPTION_BAND_PX = 22        # the dark band along the bottom of a frame that holds the caption
SHEET_COLUMNS = 3           # key frames per row of the contact sheet
SHEET_SCALE = 0.75          # a key frame's size on the sheet, of the video's frame size
SHEET_LABEL_PX = 18         # the band above each key frame with its step's number and caption
LABELLED = {ThingKind.OBJECT: (255, 230, 90), ThingKind.FURNITURE: (150, 220, 255),
            ThingKind.AGENT: (255, 160, 200)}     # what the head camera names, and in which colour
VISIBLE_GROUPS = np.array([1, 1, 1, 0, 0, 0], dtype=np.uint8)   # the geom groups MuJoCo draws


@dataclass(frozen=True)
class Labels:
    """What the head camera may name in one model: scene things' geoms and colours."""

    names: tuple[str, ...]
    colours: tuple[tuple[int, int, int], ...]
    geoms: tuple[np.ndarray, ...]     # each thing's geom ids
    owner: np.ndarray                 # geom id -> index into names, -1 for none


@dataclass(frozen=True)
class _Snapshot:
    qpos: np.ndarray
    mocap_pos: np.ndarray
    mocap_quat: np.ndarray
    time: float
    caption: str
    repeat: int                       # frames it stands for (the physics moved on by as many periods)
    step: int                         # which step (caption) this is: its first frame is a key frame
    world: int                        # which attached world (ids of freed objects are reused)
    model: mujoco.MjModel
    labels: Labels


@dataclass(frozen=True)
class KeyFrame:
    step: int
    caption: str
    time: float
    image: np.ndarray


class RunVideo:
    """Record ``world`` (and the worlds attached later, e.g. after a reset) into ``path`` (.mp4);
    the contact sheet goes to ``sheet`` (default: ``path`` with .png). Setting ``caption`` starts
    a new step (its first frame goes on the sheet)."""

    def __init__(self, path: str | Path, fps: float = 10.0, width: int = 320, height: int = 240,
                 on_error: Callable[[str], None] = print, sheet: str | Path | None = None):
        if fps <= 0:
            raise ValueError(f"video frame rate {fps}: must be above 0")
        self.path = Path(path)
        if self.path.suffix.lower() != ".mp4":
            raise ValueError(f"cannot write the video {self.path}: its name must end in .mp4")
        if not self.path.parent.is_dir():
            raise ValueError(f"cannot write the video {self.path}: no folder {self.path.parent}")
        self.sheet = Path(sheet) if sheet is not None else self.path.with_suffix(".png")
        self.fps, self.width, self.height, self.on_error = fps, width, height, on_error
        self.frames = 0
        self.dropped = 0
        self.key_frames: list[KeyFrame] = []
        self.error = ""
        self._caption, self._step = "", 0
        # Per attached world (by the order attached): when its next frame is due, the simulated
        # time of its first and last frame.
        self._next: list[float] = []
        self._span: list[tuple[float, float]] = []
        self._queue: queue.Queue[_Snapshot] = queue.Queue(QUEUE_FRAMES)
        self._finish = threading.Event()
        self._deadline = math.inf       # monotonic time after which what is queued is dropped
        self._thread = threading.Thread(target=self._run, name="physics_video", daemon=True)
        self._thread.start()

    @property
    def caption(self) -> str:
        return self._caption

    @caption.setter
    def caption(self, text: str) -> None:
        self._caption, self._step = text, self._step + 1

    @property
    def seconds(self) -> float:
        """The video's length so far (frames at ``fps``: the simulated seconds recorded)."""
        return self.frames / self.fps

    @property
    def simulated_seconds(self) -> float:
        """The simulated time the recorded worlds moved while recorded (each world's first frame
        to its last, a frame's time included): what the video's length stands for."""
        return sum(last - first + 1.0 / self.fps for first, last in self._span if last >= first)

    @property
    def pending(self) -> int:
        """Snapshots taken and not yet rendered."""
        return self._queue.qsize()

    @property
    def done(self) -> bool:
        """The file is finished (or the recording stopped on an error)."""
        return not self._thread.is_alive()

    # -- the stepping side ----------------------------------------------------------------------
    def attach(self, world: PhysicsWorld) -> None:
        """Take frames of ``world`` from now on (called from its stepping)."""
        key, labels = len(self._next), labels_of(world)
        self._next.append(-math.inf)
        self._span.append((math.inf, -math.inf))
        world.watchers.append(lambda: self._snap(world, key, labels))

    def _snap(self, world: PhysicsWorld, key: int, labels: Labels) -> None:
        d = world.data
        due, period = self._next[key], 1.0 / self.fps
        if d.time < due or self._finish.is_set():
            return
        if due == -math.inf:
            due = d.time   # the world's first frame: the time it ran before it was attached is not recorded
        # A step may take the physics past several frames' times at once (a settle of 0.3-1 s):
        # this state stands for all of them, so the video keeps the robot's real speed (up to
        # HOLD_MAX_S). The next frame is due whole periods on, so a few ms over add up to nothing.
        repeat = 1 + int((d.time - due) / period)
        self._next[key] = due + repeat * period
        repeat = min(repeat, max(1, int(HOLD_MAX_S * self.fps)))
        self._span[key] = (min(self._span[key][0], float(d.time)), float(d.time))
        try:
            self._queue.put_nowait(_Snapshot(d.qpos.copy(), d.mocap_pos.copy(), d.mocap_quat.copy(), float(d.time),
                                             self._caption, repeat, self._step, key, world.model, labels))
        except queue.Full:
            self.dropped += repeat

    def finish(self, timeout: Optional[float] = None) -> None:
        """Stop taking frames and finish the file once what is queued is rendered (at most
        ``timeout`` s from now; what is left then is dropped). Does not wait: see ``done``."""
        if timeout is not None:
            self._deadline = min(self._deadline, time.monotonic() + timeout)
        self._finish.set()

    def close(self, timeout: float = 120.0) -> None:
        """Render what is queued (at most ``timeout`` s), finish the file and the sheet; waits."""
        self.finish(timeout)
        # The encoder's flush and the sheet come after the deadline: seconds at most.
        self._thread.join(timeout + 30.0)

    # -- the rendering side ---------------------------------------------------------------------
    def _run(self) -> None:
        import av

        part = self.path.with_name(self.path.name + ".part")
        container, renderers = None, {}
        try:
            container = av.open(str(part), "w", format="mp4")
            stream = container.add_stream("libx264", rate=Fraction(self.fps).limit_denominator(1000))
            stream.width, stream.height, stream.pix_fmt = 2 * self.width, self.height, "yuv420p"
            stream.options = {"preset": X264_PRESET}
            last_step = None
            while True:
                try:
                    snap = self._queue.get(timeout=POLL_S)
                except queue.Empty:
                    if self._finish.is_set():
                        break
                    continue
                if time.monotonic() > self._deadline:
                    self.dropped += snap.repeat
                    continue
                image = self._render(snap, renderers)
                if snap.step != last_step:
                    self.key_frames.append(KeyFrame(snap.step, snap.caption, snap.time, image))
                    last_step = snap.step
                for _ in range(snap.repeat):
                    for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                        container.mux(packet)
                    self.frames += 1
            for packet in stream.encode():
                container.mux(packet)
            container.close()
            container = None
            if self.frames:  # nothing rendered: no file (the muxer writes nothing without a frame)
                os.replace(part, self.path)
            if self.key_frames:
                _write_png(self.sheet, contact_sheet(self.key_frames))
        except Exception as exc:  # noqa: BLE001 - said once; the robot goes on without a video
            self.error = f"the video {self.path} stopped: {type(exc).__name__}: {exc}"
            self.on_error(self.error)
        finally:
            _close_renderers(renderers)
            if container is not None:
                container.close()
            if part.exists():
                part.unlink()

    def _render(self, snap: _Snapshot, renderers: dict[int, tuple]) -> np.ndarray:
        key = snap.world
        if key not in renderers:
            _close_renderers(renderers)  # a newly attached world replaced the others (a reset)
            before_rendering()
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
        seen = _annotate(head.render(), snap.model, data, snap.labels)
        image = np.concatenate([third.render(), seen], axis=1)
        return _caption(image, f"t={snap.time:5.1f} s  {snap.caption}")


def _close_renderers(renderers: dict[int, tuple]) -> None:
    for _data, third, head in renderers.values():
        third.close()
        head.close()
    renderers.clear()


def labels_of(world: PhysicsWorld) -> Labels:
    things = [t for t in world.things.values() if t.kind in LABELLED and t.geom_ids]
    owner = np.full(world.model.ngeom, -1, dtype=int)
    for i, thing in enumerate(things):
        owner[list(thing.geom_ids)] = i
    return Labels(tuple(t.name for t in things), tuple(LABELLED[t.kind] for t in things),
                   tuple(np.array(t.geom_ids, dtype=int) for t in things), owner)


def visible_things(model: mujoco.MjModel, data: mujoco.MjData, labels: Labels, width: int,
                   height: int) -> list[tuple[int, int, int]]:
    """(index into ``labels``, u, v) of each labelled thing the head camera sees in a ``width`` x
    ``height`` image (``data`` forward-computed): its centre projects into the image above the
    caption band, and the ray from the camera to it first meets one of its own visible geoms."""
    cam = model.camera(CAMERA).id
    f = (height / 2) / math.tan(math.radians(float(model.cam_fovy[cam])) / 2)   # square pixels, fovy vertical
    frame = CameraFrame(np.zeros((height, width, 3), np.uint8), None, f, f, (width - 1) / 2, (height - 1) / 2,
                        data.cam_xpos[cam].copy(), data.cam_xmat[cam].reshape(3, 3) @ _MUJOCO_TO_OPTICAL,
                        float(data.time))
    hit = np.zeros(1, dtype=np.int32)
    seen = []
    for i in range(len(labels.names)):
        centre = data.geom_xpos[labels.geoms[i]].mean(axis=0)
        pixel = frame.pixel_of(centre)
        if pixel is None or not (0 <= pixel[0] < width and 0 <= pixel[1] < height - CAPTION_BAND_PX):
            continue
        mujoco.mj_ray(model, data, frame.position, centre - frame.position, VISIBLE_GROUPS, 1,
                      int(model.cam_bodyid[cam]), hit)
        if hit[0] >= 0 and labels.owner[hit[0]] == i:
            seen.append((i, int(pixel[0]), int(pixel[1])))
    return seen


def _annotate(image: np.ndarray, model: mujoco.MjModel, data: mujoco.MjData, labels: Labels) -> np.ndarray:
    """The head camera's ``image`` with the names of the things it sees at their projected centres."""
    import cv2

    out = np.ascontiguousarray(image)
    h, w = out.shape[:2]
    for i, u, v in visible_things(model, data, labels, w, h):
        name, colour = labels.names[i], labels.colours[i]
        cv2.circle(out, (u, v), 2, colour, -1, cv2.LINE_AA)
        x = min(max(u + 4, 0), max(0, w - 7 * len(name)))
        cv2.putText(out, name, (x, v - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, name, (x, v - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.35, colour, 1, cv2.LINE_AA)
    return out


def _caption(image: np.ndarray, text: str) -> np.ndarray:
    """The caption in a dark band along the bottom (OpenCV's text, as the perception node's)."""
    import cv2

    out = np.ascontiguousarray(image)
    h = out.shape[0]
    out[h - CAPTION_BAND_PX:, :] = (out[h - CAPTION_BAND_PX:, :] * 0.3).astype(np.uint8)
    cv2.putText(out, text[:110], (6, h - 7), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def contact_sheet(key_frames: list[KeyFrame], columns: int = SHEET_COLUMNS, scale: float = SHEET_SCALE) -> np.ndarray:
    """The key frames in a grid, ``columns`` to a row, each ``scale`` of its size under a band
    with its number and caption (RGB)."""
    import cv2

    if not key_frames:
        raise ValueError("a contact sheet needs at least one key frame")
    h0, w0 = key_frames[0].image.shape[:2]
    tw, th = int(round(w0 * scale)), int(round(h0 * scale))
    columns = min(columns, len(key_frames))
    rows = -(-len(key_frames) // columns)
    cell_h = th + SHEET_LABEL_PX
    sheet = np.full((rows * cell_h, columns * tw, 3), 24, dtype=np.uint8)
    for n, key in enumerate(key_frames):
        r, c = divmod(n, columns)
        y, x = r * cell_h, c * tw
        sheet[y + SHEET_LABEL_PX:y + cell_h, x:x + tw] = cv2.resize(key.image, (tw, th), interpolation=cv2.INTER_AREA)
        text = f"{n + 1}. t={key.time:.1f} s  {key.caption or 'start'}"
        cv2.putText(sheet, text[:int(tw / 6.5)], (x + 4, y + SHEET_LABEL_PX - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (255, 255, 255), 1, cv2.LINE_AA)
    return sheet


def _write_png(path: Path, image: np.ndarray) -> None:
    """``image`` (RGB) as a PNG at ``path``, written whole under another name and then renamed."""
    import cv2

    ok, data = cv2.imencode(".png", np.ascontiguousarray(image[:, :, ::-1]), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    if not ok:
        raise ValueError(f"OpenCV could not encode the contact sheet {path}")
    part = path.with_name(path.name + ".part")
    part.write_bytes(data.tobytes())
    os.replace(part, path)
