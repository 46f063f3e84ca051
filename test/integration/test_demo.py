"""`affplan demo` (what `make demo` runs) completes the sample task and says what answered."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def run_demo(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "affplan_ros.cli", "demo", *args], capture_output=True, text=True,
                          timeout=240, env={**os.environ, **(env or {})})


def test_demo_runs_the_sample_task_end_to_end():
    done = run_demo(env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "offline instruction interpreter" in out       # never pretends to be an LLM ...
    assert "AFFPLAN_LLM_BASE_URL" in out                  # ... and says how to configure one
    assert "5 nodes up in" in out and "each its own process" in out
    assert "round 1: EXPLORE refrigerator0" in out        # the apple is hidden in the fridge
    # A camera does not see through the closed door: Explore opens it, then looks.
    assert "succeeded: open(robot0, refrigerator0, refrigerator0)" in out
    assert "Explored refrigerator0: found apple0" in out
    assert "round 2: PLAN" in out
    assert "goal (and (inhand apple0 human0)); plan of 3 steps, cost 3" in out
    assert out.count(" succeeded: ") == 5                 # the explore move and door + 3 plan steps
    assert "SUCCESS (done)" in out and "answered by: offline" in out
    assert "apple0 in the hand of human0" in out          # the memory knows the result


def test_demo_runs_on_the_physics_world():
    """`affplan demo --physics` (make demo-physics): the same task, each step a MuJoCo motion."""
    done = run_demo("--physics", env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "as MuJoCo physics (every step a motion)" in out
    # The physics camera does not see into the closed fridge either: the robot opens it to look.
    assert "succeeded: open(robot0, refrigerator0, refrigerator0)" in out
    assert "Explored refrigerator0: found apple0" in out
    assert "succeeded: handover(robot0, human0, apple0)" in out and "SUCCESS (done)" in out
    assert "apple0 in the hand of human0" in out


def test_demo_runs_the_tiagos_own_nodes_on_the_simulated_tiago():
    """`affplan demo --robot tiago`: tiago.launch.xml sim:=true, the real robot's skill server on
    the MuJoCo Tiago++ (the door opened by its handle, the apple taken out and handed over)."""
    done = run_demo("--robot", "tiago", env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "7 nodes up in" in out and "sim_hardware, robot_skills" in out and "the Tiago++'s own nodes" in out
    assert "succeeded: open(robot0, refrigerator0, refrigerator0)" in out
    assert "succeeded: handover(robot0, human0, apple0)" in out and "SUCCESS (done)" in out


@pytest.mark.parametrize("extra", [["--physics"], ["--video", "run.mp4"]])
def test_demo_refuses_options_of_the_built_in_robot_for_the_tiago(extra):
    done = run_demo("--robot", "tiago", *extra)
    assert done.returncode == 2 and "are for --robot sim" in done.stderr and "Traceback" not in done.stderr


def test_demo_declines_a_task_the_offline_interpreter_does_not_understand():
    done = run_demo("--task", "make me a sandwich", env={"AFFPLAN_LLM_BASE_URL": ""})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "declined" in done.stdout and "nothing was planned or executed" in done.stdout
    assert "AFFPLAN_LLM_BASE_URL" in done.stdout
    assert "step 1/" not in done.stdout


def test_demo_records_a_playable_video_of_the_physics_run(tmp_path):
    """`affplan demo --physics --video FILE` (make demo-video): the run as an MP4 that plays, its
    length the simulated time of the motions, and a contact sheet of the steps beside it. The
    task is a shorter one than the sample's (22 s of motion, not 47: rendering takes ~0.1 s a
    frame here), so the test stays near 30 s."""
    import re

    import av
    import cv2

    from affplan_ros.sim.physics.video import SHEET_LABEL_PX, SHEET_SCALE

    path = tmp_path / "demo.mp4"
    # Only the physics world is recorded: said before anything starts.
    refused = run_demo("--video", str(path), env={"AFFPLAN_LLM_BASE_URL": ""})
    assert refused.returncode == 2 and "add --physics" in refused.stderr and not refused.stdout
    done = run_demo("--physics", "--video", str(path), "--task", "Bring me the cup", env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "SUCCESS (done)" in out and f"recording {path}" in out
    assert "plan of 3 steps, cost 3: grasp(robot0, cup0, counter0, counter0); move(robot0, counter0, human0); " \
           "handover(robot0, human0, cup0)" in out
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.decode(video=0))
        seconds = float(stream.duration * stream.time_base)
    # sim_world's account: 5 frames per simulated second of the motions, nothing dropped.
    said = re.search(r"finished: (\d+) frames \(([\d.]+) s\) of ([\d.]+) s of simulated motion\n", out)
    assert said, out
    assert int(said[1]) == frames > 60 and abs(seconds - frames / 5) < 0.5
    assert abs(float(said[3]) - seconds) < 0.5
    assert f"{path}: {frames} frames of 640x240, {seconds:.1f} s" in out
    # One key frame per step, three to a row: the three steps in one row.
    sheet = cv2.imread(str(path.with_suffix(".png")))
    assert sheet.shape == (round(240 * SHEET_SCALE) + SHEET_LABEL_PX, 3 * round(640 * SHEET_SCALE), 3)


def test_demo_answers_a_question_from_memory_without_moving():
    """A question through the running suite (ExecuteTask, offline interpreter): the answer comes
    back in the action's result, and nothing is planned or executed."""
    done = run_demo("--task", "Where is the cup?", env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "answer  cup0 is on counter0 (I have not looked at refrigerator0 yet)." in out
    assert " succeeded: " not in out and "step 1/" not in out and "final plan" not in out


@pytest.mark.parametrize("task, said", [
    # Affordances: the water comes in something to drink from, and the person gets it.
    ("bring me something to drink", ["round 1: PLAN", "(and (liquid_in water0 cup0) (inhand cup0 human0))",
                                     "handover robot0 human0 cup0"]),
    # Letters outside ASCII are letters; the emoji only separates words.
    ("bring me the cúp ☕", ["(and (inhand cup0 human0))", "handover robot0 human0 cup0"]),
    # No sink on the map: the fridge is explored for the apple only; the bucket is offered at once.
    ("put the apple on the table and the cup in the sink",
     ["round 1: EXPLORE refrigerator0", "round 2: SUGGEST_ALTERNATIVE sink",
      "There is no sink here. May I use the bucket instead?", "(and (on apple0 table0) (in cup0 bucket0))"]),
])
def test_demo_understands_requests_through_affordances_and_without_a_sink(task, said):
    done = run_demo("--task", task, env={"AFFPLAN_LLM_BASE_URL": ""})
    out = done.stdout
    assert done.returncode == 0 and "SUCCESS (done)" in out, out + done.stderr
    assert all(s in out for s in said), out
    assert "round 4" not in out
