"""``affplan demo``: the suite up on the simulated kitchen, one sample task, a readable transcript.

What ``make demo`` runs: ``affplan up --robot sim`` (every node its own process, talking over
DDS; ``make demo-physics`` adds ``--physics``: the robot is the MuJoCo world; ``--robot tiago``:
the Tiago++'s own nodes on the simulated Tiago++, ``tiago.launch.xml sim:=true``) and ``affplan
ask`` with the sample task of ``config/demo.yaml``: the language backend picks tools round by
round (Explore, then Plan), the goal is checked (syntax, Prolog) and corrected, Fast Downward
plans, the executor runs every step on the simulated robot.

``--video FILE.mp4`` (with ``--physics``; ``make demo-video``): sim_world records the run (a view
from above beside the annotated head camera, the step as a caption) and a contact sheet of the
steps (FILE.png). After the task the demo asks sim_world to finish the file and waits while the
rest renders (at most ``VIDEO_FINISH_S``); on Ctrl-C the stopping node finishes it with what it
rendered. Either way the demo then reads the file back and says where it is and how long.
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import yaml

from affplan_ros.env import config_file

VIDEO_FINISH_S = 240.0    # the longest the demo waits for sim_world to render the rest of the video
VIDEO_POLL_S = 0.5        # between two asks whether the video is finished
VIDEO_PROGRESS_S = 5.0    # between two progress lines while it renders


def video_path(args: argparse.Namespace) -> Optional[Path]:
    """The video file the demo was asked for, absolute (the nodes run elsewhere); None if none.
    ValueError when it cannot be written."""
    if not getattr(args, "video", None):
        return None
    path = Path(args.video).expanduser().resolve()
    if not args.physics:
        raise ValueError("--video records the physics world: add --physics")
    if path.suffix.lower() != ".mp4":
        raise ValueError(f"--video {args.video}: the file name must end in .mp4")
    if not path.parent.is_dir():
        raise ValueError(f"--video {args.video}: there is no folder {path.parent}")
    return path


def run_demo(args: argparse.Namespace) -> int:
    # Heavy imports here, not at module level: `affplan --help` stays instant.
    from affplan_ros.launch_xml import LaunchError
    from affplan_ros.launcher import NodeStartError
    from affplan_ros.llm.config import CONFIGURE_HELP
    from affplan_ros.suite import backend_label, start_suite
    from affplan_ros.task_client import SuiteClient, Transcript

    tiago = getattr(args, "robot", "sim") == "tiago"
    try:
        if tiago and (args.physics or getattr(args, "perception", False) or getattr(args, "video", None)):
            raise ValueError("--robot tiago is the MuJoCo Tiago++ already, with its own camera: --physics, "
                             "--perception and --video are for --robot sim")
        video = video_path(args)
        if getattr(args, "perception", False) and not args.physics:
            raise ValueError("--perception sees the physics world's rendered camera: add --physics")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = config_file("demo.yaml")
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    task = args.task or config["task"]
    # The demo's nodes get a DDS domain of their own so they never meet a running suite.
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(102, 199)))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    say = Transcript()
    label, offline = backend_label()
    say("llm", label)
    if offline:
        say.more(CONFIGURE_HELP + " for requests it does not understand")
    launch_args = {"time_scale": str(config.get("time_scale", 0.25)),
                   "scenario": str(path.parent / config.get("scenario", "scenarios/kitchen.yaml")),
                   "physics": "true" if args.physics else "false", "video": str(video or ""),
                   "perception": "true" if getattr(args, "perception", False) else "false"}
    if video and launch_args["perception"] == "false":
        # The video renders the head camera itself; nobody in the demo listens to the camera
        # topics, whose frames would take the CPU the video needs.
        launch_args["camera_rate_hz"] = "0"
    if tiago:   # the launch's own kitchen (an AutoGPT+P scene), its camera at 1 Hz to spare the CPU
        launch_args = {"sim": "true", "real_time_factor": str(config.get("tiago_real_time_factor", 2.0)),
                       "camera_rate_hz": "1.0"}
    try:
        # The sample task runs the same way on every machine: nothing learned earlier changes it.
        suite = start_suite("tiago" if tiago else "sim", launch_args, shared_params={"knowledge_file": ""})
    except (LaunchError, NodeStartError) as exc:
        say("error", f"the suite did not start: {exc}")
        return 1
    stop = threading.Event()
    # Ctrl-C cancels the task (as `affplan ask` does), then the suite stops; sim_world finishes
    # the video with what it rendered by then.
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        with suite:
            say("suite", f"{len(suite.processes)} nodes up in {suite.seconds:.1f} s, each its own process "
                         f"({', '.join(p.name for p in suite.processes)}; "
                         f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']})")
            if tiago:
                say.more("the Tiago++'s own nodes (robot_skills: built-in arm planner, poses from the simulator's "
                         "referee) on the simulated Tiago++ in config/scenarios/kitchen.txt")
            else:
                say.more(f"simulated world: {config.get('scenario')}"
                         + (" as MuJoCo physics (every step a motion)" if args.physics else " (symbolic)")
                         + ("; Explore sees through the perception node" if launch_args["perception"] == "true"
                            else ""))
            if video:
                say.more(f"recording {video}")
            with SuiteClient("/affplan", "affplan_demo") as client:
                code = run_task(client, say, task, stop.is_set)
                if video and not stop.is_set():
                    finish_video(client, say, stop.is_set)
            if stop.is_set():
                say("stopped", "Ctrl-C: the suite stops" + ("; the video keeps what was rendered" if video else ""))
                code = 130
    finally:
        signal.signal(signal.SIGINT, previous)
    if video:
        report_video(say, video)
    return code


def run_task(client, say, task: str, interrupted: Callable[[], bool]) -> int:
    """The task through the suite, its transcript and the memory after it; the exit status
    (``interrupted()`` true: the task is canceled)."""
    from affplan_ros.action import ExecuteTask
    from affplan_ros.llm.config import CONFIGURE_HELP
    from affplan_ros.task_client import Person, print_result

    outcome = client.run_task(task, say, person=Person(say, "yes"), timeout=300.0, interrupted=interrupted)
    if outcome is None:
        return 1
    print_result(say, outcome)
    if outcome.result.stop_reason == ExecuteTask.Result.STOP_REJECTED:
        say.more("nothing was planned or executed; " + CONFIGURE_HELP)
        return 2
    show_memory(client, say)
    return 0 if outcome.result.success else 1


def finish_video(client, say, interrupted: Callable[[], bool], limit_s: float = VIDEO_FINISH_S) -> None:
    """Ask sim_world to finish the video and wait while the rest renders (at most ``limit_s``;
    until ``interrupted()``)."""
    from std_srvs.srv import Trigger

    started = time.monotonic()
    last_said = started - VIDEO_PROGRESS_S  # the first progress line at once
    while True:
        got, error = client.call(Trigger, "finish_video", Trigger.Request())
        if got is None:
            say("video", f"sim_world did not answer ({error}); stopping it finishes the file")
            return
        if got.success:
            say("video", f"finished: {got.message}")
            return
        now = time.monotonic()
        if interrupted():
            return
        if now - started > limit_s:
            say("video", f"still {got.message} after {limit_s:.0f} s; stopping sim_world finishes the file with "
                         "what it rendered")
            return
        if now - last_said >= VIDEO_PROGRESS_S:
            say("video", got.message)
            last_said = now
        time.sleep(VIDEO_POLL_S)


def report_video(say, path: Path) -> None:
    """Where the video and its contact sheet are, read back from the file: frames and length."""
    import av

    if not path.is_file():
        say("video", f"no video was written at {path} (sim_world's log says why)")
        return
    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            frames = stream.frames or sum(1 for _ in container.decode(video=0))
            seconds = float(stream.duration * stream.time_base) if stream.duration else 0.0
            size = f"{stream.width}x{stream.height}"
    except (av.error.FFmpegError, IndexError) as exc:
        say("video", f"{path} cannot be read: {exc}")
        return
    sheet = path.with_suffix(".png")
    say("video", f"{path}: {frames} frames of {size}, {seconds:.1f} s, {path.stat().st_size / 1e6:.1f} MB")
    say.more(f"contact sheet: {sheet}" if sheet.is_file() else "no contact sheet (no frame was rendered)")


def show_memory(client, say) -> None:
    """What the memory node knows after the task (as `affplan memory` prints it, in short)."""
    import json

    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory

    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    if got is None:
        say("memory", f"not readable: {error}")
        return
    memory = Memory.from_dict(json.loads(got.json))
    held = [f"{r.args[0]} in the hand of {r.args[1]}" for r in memory.relations if r.predicate == "inhand"]
    say("memory", f"explored: {', '.join(memory.explored())}; {'; '.join(held) or 'nothing held'}; "
                  f"robot0 at {memory.agent_location('robot0')}; {len(memory.instructions)} request(s) remembered")
