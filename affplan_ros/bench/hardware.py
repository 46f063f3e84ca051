"""`affplan bench hardware`: how fast the simulated Tiago++'s hardware (`sim_hardware`) runs.

The node runs as its own process on a scenario (default: the demo kitchen), twice:

1. **as fast as it goes** (``real_time_factor:=0``) without the camera (``camera_rate_hz:=0``): the
   real-time factor, simulated seconds per wall second, read from ``/clock`` as it arrives here;
2. **in real time** (``real_time_factor:=1``) with the head camera at ``--camera-rate`` frames per
   simulated second: the frames per wall second that arrive on the colour topic (best-effort,
   as a perception node subscribes), and the real-time factor beside it.

Everything else is the node's defaults (joint states and /tf at 50 Hz, /clock at 100 Hz, the
referee at 10 Hz per simulated second): what a robot's software would meet. Each run is measured
for ``--seconds`` wall seconds after ``--warmup``, cut into ``--windows`` windows; the figures
are medians over the windows. The node's CPU (cores busy, from its process's CPU time) is
recorded too, for a machine with few cores. The targets: at least 5x real time without the
camera and at least 2 frames per second with it.

Writes results.json, summary.md and hardware_bench.png.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from affplan_ros.bench.frame import BenchSetupError, command, output_option, save

DEFAULT_SCENARIO = "scenarios/kitchen.txt"
MIN_RTF = 5.0          # the physics without the camera: at least this many times real time
MIN_CAMERA_HZ = 2.0    # frames per wall second in real time


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scenario", help="scene of the world (default: config/scenarios/kitchen.txt)")
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="wall seconds measured per run (default: %(default)s)")
    parser.add_argument("--windows", type=int, default=4,
                        help="the measured seconds are cut into this many windows; figures are their medians "
                             "(default: %(default)s)")
    parser.add_argument("--warmup", type=float, default=3.0,
                        help="wall seconds after the first /clock message before measuring (default: %(default)s)")
    parser.add_argument("--camera-rate", type=float, default=MIN_CAMERA_HZ,
                        help="camera_rate_hz of the second run (default: %(default)s)")
    parser.add_argument("--camera-size", default="320x240", metavar="WxH",
                        help="camera_width x camera_height of the second run (default: %(default)s)")
    output_option(parser, "hardware")


@dataclass(frozen=True)
class RunSpec:
    name: str
    real_time_factor: float
    camera_rate_hz: float


@dataclass
class Arrivals:
    """What arrived from the node, with the wall time (monotonic) it arrived at."""

    clock: list[tuple[float, float]] = field(default_factory=list)   # (wall, simulated seconds)
    frames: list[tuple[float, float]] = field(default_factory=list)  # (wall, the frame's stamp)
    lock: threading.Lock = field(default_factory=threading.Lock)


@command
def run(args: argparse.Namespace) -> int:
    from affplan_ros.env import config_file

    if args.seconds <= 0 or args.windows < 1 or args.warmup < 0 or args.camera_rate <= 0:
        raise BenchSetupError("--seconds and --camera-rate must be above 0, --windows at least 1, --warmup >= 0")
    try:
        width, height = (int(v) for v in args.camera_size.lower().split("x"))
    except ValueError:
        raise BenchSetupError(f"--camera-size {args.camera_size!r}: give WIDTHxHEIGHT, e.g. 320x240") from None
    scenario = config_file(DEFAULT_SCENARIO, args.scenario)
    if not Path(scenario).is_file():
        raise BenchSetupError(f"--scenario {scenario}: no such file")
    runs = [RunSpec("no camera, as fast as it goes", 0.0, 0.0),
            RunSpec(f"camera at {args.camera_rate:g} Hz, real time", 1.0, args.camera_rate)]
    print(f"bench hardware: sim_hardware on {scenario}, {args.seconds:g} s per run in {args.windows} windows "
          f"-> {args.out}", flush=True)
    t0 = time.monotonic()
    results = []
    for spec in runs:
        r = measure(spec, str(scenario), args.seconds, args.windows, args.warmup, width, height)
        results.append(r)
        print(f"  {spec.name}: {_line(r)}", flush=True)
    report = build_report(results, str(scenario), args, time.monotonic() - t0)
    save(Path(args.out), report, summary_markdown(report), plot=("hardware_bench.png", lambda p: write_plot(report, p)))
    return 0 if report["targets_met"] else 1


def measure(spec: RunSpec, scenario: str, seconds: float, windows: int, warmup: float, width: int,
            height: int) -> dict:
    """One run of the node as ``spec`` says: its figures per window and their medians."""
    import psutil

    from affplan_ros.env import dds_defaults
    from affplan_ros.launch_xml import find_executable
    from affplan_ros.launcher import NodeProcess, NodeStartError

    dds_defaults()
    argv = [str(find_executable("affplan_ros", "sim_hardware")), "--ros-args", "-p", f"scenario:={scenario}",
            "-p", f"real_time_factor:={spec.real_time_factor}", "-p", f"camera_rate_hz:={spec.camera_rate_hz}",
            "-p", f"camera_width:={width}", "-p", f"camera_height:={height}"]
    try:
        node = NodeProcess([sys.executable, *argv], ready_timeout=120.0, name="sim_hardware")
    except NodeStartError as exc:
        raise BenchSetupError(str(exc)) from exc
    arrivals = Arrivals()
    try:
        with _listening(arrivals, camera=spec.camera_rate_hz > 0):
            deadline = time.monotonic() + 60.0
            while not arrivals.clock:
                if time.monotonic() > deadline or node.proc.poll() is not None:
                    raise BenchSetupError("no /clock from sim_hardware within 60 s:\n" + "".join(node.output[-20:]))
                time.sleep(0.05)
            time.sleep(warmup)
            process = psutil.Process(node.proc.pid)
            cpu0, start = _cpu_seconds(process), time.monotonic()
            time.sleep(seconds)
            end, cpu1 = time.monotonic(), _cpu_seconds(process)
        with arrivals.lock:
            clock, frames = list(arrivals.clock), list(arrivals.frames)
    finally:
        code = node.stop()
    span = (end - start) / windows
    rows = []
    for k in range(windows):
        a, b = start + k * span, start + (k + 1) * span
        inside = [(w, s) for w, s in clock if a <= w <= b]
        rtf = ((inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])
               if len(inside) >= 2 and inside[-1][0] > inside[0][0] else None)
        rows.append({"window": k, "rtf": _round(rtf, 2),
                     "camera_hz": _rate([w for w, _ in frames if a <= w < b], span) if spec.camera_rate_hz else None})
    rtfs = [r["rtf"] for r in rows if r["rtf"] is not None]
    hz = [r["camera_hz"] for r in rows if r["camera_hz"] is not None]
    # Frames per simulated second: what a robot running on simulated time sees.
    sim_span = (max(s for _, s in frames) - min(s for _, s in frames)) if len(frames) >= 2 else 0.0
    return {"run": spec.name, "real_time_factor_param": spec.real_time_factor,
            "camera_rate_hz_param": spec.camera_rate_hz, "camera_size": f"{width}x{height}",
            "median_rtf": _round(statistics.median(rtfs), 2) if rtfs else None,
            "median_camera_hz": _round(statistics.median(hz), 2) if hz else None,
            "frames_per_sim_second": _round((len(frames) - 1) / sim_span, 2) if sim_span > 0 else None,
            "node_cpu_cores": round((cpu1 - cpu0) / (end - start), 2), "windows": rows,
            "clock_messages": len(clock), "frames": len(frames), "exit_code": code}


def _rate(arrivals: list[float], span: float) -> float:
    """Frames per second in a window of ``span`` seconds: from the first arrival to the last (a
    count over the window would be off by a frame's worth, 0.2 Hz in 5 s, as the frames' phase
    falls), or the count over the window with fewer than two."""
    if len(arrivals) >= 2 and arrivals[-1] > arrivals[0]:
        return round((len(arrivals) - 1) / (arrivals[-1] - arrivals[0]), 2)
    return round(len(arrivals) / span, 2)


def _cpu_seconds(process) -> float:
    """User and system CPU seconds of ``process`` and its threads."""
    t = process.cpu_times()
    return t.user + t.system


class _listening:
    """A node of this process that records /clock and, with ``camera``, the colour frames."""

    def __init__(self, arrivals: Arrivals, camera: bool):
        self.arrivals, self.camera = arrivals, camera

    def __enter__(self) -> "_listening":
        import os

        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import Image

        from affplan_ros.env import config_file
        from affplan_ros.nodes.base import spin
        from affplan_ros.sim.hardware.names import HardwareNames

        self.context = Context()
        rclpy.init(context=self.context, domain_id=int(os.environ.get("ROS_DOMAIN_ID", "0")))
        self.node = rclpy.create_node("bench_hardware", context=self.context)
        self.node.create_subscription(Clock, "/clock", self._on_clock, 100)
        if self.camera:
            # Best effort, as a perception node reads a camera: the publisher's reliable QoS serves it too.
            topic = HardwareNames.from_file(config_file("hardware/tiago.yaml")).camera.rgb_topic
            self.node.create_subscription(Image, topic, self._on_frame, qos_profile_sensor_data)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.spinner = threading.Thread(target=spin, args=(self.executor,), daemon=True)
        self.spinner.start()
        return self

    def _on_clock(self, msg) -> None:
        with self.arrivals.lock:
            self.arrivals.clock.append((time.monotonic(), msg.clock.sec + msg.clock.nanosec * 1e-9))

    def _on_frame(self, msg) -> None:
        with self.arrivals.lock:
            self.arrivals.frames.append((time.monotonic(), msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9))

    def __exit__(self, *exc) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
        self.spinner.join(5.0)


def build_report(results: list[dict], scenario: str, args: argparse.Namespace, seconds: float) -> dict:
    fast, camera = results
    rtf, hz = fast["median_rtf"], camera["median_camera_hz"]
    return {"benchmark": "hardware", "scenario": scenario, "seconds_per_run": args.seconds,
            "windows": args.windows, "warmup": args.warmup, "wall_seconds": round(seconds, 1),
            "rtf_without_camera": rtf, "rtf_with_camera": camera["median_rtf"], "camera_hz": hz,
            "targets": {"rtf_without_camera": MIN_RTF, "camera_hz": MIN_CAMERA_HZ},
            "targets_met": bool(rtf is not None and rtf >= MIN_RTF and hz is not None and hz >= MIN_CAMERA_HZ),
            "runs": results}


def summary_markdown(report: dict) -> str:
    t = report["targets"]
    L = ["# The simulated hardware's speed (`affplan bench hardware`)\n",
         f"- `sim_hardware` on `{report['scenario']}`, {report['seconds_per_run']:g} wall seconds per run in "
         f"{report['windows']} windows (medians), after {report['warmup']:g} s of warm-up\n",
         "| Measure | Median | Target |", "|---|---|---|",
         f"| real-time factor, no camera, as fast as it goes | {report['rtf_without_camera']} | "
         f">= {t['rtf_without_camera']:g} |",
         f"| real-time factor, camera on, real time | {report['rtf_with_camera']} | 1 |",
         f"| camera frames per wall second | {report['camera_hz']} | >= {t['camera_hz']:g} |", "",
         f"Targets met: **{'yes' if report['targets_met'] else 'no'}**\n",
         "| Run | RTF per window | Camera Hz per window | Frames per simulated s | Node CPU (cores) |",
         "|---|---|---|---|---|"]
    for r in report["runs"]:
        L.append(f"| {r['run']} | {', '.join(str(w['rtf']) for w in r['windows'])} | "
                 f"{', '.join(str(w['camera_hz']) for w in r['windows']) if r['camera_rate_hz_param'] else '-'} | "
                 f"{r['frames_per_sim_second'] if r['camera_rate_hz_param'] else '-'} | {r['node_cpu_cores']} |")
    return "\n".join(L) + "\n"


def write_plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fast, camera = report["runs"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.5, 3.4))
    for r, colour in ((fast, "tab:blue"), (camera, "tab:orange")):
        left.plot([w["window"] for w in r["windows"]], [w["rtf"] or 0.0 for w in r["windows"]], "o-", color=colour,
                  label=r["run"])
    left.axhline(report["targets"]["rtf_without_camera"], color="grey", ls="--", lw=1)
    left.set_xlabel("window")
    left.set_ylabel("simulated s per wall s")
    left.set_title("Real-time factor")
    left.legend(fontsize=7)
    right.bar(range(len(camera["windows"])), [w["camera_hz"] or 0.0 for w in camera["windows"]], color="tab:orange")
    right.axhline(report["targets"]["camera_hz"], color="grey", ls="--", lw=1)
    right.set_xlabel("window")
    right.set_ylabel("frames per wall s")
    right.set_title(camera["run"])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _line(r: dict) -> str:
    text = f"RTF {r['median_rtf']}"
    if r["camera_rate_hz_param"]:
        text += f", camera {r['median_camera_hz']} Hz"
    return text + f", node CPU {r['node_cpu_cores']} cores"


def _round(value: Optional[float], digits: int) -> Optional[float]:
    return None if value is None else round(float(value), digits)
