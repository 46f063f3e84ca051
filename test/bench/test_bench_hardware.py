"""`affplan bench hardware` without starting the node: its figures from what arrived, its report
and its refusals of bad options (the run itself starts sim_hardware for 40 s and more: a command,
not a test)."""
from __future__ import annotations

import argparse

import pytest

from affplan_ros.bench import hardware
from affplan_ros.cli import main


def test_the_frame_rate_is_counted_from_first_to_last_arrival():
    # Four frames 0.5 s apart in a 5 s window: 2 Hz, not 4 / 5 s.
    assert hardware._rate([1.0, 1.5, 2.0, 2.5], 5.0) == 2.0
    assert hardware._rate([1.0], 5.0) == 0.2 and hardware._rate([], 5.0) == 0.0


def _run(rtf, hz) -> dict:
    return {"run": "r", "camera_rate_hz_param": 2.0 if hz is not None else 0.0, "median_rtf": rtf,
            "median_camera_hz": hz, "frames_per_sim_second": hz, "node_cpu_cores": 0.5,
            "windows": [{"window": 0, "rtf": rtf, "camera_hz": hz}]}


@pytest.mark.parametrize("fast, camera_hz, met", [(17.0, 2.0, True), (4.9, 2.0, False), (17.0, 1.5, False),
                                                  (None, 2.0, False)])
def test_the_report_says_whether_the_targets_are_met(fast, camera_hz, met):
    args = argparse.Namespace(seconds=20.0, windows=4, warmup=3.0)
    report = hardware.build_report([_run(fast, None), _run(1.0, camera_hz)], "kitchen.txt", args, 50.0)
    assert report["targets_met"] is met
    assert (report["rtf_without_camera"], report["camera_hz"]) == (fast, camera_hz)
    summary = hardware.summary_markdown(report)
    assert f"Targets met: **{'yes' if met else 'no'}**" in summary


@pytest.mark.parametrize("option", [["--seconds", "0"], ["--windows", "0"], ["--camera-size", "big"],
                                    ["--scenario", "/nonexistent/scene.txt"]])
def test_bad_options_exit_2_before_anything_starts(option, tmp_path, capsys):
    assert main(["bench", "hardware", "--out", str(tmp_path), *option]) == 2
    # What the command says is its last line: rclpy prints an earlier test's unretrieved future
    # to stderr when the garbage collector frees it, whenever that happens.
    said = capsys.readouterr().err.strip().splitlines()
    assert said and said[-1].startswith("affplan bench hardware: ") and "Traceback" not in "".join(said)
