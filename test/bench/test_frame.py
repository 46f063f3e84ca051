"""The frame every `affplan bench NAME` shares (affplan_ros/bench/frame.py): options, the case loop
with its error records, the entry point's setup errors, and the files written."""
from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import pytest

from affplan_ros.bench import frame
from affplan_ros.bench.frame import (
    BenchSetupError,
    CaseWork,
    command,
    recorded,
    run_cases,
    save,
)

# -- options --------------------------------------------------------------------------------


def parser_with_options() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="affplan bench demo")
    frame.output_option(parser, "demo")
    frame.jobs_option(parser, help="cases in parallel")
    return parser


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_bad_jobs_are_usage_errors(bad, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parser_with_options().parse_args([f"--jobs={bad}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --jobs" in err and bad in err


def test_jobs_and_out_defaults():
    args = parser_with_options().parse_args([])
    assert args.jobs is None and args.out == "results/demo"
    args = parser_with_options().parse_args(["--jobs", "3", "--out", "x"])
    assert args.jobs == 3 and args.out == "x"
    assert frame.resolve_jobs(3, cap=1) == 3
    assert frame.resolve_jobs(None, cap=4, endpoint=True) == 1
    assert frame.resolve_jobs(None, cap=4) == min(4, os.cpu_count() or 1)


# -- recorded and the case loop ----------------------------------------------------------------
# Module-level: the worker processes import them by name.


def empty(case) -> dict:
    return {"case": case, "success": False, "error": None, "failure": None, "value": None}


def failed(r: dict) -> None:
    r["failure"] = f"error: {r['error']}"


def line(r: dict) -> str:
    return f"case {r['case']} {r['failure'] or ''}"


_INIT: dict = {}


def init(arg) -> None:
    _INIT["arg"] = arg


@recorded
def _fill(case, r: dict) -> None:
    r["value"] = f"started {case}"
    if case == "raise inside":
        raise KeyError("no such object")
    r["value"] = case * 2 if isinstance(case, int) else case
    r["success"] = True


def run_one(case) -> dict:
    if case == "raise outside":      # a bug outside the recorded part of a case
        raise ValueError("bad case")
    if case == "exit":               # the worker process dies
        os._exit(3)
    r = empty(case)
    if _fill(case, r):
        failed(r)
    r["init"] = _INIT.get("arg")
    r["pid"] = os.getpid()
    return r


WORK = CaseWork(run=run_one, empty=empty, failed=failed, line=line, init=init, init_arg="ready")


def test_recorded_turns_an_exception_into_the_error_field():
    r = empty("raise inside")
    assert _fill("raise inside", r) == "KeyError: 'no such object'"
    assert r["error"] == "KeyError: 'no such object'"
    assert r["value"] == "started raise inside" and r["success"] is False   # what ran before is kept
    r = empty(2)
    assert _fill(2, r) is None and r["error"] is None and r["value"] == 4


def test_a_failing_case_is_recorded_and_the_others_finish(capsys):
    results = run_cases([1, "raise inside", "raise outside", 4], WORK, jobs=1)
    assert [r["case"] for r in results] == [1, "raise inside", "raise outside", 4]
    assert [r["success"] for r in results] == [True, False, False, True]
    assert [r["value"] for r in results] == [2, "started raise inside", None, 8]
    assert results[1]["error"] == "KeyError: 'no such object'"
    assert results[2]["error"] == "ValueError: bad case"
    assert results[2]["failure"] == "error: ValueError: bad case"     # marked by work.failed
    assert results[0]["init"] == "ready" and results[0]["pid"] == os.getpid()   # in this process
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[  1/4] ok   case 1 " and lines[1].startswith("[  2/4] FAIL case raise inside error: KeyError")
    assert [x[:7] for x in lines] == ["[  1/4]", "[  2/4]", "[  3/4]", "[  4/4]"]


def test_cases_in_worker_processes_keep_their_order_and_a_raising_case(capsys):
    cases = [1, 2, "raise outside", 4, "raise inside"]
    results = run_cases(cases, WORK, jobs=2)
    assert [r["case"] for r in results] == cases
    assert [r["success"] for r in results] == [True, True, False, True, False]
    assert results[2]["error"] == "worker failed: ValueError: bad case"
    assert results[4]["error"] == "KeyError: 'no such object'"
    ran = [r for r in results if r["case"] != "raise outside"]
    assert all(r["init"] == "ready" and r["pid"] != os.getpid() for r in ran)   # init ran in each worker
    assert len(re.findall(r"^\[  \d/5\] ", capsys.readouterr().out, re.M)) == 5


def test_a_dead_worker_process_is_recorded_not_lost(capsys):
    results = run_cases([1, "exit", 3], WORK, jobs=2)
    assert len(results) == 3 and all(r is not None for r in results)
    assert results[1]["error"].startswith("worker failed: BrokenProcessPool")
    assert results[1]["failure"].startswith("error: worker failed")
    # the pool broke: every case still unfinished is recorded the same way, none is missing
    assert all(r["success"] or r["error"].startswith("worker failed") for r in results)


# -- the entry point ------------------------------------------------------------------------------


def test_command_turns_a_setup_error_into_exit_2_with_the_message(capsys):
    @command
    def run(args):
        if args.mode == "bad":
            raise BenchSetupError("--data /nowhere is not a data folder")
        if args.mode == "value":
            with frame.setup_errors(FileNotFoundError, ValueError):
                raise ValueError("--set 'x': unknown")
        if args.mode == "bug":
            raise ZeroDivisionError("a bug")
        return 1 if args.mode == "one" else None

    assert run(argparse.Namespace(mode="bad")) == 2
    assert capsys.readouterr().err == "affplan bench test_frame: --data /nowhere is not a data folder\n"
    assert run(argparse.Namespace(mode="value")) == 2
    assert capsys.readouterr().err == "affplan bench test_frame: --set 'x': unknown\n"
    assert run(argparse.Namespace(mode="ok")) == 0 and run(argparse.Namespace(mode="one")) == 1
    with pytest.raises(ZeroDivisionError):   # a bug is no setup error: its traceback is kept
        run(argparse.Namespace(mode="bug"))
    assert capsys.readouterr().err == ""


def test_there_is_one_bench_setup_error_class():
    bench = Path(frame.__file__).parent
    defining = [p.name for p in sorted(bench.glob("*.py")) if "class BenchSetupError" in p.read_text()]
    assert defining == ["frame.py"]


# -- the files written --------------------------------------------------------------------------


def draw_png(path: Path) -> None:
    assert path.suffix == ".png" and path.name != "plot.png"   # drawn beside, renamed when complete
    path.write_bytes(b"\x89PNG fake")


def test_save_writes_both_files_and_the_plot(tmp_path, capsys):
    out = tmp_path / "new" / "dir"
    report = {"benchmark": "demo", "path": Path("/x"), "cases": [{"id": 1, "success": True}]}
    written = save(out, report, "# Demo\n\n| a |\n", plot=("plot.png", draw_png))
    assert written == [out / "results.json", out / "summary.md", out / "plot.png"]
    assert json.loads((out / "results.json").read_text()) == {**report, "path": "/x"}
    assert (out / "summary.md").read_text() == "# Demo\n\n| a |\n"
    assert (out / "plot.png").read_bytes() == b"\x89PNG fake"
    assert sorted(p.name for p in out.iterdir()) == ["plot.png", "results.json", "summary.md"]
    assert capsys.readouterr().out == f"wrote {out / 'results.json'}, {out / 'summary.md'}, {out / 'plot.png'}\n"


def test_save_writes_nothing_partial(tmp_path, capsys):
    save(tmp_path, {"run": 1}, "first\n")
    capsys.readouterr()
    circular: dict = {"run": 2}
    circular["self"] = circular
    with pytest.raises(ValueError):
        save(tmp_path, circular, "second\n")
    # results that cannot be serialised: the earlier files stay as they were, no temporary file
    assert json.loads((tmp_path / "results.json").read_text()) == {"run": 1}
    assert (tmp_path / "summary.md").read_text() == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "summary.md"]

    def broken(path: Path) -> None:
        path.write_bytes(b"half a pic")
        raise RuntimeError("matplotlib failed")

    with pytest.raises(RuntimeError):
        save(tmp_path, {"run": 3}, "third\n", plot=("plot.png", broken))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "summary.md"]   # no half plot
    assert json.loads((tmp_path / "results.json").read_text()) == {"run": 3}
    assert capsys.readouterr().out == ""   # no "wrote" line for a failed save
