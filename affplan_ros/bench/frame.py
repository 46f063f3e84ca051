"""The frame every `affplan bench NAME` shares: options, the case loop, errors, the files written.

A benchmark module ``affplan_ros/bench/NAME.py`` (listed in :data:`BENCHMARKS`) exposes

    configure(parser)   its options: :func:`output_option` (``--out``), :func:`jobs_option`
                        (``--jobs``) and its own; module-level imports stay light, because
                        ``affplan --help`` builds every parser
    run(args) -> int    decorated with :func:`command`: a :class:`BenchSetupError` (bad options,
                        missing data, no endpoint) becomes one clear line and exit code 2

and runs its cases through :func:`run_cases` (``[k/n]`` progress, worker processes with
``--jobs``, a crashed case recorded instead of losing the run; :func:`recorded` turns an
exception inside a case into that case's ``error``), then writes results.json, summary.md and
its plot with :func:`save`.

This module imports only the standard library at the top: ``affplan_ros.cli`` imports it to
build the ``bench`` subcommands.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, Optional, Sequence, Union


class Benchmark(NamedTuple):
    name: str       # affplan bench NAME
    module: str     # the module with configure(parser) and run(args)
    help: str       # one line for `affplan bench --help`


BENCHMARKS: list[Benchmark] = [
    Benchmark("plan", "affplan_ros.bench.plan", "AutoGPT+P Plan Tool benchmark (paper Table V/VI)"),
    Benchmark("scale", "affplan_ros.bench.scale", "planning time against scene size, with and without pruning"),
    Benchmark("autogptp", "affplan_ros.bench.autogptp", "AutoGPT+P tool-selection benchmark (paper Table VII)"),
    Benchmark("alternative", "affplan_ros.bench.alternative", "alternative suggestion benchmark (paper Table III)"),
    Benchmark("oam", "affplan_ros.bench.oam",
              "LLM object-affordance mapping against ground truth (paper Table II)"),
    Benchmark("perception", "affplan_ros.bench.perception",
              "detector and OAD time per frame, detection and on/in scores, on drawn or physics camera frames"),
    Benchmark("recovery", "affplan_ros.bench.recovery", "failure recovery: LASP and CoPAL cases"),
    Benchmark("tokens", "affplan_ros.bench.tokens", "prompt and completion tokens per prompt kind"),
    Benchmark("faults", "affplan_ros.bench.faults",
              "tasks on the sim suite while nodes are killed and input goes bad: hung, failed, facts lost"),
    Benchmark("memory", "affplan_ros.bench.memory",
              "memory built from the physics world's camera through perception vs. the truth; tasks on it"),
    Benchmark("physics", "affplan_ros.bench.physics",
              "oracle plans executed on the MuJoCo physics world: success, failures by cause, real-time factor"),
    Benchmark("hardware", "affplan_ros.bench.hardware",
              "the simulated Tiago++ hardware (sim_hardware): real-time factor without the camera, camera frame rate"),
]


# --------------------------------------------------------------------------------------
# Setup errors and the entry point


class BenchSetupError(RuntimeError):
    """Bad options or missing data: reported with a clear message, exit code 2."""


@contextmanager
def setup_errors(*kinds: type[BaseException]) -> Iterator[None]:
    """Inside the block, an exception of one of ``kinds`` is a :class:`BenchSetupError` (same message)."""
    try:
        yield
    except BenchSetupError:
        raise
    except kinds as exc:
        raise BenchSetupError(str(exc)) from exc


def command(fn: Callable[[argparse.Namespace], Optional[int]]) -> Callable[[argparse.Namespace], int]:
    """``fn`` as a bench entry point: its exit code, or 2 and ``affplan bench NAME: message`` on
    stderr for a :class:`BenchSetupError` (NAME: the last part of ``fn``'s module name)."""
    name = fn.__module__.rpartition(".")[2]

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return int(fn(args) or 0)
        except BenchSetupError as exc:
            print(f"affplan bench {name}: {exc}", file=sys.stderr, flush=True)
            return 2
    return run


# --------------------------------------------------------------------------------------
# Shared options


def default_out(name: str) -> str:
    return f"results/{name}"


def output_option(parser: argparse.ArgumentParser, name: str) -> None:
    """``--out DIR`` (default ``results/NAME``): where results.json, summary.md and the plot go."""
    parser.add_argument("--out", default=default_out(name), metavar="DIR",
                        help="output folder (default: %(default)s)")


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1 (else a usage error, exit code 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1")
    return value


def jobs_option(parser: argparse.ArgumentParser, help: str, default: Optional[int] = None) -> None:
    """``--jobs N``: cases at once, N >= 1 (0, -2 or "two" are usage errors)."""
    parser.add_argument("--jobs", type=positive_int, default=default, metavar="N", help=help)


def resolve_jobs(requested: Optional[int], *, cap: int, endpoint: bool = False) -> int:
    """``--jobs`` if given, else 1 against an LLM endpoint (its rate limits), else min(cap, CPUs)."""
    if requested:
        return requested
    return 1 if endpoint else max(1, min(cap, os.cpu_count() or 1))


# --------------------------------------------------------------------------------------
# The case loop


@dataclass(frozen=True)
class CaseWork:
    """How :func:`run_cases` runs one benchmark's cases.

    ``run`` and ``init`` must be module-level functions: worker processes are spawned and
    import them by name. A result is a dict with at least ``success`` and ``error``."""

    run: Callable[[Any], dict]                  # one case -> its result (see recorded)
    empty: Callable[[Any], dict]                # a case's result before it ran
    failed: Callable[[dict], None]              # marks a result whose "error" is set as failed
    line: Callable[[dict], str]                 # the progress text after "[k/n] ok  " / "FAIL"
    init: Optional[Callable[[Any], None]] = None    # once per process, before its first case
    init_arg: Any = None


def recorded(fn: Callable[[Any, dict], None]) -> Callable[[Any, dict], Optional[str]]:
    """``fn(case, result)`` filling ``result`` in place; an exception inside becomes the result's
    ``error`` ("Type: message"), which the wrapper returns (None when ``fn`` finished)."""

    @functools.wraps(fn)
    def run(case: Any, result: dict) -> Optional[str]:
        try:
            fn(case, result)
        except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
            result["error"] = f"{type(exc).__name__}: {exc}"
            return result["error"]
        return None
    return run


def run_cases(cases: Sequence[Any], work: CaseWork, jobs: int = 1) -> list[dict]:
    """``work.run(case)`` for every case, in order of the cases, with one ``[k/n]`` line per case
    as it finishes; in ``jobs`` spawned processes when ``jobs`` > 1 (spawned, not forked:
    pyswip/Fast Downward state must not be copied mid-use).

    A case whose run raises, or whose worker process dies, is recorded as that case's error
    (``work.empty`` marked by ``work.failed``) and the run goes on. A dying process takes
    the cases still queued in the pool with it: each is recorded the same way."""
    results: list[Optional[dict]] = [None] * len(cases)
    done = 0

    def note(i: int, r: dict) -> None:
        nonlocal done
        done += 1
        results[i] = r
        print(f"[{done:3d}/{len(cases)}] {'ok  ' if r.get('success') else 'FAIL'} {work.line(r)}", flush=True)

    def crashed(case: Any, error: str) -> dict:
        r = work.empty(case)
        r["error"] = error
        work.failed(r)
        return r

    if jobs <= 1 or len(cases) <= 1:
        if work.init is not None:
            work.init(work.init_arg)
        for i, case in enumerate(cases):
            try:
                r = work.run(case)
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                r = crashed(case, f"{type(exc).__name__}: {exc}")
            note(i, r)
        return results  # type: ignore[return-value]

    import concurrent.futures as cf
    import multiprocessing as mp

    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=work.init,
                                initargs=(work.init_arg,) if work.init is not None else ()) as pool:
        futures = {pool.submit(work.run, case): i for i, case in enumerate(cases)}
        for future in cf.as_completed(futures):
            i = futures[future]
            try:
                r = future.result()
            except Exception as exc:  # noqa: BLE001 - a dead worker must not end the run
                r = crashed(cases[i], f"worker failed: {type(exc).__name__}: {exc}")
            note(i, r)
    return results  # type: ignore[return-value]


# --------------------------------------------------------------------------------------
# The files written

Plot = tuple[str, Callable[[Path], None]]   # (file name, draw(path)) e.g. ("plan_bench.png", ...)


def save(out_dir: Union[str, Path], results: Any, summary_md: str, plot: Optional[Plot] = None,
         plots: Sequence[Plot] = ()) -> list[Path]:
    """Write ``results.json`` and ``summary.md`` (and the plots, if any) into ``out_dir``, say so in
    one ``wrote ...`` line, and return the paths.

    Each file is replaced atomically: a reader, or the folder after a crash, sees the old file or
    the new one, never a part. ``results`` is serialised before anything is written, so results
    that cannot be written leave the folder as it was."""
    from affplan_ros.core.files.state_files import write_atomic

    out = Path(out_dir)
    text = json.dumps(results, indent=1, default=str)
    if not isinstance(summary_md, str):
        raise TypeError(f"summary_md must be text, not {type(summary_md).__name__}")
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "results.json", out / "summary.md"]
    write_atomic(written[0], text)
    write_atomic(written[1], summary_md)
    for name, draw in ([plot] if plot is not None else []) + list(plots):
        written.append(out / name)
        _draw_atomic(out / name, draw)
    print("wrote " + ", ".join(str(p) for p in written), flush=True)
    return written


def _draw_atomic(path: Path, draw: Callable[[Path], None]) -> None:
    """``draw`` into a temporary file beside ``path`` (same suffix: matplotlib picks the format
    from it), renamed onto ``path`` when complete; removed if drawing fails."""
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        draw(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
