"""`affplan bench physics`: the oracle plans of the AutoGPT+P scenarios executed on the MuJoCo world.

Per case: the physics world is built from the case's scene, the desired goal (the oracle's
answer, as `affplan bench plan --llm oracle` derives it) is planned with the real planner, and
the plan runs on :class:`~affplan_ros.sim.physics.executor.PhysicsExecutor`. A case succeeds
when the desired goal holds in the relations read from the physics state at the end. Recorded:
the first failed step with its physical cause, steps executed, simulated and wall seconds, and
the real-time factor (simulated seconds per wall second of execution, IK and Python included).

Case loading, the desired goal and planning are bench.plan's functions (one source of truth).
Each case has a wall-time limit (``--case-time-limit``), checked between steps: a case out of
time is recorded as ``timeout``. Writes results.json, summary.md and physics_bench.png to --out;
with ``--video DIR`` also a video and a contact sheet per case into DIR, the sheets shown in
summary.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

from affplan_ros.bench.frame import (
    CaseWork,
    command,
    jobs_option,
    output_option,
    positive_int,
    recorded,
    resolve_jobs,
    run_cases,
    save,
)
from affplan_ros.bench.report import rate

DEFAULT_CASE_LIMIT = 120.0
DEFAULT_PLAN_LIMIT = 30.0


def configure(parser: argparse.ArgumentParser) -> None:
    from affplan_ros.bench.datasets import set_names

    parser.add_argument("--data", help="the original autogpt_p data folder (default: "
                                       "../shared/datasets/autogpt_p/autogpt_p/data, or AFFPLAN_SHARED)")
    parser.add_argument("--set", default="simple_task", choices=set_names(), metavar="NAME",
                        help="scenario set(s) as in `affplan bench plan` (default: simple_task)")
    parser.add_argument("--llm", default="oracle", choices=["oracle"],
                        help="only oracle: the desired goal is planned (the LLM is not what is measured here)")
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")
    parser.add_argument("--case", action="append", metavar="SET#INDEX", help="only this case (repeatable)")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_PLAN_LIMIT, help="planner seconds per case")
    parser.add_argument("--case-time-limit", type=float, default=DEFAULT_CASE_LIMIT,
                        help="wall seconds per case, world building, planning and execution together "
                             "(default: %(default)s)")
    parser.add_argument("--video", metavar="DIR", help="also write a video of each case into DIR (<set>_<index>.mp4: "
                                                       "a view from above and the annotated head camera, the step as a "
                                                       "caption) and its contact sheet (<set>_<index>.png, shown in "
                                                       "summary.md); rendering slows the run, so its timings are not "
                                                       "comparable")
    parser.add_argument("--stack", default="sim", choices=["sim", "robot"],
                        help="who moves the robot: sim (the simulator's own skills, which read its state: the "
                             "baseline) or robot (the robot's own software, robot_skills on the simulated Tiago++'s "
                             "ROS 2 interfaces, as tiago.launch.xml sim:=true runs it; bench/physics_robot.py)")
    parser.add_argument("--poses", default="oracle", choices=["oracle"],
                        help="(--stack robot) where the robot learns where things are: oracle (the simulator's "
                             "referee, simulation only)")
    parser.add_argument("--generated", type=positive_int, metavar="N",
                        help="instead of the scenario sets: N random kitchens and offices, each with a random task of "
                             "one capability in turn (bench/generated.py; their scenes are written to OUT/scenes); "
                             "results by capability")
    parser.add_argument("--seed", type=int, default=0, help="--generated: the seed of the homes and tasks "
                                                            "(default: %(default)s)")
    parser.add_argument("--faults", action="store_true",
                        help="instead: inject physical faults (an object moved or taken away before its grasp, a "
                             "door stuck, a grip giving way) into the tasks of --fault-tasks and report what "
                             "recovery makes of them (bench/physics_faults.py; writes physics_faults.png)")
    parser.add_argument("--seeds", type=positive_int, default=3, help="--faults: seeds per fault kind and task "
                                                                      "(default: %(default)s)")
    parser.add_argument("--fault-tasks", metavar="YAML", help="--faults: the tasks (default: "
                                                              "affplan_ros/bench/data/physics_faults.yaml)")
    output_option(parser, "physics")
    jobs_option(parser, "cases in parallel (processes; default: min(2, CPUs))")


def _plan_args(args: argparse.Namespace) -> argparse.Namespace:
    """The options `affplan bench plan` would have for the same cases (its defaults, our choices)."""
    from affplan_ros.bench import plan

    parser = argparse.ArgumentParser()
    plan.configure(parser)
    ns = parser.parse_args([])
    for key in ("data", "set", "limit", "case", "time_limit", "jobs"):
        setattr(ns, key, getattr(args, key))
    ns.llm, ns.no_semantic = "oracle", True
    return ns


@command
def run(args: argparse.Namespace) -> int:
    from affplan_ros.bench import plan

    if args.faults:
        from affplan_ros.bench import physics_faults

        return physics_faults.run(args)

    cfg = _generated(args) if args.generated else plan._prepare(_plan_args(args))
    worker = {"mode": "optimal", "time_limit": args.time_limit, "prune": True, "case_limit": args.case_time_limit,
              "video": None, "stack": args.stack, "poses": args.poses}
    if args.video:
        Path(args.video).mkdir(parents=True, exist_ok=True)
        worker["video"] = str(Path(args.video).resolve())
    jobs = resolve_jobs(args.jobs, cap=2)
    out = Path(args.out)
    print(f"bench physics: {len(cfg['cases'])} cases in {len(cfg['sets'])} set(s), jobs={jobs} -> {out}", flush=True)
    t0 = time.monotonic()
    results = run_cases(cfg["cases"], case_work(worker), jobs)
    report = build_report(results, cfg["sets"], worker, cfg["data"], time.monotonic() - t0)
    print(f"success {rate(report['totals']['success'], report['totals']['cases'])} (of the executable, whose "
          f"data does not stand in the way: {rate(report['totals']['success'], report['totals']['executable'])}), "
          f"median real-time factor "
          f"{report['totals']['median_rtf']}, failures by cause {report['totals']['causes']}", flush=True)
    save(out, report, summary_markdown(report, out), plot=("physics_bench.png", lambda p: write_plot(report, p)))
    return 0


def _generated(args: argparse.Namespace) -> dict:
    """The cases of ``--generated N --seed S`` (their scenes written to OUT/scenes), planned with
    the OAM of the simulation scenario sets."""
    from affplan_ros.bench.datasets import DataNotFoundError, default_oam_path, resolve_data_dir
    from affplan_ros.bench.frame import BenchSetupError
    from affplan_ros.bench.generated import generated_cases, write_cases
    from affplan_ros.bench.plan import OAM_CORRECTIONS, _oam
    from affplan_ros.core.knowledge.objects import load_object_table

    try:
        data = resolve_data_dir(args.data)
        spec = f"{default_oam_path('simulation', data)},{OAM_CORRECTIONS}"
    except DataNotFoundError as exc:
        raise BenchSetupError(str(exc)) from exc
    cases = generated_cases(args.generated, args.seed, load_object_table(), _oam(spec), builds=_lays_out)
    wanted = {int(c.split("#", 1)[1]) for c in args.case or () if c.startswith("generated#")}
    return {"cases": write_cases(cases, Path(args.out) / "scenes", args.seed, spec,
                                 keep=(lambda i: i in wanted) if wanted else None),
            "sets": ["generated"], "data": f"generated: {args.generated} homes, seed {args.seed}"}


def _lays_out(scene_text: str) -> bool:
    """Whether the physics world builds the scene as written (nothing left on a rim or stacked
    in the middle because it did not fit where the scene puts it)."""
    from affplan_ros.core.files.scene_io import parse_scene_text
    from affplan_ros.sim.physics.world import build_world

    try:
        world = build_world(parse_scene_text(scene_text))
    except ValueError:
        return False
    return not any("does not fit" in w or "no free space" in w for w in world.warnings)


# --------------------------------------------------------------------------------------
# One case

_WORKER: dict[str, Any] = {}


def _init(cfg: dict) -> None:
    _WORKER.clear()
    _WORKER["cfg"] = cfg


def case_work(worker_cfg: dict) -> CaseWork:
    return CaseWork(run=run_case, empty=_empty, failed=_failed, line=_line, init=_init, init_arg=worker_cfg)


def _empty(case: dict) -> dict:
    return {"set": case["set"], "index": case["index"], "task": case["task"], "scene_file": case["scene_file"],
            "capability": case.get("capability"),
            "desired_goal": case["desired_goal"].strip(), "plan_status": None, "plan": [], "steps": 0,
            "steps_executed": 0, "executed": False, "success": False, "goal_holds": False, "failed_step": None,
            "cause": None, "failure": None, "sim_seconds": 0.0, "wall_seconds": 0.0, "execute_wall_seconds": 0.0,
            "real_time_factor": None, "physics_rtf": None, "world_warnings": [], "data_errors": [], "notes": [],
            "error": None, "video": None}


def _failed(r: dict) -> None:
    r["success"] = False
    r["cause"] = r["cause"] or "error"
    r["failure"] = r["failure"] or {"what": f"error: {r['error']}"}


def _line(r: dict) -> str:
    tail = f"{r['cause']}: {(r['failure'] or {}).get('why') or (r['failure'] or {}).get('what', '')}" \
        if r["cause"] else f"rtf {r['real_time_factor']}"
    return f"{r['set']}#{r['index']} {r['task'][:40]!r} {tail}"[:195]


def run_case(case: dict) -> dict:
    t0 = time.monotonic()
    r = _empty(case)
    if _run_case(case, r):
        _failed(r)
    r["wall_seconds"] = round(time.monotonic() - t0, 3)
    return r


@recorded
def _run_case(case: dict, r: dict) -> None:
    from affplan_ros.bench import plan
    from affplan_ros.core.files.scene_io import load_scene
    from affplan_ros.core.goals.extraction import parse_goal
    from affplan_ros.core.goals.formula import to_dnf
    from affplan_ros.core.planning.task import build_task
    from affplan_ros.core.recovery.feedback import parse_detail
    from affplan_ros.sim.physics.executor import PhysicsExecutor
    from affplan_ros.sim.physics.world import build_world

    cfg = _WORKER["cfg"]
    t0 = time.monotonic()
    left = lambda: cfg["case_limit"] - (time.monotonic() - t0)  # noqa: E731
    oam = plan._oam(case["oam"])
    scene = load_scene(case["scene_path"])
    full = build_task(scene, oam=oam, unknown_classes="warn")
    # bench.plan's scratch record: its functions write their notes, failure and plan fields there.
    scratch = {"notes": [], "failure": None, "warnings": [], "seconds": {}}
    desired, answers = plan._desired_goal(case, scratch, "oracle", scene, full)
    if desired is None or not answers:
        r["cause"], r["failure"] = "data", {"what": scratch["failure"] or "no desired goal"}
        return
    goal = to_dnf(parse_goal(answers[0]))
    pcfg = {**cfg, "time_limit": max(1.0, min(cfg["time_limit"], left()))}
    pr = plan._plan(scratch, pcfg, oam, scene, full, SimpleNamespace(dnf=goal, goal_text=answers[0]))
    r["notes"] = scratch["notes"]
    r["plan_status"] = scratch.get("plan_status")
    r["plan"] = scratch.get("plan", [])
    if pr is None:
        r["cause"], r["failure"] = "no_plan", {"what": scratch["failure"]}
        return
    world = build_world(scene)
    r["world_warnings"] = world.warnings[:20]
    ex = PhysicsExecutor(scene, oam=oam, world=world, time_limit_s=max(0.0, left()))
    video = None
    if cfg.get("video"):
        from affplan_ros.sim.physics.video import RunVideo

        video = RunVideo(Path(cfg["video"]) / f"{case['set'].replace('/', '_')}_{case['index']}.mp4", fps=5)
        video.attach(world)
        ex.on_step = lambda text: setattr(video, "caption", text)
    t_exec, sim0 = time.monotonic(), world.sim_seconds
    try:
        if cfg.get("stack") == "robot":
            _run_on_robot(case, r, ex, world, oam, pr.plan, desired, left())
            return
        result = ex.execute(pr.plan)
    finally:
        if video is not None:
            video.close()
            r["video"] = {"file": str(video.path), "sheet": str(video.sheet) if video.sheet.is_file() else None,
                          "frames": video.frames, "dropped": video.dropped, "error": video.error or None}
    r["execute_wall_seconds"] = round(time.monotonic() - t_exec, 3)
    r["sim_seconds"] = round(world.sim_seconds - sim0, 3)
    if r["execute_wall_seconds"] > 0 and r["sim_seconds"] > 0:
        r["real_time_factor"] = round(r["sim_seconds"] / r["execute_wall_seconds"], 2)
        r["physics_rtf"] = round(world.real_time_factor, 1)
    r["steps"], r["steps_executed"], r["executed"] = len(pr.plan), result.steps_done, result.success
    r["goal_holds"] = ex.goal_reached(desired)
    r["success"] = r["goal_holds"]
    if not result.success:
        f = result.failure
        r["failed_step"] = result.outcomes[-1].step if result.outcomes else None
        # The typed cause where the skill knew it, else the detail's text (its observed facts are for recovery).
        if f is None:
            r["cause"] = "unknown"
        else:
            r["cause"] = f.cause.value if f.cause is not None else parse_detail(f.detail).text or f.code.name.lower()
        if f is not None and f.code.name == "TIMEOUT":
            r["cause"] = "timeout"
        r["failure"] = {"code": f.code.name, "what": f.what, "why": f.why, "suggestion": f.suggestion} if f else None
        if r["goal_holds"]:
            r["notes"].append("the desired goal holds although a step failed")
    elif not r["goal_holds"]:
        _goal_not_reached(r, ex, desired)
    if not r["success"]:
        _blame_the_data(r, scene, desired)


def _run_on_robot(case: dict, r: dict, judge, world, oam, steps, desired, left_s: float) -> None:
    """The plan carried out by the robot's own software on the case's world; ``judge`` (the
    physics executor, never used to move anything) reads the relations from the physics after."""
    from affplan_ros.bench.physics_robot import RobotStack

    stack = _WORKER.get("robot")
    if stack is None:
        stack = _WORKER["robot"] = RobotStack()
    t0 = time.monotonic()
    run = stack.run(world, oam, case["scene_path"], steps, left_s)
    r["execute_wall_seconds"] = round(time.monotonic() - t0, 3)
    r["sim_seconds"] = round(run.sim_seconds, 3)
    if r["execute_wall_seconds"] > 0 and r["sim_seconds"] > 0:
        r["real_time_factor"] = round(r["sim_seconds"] / r["execute_wall_seconds"], 2)
    r["steps"], r["steps_executed"], r["executed"] = len(steps), run.steps_done, run.success
    r["goal_holds"] = judge.goal_reached(desired)
    r["success"] = r["goal_holds"]
    if not run.success:
        r["cause"], r["failure"] = run.cause or "unknown", run.failure
        r["failed_step"] = str(steps[run.steps_done]) if run.steps_done < len(steps) else None
    elif not r["goal_holds"]:
        _goal_not_reached(r, judge, desired)
    r["notes"] = r["notes"] + [line for line in run.log if "WARN" in line or "ERROR" in line][-5:]


def _goal_not_reached(r: dict, judge, desired) -> None:
    """Every step succeeded and the goal does not hold: what holds of the goal's things instead."""
    named = {a for conj in desired for lit in conj for a in lit.args}
    relations = sorted(" ".join(a) for a in judge.relations()
                       if a[0] in ("on", "in", "inhand", "opened", "closed") and named & set(a[1:]))
    r["cause"] = "goal_not_reached"
    r["failure"] = {"what": "every step succeeded, but the desired goal does not hold in the physics-derived "
                            "relations",
                    "why": (f"what holds of {', '.join(sorted(named))}: "
                            + ("; ".join(relations) or "none of on, in, inhand, opened, closed"))[:600]}


def _blame_the_data(r: dict, scene, desired) -> None:
    """A failure that a contradiction of the scene file explains (the door both opened and closed,
    the goal that it be closed) is the data's, not the world's: cause ``data``, with the evidence."""
    from affplan_ros.core.model.contradictions import contradictions

    clashes = contradictions(scene)
    r["data_errors"] = [str(c) for c in clashes]
    step = tuple(str(r["failed_step"] or "").split())
    atoms = tuple((lit.predicate, *lit.args) for conj in desired for lit in conj) if r["cause"] == "goal_not_reached" \
        else ()
    behind = [c for c in clashes if c.behind(step, atoms)]
    if behind:
        f = r["failure"] or {}
        r["notes"].append(f"physics: {r['cause']}: {f.get('why') or f.get('what', '')}"[:400])
        r["cause"] = "data"
        r["failure"] = {**f, "why": f"the scene file says {'; '.join(map(str, behind))}: the planner starts from "
                                   f"both, the physics world can build one ({f.get('why') or f.get('what', '')})"[:700]}


# --------------------------------------------------------------------------------------
# Report


def _stats(rows: Sequence[dict]) -> dict:
    causes: dict[str, int] = {}
    for r in rows:
        if not r["success"]:
            causes[r["cause"] or "unknown"] = causes.get(r["cause"] or "unknown", 0) + 1
    rtfs = [r["real_time_factor"] for r in rows if r["real_time_factor"]]
    return {"cases": len(rows), "success": sum(r["success"] for r in rows),
            # Executable: the scenario's own data does not stand in the way (cause "data").
            "executable": sum(r["cause"] != "data" or r["success"] for r in rows),
            "causes": dict(sorted(causes.items(), key=lambda kv: -kv[1])),
            "median_rtf": round(statistics.median(rtfs), 1) if rtfs else None,
            "sim_seconds": round(sum(r["sim_seconds"] for r in rows), 1),
            "execute_wall_seconds": round(sum(r["execute_wall_seconds"] for r in rows), 1),
            "wall_seconds": round(sum(r["wall_seconds"] for r in rows), 1),
            "max_case_wall_seconds": max((r["wall_seconds"] for r in rows), default=0.0)}


def build_report(results: Sequence[dict], sets: Sequence[str], worker: dict, data: str, seconds: float) -> dict:
    capabilities = sorted({r["capability"] for r in results if r.get("capability")})
    return {"benchmark": "physics", "llm": "oracle", "data": data, "worker": worker, "seconds": round(seconds, 1),
            "sets": {s: _stats([r for r in results if r["set"] == s]) for s in sets},
            "capabilities": {c: _stats([r for r in results if r.get("capability") == c]) for c in capabilities},
            "totals": _stats(list(results)), "cases": list(results)}


CAUSES = {
    "no_motion": "a step with no motion in the physics world yet (heat_liquid)",
    "no_person_model": "a step planned for a person (the person model only gives and takes)",
    "unreachable": "physics: no IK solution / too far", "blocked": "physics: a collision stopped a motion",
    "slipped": "physics: not held, or did not come to rest", "no_free_space": "physics: no free spot",
    "container_closed": "physics: inside a closed container", "too_large": "physics: wider than the gripper "
    "or the container", "not_found": "physics: not where the plan says", "goal_not_reached":
    "every step succeeded but the goal does not hold physically", "timeout": "the case's time limit ran out",
    "no_plan": "the planner found no plan", "error": "a crash",
    "data": "the scenario's data is broken: its goal does not parse, or its scene says two things that cannot "
            "both hold and the failure rests on them (a door opened and closed; a bowl on the desk and the table)",
    "not_held": "physics: the hand does not hold what the step needs", "hand_full": "physics: no free hand (the "
    "robot's or the person's) for the object", "unknown_object": "the physics world has no body for the name",
    "not_articulated": "physics: the thing has no door, lid or drawer to move",
    "empty_grasp": "the gripper closed on nothing", "did_not_open": "the door or lid did not move as commanded",
    "motion_failed": "a controller aborted the motion (on the robot stack: its arm was stopped short of the "
                     "trajectory's end, by something in the way)",
    "person": "(robot stack) a step planned for a person: the simulated home has no person acting on requests yet",
    "door_open": "physics: the appliance's door is open",
    "not_heated": "physics: it ran, but the container was not where it heats",
    "not_a_heater": "physics: the named appliance warms nothing",
}


def summary_markdown(report: dict, out: Path | None = None) -> str:
    """The report as Markdown; the contact sheets' links relative to ``out`` (summary.md's folder)."""
    t = report["totals"]
    robot = report["worker"].get("stack") == "robot"
    who = ("by the robot's own software (`--stack robot`: robot_skills with its built-in arm planner on the "
           "simulated Tiago++'s ROS 2 interfaces, poses from the " + report["worker"].get("poses", "oracle")
           + " (the simulator's referee, simulation only))") if robot else \
        "by the simulator's own skills (`--stack sim`, which read the simulator's state: the baseline)"
    L = ["# Physics execution of the oracle plans (`affplan bench physics`)\n",
         f"- data: `{report['data']}`; goal: the desired goal (oracle), planned by Fast Downward "
         f"({report['worker']['time_limit']:g} s), executed on the MuJoCo world {who}",
         f"- case time limit {report['worker']['case_limit']:g} s; wall time {report['seconds']:.0f} s in all",
         "- success: the desired goal holds in the relations read from the physics state after the plan",
         "- real-time factor: simulated seconds per wall second of execution (IK, planning of motions and "
         "Python included; world building and Fast Downward not)\n",
         "| Set | Cases | Success | Median real-time factor | Sim s | Execute wall s | Case wall s (max) |",
         "|---|---|---|---|---|---|---|"]
    for name, s in list(report["sets"].items()) + [("**all**", t)]:
        L.append(f"| {name} | {s['cases']} | {rate(s['success'], s['cases'])} | {s['median_rtf']} | "
                 f"{s['sim_seconds']} | {s['execute_wall_seconds']} | {s['wall_seconds']} "
                 f"({s['max_case_wall_seconds']}) |")
    if report.get("capabilities"):
        L += ["", "## By capability\n", "| Capability | Cases | Success | Failures by cause |", "|---|---|---|---|"]
        for name, c in report["capabilities"].items():
            causes = ", ".join(f"{k} {v}" for k, v in c["causes"].items()) or "-"
            L.append(f"| {name} | {c['cases']} | {rate(c['success'], c['cases'])} | {causes} |")
    L.append(f"\nExecutable (the scenario's own data does not stand in the way; cause `data` below): "
             f"{t['executable']} of {t['cases']}; success among them {rate(t['success'], t['executable'])}.")
    L += ["", "## Failures by cause\n", "| Cause | Cases | Meaning |", "|---|---|---|"]
    for cause, n in t["causes"].items():
        L.append(f"| {cause} | {n} | {CAUSES.get(cause, '')} |")
    if not t["causes"]:
        L.append("| - | 0 | |")
    fails = [r for r in report["cases"] if not r["success"]]
    L.append(f"\n## Failed cases ({len(fails)})\n")
    for r in fails:
        f = r["failure"] or {}
        L.append(f"- **{r['set']}#{r['index']}** {r['task']!r}: {r['cause']}, after {r['steps_executed']}/"
                 f"{r['steps']} steps" + (f", at `{r['failed_step']}`" if r["failed_step"] else ""))
        L.append(f"  - {f.get('what', '')}" + (f"; why: {f['why']}" if f.get("why") else ""))
    L += _contact_sheets(report["cases"], out)
    return "\n".join(L) + "\n"


def _contact_sheets(cases: Sequence[dict], out: Path | None) -> list[str]:
    """Each case's contact sheet (the first frame of every step), when --video wrote one."""
    shown = [r for r in cases if (r.get("video") or {}).get("sheet")]
    if not shown:
        return []
    L = [f"\n## Contact sheets ({len(shown)}: the first frame of every step; the videos beside them)\n"]
    for r in shown:
        sheet = r["video"]["sheet"]
        link = os.path.relpath(sheet, out) if out is not None else sheet
        L.append(f"**{r['set']}#{r['index']}** {r['task']!r}: {'success' if r['success'] else r['cause']}, "
                 f"{r['video']['frames']} frames ([video]({Path(link).with_suffix('.mp4').as_posix()}))\n")
        L.append(f"![{r['set']}#{r['index']}]({Path(link).as_posix()})\n")
    return L


def write_plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = report["totals"]
    labels = ["success"] + list(t["causes"])
    values = [t["success"]] + list(t["causes"].values())
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(labels) + 1), 3.8))
    ax.bar(labels, values, color=["tab:green"] + ["tab:red"] * len(t["causes"]))
    ax.set_ylabel("cases")
    ax.set_title(f"Oracle plans on the physics world: {rate(t['success'], t['cases'])} succeed; "
                 f"median RTF {t['median_rtf']}", fontsize=9)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

