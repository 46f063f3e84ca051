"""The `affplan` command line: every subcommand explains itself; the benchmarks share their options."""
from __future__ import annotations

import subprocess
import sys

import pytest

from affplan_ros.bench import frame
from affplan_ros.cli import build_parser, main


def _subcommand_paths(parser, prefix=()):
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from _subcommand_paths(sub, (*prefix, name))


SUBCOMMANDS = list(_subcommand_paths(build_parser()))


def test_the_documented_subcommands_exist():
    top = {path[0] for path in SUBCOMMANDS}
    assert {"up", "ask", "memory", "oam", "bench", "demo", "interfaces"} <= top


@pytest.mark.parametrize("path", SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_has_help(path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: affplan " + " ".join(path))
    assert len(out.splitlines()) >= 3


def test_a_bench_setup_error_exits_2_with_a_message(tmp_path, capsys):
    assert main(["bench", "plan", "--data", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("affplan bench plan: ") and "is not an AutoGPT+P data folder" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_physics_is_refused_for_a_real_robot_before_anything_starts(capsys):
    assert main(["up", "--robot", "tiago", "--physics"]) == 2
    err = capsys.readouterr().err
    assert "--physics is the simulated robot's world" in err and "Traceback" not in err


# -- the options every benchmark shares (affplan_ros/bench/frame.py) ------------------------------

BENCHMARKS = [b.name for b in frame.BENCHMARKS]
REQUIRED = {"autogptp": ["--llm", "offline"], "alternative": ["--llm", "offline"], "recovery": ["--llm", "endpoint"]}


def bench_parser(name: str):
    bench = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction").choices["bench"]
    return next(a for a in bench._actions if a.__class__.__name__ == "_SubParsersAction").choices[name]


def test_the_bench_subcommands_are_the_frames_list(capsys):
    assert BENCHMARKS == ["plan", "scale", "autogptp", "alternative", "oam", "perception", "recovery", "tokens",
                          "faults", "memory", "physics", "hardware"]
    assert {path[1] for path in SUBCOMMANDS if path[0] == "bench" and len(path) == 2} == set(BENCHMARKS)
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    listing = " ".join(capsys.readouterr().out.split())
    for b in frame.BENCHMARKS:
        assert f" {b.name} {b.help}" in listing


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_writes_to_results_name_by_default(name):
    args = build_parser().parse_args(["bench", name, *REQUIRED.get(name, [])])
    assert args.out == f"results/{name}"
    assert build_parser().parse_args(["bench", name, *REQUIRED.get(name, []), "--out", "elsewhere"]).out == "elsewhere"


JOBS = [name for name in BENCHMARKS if "--jobs" in bench_parser(name)._option_string_actions]


def test_the_benchmarks_with_cases_take_jobs():
    assert JOBS == ["plan", "autogptp", "alternative", "oam", "recovery", "physics"]
    assert build_parser().parse_args(["bench", "plan", "--jobs", "3"]).jobs == 3
    assert build_parser().parse_args(["bench", "oam"]).jobs == 1      # threads, one by default
    assert build_parser().parse_args(["bench", "plan"]).jobs is None  # the benchmark's default


@pytest.mark.parametrize("bad", ["0", "-2", "two"])
@pytest.mark.parametrize("name", JOBS)
def test_bad_jobs_are_usage_errors(name, bad, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", name, *REQUIRED.get(name, []), f"--jobs={bad}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: affplan bench {name}") and "argument --jobs: " in err and bad in err


def test_help_is_fast_and_imports_nothing_heavy():
    code = ("import sys, affplan_ros.cli as c; c.build_parser(); "
            "heavy = [m for m in ('rclpy', 'unified_planning', 'openai', 'torch', 'pyswip') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "[]"
