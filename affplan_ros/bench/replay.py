"""The paper's GPT answers, taken from its planning logs, as a replay file for `bench plan`.

The AutoGPT+P planning logs (``logs/planning/planning_gpt_{3,4}_{on,off}_<set>.log``; "on"/"off"
is self-correction) hold, per case::

    NEW CASE ------------------------------------------------------------------
    <prompt> ... The user asks "<task>". Explain step by step ...
    Example: Bring me a banana -> (:goal and(inhand banana human))
    <LLM answer>
    [<correction message, e.g. "Your previous answer ... Please correct your answer">
     <LLM answer>]...
    ----------------------------Results:----------------------------------
    Task: <task>
    Generated Plan:
    <steps>
    ; cost = 4.0 (union cost)
    Generated Goal: (and (on  spoon0 table0))
    Desired Goal: (and (on  spoon0 table0))
    Goal Reached: True
    Costs are: 4 -- minimal costs: 4
    Costs minimal: True

The replay file is a CSV ``task,goal`` (plus optional ``set`` and ``paper_*`` columns):
``goal`` is the goal the paper's system accepted ("Generated Goal"), i.e. GPT-4's final
answer.  Some logs have later re-runs appended (SOURCE.md): only the first N cases (N = the
scenario file's rows) are the paper's runs, so callers pass ``limit``.

    python -m affplan_ros.bench.replay --set all --out paper_gpt4.csv
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

CASE_MARK = "NEW CASE ---"
RESULTS_MARK = "----------------------------Results:"
_USER_ASKS = re.compile(r'The user asks "(.*)"\. Explain step by step')
_EXAMPLE = re.compile(r"^Example: Bring me a banana")
# AutoGPT+P's correction messages (its syntax / type / Prolog checks), one line each.
_CORRECTION = re.compile(
    r"^(Your previous answer|There is a logical contradiction|The \d+(st|nd|rd|th) argument of the predicate)"
    r".*Please (correct|change)")
_COSTS = re.compile(r"^Costs are:\s*(-?[\d.]+)\s*--\s*minimal costs:\s*(-?[\d.]+)")

REPLAY_FIELDS = ["set", "task", "goal", "paper_reached", "paper_minimal", "paper_cost", "paper_min_cost",
                 "paper_corrections", "paper_desired_goal"]


@dataclass
class LogCase:
    """One case of a planning log."""

    index: int
    task: str
    answers: list[str] = field(default_factory=list)   # raw LLM answers, one per round
    corrections: int = 0                               # correction messages AutoGPT+P sent
    generated_goal: Optional[str] = None
    desired_goal: Optional[str] = None
    plan: list[str] = field(default_factory=list)
    reached: Optional[bool] = None
    cost: Optional[float] = None
    min_cost: Optional[float] = None
    minimal: Optional[bool] = None

    @property
    def completed(self) -> bool:
        """The log has a result for this case (crashed runs have none)."""
        return self.reached is not None


def _bool(text: str) -> Optional[bool]:
    text = text.strip().lower()
    return True if text == "true" else False if text == "false" else None


def parse_planning_log(text: str) -> list[LogCase]:
    """Every case of one planning log, in order."""
    cases: list[LogCase] = []
    chunks = text.split(CASE_MARK)[1:]
    for i, chunk in enumerate(chunks):
        lines = chunk.splitlines()[1:]  # rest of the NEW CASE line
        case = LogCase(index=i, task="")
        # -- conversation ------------------------------------------------------------------
        try:
            res_at = next(k for k, l in enumerate(lines) if l.startswith(RESULTS_MARK))
        except StopIteration:
            res_at = len(lines)
        convo, results = lines[:res_at], lines[res_at + 1:]
        for line in convo:
            m = _USER_ASKS.search(line)
            if m:
                case.task = m.group(1)
                break
        start = next((k + 1 for k, l in enumerate(convo) if _EXAMPLE.match(l)), None)
        if start is not None:
            current: list[str] = []
            for line in convo[start:]:
                if _CORRECTION.match(line):
                    case.answers.append("\n".join(current).strip())
                    case.corrections += 1
                    current = []
                else:
                    current.append(line)
            case.answers.append("\n".join(current).strip())
        # -- results ----------------------------------------------------------------------------
        in_plan = False
        for line in results:
            if line.startswith("Task:"):
                case.task = line[len("Task:"):].strip() or case.task
            elif line.startswith("Generated Plan:"):
                in_plan = True
            elif line.startswith("Generated Goal:"):
                in_plan = False
                case.generated_goal = line[len("Generated Goal:"):].strip()
            elif line.startswith("Desired Goal:"):
                case.desired_goal = line[len("Desired Goal:"):].strip()
            elif line.startswith("Goal Reached:"):
                case.reached = _bool(line[len("Goal Reached:"):])
            elif line.startswith("Costs minimal:"):
                case.minimal = _bool(line[len("Costs minimal:"):])
            elif _COSTS.match(line):
                m = _COSTS.match(line)
                case.cost, case.min_cost = float(m.group(1)), float(m.group(2))
            elif line.startswith("-----"):
                break
            elif in_plan and line.strip() and not line.startswith(";"):
                case.plan.append(line.strip())
        cases.append(case)
    return cases


def log_path(logs_dir: Path, log_name: str, model: str = "gpt_4", correction: str = "on") -> Path:
    """``planning_gpt_4_on_simulation_simple_task.log`` for log_name ``simulation_simple_task``."""
    return Path(logs_dir) / f"planning_{model}_{correction}_{log_name}.log"


def read_log(path: Path, limit: Optional[int] = None) -> list[LogCase]:
    cases = parse_planning_log(Path(path).read_text(encoding="utf-8", errors="replace"))
    return cases[:limit] if limit is not None else cases


def paper_summary(cases: Sequence[LogCase]) -> dict:
    """What a log records for a set: cases, goal reached, minimal costs, corrections used."""
    return {
        "cases": len(cases),
        "completed": sum(c.completed for c in cases),
        "success": sum(bool(c.reached) for c in cases),
        "minimal": sum(bool(c.reached and c.minimal) for c in cases),
        "minimal_any": sum(bool(c.minimal) for c in cases),
        "corrections": sum(c.corrections for c in cases),
        "cases_with_corrections": sum(c.corrections > 0 for c in cases),
    }


def replay_rows(set_name: str, cases: Iterable[LogCase]) -> list[dict]:
    rows = []
    for c in cases:
        rows.append({
            "set": set_name, "task": c.task, "goal": c.generated_goal or (c.answers[-1] if c.answers else ""),
            "paper_reached": "" if c.reached is None else str(c.reached),
            "paper_minimal": "" if c.minimal is None else str(c.minimal),
            "paper_cost": "" if c.cost is None else f"{c.cost:g}",
            "paper_min_cost": "" if c.min_cost is None else f"{c.min_cost:g}",
            "paper_corrections": str(c.corrections),
            "paper_desired_goal": c.desired_goal or "",
        })
    return rows


def write_replay_csv(path: Path, rows: Sequence[dict]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=REPLAY_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in REPLAY_FIELDS})


def normalize_task(task: str) -> str:
    return " ".join(task.strip().lower().split())


class ReplayBook:
    """Answers per task, in file order; a task listed twice gets its answers in that order.

    Lookup is by (set, task) when the file has a ``set`` column, falling back to the task alone.
    Several rows for the same task and occurrence are not possible to tell apart from a
    repeated task, so one row = one case's answer.
    """

    def __init__(self, rows: Sequence[dict], source: str = "<replay>"):
        self.source = source
        self.rows = list(rows)
        self._by_key: dict[tuple[str, str], list[dict]] = {}
        self._by_task: dict[str, list[dict]] = {}
        for r in self.rows:
            t = normalize_task(r.get("task", ""))
            self._by_key.setdefault((r.get("set", "") or "", t), []).append(r)
            self._by_task.setdefault(t, []).append(r)

    @classmethod
    def from_csv(cls, path: Path) -> "ReplayBook":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"replay file {path} not found (a CSV with columns task,goal)")
        with path.open(newline="", encoding="utf-8", errors="replace") as fh:
            reader = csv.DictReader(fh)
            fields = [f.strip() for f in (reader.fieldnames or [])]
            if "task" not in fields or "goal" not in fields:
                raise ValueError(f"replay file {path}: needs columns task,goal (has {', '.join(fields) or 'none'})")
            rows = [{(k or "").strip(): (v or "") for k, v in r.items()} for r in reader]
        return cls(rows, str(path))

    def lookup(self, set_name: str, task: str, occurrence: int = 0) -> Optional[dict]:
        """The row for the ``occurrence``-th case of ``task`` in ``set_name`` (None if absent)."""
        t = normalize_task(task)
        rows = self._by_key.get((set_name, t)) or self._by_key.get(("", t))
        if not rows:
            return None
        return rows[occurrence] if occurrence < len(rows) else None


def extract_paper_replay(data_dir: Path, set_names: Sequence, logs_dir: Optional[Path] = None,
                         model: str = "gpt_4", correction: str = "on") -> tuple[list[dict], dict]:
    """Replay rows and the paper's per-set record for ``set_names`` (``datasets.ScenarioSet``s).

    Only the first N log cases are used, N = the rows of the set's scenario file (later re-runs
    appended to some logs are left out).  Sets without a log are skipped (summary says so).
    """
    from affplan_ros.bench.datasets import default_logs_dir
    from affplan_ros.core.files.scene_io import read_scenarios

    logs_dir = Path(logs_dir) if logs_dir else default_logs_dir(data_dir)
    rows: list[dict] = []
    record: dict = {}
    for s in set_names:
        path = log_path(logs_dir, s.log_name, model, correction)
        if not path.is_file():
            record[s.name] = {"log": str(path), "missing": True}
            continue
        n = len(read_scenarios(s.csv).cases)
        cases = read_log(path, limit=n)
        rows.extend(replay_rows(s.name, cases))
        record[s.name] = {"log": str(path), **paper_summary(cases),
                          "per_case": [asdict(c) | {"answers": None} for c in cases]}
    return rows, record


def main(argv: Optional[Sequence[str]] = None) -> int:
    from affplan_ros.bench.datasets import (
        DataNotFoundError,
        resolve_data_dir,
        scenario_sets,
        set_names,
    )

    p = argparse.ArgumentParser(prog="python -m affplan_ros.bench.replay",
                                description="Write the paper's GPT answers (from its planning logs) as a replay CSV.")
    p.add_argument("--data", help="the autogpt_p/data folder (default: ../shared/datasets/autogpt_p/autogpt_p/data)")
    p.add_argument("--logs", help="the logs/planning folder (default: beside --data)")
    p.add_argument("--set", default="all", choices=set_names())
    p.add_argument("--model", default="gpt_4", choices=["gpt_4", "gpt_3"])
    p.add_argument("--correction", default="on", choices=["on", "off"], help="self-correction on or off runs")
    p.add_argument("--out", required=True, help="CSV to write")
    a = p.parse_args(argv)
    try:
        data = resolve_data_dir(a.data)
        rows, record = extract_paper_replay(data, scenario_sets(data, a.set), a.logs, a.model, a.correction)
    except (DataNotFoundError, ValueError) as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 2
    write_replay_csv(Path(a.out), rows)
    for name, r in record.items():
        print(f"{name:28s} " + ("no log" if r.get("missing") else f"{r['success']}/{r['cases']} reached, "
                                                                   f"{r['minimal']} minimal"))
    print(f"wrote {len(rows)} answers to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
