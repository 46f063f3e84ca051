"""`affplan bench recovery`: recovering from execution failures (LASP and CoPAL cases).

Each scenario of ``config/scenarios/recovery/`` (the project's YAML format, see
``affplan_ros/sim/scenario.py``) runs the recovery loop (``core/recovery/runner.py``): the LLM
writes the goal, the planner plans on the robot's belief and model, a simulated world with
the hidden ground truth executes; failures are repaired at mid level (rules, no LLM), learned
from (LASP) or sent back to the goal writer with the error triplet at the chosen feedback
level. A case succeeds when the world satisfies the scenario's goal at the end.

The grid ``--feedback`` x ``--repair`` reruns CoPAL's comparisons (Figs. 3-4: executability per
feedback level; replans and time with and without the mid level); the LASP cases are reported
in the layouts of LASP's Tables II (success and what was learned per case) and III (LLM calls,
tokens and time per role). After a LASP case succeeds it is run again with the knowledge file
it wrote, as after a restart (``--repeat``): the learned preconditions must prevent the failure.

``--through suite`` (or ``both``) also sends each LASP case through the running node suite
(``bench/recovery_suite.py``): a suite learns, a restarted suite plans with the knowledge file.

LLM modes: ``scripted:FILE`` (answers per case and kind of question, see
``config/scenarios/recovery/answers.yaml``) and ``endpoint`` (AFFPLAN_LLM_BASE_URL, ...).
Writes results.json, summary.md and recovery_bench.png to --out.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from affplan_ros.bench.frame import (
    CaseWork,
    command,
    jobs_option,
    output_option,
    recorded,
    resolve_jobs,
    run_cases,
    save,
    setup_errors,
)

LEVELS = ("what", "why", "how")
SETS = ("lasp", "copal")
ROLES = ("goal", "cause", "precondition", "completeness", "translate", "expand", "step")


def default_scenarios() -> Path:
    from affplan_ros.env import config_file

    return config_file("scenarios/recovery")


def _list(text: str, allowed: Sequence[str], option: str) -> list[str]:
    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if "all" in items:
        return list(allowed)
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise ValueError(f"{option} {text!r}: use one or more of {', '.join(allowed)} (comma-separated) or all")
    return list(dict.fromkeys(items))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the recovery scenarios (LASP's missing preconditions, properties and objects; CoPAL's hands-full, "
        "closed-container, not-in-hand and out-of-reach failures) through goal writing, planning, simulated "
        "execution with hidden ground truth, mid-level repair, LASP learning and high-level replanning.")
    parser.epilog = ("example: affplan bench recovery --set all --feedback what,why,how --repair on,off "
                     "--llm scripted:config/scenarios/recovery/answers.yaml --out results/recovery")
    parser.add_argument("--set", default="all", choices=[*SETS, "all"], help="scenario set (default: all)")
    parser.add_argument("--feedback", default="how",
                        help="feedback level(s) handed to the high level: what, why, how, comma-separated or all "
                             "(default: how)")
    parser.add_argument("--repair", default="on", help="mid-level repair: on, off, or on,off (default: on)")
    parser.add_argument("--learn", default="auto", choices=["auto", "on", "off"],
                        help="LASP learning: auto = on for LASP cases, off for CoPAL cases (default: auto)")
    parser.add_argument("--grounding", default="off", choices=["on", "off"],
                        help="IALP grounding predicates from the simulated world (default: off)")
    parser.add_argument("--mode", default="plan", choices=["plan", "stepwise"],
                        help="plan with Fast Downward, or IALP's log-probability step planner (default: plan)")
    parser.add_argument("--llm", required=True, metavar="MODE",
                        help="scripted:FILE (answers per scenario id and question kind) | endpoint")
    output_option(parser, "recovery")
    parser.add_argument("--scenarios", help="scenario folder (default: config/scenarios/recovery)")
    parser.add_argument("--case", action="append", metavar="ID", help="run only this scenario id (repeatable)")
    parser.add_argument("--max-replans", type=int, default=5, help="high-level replans per case (default: 5)")
    parser.add_argument("--max-refinements", type=int, default=4, help="LASP refinements per case (default: 4)")
    parser.add_argument("--time-limit", type=float, default=30.0, help="planner seconds per plan (default: 30)")
    parser.add_argument("--max-seconds", type=float, default=300.0, help="wall-time bound per case (default: 300)")
    parser.add_argument("--repeat", default="on", choices=["on", "off"],
                        help="rerun successful LASP cases with the knowledge they wrote (default: on)")
    parser.add_argument("--through", default="core", choices=["core", "suite", "both"],
                        help="run the cases through the core loop, through the running node suite (LASP cases: "
                             "one suite learns, a restarted one uses the knowledge file; needs ROS 2), or both "
                             "(default: core)")
    parser.add_argument("--time-scale", type=float, default=0.02,
                        help="--through suite: the simulated skills' speed (default: 0.02, 50x real time)")
    jobs_option(parser, "cases in parallel (default: min(2, CPUs); 1 for endpoint)")


def prepare(args: argparse.Namespace) -> dict:
    from affplan_ros.sim.scenario import load_scenarios

    folder = Path(args.scenarios) if args.scenarios else default_scenarios()
    sets = set(SETS) if args.set == "all" else {args.set}
    scenarios = load_scenarios(folder, sets)
    if args.case:
        known = {s.id for s in scenarios}
        missing = [c for c in args.case if c not in known]
        if missing:
            raise ValueError(f"no scenario {', '.join(missing)} in {folder} (ids: {', '.join(sorted(known))})")
        scenarios = [s for s in scenarios if s.id in args.case]
    if not scenarios:
        raise ValueError(f"no scenarios of set {args.set} in {folder}")
    levels = _list(args.feedback, LEVELS, "--feedback")
    repairs = [x == "on" for x in _list(args.repair, ("on", "off"), "--repair")]
    for n, v in (("--max-replans", args.max_replans), ("--max-refinements", args.max_refinements)):
        if v < 0:
            raise ValueError(f"{n} must be >= 0")
    out = Path(args.out)
    cases = []
    for s in scenarios:
        for level in levels:
            for repair in repairs:
                cases.append({"id": f"{s.id}@{level}/{'repair' if repair else 'norepair'}", "scenario": s.id,
                              "path": s.path, "set": s.set, "family": s.family, "title": s.title,
                              "task": s.task, "goal": s.goal, "expect": s.expect, "feedback": level,
                              "repair": repair, "knowledge": str(out / "knowledge" / f"{level}-{int(repair)}" /
                                                                 f"{s.id}.json")})
    worker = {"learn": args.learn, "grounding": args.grounding == "on", "mode": args.mode,
              "max_replans": args.max_replans, "max_refinements": args.max_refinements,
              "time_limit": args.time_limit, "max_seconds": args.max_seconds, "repeat": args.repeat == "on"}
    through = getattr(args, "through", "core")
    suite_cases = []
    if through in ("suite", "both"):
        if getattr(args, "time_scale", 0.02) < 0:
            raise ValueError("--time-scale must be >= 0")
        for s in scenarios:
            if s.set != "lasp":
                continue  # CoPAL's cases compare feedback levels and repair inside the core loop
            suite_cases.append({"id": f"{s.id}@suite", "scenario": s.id, "path": s.path, "set": s.set,
                                "family": s.family, "title": s.title, "task": s.task, "goal": s.goal,
                                "expect": s.expect, "feedback": "how", "repair": True, "via": "suite"})
        if not suite_cases:
            raise ValueError("--through suite runs the LASP cases; the selection has none")
        if not str(args.llm).strip().startswith("scripted:"):
            raise ValueError("--through suite needs --llm scripted:FILE (the suite's nodes get each case's "
                             "answers on a local endpoint)")
    if through == "suite":
        cases = []
    return {"cases": cases, "suite_cases": suite_cases, "worker": worker, "levels": levels, "repairs": repairs,
            "scenarios": str(folder), "llm": args.llm, "sets": sorted(sets), "through": through}


@command
def run(args: argparse.Namespace) -> int:
    with setup_errors(ValueError, FileNotFoundError, RuntimeError):
        cfg = prepare(args)
        cfg["worker"]["llm"], cfg["llm_label"] = parse_mode(args.llm)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = resolve_jobs(args.jobs, cap=2, endpoint=cfg["worker"]["llm"]["kind"] == "endpoint")
    print(f"bench recovery: {len(cfg['cases'])} runs, llm={cfg['llm_label']}, jobs={jobs} -> {out}", flush=True)
    t0 = time.monotonic()
    results = run_cases(cfg["cases"], case_work(cfg["worker"]), jobs) if cfg["cases"] else []
    core_seconds = time.monotonic() - t0
    if cfg["suite_cases"]:
        from affplan_ros.bench.recovery_suite import run_suite_cases

        print(f"bench recovery: {len(cfg['suite_cases'])} LASP cases through the node suite "
              f"(two suites each: learn, restart)", flush=True)
        t1 = time.monotonic()
        results += run_suite_cases(cfg["suite_cases"], load_recovery_script(cfg["worker"]["llm"]["file"]), out,
                                   time_scale=args.time_scale, task_timeout=min(600.0, args.max_seconds))
        cfg["suite_seconds"] = round(time.monotonic() - t1, 2)
    cfg["core_seconds"] = round(core_seconds, 2)
    report = build_report(results, cfg, time.monotonic() - t0)
    if report.get("suite"):
        s = report["suite"]
        print(f"{'suite':14s} success {s['success']}/{s['cases']}  restart without a failure "
              f"{s['restart_clean']}/{s['cases']}  llm calls {s['llm_calls']}")
    for key, s in report["configs"].items():
        print(f"{key:14s} success {s['success']}/{s['cases']}  executable first plan {s['first_executable']}/"
              f"{s['cases']}  mid {s['mid_replans']} high {s['high_replans']} llm calls {s['llm_calls']}")
    write_outputs(report, out)
    return 0


def case_work(worker: dict) -> CaseWork:
    """The cases' work for :func:`~affplan_ros.bench.frame.run_cases` (``worker``: settings per process)."""
    return CaseWork(run=run_case, empty=empty_result, failed=_failed, line=_line, init=init_worker, init_arg=worker)


def _line(r: dict) -> str:
    return (f"{r['id']:52s} mid {r['mid_replans']} high {r['high_replans']} learn {r['refinements']} "
            f"llm {r['llm_calls']} {r['seconds']:.1f}s {r['stop_reason']}")


# ----------------------------------------------------------------------------------------
# The scripted LLM for recovery: per-kind answers, conditional answers, candidates with
# log-probabilities.


def load_recovery_script(path) -> dict[str, dict[str, list]]:
    """case id -> kind -> answers (strings, {if, then, else} or {candidates: ...})."""
    import yaml

    from affplan_ros.bench.scripted import ScriptError

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScriptError(f"cannot read the script {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("cases"), dict):
        data = data["cases"]
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: expected a mapping from scenario ids to answers")
    out = {}
    for case, kinds in data.items():
        if not isinstance(kinds, dict) or not all(isinstance(v, list) for v in kinds.values()):
            raise ScriptError(f"{path}: case {case}: expected kind -> list of answers")
        out[str(case)] = {str(k): list(v) for k, v in kinds.items()}
    return out


def _reply(item: Any, messages: list[dict]):
    """A script item as the fake server's reply (conditions resolved on the user messages)."""
    from affplan_ros.llm.fake_server import FakeChoice, FakeReply

    if isinstance(item, dict) and "if" in item:
        said = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user").lower()
        item = item.get("then") if str(item["if"]).lower() in said else item.get("else")
        return _reply(item, messages)
    if isinstance(item, dict) and "candidates" in item:
        with_lp = item.get("logprobs", True)
        choices = [FakeChoice(str(t), [(str(t), float(lp))] if with_lp else None) for t, lp in item["candidates"]]
        return FakeReply(text=choices[0].text, choices=choices)
    return None if item is None else str(item)


class ScriptedRecoveryEndpoint:
    """A local chat-completions server answering from the current case's recovery script;
    ``client`` is a real ChatClient pointed at it. Call :meth:`use` before each case."""

    def __init__(self):
        import threading

        from affplan_ros.llm.client import ChatClient
        from affplan_ros.llm.config import LLMConfig
        from affplan_ros.llm.fake_server import FakeChatServer

        self._lock = threading.Lock()
        self._queues: dict[str, list] = {}
        self._case = ""
        self.server = FakeChatServer(self._answer, model="scripted").start()
        self.client = ChatClient(LLMConfig(base_url=self.server.base_url, model="scripted", api_key_env="",
                                           timeout_s=30.0, max_retries=0))

    def use(self, case: str, answers: Optional[dict]) -> None:
        with self._lock:
            self._case, self._queues = case, {k: list(v) for k, v in (answers or {}).items()}

    def close(self) -> None:
        self.client.close()
        self.server.stop()

    def _answer(self, messages: list[dict], body: dict):
        from affplan_ros.llm.fake_server import FakeReply
        from affplan_ros.llm.recovery_prompting import recovery_prompt_kind

        last = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        kind = recovery_prompt_kind(last if isinstance(last, str) else "") or "unknown"
        with self._lock:
            queue = self._queues.get(kind)
            if not queue:
                return FakeReply(status=400, error_message=f"the script has no {kind!r} answer for case {self._case!r}")
            item = queue.pop(0) if len(queue) > 1 else queue[0]  # the last answer repeats
        return _reply(item, messages)


def parse_mode(text: str) -> tuple[dict, str]:
    from affplan_ros.bench.scripted import parse_llm_mode

    text = (text or "").strip()
    if text.startswith("scripted:"):
        path = Path(text[len("scripted:"):].strip()).expanduser()
        load_recovery_script(path)  # fail early
        return {"kind": "scripted", "file": str(path.resolve())}, f"scripted answers from {path}"
    return parse_llm_mode(text)


# ----------------------------------------------------------------------------------------
# Running cases

_W: dict[str, Any] = {}


def init_worker(cfg: dict) -> None:
    _W.clear()
    _W["cfg"] = cfg
    mode = cfg["llm"]
    if mode["kind"] == "scripted":
        _W["script"] = load_recovery_script(mode["file"])
        _W["endpoint"] = ScriptedRecoveryEndpoint()
        _W["client"] = _W["endpoint"].client
    else:
        from affplan_ros.llm.client import ChatClient
        from affplan_ros.llm.config import LLMConfig

        _W["script"], _W["endpoint"] = None, None
        _W["client"] = ChatClient(LLMConfig.from_mapping(mode["endpoint"]))
    try:
        from affplan_ros.core.goals.semantics import SemanticChecker

        _W["semantic"], _W["semantic_error"] = SemanticChecker(), None
    except Exception as exc:  # noqa: BLE001 - Prolog missing: said in every case, the run goes on
        _W["semantic"], _W["semantic_error"] = None, f"semantic check unavailable: {exc}"


def empty_result(case: dict) -> dict:
    return {**{k: case[k] for k in ("id", "scenario", "set", "family", "title", "task", "feedback", "repair",
                                    "expect")},
            "success": False, "executable": False, "first_plan_executable": False, "mid_replans": 0,
            "high_replans": 0, "refinements": 0, "learned": [], "objects_added": [], "llm_calls": 0,
            "tokens": 0, "usage": {}, "seconds": 0.0, "plan_seconds": 0.0, "stop_reason": None, "stop_message": "",
            "failures": [], "plans": [], "executed": [], "events": [], "repeat": None, "error": None, "notes": []}


def _one_run(scenario, knowledge_path: Optional[str], feedback: str, repair: bool, learn: bool):
    from affplan_ros.core.recovery.feedback import FeedbackLevel
    from affplan_ros.core.recovery.knowledge import KnowledgeStore
    from affplan_ros.core.recovery.runner import RecoveryConfig, RecoveryRunner
    from affplan_ros.llm.recovery_prompting import (
        LaspPromptBuilder,
        LogprobSampler,
        ReplanGoalPromptBuilder,
        StepPromptBuilder,
    )
    from affplan_ros.sim.recovery_world import ScenarioExecutor

    cfg = _W["cfg"]
    ex = ScenarioExecutor(scenario)
    store = KnowledgeStore.open(knowledge_path)
    runner = RecoveryRunner(
        _W["client"], ReplanGoalPromptBuilder(), ex, scenario.robot_domain(), store,
        lasp_prompter=LaspPromptBuilder(), environment=ex, grounding=ex, semantic=_W["semantic"],
        step_model=LogprobSampler(_W["client"]), step_prompter=StepPromptBuilder(),
        config=RecoveryConfig(feedback=FeedbackLevel.parse(feedback), repair=repair, learn=learn,
                              mode=cfg["mode"], grounding=cfg["grounding"], max_replans=cfg["max_replans"],
                              max_refinements=cfg["max_refinements"], plan_time_limit=cfg["time_limit"],
                              max_seconds=cfg["max_seconds"]))
    res = runner.run(scenario.task, scenario.belief_scene())
    return res, ex.goal_reached(), store


def run_case(case: dict) -> dict:
    t0 = time.monotonic()
    r = empty_result(case)
    if _run_case(case, r):
        _failed(r)
        r["seconds"] = round(time.monotonic() - t0, 3)
    return r


def _failed(r: dict) -> None:
    """A case that raised (``r["error"]`` set): failed, the error its stop message unless it had one."""
    r["stop_message"] = r["stop_message"] or r["error"]
    r["success"] = False


@recorded
def _run_case(case: dict, r: dict) -> None:
    from affplan_ros.sim.scenario import load_scenario

    t0 = time.monotonic()
    scenario = load_scenario(case["path"])
    cfg = _W["cfg"]
    learn = cfg["learn"] == "on" or (cfg["learn"] == "auto" and scenario.set == "lasp")
    if _W["semantic_error"]:
        r["notes"].append(_W["semantic_error"])
    kpath = Path(case["knowledge"])
    if kpath.exists():
        kpath.unlink()  # every configuration starts without learned knowledge
    if _W["endpoint"] is not None:
        answers = _W["script"].get(case["scenario"])
        if answers is None:
            r["notes"].append(f"the script has no answers for {case['scenario']}")
        _W["endpoint"].use(case["scenario"], answers)
    res, reached, store = _one_run(scenario, str(kpath), case["feedback"], case["repair"], learn)
    r["seconds"] = round(time.monotonic() - t0, 3)  # the repeat run is timed on its own
    d = res.to_dict()
    r.update(success=bool(reached), executable=res.success,
             first_plan_executable=bool(res.first_plan_executable), mid_replans=res.mid_replans,
             high_replans=res.high_replans, refinements=res.refinements, learned=res.learned,
             objects_added=res.objects_added, llm_calls=res.usage.total_calls, tokens=res.usage.total_tokens,
             usage=d["usage"], plan_seconds=round(res.plan_seconds, 3), stop_reason=res.stop_reason.value,
             stop_message=res.message, failures=res.failures, plans=res.plans, executed=res.executed,
             events=res.events, notes=r["notes"] + res.notes, knowledge=store.render())
    if cfg["repeat"] and learn and reached and (res.learned or res.objects_added):
        if _W["endpoint"] is not None:
            _W["endpoint"].use(case["scenario"], _W["script"].get(case["scenario"]))
        t1 = time.monotonic()
        res2, reached2, _ = _one_run(scenario, str(kpath), case["feedback"], case["repair"], learn)
        r["repeat"] = {"success": bool(reached2), "failures": len(res2.failures), "refinements": res2.refinements,
                       "seconds": round(time.monotonic() - t1, 3),
                       "llm_calls": res2.usage.total_calls, "stop_reason": res2.stop_reason.value,
                       "plans": res2.plans, "objects_added": res2.objects_added}


# ----------------------------------------------------------------------------------------
# Report


def _median(values: Sequence[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


def config_stats(rows: Sequence[dict]) -> dict:
    return {"cases": len(rows), "success": sum(r["success"] for r in rows),
            "executable": sum(r["executable"] for r in rows),
            "first_executable": sum(r["first_plan_executable"] for r in rows),
            "mid_replans": sum(r["mid_replans"] for r in rows), "high_replans": sum(r["high_replans"] for r in rows),
            "refinements": sum(r["refinements"] for r in rows), "llm_calls": sum(r["llm_calls"] for r in rows),
            "tokens": sum(r["tokens"] for r in rows), "median_seconds": _median([r["seconds"] for r in rows]),
            "seconds": round(sum(r["seconds"] for r in rows), 2),
            "errors": sum(r["error"] is not None for r in rows)}


def _key(level: str, repair: bool) -> str:
    return f"{level}/{'repair' if repair else 'norepair'}"


def _main_config(report: dict) -> str:
    """The configuration the per-case tables show: the richest feedback, repair on if run."""
    return _key(report["levels"][-1], True if True in report["repairs"] else report["repairs"][0])


def _core(rows: Sequence[dict]) -> list[dict]:
    return [r for r in rows if r.get("via", "core") == "core"]


def suite_stats(rows: Sequence[dict]) -> dict:
    """The cases run through the node suite: success, and the restarted suite's run."""
    rep = [r["repeat"] for r in rows if r.get("repeat")]
    return {"cases": len(rows), "success": sum(r["success"] for r in rows),
            "learned": sum(len(r["learned"]) for r in rows),
            "restart_clean": sum(1 for x in rep if x["success"] and x["failures"] == 0 and not x.get("learned")),
            "llm_calls": sum(r["llm_calls"] for r in rows), "restart_llm_calls": sum(x["llm_calls"] for x in rep),
            "tokens": sum(r["tokens"] for r in rows), "median_seconds": _median([r["seconds"] for r in rows]),
            "seconds": round(sum(r["seconds"] for r in rows), 2), "errors": sum(r["error"] is not None for r in rows)}


def build_report(results: Sequence[dict], cfg: dict, seconds: float = 0.0) -> dict:
    configs, by_set = {}, {}
    suite = [r for r in results if r.get("via") == "suite"]
    results_all, results = list(results), _core(results)
    for level in cfg["levels"]:
        for repair in cfg["repairs"]:
            rows = [r for r in results if r["feedback"] == level and r["repair"] == repair]
            if not rows:
                continue
            configs[_key(level, repair)] = config_stats(rows)
            for name in cfg["sets"]:
                sub = [r for r in rows if r["set"] == name]
                if sub:
                    by_set[f"{name} {_key(level, repair)}"] = config_stats(sub)
    return {"benchmark": "recovery", "llm": cfg["llm"], "llm_label": cfg.get("llm_label", cfg["llm"]),
            "scenarios": cfg["scenarios"], "worker": {k: v for k, v in cfg["worker"].items() if k != "llm"},
            "levels": cfg["levels"], "repairs": cfg["repairs"], "seconds": round(seconds, 2),
            "through": cfg.get("through", "core"), "core_seconds": cfg.get("core_seconds"),
            "suite_seconds": cfg.get("suite_seconds"), "configs": configs, "by_set": by_set,
            "suite": suite_stats(suite) if suite else None, "cases": results_all}


def summary_markdown(report: dict) -> str:
    from affplan_ros.bench.report import rate

    w = report["worker"]
    cases = _core(report["cases"])
    L = ["# Recovery benchmark (`affplan bench recovery`)\n",
         f"- LLM: {report['llm_label']}",
         f"- scenarios: `{report['scenarios']}`",
         f"- method: learning {w['learn']} (auto: LASP cases learn, CoPAL cases do not), grounding "
         f"{'on' if w['grounding'] else 'off'}, planning mode {w['mode']}; bounds: {w['max_replans']} high-level "
         f"replans, {w['max_refinements']} LASP refinements, planner {w['time_limit']:g} s per plan, "
         f"{w['max_seconds']:g} s per case",
         f"- wall time {report['seconds']:.0f} s"
         + (f" (core {report['core_seconds']:.0f} s, node suite {report['suite_seconds']:.0f} s)"
            if report.get("suite_seconds") is not None else ""),
         "- success: the simulated world satisfies the scenario's goal at the end. executable: the last plan ran "
         "to its end. first plan executable: the first plan ran without any failure (CoPAL's 'no replanning').\n"]
    L.append("## All configurations\n")
    head = ["Set / feedback / repair", "Runs", "Success", "First plan executable", "Executable in the end",
            "Mid-level repairs", "High-level replans", "LASP refinements", "LLM calls", "Tokens",
            "Seconds (median per case)"]
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "---|" * len(head))
    for key, s in report["by_set"].items():
        L.append("| " + " | ".join([key, str(s["cases"]), rate(s["success"], s["cases"]),
                                    rate(s["first_executable"], s["cases"]), rate(s["executable"], s["cases"]),
                                    str(s["mid_replans"]), str(s["high_replans"]), str(s["refinements"]),
                                    str(s["llm_calls"]), str(s["tokens"]), f"{s['median_seconds']:.2f}"]) + " |")
    L.append("")

    lasp = [r for r in cases if r["set"] == "lasp"]
    if lasp:
        main = _main_config(report)
        L.append(f"## LASP cases (layout of LASP Table II: missing knowledge and success per case; "
                 f"configuration {main}, success over all configurations run)\n")
        head = ["Case", "Task", "Missing", "Success", "Success (all configs)", "Refinements", "Learned",
                "Objects added", "Proposals refused", "Repeat run (restart with the knowledge file)"]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for sid in sorted({r["scenario"] for r in lasp}):
            rows = [r for r in lasp if r["scenario"] == sid]
            r = next((x for x in rows if _key(x["feedback"], x["repair"]) == main), rows[0])
            exp = ", ".join((r.get("expect") or {}).get("missing", []))
            rep = r.get("repeat")
            rep_text = ("-" if rep is None else
                        f"{'success' if rep['success'] else 'FAILED'}, {rep['failures']} failures, "
                        f"{rep['llm_calls']} LLM calls")
            refused = sum(len(e.get("rejected") or []) for e in r["events"] if e.get("kind") == "learn")
            L.append("| " + " | ".join([sid, r["family"], exp or "-", "yes" if r["success"] else "**no**",
                                        rate(sum(x["success"] for x in rows), len(rows)), str(r["refinements"]),
                                        "<br>".join(r["learned"]) or "-", ", ".join(r["objects_added"]) or "-",
                                        str(refused), rep_text]) + " |")
        L.append("")
        L.append(f"## LASP cases (layout of LASP Table III: LLM calls per role, tokens, time; configuration {main})\n")
        head = ["Case"] + [f"{x} calls" for x in ROLES] + ["LLM calls", "Tokens", "Seconds", "Planner seconds"]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for sid in sorted({r["scenario"] for r in lasp}):
            rows = [r for r in lasp if r["scenario"] == sid]
            r = next((x for x in rows if _key(x["feedback"], x["repair"]) == main), rows[0])
            calls = (r.get("usage") or {}).get("calls", {})
            L.append("| " + " | ".join([sid] + [str(calls.get(x, 0)) for x in ROLES]
                                       + [str(r["llm_calls"]), str(r["tokens"]), f"{r['seconds']:.2f}",
                                          f"{r['plan_seconds']:.2f}"]) + " |")
        L.append("")

    copal = [r for r in cases if r["set"] == "copal"]
    if copal:
        L.append("## CoPAL cases (layout of CoPAL Fig. 3: executability by feedback level)\n")
        levels, repairs = report["levels"], report["repairs"]
        head = ["Repair", "No replanning (first plan)"] + [f"feedback {lv}: success" for lv in levels]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for repair in repairs:
            rows = [r for r in copal if r["repair"] == repair]
            first = [r for r in rows if r["feedback"] == levels[0]]
            cells = [("on" if repair else "off"), rate(sum(r["first_plan_executable"] for r in first), len(first))]
            for lv in levels:
                sub = [r for r in rows if r["feedback"] == lv]
                cells.append(rate(sum(r["success"] for r in sub), len(sub)))
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
        L.append("## CoPAL cases (layout of CoPAL Fig. 4: replans and time with and without the mid level)\n")
        head = ["Case", "Feedback", "Repair", "Success", "Mid-level repairs", "High-level replans", "LLM calls",
                "Tokens", "Seconds", "Stop"]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for r in copal:
            L.append("| " + " | ".join([r["scenario"], r["feedback"], "on" if r["repair"] else "off",
                                        "yes" if r["success"] else "**no**", str(r["mid_replans"]),
                                        str(r["high_replans"]), str(r["llm_calls"]), str(r["tokens"]),
                                        f"{r['seconds']:.2f}", r["stop_reason"] or "-"]) + " |")
        L.append("")
    suite = [r for r in report["cases"] if r.get("via") == "suite"]
    if suite:
        s = report["suite"]
        L.append(f"## LASP cases through the node suite ({s['success']}/{s['cases']} succeeded; restarted suite "
                 f"without a failure or new learning in {s['restart_clean']}/{s['cases']})\n")
        L.append("Each case: the sim suite (one process per node) with the scenario as world and robot model and a "
                 "fresh knowledge file; the task through ExecuteTask; then the whole suite stopped and started "
                 "again on the same knowledge file and the task sent again.\n")
        head = ["Case", "Missing", "Success", "Learned", "Failures", "LLM calls", "Suite start s", "Task s",
                "Restart: success", "Restart: failures", "Restart: LLM calls", "Restart: plan"]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for r in suite:
            first = r.get("suite") or {}
            rep = r.get("repeat")
            L.append("| " + " | ".join([
                r["scenario"], ", ".join((r.get("expect") or {}).get("missing", [])) or "-",
                "yes" if r["success"] else "**no**", "<br>".join(r["learned"]) or "-",
                str(first.get("failures", "-")), str(r["llm_calls"]), f"{first.get('start_seconds', 0):.1f}",
                f"{first.get('task_seconds', 0):.1f}",
                "-" if rep is None else ("yes" if rep["success"] else "**no**"),
                "-" if rep is None else str(rep["failures"]), "-" if rep is None else str(rep["llm_calls"]),
                "-" if rep is None else "; ".join(rep["plans"][0]) or "-"]) + " |")
        L.append("")
    bad = [r for r in report["cases"] if not r["success"]]
    L.append(f"## Runs that did not reach the goal ({len(bad)})\n")
    if not bad:
        L.append("None.\n")
    for r in bad:
        L.append(f"- **{r['id']}** ({r['title']}): stop {r['stop_reason']}: {r['stop_message']}")
        for f in r["failures"][-2:]:
            L.append(f"  - failure: {f}")
        if r["error"]:
            L.append(f"  - error: {r['error']}")
    return "\n".join(L) + "\n"


def write_outputs(report: dict, out: Path) -> None:
    save(out, report, summary_markdown(report), plot=("recovery_bench.png", lambda path: write_plot(report, path)))


def write_plot(report: dict, path: Path) -> None:
    import matplotlib

    from affplan_ros.bench.report import pct

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cases = _core(report["cases"])
    levels, repairs = report["levels"], report["repairs"]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4.4))
    # CoPAL Fig. 3 style: executability without replanning, then success per feedback level,
    # for each set and repair setting.
    groups = [(s, rp) for s in SETS for rp in repairs if any(r["set"] == s and r["repair"] == rp for r in cases)]
    labels = ["no replanning"] + [f"feedback {lv}" for lv in levels]
    x = np.arange(len(groups))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        vals = []
        for s, rp in groups:
            rows = [r for r in cases if r["set"] == s and r["repair"] == rp]
            sub = [r for r in rows if r["feedback"] == (levels[0] if k == 0 else levels[k - 1])]
            key = "first_plan_executable" if k == 0 else "success"
            vals.append(pct(sum(r[key] for r in sub), len(sub)))
        a1.bar(x + (k - (len(labels) - 1) / 2) * width, vals, width, label=label)
    a1.set_xticks(x)
    a1.set_xticklabels([f"{s.upper()}\nrepair {'on' if rp else 'off'}" for s, rp in groups], fontsize=8)
    a1.set_ylim(0, 125)
    a1.set_yticks(range(0, 101, 20))
    a1.set_ylabel("% of cases")
    a1.set_title("success by feedback level", fontsize=10)
    a1.legend(loc="upper center", ncol=2, fontsize=7)
    # CoPAL Fig. 4 style: replans, LLM calls and time with and without mid-level repair.
    copal = [r for r in cases if r["set"] == "copal" and r["feedback"] == levels[-1]]
    names = sorted({r["scenario"] for r in copal})
    x = np.arange(len(names))

    def per_case(field: str, repair: bool) -> list:
        return [next((r[field] for r in copal if r["scenario"] == n and r["repair"] == repair), 0) for n in names]

    series = [(f"{lvl}-level, repair {'on' if rp else 'off'}", per_case(f"{lvl}_replans", rp))
              for rp in repairs for lvl in ("high", "mid")]
    width = 0.8 / max(1, len(series))
    for k, (label, vals) in enumerate(series):
        a2.bar(x + (k - (len(series) - 1) / 2) * width, vals, width, label=label)
    series = [(f"repair {'on' if rp else 'off'}", per_case("llm_calls", rp)) for rp in repairs]
    width3 = 0.8 / max(1, len(series))
    for k, (label, vals) in enumerate(series):
        a3.bar(x + (k - (len(series) - 1) / 2) * width3, vals, width3, label=label)
    for ax, title, ylabel in ((a2, "replans", "replans per case"), (a3, "LLM calls", "LLM calls per case")):
        ax.set_xticks(x)
        ax.set_xticklabels([n.replace("copal_", "") for n in names], rotation=25, ha="right", fontsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_ylabel(ylabel)
        ax.set_title(f"CoPAL cases: {title} (feedback {levels[-1]})", fontsize=10)
        if names:
            ax.legend(fontsize=7)
    secs = {rp: _median([r["seconds"] for r in copal if r["repair"] == rp]) for rp in repairs}
    a3.set_xlabel("median seconds per case: " + ", ".join(f"repair {'on' if rp else 'off'} {v:.2f} s"
                                                          for rp, v in secs.items()), fontsize=8)
    fig.suptitle(f"recovery — {report['llm_label']}"[:110], fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
