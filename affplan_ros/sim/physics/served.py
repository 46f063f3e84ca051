"""The physics world behind sim_world's skill action servers (``physics:=true``).

sim_world turns a skill goal into the plan steps it may stand for (config/skills.yaml) and hands
them to its world. The symbolic world checks their preconditions on its ground truth; this one
runs the step's motions on the MuJoCo world (:class:`PhysicsExecutor`), and the physics says
whether it worked. It is also the camera: ``observe`` reads what stands where from the physics
state and does not see into a closed container.

One lock serialises everything: MuJoCo's data is not thread-safe, and a real robot does one
motion at a time too. A step, once started, runs to its end (seconds of wall time at tens of
times real speed); a cancel is honoured before it starts.

Given a :class:`RunVideo`, the world is recorded while it moves (every world a reset builds
too), each step's name as the caption.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional, Sequence

from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.records import Observation
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.sim.physics.camera import CameraFrame, HeadCamera
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.video import RunVideo
from affplan_ros.sim.world import Candidate, Outcome


class PhysicsSkillWorld:
    """The world sim_world serves skills on, when it is the physics (``SimWorld``'s interface:
    ``task``, ``lock``, ``execute(candidates)``, ``reset()``; and the camera's: ``scene``,
    ``observe``, ``location_of_robot``)."""

    def __init__(self, make_executor: Callable[[], PhysicsExecutor], video: Optional[RunVideo] = None):
        self._make_executor = make_executor
        self.video = video
        # Re-entrant: sim_world's camera holds it around observe(), which takes it too.
        self.lock = threading.RLock()
        started = time.monotonic()
        self.executor = self._make()
        self.build_seconds = time.monotonic() - started

    def _make(self) -> PhysicsExecutor:
        executor = self._make_executor()
        if self.video is not None:
            self.video.attach(executor.world)
            executor.on_step = self._caption
        return executor

    def _caption(self, text: str) -> None:
        if self.video is not None:
            self.video.caption = text

    @property
    def task(self):
        return self.executor.task

    @property
    def scene(self) -> Scene:
        return self.executor.scene

    @property
    def warnings(self) -> list[str]:
        """What the physics world could not build as the scene says."""
        return list(self.executor.world.warnings)

    def execute(self, candidates: Sequence[Candidate]) -> Outcome:
        """Run the first candidate's motions (sim_world puts the step the executor named first;
        the others differ only in what the symbolic world would check, e.g. grasp or take_out,
        and the physics judges the motion itself, not the name)."""
        if not candidates:
            return Outcome(False, failure=Failure(FailureCode.INVALID, "", "the skill goal matches no known action",
                                                  "its fields do not fill any capability of the domain"))
        action, agent, args = candidates[0]
        with self.lock:
            result = self.executor.execute([PlanStep(action, tuple(args), agent)])
        return Outcome(True, action) if result.success else Outcome(False, failure=result.failure)

    def reset(self) -> None:
        """The world as the scenario starts: built again (the robot, every body and joint)."""
        with self.lock:
            self.executor = self._make()

    def observe(self, location: str, *, see_inside_closed: bool = False) -> Observation:
        with self.lock:
            return self.executor.observe(location, see_inside_closed=see_inside_closed)

    def location_of_robot(self) -> Optional[str]:
        with self.lock:
            return self.executor.location_of_robot()

    def clear_view(self) -> list[str]:
        """Free arms up out of the head camera's view (``PhysicsExecutor.clear_view``)."""
        with self.lock:
            return self.executor.clear_view()

    def end_view(self, sides: Sequence[str]) -> None:
        with self.lock:
            self.executor.end_view(sides)

    def look_at(self, location: str, pan_offset: float = 0.0) -> bool:
        """Point the head camera at ``location``'s furniture (what Explore looks at), turned
        ``pan_offset`` radians to the left; False if the head could not get there."""
        with self.lock:
            self._caption(f"look at {location}")
            return self.executor.look_at(location, pan_offset)


class FrameStream:
    """Renders the head camera of a served physics world at ``rate_hz`` in a thread of its own
    (an EGL context belongs to the thread that made it) and hands each frame to ``publish``.
    A world rebuilt by ``reset`` gets a new renderer. ``stop()`` ends the thread."""

    def __init__(self, world: PhysicsSkillWorld, publish: Callable[[CameraFrame], None], rate_hz: float,
                 width: int = 320, height: int = 240, on_error: Callable[[str], None] = print):
        if rate_hz <= 0:
            raise ValueError(f"camera rate {rate_hz} Hz: must be above 0")
        self.world, self.publish, self.period = world, publish, 1.0 / rate_hz
        self.width, self.height, self.on_error = width, height, on_error
        self.frames = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="physics_camera", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        camera: Optional[HeadCamera] = None
        next_at = time.monotonic()
        try:
            while not self._stop.is_set():
                with self.world.lock:
                    world = self.world.executor.world
                    if camera is None or camera.world is not world:
                        if camera is not None:
                            camera.close()
                        camera = HeadCamera(world, self.width, self.height)
                    frame = camera.render()
                self.publish(frame)
                self.frames += 1
                next_at = max(next_at + self.period, time.monotonic())
                self._stop.wait(next_at - time.monotonic())
        except Exception as exc:  # noqa: BLE001 - said once; the world and the skills go on without frames
            self.on_error(f"the physics camera stopped: {type(exc).__name__}: {exc}")
        finally:
            if camera is not None:
                camera.close()
