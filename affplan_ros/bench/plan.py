"""`affplan bench plan`: the AutoGPT+P Plan Tool benchmark (paper Tables V/VI) on the original data.

Per scenario: the "LLM" answers with a goal, the answer goes through the real goal loop
(extraction, syntax/type checks, Prolog semantics, bounded self-correction), Fast Downward
plans for the accepted goal, and the plan is simulated symbolically from the scene. As in the
paper, a case succeeds when the final state satisfies the scenario's DESIRED goal (some
disjunct's positive literals hold and none of its negated ones); it is minimal when it
succeeds with cost <= min_costs.

LLM modes:
  oracle         the scenario's desired goal is the answer (everything but the LLM is measured)
  replay:FILE    a CSV task,goal[,set] with one answer per case (e.g. written by bench.replay)
  replay:paper   GPT-4's answers extracted on the fly from the paper's logs (logs/planning)
  endpoint       the LLM configured in the environment (AFFPLAN_LLM_BASE_URL, ...)

Methods (``--method``):
  goal             the LLM writes the goal, Fast Downward plans (AutoGPT+P)
  llm-planner      the LLM writes the whole plan in one call (the domain's actions as PDDL in the
                   prompt); the validator judges every precondition and the desired goal
  llm-action-list  the LLM writes the list of actions (the llm-planner's prompt and answer); the
                   classical planner makes it executable: where a listed action's precondition
                   does not hold, Fast Downward plans from the current state to that precondition
                   (a gap, --gap-time-limit seconds, at most --max-gaps) and the gap plan is
                   spliced in; an action that is no ground action of the domain, or whose
                   precondition no plan reaches, is skipped with the reason; where the desired
                   goal does not hold after the list, the planner completes the plan to it.
                   A case succeeds only where the list with its gaps reaches the desired goal:
                   the completion plans for the scenario's desired goal, which the method never
                   gets to see otherwise (counted, an empty answer would score like the oracle);
                   a completed plan is still validated and reported as "reached with completion".
                   See affplan_ros/core/planning/action_list.py.

Writes results.json, summary.md and plan_bench.png to --out.  Module-level imports stay light
(argparse and the bench frame) so `affplan --help` is fast.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from affplan_ros.bench.frame import (
    BenchSetupError,
    CaseWork,
    command,
    default_out,
    jobs_option,
    output_option,
    recorded,
    resolve_jobs,
    run_cases,
    save,
    setup_errors,
)
from affplan_ros.bench.report import rate

DEFAULT_TIME_LIMIT = 60.0
DATA_DIR = Path(__file__).resolve().parent / "data"
OAM_CORRECTIONS = DATA_DIR / "oam_corrections.yaml"
DEFAULT_ROUNDS = 10
DEFAULT_GAP_TIME_LIMIT = 10.0
DEFAULT_MAX_GAPS = 10
# The methods where the LLM writes actions (one call, the llm-planner's prompt), and their labels.
LLM_METHODS = {"llm-planner": "the LLM writes the plan, the validator judges it",
               "llm-action-list": "the LLM writes the action list, Fast Downward fills its gaps, the validator "
                                  "judges it"}


# --------------------------------------------------------------------------------------
# CLI


def configure(parser: argparse.ArgumentParser) -> None:
    from affplan_ros.bench.datasets import set_names  # light: no planner imports

    parser.add_argument("--data", help="the original autogpt_p data folder (default: "
                                       "../shared/datasets/autogpt_p/autogpt_p/data, or AFFPLAN_SHARED)")
    parser.add_argument("--set", default="all", choices=set_names(), metavar="NAME",
                        help="simple_task, simple_goal, complex_goal, knowledge, implicit, saycan "
                             "(every SayCan family, reported per family), saycan/FAMILY or all (default)")
    parser.add_argument("--llm", default="oracle", metavar="MODE",
                        help="oracle (default) | offline (the offline instruction interpreter) | replay:FILE "
                             "(CSV task,goal) | replay:paper (GPT-4 answers "
                             "from the paper's logs) | endpoint (AFFPLAN_LLM_BASE_URL ...)")
    output_option(parser, "plan")
    parser.add_argument("--logs", help="the paper's logs/planning folder (default: beside --data)")
    parser.add_argument("--paper-correction", default="on", choices=["on", "off"],
                        help="which paper logs to replay/compare: self-correction on (default) or off")
    parser.add_argument("--oam", help="OAM file(s) for every set, comma-separated (later ones override "
                                      "classes of earlier ones); default: object_affordance_mapping/data/oam/"
                                      "simulation_classes_2.json, saycan_oam.json for the SayCan families")
    parser.add_argument("--raw-oam", action="store_true",
                        help="use the original OAM as it is, without the project's documented corrections "
                             "(affplan_ros/bench/data/oam_corrections.yaml; applied only when --oam is not given)")
    parser.add_argument("--method", default="goal", choices=["goal", *LLM_METHODS],
                        help="goal: the LLM writes the goal, Fast Downward plans (AutoGPT+P); llm-planner: the LLM "
                             "writes the plan itself, checked by the same validator (the paper's baseline; needs "
                             "--llm endpoint); llm-action-list: the LLM writes the action list, Fast Downward plans "
                             "the gaps to each unmet precondition and, if needed, completes it to the goal (needs "
                             "--llm endpoint)")
    parser.add_argument("--gap-time-limit", type=float, default=DEFAULT_GAP_TIME_LIMIT,
                        help="llm-action-list: planner seconds per gap (the completion gets --time-limit)")
    parser.add_argument("--max-gaps", type=int, default=DEFAULT_MAX_GAPS,
                        help="llm-action-list: at most this many gaps planned per case")
    parser.add_argument("--mode", default="optimal", choices=["optimal", "satisficing"], help="planner search")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="planner seconds per case")
    parser.add_argument("--max-rounds", type=int, default=DEFAULT_ROUNDS, help="goal self-correction bound")
    parser.add_argument("--max-llm-seconds", type=float, default=300.0, help="goal loop wall-time bound per case")
    parser.add_argument("--no-prune", action="store_true", help="plan on the full scene (no object pruning)")
    parser.add_argument("--no-semantic", action="store_true", help="skip the Prolog semantic check")
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")
    parser.add_argument("--pad", type=int, default=0, metavar="N",
                        help="add N distractor objects on new places to every scene (a large home around "
                             "the kitchen; nothing of the scene changes)")
    parser.add_argument("--case", action="append", metavar="SET#INDEX",
                        help="run only this case (0-based index in its set, e.g. simple_task#27); repeatable")
    parser.add_argument("--from-results", metavar="DIR",
                        help="only re-render summary.md and the plot from DIR/results.json (no planning)")
    jobs_option(parser, "cases in parallel (processes; default: min(4, CPUs), 1 for endpoint)")


@command
def run(args: argparse.Namespace) -> int:
    if getattr(args, "from_results", None):
        return rerender(Path(args.from_results), Path(args.out) if args.out != default_out("plan") else None)
    cfg = _prepare(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    print(f"bench plan: {len(cfg['cases'])} cases in {len(cfg['sets'])} set(s), llm={cfg['llm_label']}, "
          f"jobs={cfg['jobs']} -> {out}", flush=True)
    results = run_cases(cfg["cases"], case_work(cfg["worker"]), cfg["jobs"])
    report = build_report(results, cfg, seconds=time.monotonic() - t0)
    _print_table(report)
    write_outputs(report, out)
    return 0


def _prepare(args: argparse.Namespace) -> dict:
    from affplan_ros.bench.datasets import (
        DataNotFoundError,
        default_oam_path,
        resolve_data_dir,
        scenario_sets,
    )
    from affplan_ros.bench.replay import ReplayBook, extract_paper_replay
    from affplan_ros.core.files.scene_io import read_scenarios

    with setup_errors(DataNotFoundError, ValueError):
        data = resolve_data_dir(args.data)
        sets = scenario_sets(data, args.set)
        oams: dict[str, str] = {}
        for s in sets:
            if args.oam:
                paths = [Path(p.strip()) for p in args.oam.split(",") if p.strip()]
            else:
                paths = [default_oam_path(s.family, data)]
                if s.family == "simulation" and not getattr(args, "raw_oam", False):
                    paths.append(OAM_CORRECTIONS)
            for p in paths:
                if not p.is_file():
                    raise DataNotFoundError(f"OAM file {p} not found")
            oams[s.name] = ",".join(str(p) for p in paths)

    llm = args.llm.strip()
    book: Optional[ReplayBook] = None
    paper: dict = {}
    endpoint: Optional[dict] = None
    logs = Path(args.logs) if args.logs else None
    if llm == "oracle":
        kind, label = "oracle", "oracle (desired goal as the answer)"
    elif llm == "offline":
        kind, label = "offline", "offline instruction interpreter (no LLM; declines what it does not understand)"
    elif llm == "endpoint":
        from affplan_ros.llm.config import (
            MissingAPIKeyError,
            NoEndpointError,
            require_endpoint,
        )

        try:
            conf = require_endpoint()
        except (NoEndpointError, MissingAPIKeyError) as exc:  # a clear message before any case runs
            raise BenchSetupError(f"--llm endpoint: {exc}") from exc
        kind, label, endpoint = "endpoint", f"endpoint {conf.base_url} model {conf.model}", conf.to_dict()
    elif llm.startswith("replay:"):
        src = llm[len("replay:"):].strip()
        kind = "replay"
        if src in ("paper", "paper-on", "paper-off"):
            corr = src.split("-")[1] if "-" in src else args.paper_correction
            rows, paper = extract_paper_replay(data, sets, logs, "gpt_4", corr)
            book = ReplayBook(rows, f"paper GPT-4 logs (self-correction {corr})")
            label = f"replay of the paper's GPT-4 answers (logs, self-correction {corr})"
        else:
            with setup_errors(OSError, ValueError):
                book = ReplayBook.from_csv(Path(src))
            label = f"replay {src}"
            paper = _paper_record_quiet(data, sets, logs, args.paper_correction)
    else:
        raise BenchSetupError(f"--llm {llm!r}: use oracle, offline, replay:FILE, replay:paper or endpoint")
    if kind in ("oracle", "offline"):
        paper = _paper_record_quiet(data, sets, logs, args.paper_correction)
    method = getattr(args, "method", "goal")
    if method in LLM_METHODS:
        if kind != "endpoint":
            raise BenchSetupError(f"--method {method}: the LLM writes the actions itself, so it needs --llm endpoint "
                                  f"(not {llm})")
        label += f"; method {method} ({LLM_METHODS[method]})"
    if getattr(args, "max_gaps", 0) < 0 or getattr(args, "gap_time_limit", 1.0) <= 0:
        raise BenchSetupError("--max-gaps must be >= 0 and --gap-time-limit > 0")

    cases: list[dict] = []
    for s in sets:
        sf = read_scenarios(s.csv)
        seen: dict[str, int] = {}
        for i, c in enumerate(sf.cases[: args.limit] if args.limit else sf.cases):
            from affplan_ros.bench.replay import normalize_task

            occ = seen.get(normalize_task(c.task), 0)
            seen[normalize_task(c.task)] = occ + 1
            spec = {"set": s.name, "index": i, "where": c.where, "task": c.task,
                    "scene_file": c.scene_file, "scene_path": str(s.scenes / c.scene_file),
                    "desired_goal": c.desired_goal, "min_costs": c.min_costs, "answers": None,
                    "oam": oams[s.name],
                    "paper": None}
            if kind == "oracle":
                spec["answers"] = [c.desired_goal]
            elif kind == "replay":
                row = book.lookup(s.name, c.task, occ) if book else None
                spec["answers"] = [row["goal"]] if row and row.get("goal", "").strip() else []
                if row and (row.get("paper_reached") or "").strip():
                    spec["paper"] = _paper_fields(row)
            if kind != "replay" or spec["paper"] is None:
                rec = (paper.get(s.name) or {}).get("per_case") or []
                if i < len(rec):
                    pc = rec[i]
                    spec["paper"] = {"reached": pc.get("reached"), "minimal": pc.get("minimal"),
                                     "cost": pc.get("cost"), "min_cost": pc.get("min_cost"),
                                     "corrections": pc.get("corrections"), "goal": pc.get("generated_goal")}
            if args.case and f"{s.name}#{i}" not in args.case:
                continue
            cases.append(spec)
    jobs = resolve_jobs(args.jobs, cap=4, endpoint=kind == "endpoint")
    if args.pad < 0:
        raise BenchSetupError(f"--pad {args.pad}: a number of objects >= 0")
    worker = {"kind": kind, "oams": sorted(set(oams.values())), "mode": args.mode, "time_limit": args.time_limit,
              "pad": args.pad,
              "prune": not args.no_prune, "semantic": not args.no_semantic, "max_rounds": args.max_rounds,
              "max_llm_seconds": args.max_llm_seconds, "endpoint": endpoint,
              "method": getattr(args, "method", "goal"),
              "gap_time_limit": getattr(args, "gap_time_limit", DEFAULT_GAP_TIME_LIMIT),
              "max_gaps": getattr(args, "max_gaps", DEFAULT_MAX_GAPS)}
    paper_sets = {k: {kk: vv for kk, vv in v.items() if kk != "per_case"} for k, v in paper.items()}
    return {"cases": cases, "worker": worker, "jobs": jobs, "sets": [s.name for s in sets],
            "llm_label": label, "llm": llm, "data": str(data), "paper": paper_sets,
            "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                        if k not in ("func",)}}


def _paper_fields(row: dict) -> dict:
    def num(v):
        try:
            return float(v) if v is not None and str(v).strip() != "" else None
        except (TypeError, ValueError):
            return None

    def flag(v):
        v = str(v or "").strip().lower()
        return True if v == "true" else False if v == "false" else None

    return {"reached": flag(row.get("paper_reached")), "minimal": flag(row.get("paper_minimal")),
            "cost": num(row.get("paper_cost")), "min_cost": num(row.get("paper_min_cost")),
            "corrections": int(num(row.get("paper_corrections")) or 0) if row.get("paper_corrections") else None,
            "goal": row.get("goal")}


def _paper_record_quiet(data: Path, sets, logs: Optional[Path], correction: str) -> dict:
    """The paper's per-set record if its logs are there; {} otherwise (never fails the run)."""
    from affplan_ros.bench.replay import extract_paper_replay

    try:
        return extract_paper_replay(data, sets, logs, "gpt_4", correction)[1]
    except Exception:  # noqa: BLE001 - the comparison is optional
        return {}


# --------------------------------------------------------------------------------------
# The replay "LLM"


class ReplayChat:
    """A :class:`~affplan_ros.core.goals.loop.ChatModel` that answers from a list, in order.

    When the list is used up it repeats the last answer, so a wrong answer that keeps
    failing the checks runs into the loop's bound like a stubborn LLM would.  No answer at
    all gives empty answers (the loop stops after ``max_empty``).
    """

    def __init__(self, answers: Sequence[str]):
        self.answers = list(answers)
        self.calls = 0

    def complete(self, messages):
        from affplan_ros.core.goals.loop import Completion

        text = self.answers[min(self.calls, len(self.answers) - 1)] if self.answers else ""
        self.calls += 1
        return Completion(text=text)


# --------------------------------------------------------------------------------------
# Running cases

_WORKER: dict[str, Any] = {}


def _init_worker(cfg: dict) -> None:
    from affplan_ros.llm.prompting import GoalPromptBuilder

    _WORKER.clear()
    _WORKER["cfg"] = cfg
    _WORKER["oams"] = {}
    _WORKER["prompter"] = GoalPromptBuilder()
    _WORKER["semantic"] = None
    _WORKER["semantic_error"] = None
    if cfg["semantic"]:
        try:
            from affplan_ros.core.goals.semantics import SemanticChecker

            _WORKER["semantic"] = SemanticChecker()
        except Exception as exc:  # noqa: BLE001 - Prolog missing: say so in every case, keep going
            _WORKER["semantic_error"] = f"semantic check unavailable: {exc}"
    _WORKER["client"] = None
    if cfg["kind"] == "endpoint":
        from affplan_ros.llm.client import ChatClient
        from affplan_ros.llm.config import LLMConfig

        _WORKER["client"] = ChatClient(LLMConfig.from_mapping(cfg["endpoint"]))


def _oam(spec: str):
    """The OAM for a comma-separated list of files (merged in order), loaded once per worker."""
    from affplan_ros.bench.autogptp import load_oam_spec

    cache = _WORKER.setdefault("oams", {})
    if spec not in cache:
        cache[spec] = load_oam_spec(spec)
    return cache[spec]


def case_work(worker_cfg: dict) -> CaseWork:
    """The cases' work for :func:`~affplan_ros.bench.frame.run_cases` (``worker_cfg``: settings per process)."""
    return CaseWork(run=run_case, empty=_empty_result, failed=_failed, line=_line, init=_init_worker,
                    init_arg=worker_cfg)


def _line(r: dict) -> str:
    return f"{r['set']}#{r['index']} {r['task'][:60]!r} {r.get('failure') or ''}"[:195]


def _empty_result(case: dict) -> dict:
    return {
        "set": case["set"], "index": case["index"], "where": case["where"], "task": case["task"],
        "scene_file": case["scene_file"], "desired_goal": case["desired_goal"], "min_costs": case["min_costs"],
        "answer": (case["answers"] or [None])[0] if case.get("answers") is not None else None,
        "goal": None, "stop_reason": None, "rounds": 0, "corrections": 0, "feedback": [],
        "plan_status": None, "plan": [], "cost": None, "optimal": None, "reaches_llm_goal": None,
        "success": False, "minimal": False, "cost_vs_min": None,
        "tokens": {"prompt": 0, "completion": 0}, "llm_calls": 0,
        "seconds": {"prepare": 0.0, "llm": 0.0, "check": 0.0, "plan": 0.0, "simulate": 0.0, "total": 0.0},
        "plan_timings": None, "objects": None, "warnings": [], "notes": [], "error": None, "failure": None,
        "failure_kind": None, "evidence": None, "declined": False, "answered_by": [],
        "paper": case.get("paper"), "action_list": None,
    }


def run_case(case: dict) -> dict:
    """One scenario, start to end; any exception becomes the case's recorded error."""
    t0 = time.monotonic()
    r = _empty_result(case)
    if _run_case(case, r):
        _failed(r)
    r["seconds"]["total"] = round(time.monotonic() - t0, 4)
    r["failure_kind"] = failure_kind(r["failure"])
    r["evidence"] = _WORKER.setdefault("notes", data_notes()).get((r["set"], r["index"]))
    return r


def _failed(r: dict) -> None:
    """A case that raised (``r["error"]`` set): failed, whatever it had reached."""
    r["failure"] = r["failure"] or f"error: {r['error']}"
    r["success"] = r["minimal"] = False


def _to_pddl_names(answers: Sequence[str], names: dict) -> tuple[list[str], list[str]]:
    import re

    out, renamed = list(answers), []
    for scene_name, pddl in names.items():
        if scene_name == pddl:
            continue
        pat = re.compile(rf"(?<![\w\-]){re.escape(scene_name)}(?![\w\-])")
        if any(pat.search(a) for a in out):
            out = [pat.sub(pddl, a) for a in out]
            renamed.append(f"{scene_name} -> {pddl}")
    return out, renamed


_KINDS = (("declined", "declined"), ("error", "error"), ("simulation error", "error"), ("data", "data"),
          ("replay", "no_answer"), ("goal not accepted", "goal_rejected"), ("no plan (timeout", "plan_timeout"),
          ("no plan", "no_plan"), ("plan does not reach", "wrong_goal"), ("not minimal", "not_minimal"),
          ("no min_costs", "not_minimal"), ("llm-planner: the LLM failed", "error"),
          ("llm-planner: the answer holds no action", "no_plan"), ("llm-planner: ", "plan_invalid"),
          ("llm-action-list: the LLM failed", "error"), ("llm-action-list: completed", "completed"),
          ("llm-action-list: no completion", "no_plan"), ("llm-action-list: ", "plan_invalid"))


def failure_kind(failure: Optional[str]) -> Optional[str]:
    """A short category for a failure message (None when the case succeeded minimally)."""
    if not failure:
        return None
    return next((k for prefix, k in _KINDS if failure.startswith(prefix)), "other")


@recorded
def _run_case(case: dict, r: dict) -> None:
    """One scenario in four stages: the desired goal, the goal the "LLM" writes (through the goal
    loop), the plan for it, and the judgement of the plan against the desired goal. A stage that
    ends the case (no accepted goal, no plan) has written why into ``r["failure"]``."""
    from affplan_ros.core.files.scene_io import load_scene
    from affplan_ros.core.planning.task import build_task

    cfg, oam = _WORKER["cfg"], _oam(case["oam"])
    t = time.monotonic()
    scene = load_scene(case["scene_path"])
    if cfg.get("pad"):
        from affplan_ros.bench.padding import pad_scene

        scene = pad_scene(scene, cfg["pad"], seed=case["index"])
    full = build_task(scene, oam=oam, unknown_classes="warn")
    r["warnings"] = list(full.warnings)[:20]
    desired, answers = _desired_goal(case, r, cfg["kind"], scene, full)
    r["seconds"]["prepare"] = round(time.monotonic() - t, 4)
    if cfg.get("method") == "llm-planner":
        _llm_planner(case, r, scene, full, desired)
        return
    if cfg.get("method") == "llm-action-list":
        _llm_action_list(case, r, cfg, oam, scene, full, desired)
        return
    res = _goal(case, r, cfg, oam, scene, full, answers)
    pr = _plan(r, cfg, oam, scene, full, res) if res is not None else None
    if pr is not None:
        _judge(case, r, full, desired, res, pr)


def _llm_actions(case: dict, r: dict, scene, full):
    """The LLM's actions for the case (one call, the llm-planner's prompt), recorded in ``r``."""
    from affplan_ros.core.agent.plan_tool import scene_relations_text
    from affplan_ros.llm.llm_planner import llm_plan, steps_text

    got = llm_plan(_WORKER["client"], case["task"], full, scene_relations_text(scene, full.names))
    r["answer"], r["llm_calls"] = got.answer[:2000], 1
    r["tokens"] = {"prompt": got.prompt_tokens, "completion": got.completion_tokens}
    r["seconds"]["llm"] = round(got.seconds, 4)
    r["plan"] = steps_text(got.steps)
    return got


def _llm_planner(case: dict, r: dict, scene, full, desired: Optional[list]) -> None:
    """The baseline: the LLM writes the plan (one call), the validator judges it against the
    desired goal: every precondition on the way, then the goal."""
    from affplan_ros.core.planning.planner import validate

    got = _llm_actions(case, r, scene, full)
    if got.error:
        r["failure"] = r["failure"] or f"llm-planner: {got.error}"
        return
    if desired is None:
        return
    ok, cost, message = validate(full, desired, got.steps)    # cost is None for a rejected plan
    r["plan_status"] = "valid" if ok else "invalid"
    r["success"], r["cost"] = ok, cost
    if not ok:
        r["failure"] = r["failure"] or f"llm-planner: {message}"
    _cost_verdict(case, r, cost)


def _llm_action_list(case: dict, r: dict, cfg: dict, oam, scene, full, desired: Optional[list]) -> None:
    """The second baseline: the LLM writes the action list (one call), the planner makes it
    executable (gaps, then the completion if needed), the validator judges the final plan. A case
    succeeds only where no completion was needed (module docstring)."""
    from affplan_ros.core.planning.action_list import make_executable
    from affplan_ros.core.planning.planner import validate
    from affplan_ros.llm.llm_planner import steps_text

    got = _llm_actions(case, r, scene, full)
    if got.llm_failed:
        r["failure"] = r["failure"] or f"llm-action-list: {got.error}"
        return
    if desired is None:
        return
    res = make_executable(full, got.steps, desired, oam=oam, mode=cfg["mode"], gap_time_limit=cfg["gap_time_limit"],
                          completion_time_limit=cfg["time_limit"], max_gaps=cfg["max_gaps"], prune=cfg["prune"])
    r["seconds"]["plan"] = round(res.planner_seconds, 4)
    r["plan"] = steps_text(res.steps)
    ok, cost, message = validate(full, desired, res.steps)
    r["plan_status"] = "valid" if ok else "invalid"
    r["cost"] = cost
    r["success"] = ok and not res.completion_needed
    r["action_list"] = {
        "listed": len(res.listed), "kept": res.kept, "skipped": res.skipped, "inserted": res.inserted,
        "inserted_gaps": res.inserted_gap, "inserted_completion": len(res.completion), "gaps": res.gaps,
        "completion_needed": res.completion_needed, "completion_status": res.completion_status,
        "completion": res.completion, "reached_with_completion": bool(ok and res.completion_needed),
        "length": len(res.steps), "planner_calls": res.planner_calls, "stop_reason": res.stop_reason,
        "no_action_in_answer": not got.steps,
        "actions": [{"index": a.index, "step": a.step, "kept": a.kept, "reason": a.reason, "inserted": a.inserted}
                    for a in res.listed]}
    if res.completion_needed and ok:
        r["failure"] = r["failure"] or (f"llm-action-list: completed: the list (with {res.gaps} gap(s) planned) did "
                                        f"not reach the desired goal; the planner's completion did with "
                                        f"{len(res.completion)} action(s)"
                                        + (" (the answer held no action)" if not got.steps else ""))
    elif res.completion_needed and res.completion_status != "solved":
        r["failure"] = r["failure"] or (f"llm-action-list: no completion: the list did not reach the desired goal "
                                        f"and the planner found no completion ({res.completion_status})")
    elif not ok:
        r["failure"] = r["failure"] or f"llm-action-list: {message}"
    _cost_verdict(case, r, cost)


def _desired_goal(case: dict, r: dict, kind: str, scene, full) -> tuple[Optional[list], Optional[list[str]]]:
    """The scenario's desired goal as a DNF in the domain's vocabulary (None when it does not parse:
    a data failure), and the answers of the "LLM" (the oracle's follow the desired goal's fixes)."""
    from affplan_ros.bench.derived import (
        carryables,
        expand_free,
        normalize_desired,
        objects_on,
        uses_derived,
    )
    from affplan_ros.core.goals.errors import GoalError
    from affplan_ros.core.goals.extraction import parse_goal
    from affplan_ros.core.goals.formula import render, to_dnf

    answers = case["answers"]
    try:
        desired_goal = parse_goal(case["desired_goal"])
        desired_goal, notes = normalize_desired(desired_goal, full.names, full.signature)
        r["notes"].extend(notes)
        if notes and kind == "oracle":
            answers = [render(desired_goal)]
        if uses_derived(desired_goal):
            # AutoGPT+P's derived (free ?s): judged (and answered by the oracle) in domain predicates.
            raw_goal = desired_goal
            desired_goal = expand_free(raw_goal, carryables(full.signature))
            r["notes"].append("desired goal uses the derived predicate free: judged as (not (on o s)) for "
                              "every carryable o" + ("; the oracle answers (not (on o s)) for the objects on s"
                                                     if kind == "oracle" else ""))
            if kind == "oracle":
                answers = [render(expand_free(raw_goal, carryables(full.signature),
                                              objects_on(scene, full.names)))]
        return to_dnf(desired_goal), answers
    except GoalError as exc:
        r["failure"] = f"data: the scenario's desired goal does not parse: {exc}"
        return None, answers


def _goal(case: dict, r: dict, cfg: dict, oam, scene, full, answers: Optional[list[str]]):
    """The goal loop (LLM answer -> checks -> corrections): its result when a goal was accepted, else None."""
    from affplan_ros.core.agent.plan_tool import scene_relations_text
    from affplan_ros.core.goals.loop import GoalLoop, GoalRequest

    if cfg["kind"] == "replay" and answers:
        # The paper's GPT-4 saw scene names (7up0); our prompt shows the domain's PDDL names (n7up0).
        answers, renamed = _to_pddl_names(answers, full.names)
        if renamed:
            r["notes"].append("replayed answer renamed to the domain's PDDL names: " + ", ".join(renamed))
    if answers:
        r["answer"] = answers[0]
    if cfg["kind"] == "endpoint":
        llm = _WORKER["client"]
    elif cfg["kind"] == "offline":
        from affplan_ros.core.interpreter.backend import OfflineModel

        llm = OfflineModel(oam=oam)
    elif cfg["kind"] == "replay" and not answers:
        r["failure"] = r["failure"] or "replay: the replay file has no answer for this task"
        return None
    else:
        llm = ReplayChat(answers or [])
    if _WORKER.get("semantic_error"):
        r["warnings"].append(_WORKER["semantic_error"])
    scene_text = scene_relations_text(scene, full.names)
    loop = GoalLoop(llm, _WORKER["prompter"], _WORKER["semantic"], max_rounds=cfg["max_rounds"],
                    max_seconds=cfg["max_llm_seconds"])
    res = loop.run(GoalRequest(task=case["task"], signature=full.signature, scene_text=scene_text,
                               scene=scene, names=dict(full.names)))
    r["answered_by"] = sorted(set(res.answered_by))
    r["stop_reason"] = res.stop_reason.value
    r["rounds"] = res.rounds
    r["corrections"] = max(0, res.rounds - 1) if res.accepted else res.rounds
    r["feedback"] = [{"round": f.round, "stage": f.stage, "kinds": list(f.kinds), "message": f.message,
                      "answer": f.answer[:500]} for f in res.feedback]
    r["tokens"] = {"prompt": res.prompt_tokens, "completion": res.completion_tokens}
    r["llm_calls"] = res.rounds
    r["seconds"]["llm"] = round(res.llm_seconds, 4)
    r["seconds"]["check"] = round(max(0.0, res.seconds - res.llm_seconds), 4)
    if cfg["kind"] == "offline" and res.rounds:
        r["answer"] = res.raw_goal_text or (res.feedback[-1].answer if res.feedback else None)
    if res.stop_reason.value == "declined":
        r["declined"] = True
        r["failure"] = r["failure"] or f"declined: {res.error}"
        return None
    if cfg["kind"] == "endpoint" and res.rounds:
        r["answer"] = (res.feedback[-1].answer if res.feedback and not res.accepted else res.raw_goal_text)
    if not res.accepted:
        last = res.feedback[-1] if res.feedback else None
        why = f"{last.stage}: {last.message.strip()}" if last else (res.error or "")
        r["failure"] = r["failure"] or f"goal not accepted ({res.stop_reason.value} after {res.rounds} rounds): {why}"
        return None
    r["goal"] = res.goal_text
    return res


def _plan(r: dict, cfg: dict, oam, scene, full, res):
    """Fast Downward's plan for the accepted goal: the planner's result when solved, else None."""
    from affplan_ros.core.goals.formula import Literal
    from affplan_ros.core.planning.planner import plan_for_goal

    t = time.monotonic()
    # plan_for_goal maps goal names scene -> PDDL itself and rejects PDDL names that differ from
    # the scene's (n7up0 for 7up0), while the checked goal uses the signature's PDDL names: map back.
    inv = {v: k for k, v in full.names.items() if k != v}
    plan_dnf = res.dnf
    if inv and any(a in inv for conj in res.dnf for lit in conj for a in lit.args):
        plan_dnf = [tuple(Literal(l.predicate, tuple(inv.get(a, a) for a in l.args), l.negated) for l in conj)
                    for conj in res.dnf]
        r["notes"].append("goal names mapped back to scene names for plan_for_goal: "
                          + ", ".join(f"{v} -> {k}" for v, k in sorted(inv.items())))
    pr = plan_for_goal(scene, plan_dnf, mode=cfg["mode"], time_limit=cfg["time_limit"], prune=cfg["prune"],
                       oam=oam, unknown_classes="warn")
    r["seconds"]["plan"] = round(time.monotonic() - t, 4)
    r["plan_status"] = pr.status
    r["plan"] = [str(s) for s in pr.plan]
    r["cost"] = pr.cost
    r["optimal"] = pr.optimal
    r["objects"] = {"total": pr.objects_total, "used": pr.objects_used, "pruned": pr.pruned,
                    "fallback": pr.fallback}
    r["plan_timings"] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in vars(pr.timings).items()}
    if not pr.solved:
        msg = (pr.message or "").strip().splitlines()
        r["failure"] = r["failure"] or (f"no plan ({pr.status}) for goal {res.goal_text}"
                                        + (f": {msg[0][:200]}" if msg else ""))
        return None
    return pr


def _judge(case: dict, r: dict, full, desired: Optional[list], res, pr) -> None:
    """Simulate the plan from the scene: does it reach the DESIRED goal, and at the minimal cost?"""
    from affplan_ros.core.planning.simulate import SimulationError, simulate

    t = time.monotonic()
    try:
        r["reaches_llm_goal"] = simulate(full, pr.plan, res.dnf).success
    except (SimulationError, KeyError) as exc:
        r["reaches_llm_goal"] = False
        r["warnings"].append(f"simulating the plan against the accepted goal failed: {exc}")
    if desired is not None:
        try:
            r["success"] = simulate(full, pr.plan, desired).success
        except (SimulationError, KeyError) as exc:
            r["success"] = False
            r["failure"] = r["failure"] or f"simulation error: {exc}"
    r["seconds"]["simulate"] = round(time.monotonic() - t, 4)
    if not r["success"]:
        r["failure"] = r["failure"] or (f"plan does not reach the desired goal {case['desired_goal'].strip()} "
                                        f"(accepted goal {res.goal_text})")
    _cost_verdict(case, r, pr.cost)


def _cost_verdict(case: dict, r: dict, cost: Optional[float]) -> None:
    """The plan's cost against the case's min_costs; a successful case that is not minimal says why."""
    mc = case["min_costs"]
    if cost is not None and mc is not None:
        r["cost_vs_min"] = "equal" if cost == mc else ("below" if cost < mc else "above")
    r["minimal"] = bool(r["success"] and r["cost_vs_min"] in ("equal", "below"))
    if r["success"] and not r["minimal"]:
        r["failure"] = f"not minimal: cost {cost:g} > min_costs {mc}" if mc is not None else "no min_costs"


# --------------------------------------------------------------------------------------
# Report


def set_stats(rows: Sequence[dict]) -> dict:
    n = len(rows)
    acc = [r for r in rows if r["goal"] is not None]
    stats = {
        "cases": n,
        "success": sum(r["success"] for r in rows),
        "minimal": sum(r["minimal"] for r in rows),
        "accepted_goals": len(acc),
        "cases_with_corrections": sum(r["corrections"] > 0 for r in acc),
        "corrections": sum(r["corrections"] for r in acc),
        "rounds": sum(r["rounds"] for r in rows),
        "errors": sum(r["error"] is not None for r in rows),
        "declined": sum(bool(r.get("declined")) for r in rows),
        # accepted and planned, but the plan does not reach the desired goal (never for a decline)
        "wrong": sum(r.get("failure_kind") == "wrong_goal" or (r["goal"] is not None and r["plan_status"] is not None
                                                               and not r["success"]) for r in rows),
        "below_min_costs": sum(r["cost_vs_min"] == "below" for r in rows),
        "tokens": sum(r["tokens"]["prompt"] + r["tokens"]["completion"] for r in rows),
        "seconds": {k: round(sum(r["seconds"][k] for r in rows), 3)
                    for k in ("prepare", "llm", "check", "plan", "simulate", "total")},
        "mean_plan_s": round(sum(r["seconds"]["plan"] for r in rows) / n, 3) if n else 0.0,
    }
    if any(r.get("action_list") for r in rows):
        stats["action_list"] = action_list_stats(rows)
    return stats


def action_list_stats(rows: Sequence[dict]) -> dict:
    """The llm-action-list counts of ``rows`` (a case without an ``action_list`` record, e.g. the
    LLM failed, counts as a case with nothing in it)."""
    als = [r.get("action_list") or {} for r in rows]
    valid = [r for r in rows if r.get("action_list") and r["plan_status"] == "valid"]
    out = {"cases": len(rows), "success": sum(r["success"] for r in rows),
           "reached_with_completion": sum(bool(a.get("reached_with_completion")) for a in als),
           "completion_needed": sum(bool(a.get("completion_needed")) for a in als),
           "no_action_in_answer": sum(bool(a.get("no_action_in_answer")) for a in als),
           "planner_s": round(sum(r["seconds"]["plan"] for r in rows), 3),
           "llm_calls": sum(r["llm_calls"] for r in rows),
           "tokens": sum(r["tokens"]["prompt"] + r["tokens"]["completion"] for r in rows)}
    for k in ("listed", "kept", "skipped", "inserted", "inserted_gaps", "inserted_completion", "gaps"):
        out[k] = sum(a.get(k, 0) for a in als)
    out["length_vs_min"] = {k: sum(r["cost_vs_min"] == k for r in valid) for k in ("equal", "above", "below")}
    return out


def build_report(results: Sequence[dict], cfg: dict, seconds: float = 0.0) -> dict:
    sets: dict[str, dict] = {}
    for name in cfg["sets"]:
        rows = [r for r in results if r["set"] == name]
        stats = set_stats(rows)
        # The paper's record for exactly these cases (--limit may cut a set short).
        papers = [r["paper"] for r in rows if r.get("paper") and r["paper"].get("reached") is not None]
        if papers:
            log = (cfg.get("paper", {}).get(name) or {}).get("log")
            stats["paper"] = {
                "cases": len(papers), "success": sum(bool(p["reached"]) for p in papers),
                "minimal": sum(bool(p["reached"] and p["minimal"]) for p in papers),
                "corrections": sum(p.get("corrections") or 0 for p in papers),
                "cases_with_corrections": sum((p.get("corrections") or 0) > 0 for p in papers), "log": log}
        sets[name] = stats
    saycan = [r for r in results if r["set"].startswith("saycan/")]
    totals = {"all": set_stats(list(results))}
    if saycan and len({r["set"] for r in saycan}) > 1:
        totals["saycan"] = set_stats(saycan)
    return {"benchmark": "plan", "llm": cfg["llm"], "llm_label": cfg["llm_label"], "data": cfg["data"],
            "options": cfg.get("options", {}), "worker": {k: v for k, v in cfg["worker"].items() if k != "endpoint"},
            "seconds": round(seconds, 2), "sets": sets, "totals": totals, "cases": list(results)}


def summary_markdown(report: dict) -> str:
    L: list[str] = []
    L.append("# AutoGPT+P Plan Tool benchmark (`affplan bench plan`)\n")
    w = report["worker"]
    L.append(f"- LLM: {report['llm_label']}")
    L.append(f"- data: `{report['data']}`")
    if w.get("method") in LLM_METHODS:
        L.append(f"- method {w['method']}: one LLM call per case" + (
            f"; Fast Downward {w['mode']}, {w.get('gap_time_limit', DEFAULT_GAP_TIME_LIMIT):g} s per gap, at most "
            f"{w.get('max_gaps', DEFAULT_MAX_GAPS)} gaps, {w['time_limit']:g} s for the completion, pruning "
            f"{'on' if w['prune'] else 'off'}" if w["method"] == "llm-action-list" else ""))
    else:
        L.append(f"- planner: Fast Downward {w['mode']}, {w['time_limit']:g} s per case, pruning "
                 f"{'on' if w['prune'] else 'off'}; goal loop bound {w['max_rounds']} rounds; semantic check "
                 f"{'on' if w['semantic'] else 'off'}")
    L.append(f"- wall time {report['seconds']:.0f} s")
    applied = [o for o in w.get("oams", []) if str(OAM_CORRECTIONS) in o]
    if applied:
        L.append("- OAM corrections applied on top of the original OAM (`--raw-oam` to leave them out): "
                 + "; ".join(f"`{c}`: {e}" for c, e in oam_corrections().items()))
    L.append("- success: the plan, simulated from the scene, satisfies the scenario's desired goal (some "
             "disjunct's positive literals hold, none of its negated ones). minimal: success with cost <= "
             "min_costs (cost below min_costs is counted and listed as a data note).\n")
    has_paper = any("paper" in s for s in report["sets"].values())
    declines = any(s.get("declined") for s in report["sets"].values())
    head = ["Set", "Cases", "Success", "Minimal"] + (["Declined", "Planned but wrong"] if declines else []) + [
        "Corrections (cases / rounds)"]
    if has_paper:
        head += ["Paper log success", "Paper log minimal", "Paper corrections (cases)", "Δ success"]
    head += ["Plan s (mean)", "Errors"]
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "---|" * len(head))
    rows = list(report["sets"].items()) + [(f"**{k}**", v) for k, v in report["totals"].items()]
    for name, s in rows:
        cells = [name, str(s["cases"]), rate(s["success"], s["cases"]), rate(s["minimal"], s["cases"])]
        if declines:
            cells += [rate(s.get("declined", 0), s["cases"]), rate(s.get("wrong", 0), s["cases"])]
        cells += [f"{s['cases_with_corrections']} / {s['corrections']}"]
        if has_paper:
            p = s.get("paper")
            if p:
                cells += [rate(p["success"], p["cases"]), rate(p["minimal"], p["cases"]),
                          str(p.get("cases_with_corrections", "")), f"{s['success'] - p['success']:+d}"]
            else:
                cells += ["-", "-", "-", "-"]
        cells += [f"{s['mean_plan_s']:.2f}", str(s["errors"])]
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    fails = [r for r in report["cases"] if not r["success"] or not r["minimal"]]
    excused = lambda r: (not r["success"] or not r["minimal"]) and _excused(r.get("evidence"))  # noqa: E731
    documented = [r for r in fails if excused(r)]
    if documented:
        rest = [r for r in report["cases"] if not excused(r)]
        L.append(f"Excluding the {len(documented)} failed/non-minimal cases whose cause is documented below "
                 f"(domain gap, OAM or scenario data error, with evidence): success "
                 f"{rate(sum(r['success'] for r in rest), len(rest))}, minimal "
                 f"{rate(sum(r['minimal'] for r in rest), len(rest))}.\n")
    kinds: dict[str, int] = {}
    for r in fails:
        kinds[r.get("failure_kind") or "other"] = kinds.get(r.get("failure_kind") or "other", 0) + 1
    if kinds:
        L.append("Failure kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
                 + " (goal_rejected: the checks refused the answer up to the bound; no_plan/plan_timeout: "
                   "Fast Downward found no plan / none in time; wrong_goal: planned, but the desired goal is "
                   "not reached; data: the scenario itself is broken; declined: the backend said it is not sure "
                   "and nothing was planned or executed; completed: the LLM's action list missed the goal, the "
                   "planner's completion reached it; plan_invalid: the validator rejected the plan)\n")
    if any("action_list" in s for s in report["sets"].values()):
        L.extend(_action_list_section(report))
    L.append(f"## Failed or non-minimal cases ({len(fails)})\n")
    if not fails:
        L.append("None.\n")
    for r in fails:
        tag = "FAILED" if not r["success"] else "not minimal"
        L.append(f"- **{r['set']}#{r['index']}** ({r['where']}) {tag}: {r['task']!r}")
        L.append(f"  - reason: {r['failure'] or r['error'] or 'unknown'}")
        L.append(f"  - desired `{r['desired_goal'].strip()}`; accepted `{r['goal']}`; cost {r['cost']} "
                 f"(min {r['min_costs']}); rounds {r['rounds']}")
        p = r.get("paper")
        for n in r.get("notes") or []:
            L.append(f"  - note: {n}")
        if p and p.get("reached") is not None:
            L.append(f"  - paper log: reached {p['reached']}, minimal {p['minimal']}, cost {p['cost']} "
                     f"(min {p['min_cost']}), corrections {p['corrections']}")
        if r.get("evidence"):
            L.append(f"  - evidence: {r['evidence']}")
    below = [r for r in report["cases"] if r["cost_vs_min"] == "below" and r["success"]]
    if below:
        L.append(f"\n## Data notes: plans cheaper than min_costs ({len(below)})\n")
        for r in below:
            L.append(f"- {r['set']}#{r['index']} {r['task']!r}: cost {r['cost']:g} < min_costs {r['min_costs']} "
                     f"— plan: {'; '.join(r['plan']) or '(empty: the goal holds already)'}"
                     + (f"\n  - evidence: {r['evidence']}" if r.get("evidence") else ""))
    return "\n".join(L) + "\n"


def _action_list_section(report: dict) -> list[str]:
    """summary.md's part for `--method llm-action-list`: per set, then per case."""
    w = report["worker"]
    L = ["## LLM action list made executable by the planner (`--method llm-action-list`)\n",
         "The LLM writes the list of actions (the llm-planner's prompt); where a listed action's precondition "
         "does not hold, Fast Downward plans from the current state to it (a gap: "
         f"{w.get('gap_time_limit', DEFAULT_GAP_TIME_LIMIT):g} s each, at most {w.get('max_gaps', DEFAULT_MAX_GAPS)} "
         "per case) and the gap plan is spliced in; an action that is no ground action of the domain, or whose "
         "precondition no plan reaches, is skipped with the reason; where the desired goal does not hold after "
         "the list, the planner completes the plan to it. **Success** counts only the list with its gaps: the "
         "completion plans for the scenario's desired goal, which the method never sees otherwise (counted, an "
         "empty answer would score like the oracle); a completed plan is validated all the same and counted as "
         "*reached with completion*. Length vs min: the valid final plans' cost against min_costs (the optimum; "
         "a case the LLM call failed for counts with nothing in it). "
         "Inserted: actions the planner put in (gaps / completion).\n",
         "| Set | Cases | Success | Reached with completion | Completion needed | LLM actions kept / skipped "
         "| Inserted (gaps / completion) | Length vs min (= / > / <) | Planner s | LLM calls | Tokens |",
         "|" + "---|" * 11]
    rows = [(n, s) for n, s in report["sets"].items()] + [(f"**{k}**", v) for k, v in report["totals"].items()]
    for name, s in rows:
        a = s.get("action_list")
        if not a:
            continue
        lv = a["length_vs_min"]
        L.append(f"| {name} | {a['cases']} | {rate(a['success'], a['cases'])} | "
                 f"{rate(a['reached_with_completion'], a['cases'])} | {rate(a['completion_needed'], a['cases'])} | "
                 f"{a['kept']} / {a['skipped']} | {_inserted(a)} | {lv['equal']} / {lv['above']} / {lv['below']} | "
                 f"{a['planner_s']:.2f} | "
                 f"{a['llm_calls']} | {a['tokens']} |")
    L += ["", "| Case | Success | Completion | Length, cost (min_costs) | Kept / skipped "
              "| Inserted (gaps / completion) | Planner s | LLM calls | Tokens |", "|" + "---|" * 9]
    for r in report["cases"]:
        a = r.get("action_list")
        if not a:
            continue
        completion = ("not needed" if not a["completion_needed"] else
                      "reached the goal" if a["reached_with_completion"] else f"failed ({a['completion_status']})")
        L.append(f"| {r['set']}#{r['index']} | {'yes' if r['success'] else 'no'} | {completion} | "
                 + (f"{a['length']}, {r['cost']:g}" if r["plan_status"] == "valid" else "-")
                 + f" ({r['min_costs']}) | "
                 f"{a['kept']} / {a['skipped']} | {_inserted(a)} | {r['seconds']['plan']:.2f} | {r['llm_calls']} | "
                 f"{r['tokens']['prompt'] + r['tokens']['completion']} |")
    stops: dict[str, int] = {}
    for r in report["cases"]:
        if r.get("action_list"):
            stops[r["action_list"]["stop_reason"]] = stops.get(r["action_list"]["stop_reason"], 0) + 1
    if stops:
        L += ["", "Why the pass over the list stopped: " + "; ".join(f"{k}: {v}" for k, v in sorted(stops.items()))]
    skipped = [(r, x) for r in report["cases"] for x in (r.get("action_list") or {}).get("actions", ())
               if not x["kept"]]
    if skipped:
        L += ["", "Skipped LLM actions:"]
        L += [f"- {r['set']}#{r['index']} action {x['index']} `({x['step']})`: {x['reason']}" for r, x in skipped]
    L.append("")
    return L


def _inserted(a: dict) -> str:
    return f"{a['inserted']} ({a['inserted_gaps']} / {a['inserted_completion']})"


# Evidence for cases that fail (or look odd) for a reason outside the goal pipeline, found in
# measured runs on the original data: data/plan_notes.yaml, (set, 0-based index) -> explanation.
NOTES_FILE = DATA_DIR / "plan_notes.yaml"


def data_notes() -> dict[tuple[str, int], str]:
    import yaml

    raw = yaml.safe_load(NOTES_FILE.read_text(encoding="utf-8")) or {}
    out = {}
    for key, text in (raw.get("cases") or {}).items():
        name, _, index = str(key).rpartition("#")
        out[(name, int(index))] = " ".join(str(text).split())
    return out


def oam_corrections() -> dict[str, str]:
    """class -> evidence for each correction in oam_corrections.yaml."""
    import yaml

    raw = yaml.safe_load(OAM_CORRECTIONS.read_text(encoding="utf-8")) or {}
    return {str(c): " ".join(str(t).split()) for c, t in (raw.get("evidence") or {}).items()}


def _excused(evidence: Optional[str]) -> bool:
    """A documented cause outside this system's goal/plan pipeline (not, e.g., planner speed)."""
    return bool(evidence) and evidence.startswith(("domain gap", "OAM data", "data", "physics"))


def write_plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["sets"])
    sets = report["sets"]
    pct = lambda k, n: 100.0 * k / n if n else 0.0  # noqa: E731
    succ = [pct(sets[n]["success"], sets[n]["cases"]) for n in names]
    mini = [pct(sets[n]["minimal"], sets[n]["cases"]) for n in names]
    paper = [pct(sets[n]["paper"]["success"], sets[n]["paper"]["cases"]) if "paper" in sets[n] else None
             for n in names]
    import numpy as np

    x = np.arange(len(names))
    width = 0.27 if any(p is not None for p in paper) else 0.4
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(names) + 2), 4.2))
    ax.bar(x - width, succ, width, label="success (ours)")
    ax.bar(x, mini, width, label="minimal (ours)")
    if any(p is not None for p in paper):
        ax.bar(x + width, [p or 0.0 for p in paper], width, label="success (paper log, GPT-4)")
    ax.set_xticks(x)
    ax.set_xticklabels([n.replace("saycan/", "sc/") for n in names], rotation=35, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of scenarios")
    ax.set_title(f"AutoGPT+P Plan Tool benchmark — {report['llm']}")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(report: dict, out: Path) -> None:
    save(out, report, summary_markdown(report), plot=("plan_bench.png", lambda path: write_plot(report, path)))


def _print_table(report: dict) -> None:
    for name, s in list(report["sets"].items()) + list(report["totals"].items()):
        p = s.get("paper")
        extra = f"  paper log {p['success']}/{p['cases']}" if p else ""
        print(f"{name:28s} success {rate(s['success'], s['cases']):>14s}  minimal "
              f"{rate(s['minimal'], s['cases']):>14s}  corrections {s['corrections']}{extra}")


def rerender(src: Path, out: Optional[Path] = None) -> int:
    """summary.md and the plot again from an existing results.json (evidence notes refreshed)."""
    path = src / "results.json"
    if not path.is_file():
        raise BenchSetupError(f"{path} not found")
    report = json.loads(path.read_text(encoding="utf-8"))
    notes = data_notes()
    for r in report["cases"]:
        r["failure_kind"] = failure_kind(r.get("failure"))
        r["evidence"] = notes.get((r["set"], r["index"]))
    write_outputs(report, out or src)
    _print_table(report)
    return 0
