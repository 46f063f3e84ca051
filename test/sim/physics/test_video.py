"""A video of a physics run: frames in simulated time, both views side by side, the head camera
annotated with what it sees, MP4 (PyAV), and a contact sheet of the steps."""
from __future__ import annotations

from pathlib import Path

import av
import cv2
import mujoco
import numpy as np
import pytest

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.served import PhysicsSkillWorld
from affplan_ros.sim.physics.video import (
    SHEET_LABEL_PX,
    SHEET_SCALE,
    RunVideo,
    labels_of,
    visible_things,
)

KITCHEN = Path(__file__).resolve().parents[3] / "config" / "scenarios" / "kitchen.txt"


def decoded(path: Path) -> tuple[list[np.ndarray], av.video.stream.VideoStream, float]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
        return frames, stream, float(stream.duration * stream.time_base)


def test_a_grasp_is_recorded_at_the_robots_real_speed_with_a_contact_sheet(tmp_path):
    ex = PhysicsExecutor(load_scene(KITCHEN))
    video = RunVideo(tmp_path / "grasp.mp4", fps=2)
    video.attach(ex.world)
    captions = []
    ex.on_step = lambda text: (captions.append(text), setattr(video, "caption", text))
    sim0 = ex.world.sim_seconds
    assert ex.execute([PlanStep("grasp", ("cup0", "counter0", "counter0"), "robot0")]).success
    simulated = ex.world.sim_seconds - sim0
    video.close()
    assert captions == ["grasp robot0 cup0 counter0 counter0"] and video.dropped == 0 and not video.error
    frames, stream, seconds = decoded(tmp_path / "grasp.mp4")
    # One frame per half second of simulated time, both views side by side; the file's length
    # is the simulated time.
    assert abs(len(frames) - simulated * 2) <= 2 and video.frames == len(frames)
    assert abs(seconds - simulated) <= 1.0 and video.seconds == len(frames) / 2
    assert (stream.width, stream.height) == (640, 240)
    # The views differ (the scene from above, the head camera), and the caption band is dark.
    last = frames[-1].astype(float)
    assert np.abs(last[:200, :320] - last[:200, 320:]).mean() > 10
    assert last[-20:].mean() < last[:200].mean()
    # The sheet: the first frame of the one step, under its caption band.
    sheet = cv2.imread(str(tmp_path / "grasp.png"))
    assert sheet.shape == (round(240 * SHEET_SCALE) + SHEET_LABEL_PX, round(640 * SHEET_SCALE), 3)
    assert [k.caption for k in video.key_frames] == captions and not list(tmp_path.glob("*.part"))


@pytest.mark.slow
def test_the_served_world_is_recorded_across_a_reset_and_the_head_camera_names_only_what_it_sees(tmp_path):
    scene = load_scene(KITCHEN)
    video = RunVideo(tmp_path / "served.mp4", fps=2)
    world = PhysicsSkillWorld(lambda: PhysicsExecutor(scene), video)
    w = world.executor.world
    labels = labels_of(w)

    def seen() -> set[str]:
        mujoco.mj_forward(w.model, w.data)
        return {labels.names[i] for i, _u, _v in visible_things(w.model, w.data, labels, 320, 240)}

    assert world.look_at("counter0") and {"cup0", "sponge0"} <= seen()
    # The apple in the closed refrigerator is in the picture's frame but behind the door.
    assert world.execute([("move", "robot0", ("counter0", "refrigerator0"))]).success
    assert world.look_at("refrigerator0")
    assert "refrigerator0" in seen() and "apple0" not in seen()
    assert world.execute([("open", "robot0", ("refrigerator0", "refrigerator0"))]).success
    assert world.look_at("refrigerator0") and "apple0" in seen()
    world.reset()   # a new world: recorded from its first motion on
    assert world.execute([("grasp", "robot0", ("cup0", "counter0", "counter0"))]).success
    video.close()
    # A key frame per step that moved for a frame's time (the last look may not: the head
    # pointed nearly there); the grasp's is from the rebuilt world, whose clock starts again.
    keys = video.key_frames
    assert [k.caption for k in keys[:4]] == ["look at counter0", "move robot0 counter0 refrigerator0",
                                             "look at refrigerator0", "open robot0 refrigerator0 refrigerator0"]
    assert [k.caption for k in keys[4:-1]] in ([], ["look at refrigerator0"])
    assert keys[-1].caption == "grasp robot0 cup0 counter0 counter0" and keys[-1].time < 1.0 < keys[-2].time
    frames, _stream, _seconds = decoded(tmp_path / "served.mp4")
    assert len(frames) == video.frames > 10
    # Five or six key frames, three to a row: a sheet of 2 x 3 cells.
    sheet = cv2.imread(str(tmp_path / "served.png"))
    assert sheet.shape == (2 * (round(240 * SHEET_SCALE) + SHEET_LABEL_PX), 3 * round(640 * SHEET_SCALE), 3)


def test_closing_with_a_deadline_drops_the_rest_and_still_finishes_the_file(tmp_path):
    ex = PhysicsExecutor(load_scene(KITCHEN))
    video = RunVideo(tmp_path / "cut.mp4", fps=40)   # hundreds of frames: more than a second renders
    video.attach(ex.world)
    assert ex.execute([PlanStep("grasp", ("cup0", "counter0", "counter0"), "robot0")]).success
    video.close(timeout=1.5)
    assert video.done and video.dropped > 0 and video.frames >= 1
    frames, _stream, _seconds = decoded(tmp_path / "cut.mp4")
    assert len(frames) == video.frames and not list(tmp_path.glob("*.part"))


def test_a_video_nobody_moved_in_writes_no_file(tmp_path):
    video = RunVideo(tmp_path / "still.mp4")
    video.close()
    assert video.done and video.frames == 0 and not video.error and not list(tmp_path.iterdir())


@pytest.mark.parametrize("name, problem", [("nowhere/x.mp4", "no folder"), ("x.avi", "must end in .mp4")])
def test_a_video_that_cannot_be_written_is_refused(tmp_path, name, problem):
    with pytest.raises(ValueError, match=problem):
        RunVideo(tmp_path / name)


@pytest.mark.shared
def test_bench_physics_video_writes_a_contact_sheet_per_case_into_the_summary(shared_datasets, tmp_path):
    import json

    from affplan_ros.cli import main

    out, videos = tmp_path / "out", tmp_path / "videos"
    data = shared_datasets / "autogpt_p" / "autogpt_p" / "data"
    # #16: one move, the shortest case.
    assert main(["bench", "physics", "--data", str(data), "--set", "simple_task", "--case", "simple_task#16",
                 "--jobs", "1", "--video", str(videos), "--out", str(out)]) == 0
    case = json.loads((out / "results.json").read_text())["cases"][0]
    assert case["success"] and case["video"]["frames"] > 5 and case["video"]["dropped"] == 0
    assert case["video"]["sheet"] == str(videos / "simple_task_16.png")
    frames, _stream, _seconds = decoded(videos / "simple_task_16.mp4")
    assert len(frames) == case["video"]["frames"]
    # One step, one key frame: a sheet of one cell, linked from summary.md relative to it.
    sheet = cv2.imread(str(videos / "simple_task_16.png"))
    assert sheet.shape == (round(240 * SHEET_SCALE) + SHEET_LABEL_PX, round(640 * SHEET_SCALE), 3)
    summary = (out / "summary.md").read_text()
    assert "## Contact sheets (1:" in summary and "![simple_task#16](../videos/simple_task_16.png)" in summary
    assert "[video](../videos/simple_task_16.mp4)" in summary
