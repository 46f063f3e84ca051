"""`affplan bench physics --faults`: physical faults injected while the robot works, and what recovery makes of them.

Each task of ``bench/data/physics_faults.yaml`` runs on the MuJoCo world as the running suite
runs a task (``affplan up --physics`` without an LLM endpoint): the AutoGPT+P tool-selection loop
with the offline instruction interpreter as its language backend, its executor CoPAL's mid level
and LASP (``LearningExecutor``: mid-level repair, learning) over the physics executor. Each task
runs first without a fault (the baseline), then once per fault kind and seed with a
:class:`~affplan_ros.sim.physics.faults.FaultyExecutor` changing the world at the fault's trigger
(an object moved or taken away just before its grasp, a door stuck on the first try, a grip that
gives way on the drive). Per fault kind: how often it fired, was detected as a failure, was
repaired at mid level, led to another round of the loop (replanning, exploring), to learning,
and whether the task was completed in the end (the task's desired goal holds in the relations
read from the physics), with the wall and simulated seconds it cost beyond the baseline. Writes
results.json, summary.md and physics_faults.png.
"""
from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import yaml

from affplan_ros.bench.frame import BenchSetupError, save
from affplan_ros.bench.report import rate

DEFAULT_TASKS = Path(__file__).resolve().parent / "data" / "physics_faults.yaml"
DEFAULT_SEEDS = 3
MAX_ROUNDS = 10            # tool-selection rounds per run (the suite's default)
MAX_RUN_SECONDS = 120.0    # the loop's own wall-time bound per run (checked between its rounds)


def load_tasks(path: Path) -> list[dict]:
    """The tasks of ``path``, each checked: name, scene, task, goal, faults (known kinds)."""
    from affplan_ros.sim.physics.faults import FaultKind

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise BenchSetupError(f"cannot read the fault tasks {path}: {exc}") from exc
    tasks = (data or {}).get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, list) or not tasks:
        raise BenchSetupError(f"{path}: expected a non-empty list under 'tasks'")
    kinds = {k.value for k in FaultKind}
    for i, t in enumerate(tasks):
        missing = [k for k in ("name", "scene", "task", "goal", "faults") if not isinstance(t, dict) or k not in t]
        if missing:
            raise BenchSetupError(f"{path}: task {i + 1} lacks {', '.join(missing)}")
        bad = [k for k in t["faults"] if k not in kinds]
        if bad:
            raise BenchSetupError(f"{path}: task {t['name']!r}: unknown fault kind(s) {', '.join(map(str, bad))} "
                                  f"(known: {', '.join(sorted(kinds))})")
    return tasks


def run(args: argparse.Namespace) -> int:
    """Called by `affplan bench physics --faults` (bench/physics.py's options)."""
    tasks = load_tasks(Path(args.fault_tasks) if getattr(args, "fault_tasks", None) else DEFAULT_TASKS)
    seeds = list(range(1, int(args.seeds) + 1))
    out = Path(args.out)
    runs = sum(1 + len(t["faults"]) * len(seeds) for t in tasks)
    print(f"bench physics --faults: {len(tasks)} tasks, {runs} runs (a baseline and each fault kind x "
          f"{len(seeds)} seeds) -> {out}", flush=True)
    t0 = time.monotonic()
    results: list[dict] = []
    for task in tasks:
        base = run_one(task, None, 0)
        results.append(base)
        print(f"  {task['name']}: baseline {'completed' if base['completed'] else 'NOT completed'} "
              f"({base['wall_seconds']} s wall, {base['sim_seconds']} s simulated)", flush=True)
        for kind in task["faults"]:
            for seed in seeds:
                r = run_one(task, kind, seed, baseline=base)
                results.append(r)
                print(f"  {task['name']} {kind} seed {seed}: {_line(r)}", flush=True)
    report = build_report(results, seeds, time.monotonic() - t0)
    save(out, report, summary_markdown(report), plot=("physics_faults.png", lambda p: write_plot(report, p)))
    return 0


def _line(r: dict) -> str:
    if r["error"]:
        return f"error: {r['error']}"
    if not r["fired"]:
        return "the fault did not fire"
    return (f"{'completed' if r['completed'] else 'not completed'}; detected {r['detected']}, repairs "
            f"{r['mid_repairs']}, rounds {r['rounds']}, learned {r['learned']}; stop {r['stop']}")


def run_one(task: dict, kind: Optional[str], seed: int, baseline: Optional[dict] = None) -> dict:
    """One run of ``task`` with the fault ``kind`` (None: the baseline)."""
    r: dict[str, Any] = {"task": task["name"], "kind": kind or "none", "seed": seed, "fired": None,
                         "fired_step": None, "detected": False, "mid_repairs": 0, "rounds": 0, "tools": [],
                         "learned": 0, "completed": False, "stop": None, "message": "", "failures": [],
                         "executed": [], "wall_seconds": 0.0, "sim_seconds": 0.0, "extra_wall_seconds": None,
                         "extra_sim_seconds": None, "error": None}
    t0 = time.monotonic()
    try:
        _run(task, kind, seed, r)
    except Exception as exc:  # noqa: BLE001 - recorded; the benchmark goes on
        r["error"] = f"{type(exc).__name__}: {exc}"
    r["wall_seconds"] = round(time.monotonic() - t0, 3)
    if baseline is not None and baseline["completed"] and r["completed"]:
        r["extra_wall_seconds"] = round(r["wall_seconds"] - baseline["wall_seconds"], 3)
        r["extra_sim_seconds"] = round(r["sim_seconds"] - baseline["sim_seconds"], 3)
    return r


def _run(task: dict, kind: Optional[str], seed: int, r: dict) -> Any:
    from affplan_ros.core.files.scene_io import load_scene
    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.env import config_file
    from affplan_ros.sim.physics.executor import PhysicsExecutor
    from affplan_ros.sim.physics.faults import FaultKind, FaultyExecutor

    goal = task_goal(task)
    scene = load_scene(config_file(f"scenarios/{task['scene']}"))
    oam = load_oam()
    inner = PhysicsExecutor(scene, oam=oam)
    # An object is not moved onto a place the goal names (the fault would do the task).
    goal_names = {a for conj in goal for lit in conj for a in lit.args}
    executor = FaultyExecutor(inner, FaultKind(kind), seed=seed, avoid=goal_names) if kind else inner
    learner = run_tool_loop(task, executor, inner, inner.initial_memory(), oam, r)
    if kind:
        r["fired"], r["fired_step"] = executor.fired, executor.fired_step
        # Detected: a step failed (repaired or not) once the world had changed.
        r["detected"] = bool(executor.fired) and bool(executor.failures_after)
    return learner


def task_goal(task: dict):
    """The task's desired goal (``goal``, PDDL) in disjunctive normal form."""
    from affplan_ros.core.goals.extraction import parse_goal
    from affplan_ros.core.goals.formula import to_dnf

    return to_dnf(parse_goal(task["goal"]))


def run_tool_loop(task: dict, executor: Any, inner: Any, memory: Any, oam: Any, r: dict) -> Any:
    """``task`` through the tool-selection loop as the suite runs it without an endpoint (the
    offline interpreter; LearningExecutor over ``executor``), starting from ``memory``; fills
    ``r`` (completed: the desired goal holds in ``inner``'s physics) and returns the learner."""
    from affplan_ros.core.interpreter.backend import OfflineModel
    from affplan_ros.core.recovery.belief import Domain
    from affplan_ros.core.recovery.knowledge import KnowledgeStore
    from affplan_ros.core.recovery.lasp import SceneEnvironment
    from affplan_ros.core.recovery.runner import RecoveryConfig
    from affplan_ros.core.recovery.session import LearningExecutor
    from affplan_ros.llm.loop_factory import make_tool_loop
    from affplan_ros.llm.recovery_prompting import LaspPromptBuilder, ReplanGoalPromptBuilder

    goal = task_goal(task)
    world = inner.world
    llm = OfflineModel(oam=oam)
    store = KnowledgeStore(None)        # learned knowledge kept for this run only
    learner = LearningExecutor(executor, Domain.default(oam=oam), lambda: store, memory.scene,
                               lambda: memory.substitute(task["task"]), RecoveryConfig(max_seconds=MAX_RUN_SECONDS),
                               llm=llm, goal_prompter=ReplanGoalPromptBuilder(), lasp_prompter=LaspPromptBuilder(),
                               environment=lambda: SceneEnvironment(memory.scene()))
    log = _RunLog(learner)
    loop = make_tool_loop(llm, log, oam=oam, max_rounds=MAX_ROUNDS, max_seconds=MAX_RUN_SECONDS)
    sim0 = world.sim_seconds
    res = loop.run(task["task"], memory)
    r["sim_seconds"] = round(world.sim_seconds - sim0, 3)
    r["completed"] = inner.goal_reached(goal)
    r["stop"], r["message"] = res.stop_reason.value, res.message
    r["rounds"] = len(res.rounds)
    r["tools"] = [str(getattr(rec.tool, "value", rec.tool) or "-") for rec in res.rounds]
    r["failures"] = [text for rec in res.rounds for text in [rec.result or rec.error or ""]
                     if "failed" in text.lower()]
    r["executed"] = [" ".join((s.action, *s.args)) for s in learner.executed]
    r["mid_repairs"] = sum(len(getattr(run, "repairs", [])) for run in log.runs)
    r["learned"] = sum(len(rec.learned) for rec in learner.recoveries)
    return learner


@dataclass
class _RunLog:
    """The loop's executor as it is, keeping each execution's result (the mid level's repairs)."""

    inner: Any
    runs: list = field(default_factory=list)

    def explore(self, location: str):
        return self.inner.explore(location)

    def execute(self, plan):
        run = self.inner.execute(plan)
        self.runs.append(run)
        return run


# --------------------------------------------------------------------------------------
# Report

def _kind_stats(rows: Sequence[dict]) -> dict:
    fired = [r for r in rows if r["fired"]]
    extra_wall = [r["extra_wall_seconds"] for r in fired if r["extra_wall_seconds"] is not None]
    extra_sim = [r["extra_sim_seconds"] for r in fired if r["extra_sim_seconds"] is not None]
    return {"runs": len(rows), "fired": len(fired), "detected": sum(r["detected"] for r in fired),
            "repaired_mid": sum(r["mid_repairs"] > 0 for r in fired), "replanned": sum(r["rounds"] > 1 for r in fired),
            "learned": sum(r["learned"] > 0 for r in fired), "completed": sum(r["completed"] for r in fired),
            "errors": sum(bool(r["error"]) for r in rows),
            "median_extra_wall_seconds": round(statistics.median(extra_wall), 2) if extra_wall else None,
            "median_extra_sim_seconds": round(statistics.median(extra_sim), 1) if extra_sim else None,
            "stops": dict(sorted({s: sum(r["stop"] == s for r in fired) for s in {r["stop"] for r in fired}}.items()))}


def build_report(results: Sequence[dict], seeds: Sequence[int], seconds: float) -> dict:
    kinds = list(dict.fromkeys(r["kind"] for r in results if r["kind"] != "none"))
    baselines = {r["task"]: r for r in results if r["kind"] == "none"}
    return {"benchmark": "physics-faults", "llm": "offline (the instruction interpreter, as `affplan up` without an "
                                                  "endpoint)",
            "seeds": list(seeds), "seconds": round(seconds, 1),
            "baselines": {t: {"completed": r["completed"], "wall_seconds": r["wall_seconds"],
                              "sim_seconds": r["sim_seconds"], "stop": r["stop"]} for t, r in baselines.items()},
            "kinds": {k: _kind_stats([r for r in results if r["kind"] == k]) for k in kinds},
            "runs": list(results)}


MEANING = {
    "moved": "just before its grasp the object is put on another place's surface",
    "removed": "just before its grasp the object is taken out of the room",
    "door_blocked": "the door or drawer is stuck on the first attempt to open it",
    "slipped": "the grip gives way on the first drive with something in the hand",
}


def summary_markdown(report: dict) -> str:
    L = ["# Physical faults during execution (`affplan bench physics --faults`)\n",
         "- as the running suite runs a task without an LLM endpoint: the AutoGPT+P tool-selection loop with the "
         "offline interpreter, mid-level repair and learning (LearningExecutor), on the MuJoCo world",
         f"- seeds {', '.join(map(str, report['seeds']))}; wall time {report['seconds']:.0f} s in all",
         "- detected: a step failed after the fault; replanned: the loop went on to another round (replanning, "
         "exploring); completed: the desired goal holds in the physics at the end; extra seconds: beyond the "
         "same task's run without a fault (completed runs only)\n",
         "## Baselines (no fault)\n", "| Task | Completed | Wall s | Sim s | Stop |", "|---|---|---|---|---|"]
    for task, b in report["baselines"].items():
        L.append(f"| {task} | {'yes' if b['completed'] else 'no'} | {b['wall_seconds']} | {b['sim_seconds']} | "
                 f"{b['stop']} |")
    L += ["", "## Per fault kind\n",
          "| Fault | Runs | Fired | Detected | Repaired (mid level) | Replanned | Learned | Completed | "
          "Extra wall s (median) | Extra sim s (median) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for kind, s in report["kinds"].items():
        L.append(f"| {kind} | {s['runs']} | {s['fired']} | {rate(s['detected'], s['fired'])} | "
                 f"{rate(s['repaired_mid'], s['fired'])} | {rate(s['replanned'], s['fired'])} | "
                 f"{rate(s['learned'], s['fired'])} | {rate(s['completed'], s['fired'])} | "
                 f"{s['median_extra_wall_seconds']} | {s['median_extra_sim_seconds']} |")
    L += ["", "| Fault | What the world does |", "|---|---|"]
    L += [f"| {k} | {MEANING.get(k, '')} |" for k in report["kinds"]]
    L.append("\n## Runs\n")
    for r in report["runs"]:
        if r["kind"] == "none":
            continue
        head = f"- **{r['task']}** {r['kind']} seed {r['seed']}: "
        if r["error"]:
            L.append(head + f"error: {r['error']}")
            continue
        L.append(head + (f"{r['fired']} (at `{r['fired_step']}`); " if r["fired"] else "did not fire; ")
                 + f"{'completed' if r['completed'] else 'not completed'}, stop {r['stop']}, repairs "
                 f"{r['mid_repairs']}, rounds {' > '.join(r['tools'])}, learned {r['learned']}")
        if r["failures"]:
            L.append(f"  - first failure: {r['failures'][0][:300]}")
    return "\n".join(L) + "\n"


def write_plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    kinds = list(report["kinds"])
    measures = [("detected", "tab:blue"), ("repaired_mid", "tab:orange"), ("replanned", "tab:purple"),
                ("learned", "tab:gray"), ("completed", "tab:green")]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(kinds) + 2), 3.8))
    x = np.arange(len(kinds))
    width = 0.8 / len(measures)
    for i, (m, color) in enumerate(measures):
        values = [100.0 * report["kinds"][k][m] / max(report["kinds"][k]["fired"], 1) for k in kinds]
        ax.bar(x + (i - 2) * width, values, width, label=m.replace("_", " "), color=color)
    ax.set_xticks(x, kinds)
    ax.set_ylabel("% of the faults that fired")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, ncol=5, loc="upper center", bbox_to_anchor=(0.5, 1.18))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["DEFAULT_TASKS", "build_report", "load_tasks", "run", "run_one", "summary_markdown"]
