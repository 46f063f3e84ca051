"""Planning with Fast Downward (the up-fast-downward binary) and unified-planning.

Why not ``OneshotPlanner(...).solve(timeout=...)``: UP kills only the Fast Downward driver
on timeout, which can leave the ``downward`` search process behind. Here the driver runs in
its own process group with Fast Downward's own ``--overall-time-limit``; on our wall-clock
timeout the whole group is killed and reaped, so no planner process survives. No signal
handler or ``alarm`` is used (safe in any thread, e.g. inside rclpy executors).

unified-planning is still what defines correctness: every plan is parsed into a UP plan and
checked with ``SequentialPlanValidator`` against the original (un-pruned, un-compiled)
problem before it is returned.
"""
from __future__ import annotations

import importlib.resources
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from .domain import PDDL_CONFIG, PlanningTask, build_task
from .pruning import prune_scene
from .scene import Scene

SEARCH_CONFIGS = {
    # A* with LM-cut: optimal for action costs; needs no axioms because disjunctive goals
    # are compiled into zero-cost goal actions.
    "optimal": ["--search", "astar(lmcut())"],
    # LAMA's first iteration: fast, not optimal.
    "satisficing": ["--alias", "lama-first"],
}


@dataclass(frozen=True)
class PlanStep:
    action: str
    args: tuple[str, ...]
    agent: str

    def __str__(self) -> str:
        return " ".join((self.action, self.agent, *self.args))


@dataclass
class Timings:
    translate_s: Optional[float] = None
    search_s: Optional[float] = None
    total_s: float = 0.0
    validate_s: float = 0.0


@dataclass
class PlanResult:
    status: str                  # solved | unsolvable | timeout | invalid | error
    plan: list[PlanStep] = field(default_factory=list)
    cost: Optional[float] = None
    optimal: bool = False
    timings: Timings = field(default_factory=Timings)
    objects_total: int = 0
    objects_used: int = 0        # after pruning
    pruned: bool = False         # the returned plan comes from the pruned problem
    fallback: bool = False       # pruning gave no plan; solved unpruned
    message: str = ""
    log: str = ""

    @property
    def solved(self) -> bool:
        return self.status == "solved"


def _fd_driver() -> Path:
    return Path(str(importlib.resources.files("up_fast_downward").joinpath("downward/fast-downward.py")))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_fast_downward(domain: str, problem: str, mode: str, time_limit: float) -> tuple[int, str, Optional[str], float]:
    """Run FD on PDDL text; returns (exit code or -1 on timeout, log, plan text, wall s)."""
    with tempfile.TemporaryDirectory(prefix="affplan_fd_") as tmp:
        dpath, ppath, plan = Path(tmp, "domain.pddl"), Path(tmp, "problem.pddl"), Path(tmp, "plan")
        dpath.write_text(domain)
        ppath.write_text(problem)
        # FD's own limit is a backstop; our wall-clock limit below normally fires first.
        limit = int(time_limit) + 2
        cmd = [sys.executable, str(_fd_driver()), "--plan-file", str(plan),
               "--overall-time-limit", f"{limit}s"]
        cfg = SEARCH_CONFIGS[mode]
        if cfg[0] == "--alias":
            cmd += cfg + [str(dpath), str(ppath)]
        else:
            cmd += [str(dpath), str(ppath)] + cfg
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=time_limit)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, rc = (proc.stdout.read() if proc.stdout else ""), -1
        finally:
            if proc.poll() is None:
                _kill_group(proc)
            # FD's search is a child of the driver; make sure nothing of the group is left.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        wall = time.monotonic() - t0
        plan_text = plan.read_text() if plan.exists() else None
        return rc, out or "", plan_text, wall


_TRANSLATE_RE = re.compile(r"Done! \[[\d.]+s CPU, ([\d.]+)s wall-clock\]")
_SEARCH_RE = re.compile(r"Search time: ([\d.]+)s")


def _parse_plan(text: str) -> list[tuple[str, tuple[str, ...]]]:
    steps = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("(") and line.endswith(")"):
            parts = line[1:-1].split()
            steps.append((parts[0], tuple(parts[1:])))
    return steps


def solve_task(task: PlanningTask, goal: Optional[Sequence[Sequence]] = None, *,
               mode: str = "optimal", time_limit: float = 30.0,
               validate_against: Optional[PlanningTask] = None) -> PlanResult:
    """Plan for ``task`` (goal given or the task's own), validate, return a PlanResult."""
    if mode not in SEARCH_CONFIGS:
        raise ValueError(f"mode must be one of {sorted(SEARCH_CONFIGS)}, not {mode!r}")
    goal = goal if goal is not None else task.goal
    if not goal:
        raise ValueError("no goal to plan for")
    t0 = time.monotonic()
    compile_goal = mode == "optimal"
    domain = task.domain_pddl(goal_actions=goal if compile_goal else None)
    problem = task.problem_pddl(goal, goal_flag=compile_goal)
    rc, log, plan_text, wall = run_fast_downward(domain, problem, mode, time_limit)
    if plan_text is None and wall >= time_limit:
        rc = -1
    res = PlanResult(status="error", log=log, objects_total=len(task.object_types),
                     objects_used=len(task.object_types))
    m = _TRANSLATE_RE.search(log)
    res.timings.translate_s = float(m.group(1)) if m else None
    m = _SEARCH_RE.search(log)
    res.timings.search_s = float(m.group(1)) if m else None
    if rc == -1 or rc in (21, 23):
        res.status, res.message = "timeout", f"no plan within {time_limit:.1f} s"
    elif rc in (10, 11, 12) or (plan_text is None and rc == 0):
        res.status, res.message = "unsolvable", "the goal cannot be reached from this state"
    elif plan_text is None:
        res.status, res.message = "error", f"Fast Downward exit code {rc}"
    else:
        prefix = PDDL_CONFIG["goal_action_prefix"]
        steps = [(a, args) for a, args in _parse_plan(plan_text) if not a.startswith(prefix)]
        res.plan = [PlanStep(a, args[1:], args[0]) for a, args in steps]
        res.optimal = mode == "optimal"
        tv = time.monotonic()
        ok, cost, msg = validate_plan(validate_against or task, goal, steps)
        res.timings.validate_s = time.monotonic() - tv
        res.status = "solved" if ok else "invalid"
        res.cost, res.message = cost, msg
    res.timings.total_s = time.monotonic() - t0
    return res


def validate_plan(task: PlanningTask, goal, steps: Sequence[tuple[str, Sequence[str]]]):
    """Check a plan with unified-planning's SequentialPlanValidator; (ok, cost, message)."""
    from unified_planning.engines.plan_validator import SequentialPlanValidator
    from unified_planning.plans import ActionInstance, SequentialPlan
    from unified_planning.shortcuts import get_environment
    get_environment().credits_stream = None
    problem = task.up_problem(goal)
    plan = SequentialPlan([
        ActionInstance(problem.action(a), [problem.object(x) for x in args]) for a, args in steps])
    result = SequentialPlanValidator(environment=problem.environment).validate(problem, plan)
    ok = result.status.name == "VALID"
    cost = None
    if result.metric_evaluations:
        val = next(iter(result.metric_evaluations.values()))
        cost = float(val.constant_value() if hasattr(val, "constant_value") else val)
    return ok, cost, ("" if ok else f"plan rejected by the validator: {result.reason}")


def plan_for_goal(scene: Scene, goal: Sequence[Sequence], *, mode: str = "optimal",
                  time_limit: float = 30.0, prune: bool = True, **build_kwargs) -> PlanResult:
    """Build the task for ``scene`` and ``goal`` (DNF), prune, plan, validate.

    If the pruned problem yields no plan, the unpruned one is solved instead (within the
    remaining time), so pruning can never make a solvable goal unsolvable.
    """
    t0 = time.monotonic()
    full = build_task(scene, goal, **build_kwargs)
    if prune:
        kept = prune_scene(scene, goal, full)
        if len(kept.objects) < len(scene.objects):
            small = build_task(kept, goal, agents=full.agents, capabilities=full.capabilities,
                               **{k: v for k, v in build_kwargs.items() if k not in ("agents", "capabilities")})
            res = solve_task(small, mode=mode, time_limit=time_limit, validate_against=full)
            res.objects_total, res.objects_used, res.pruned = len(full.object_types), len(small.object_types), True
            if res.solved or res.status == "timeout":
                res.timings.total_s = time.monotonic() - t0
                return res
            left = max(1.0, time_limit - (time.monotonic() - t0))
            res2 = solve_task(full, mode=mode, time_limit=left)
            res2.fallback = True
            res2.timings.total_s = time.monotonic() - t0
            return res2
    res = solve_task(full, mode=mode, time_limit=time_limit)
    res.timings.total_s = time.monotonic() - t0
    return res
