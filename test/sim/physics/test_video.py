"""A video of a physics run: frames in simulated time, both views side by side, MP4 (PyAV)."""
from __future__ import annotations

from pathlib import Path

import av
import mujoco  # noqa: F401 - required (requirements/physics.txt): a broken install fails here, never skips
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.video import RunVideo

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def test_a_grasp_is_recorded_at_the_robots_real_speed(tmp_path):
    ex = PhysicsExecutor(load_scene(KITCHEN))
    video = RunVideo(tmp_path / "grasp.mp4", fps=2)
    video.attach(ex.world)
    captions = []
    ex.on_step = lambda text: (captions.append(text), setattr(video, "caption", text))
    sim0 = ex.world.sim_seconds
    assert ex.execute([PlanStep("grasp", ("cup0", "counter0", "counter0"), "robot0")]).success
    simulated = ex.world.sim_seconds - sim0
    video.close()
    assert captions == ["grasp robot0 cup0 counter0 counter0"] and video.dropped == 0
    with av.open(str(tmp_path / "grasp.mp4")) as container:
        stream = container.streams.video[0]
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    # One frame per half second of simulated time, both views side by side.
    assert abs(len(frames) - simulated * 2) <= 2 and video.frames == len(frames)
    assert (stream.width, stream.height) == (640, 240)
    # The views differ (the scene from above, the head camera), and the caption band is dark.
    last = frames[-1].astype(float)
    assert np.abs(last[:200, :320] - last[:200, 320:]).mean() > 10
    assert last[-20:].mean() < last[:200].mean()


def test_a_video_into_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no folder"):
        RunVideo(tmp_path / "nowhere" / "x.mp4")
