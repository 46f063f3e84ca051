"""Planning with Fast Downward (the up-fast-downward build) and symbolic validation.

Fast Downward runs as two plain processes, the translator (``python -m
fast_downward.translate``) and the ``downward`` search binary, without FD's driver script
(one Python start-up less, no log parsing of a nested process). Each runs in its own process
group; the search also gets the remaining time as its own ``max_time``, and on our
wall-clock timeout the whole group is killed and reaped, so no planner process survives. No
signal handler or ``alarm`` is used (safe in any thread, e.g. inside rclpy executors).

High-arity capabilities are planned in the split encoding (``domain.split_capability``):
chains of low-arity stage actions that the translator grounds far faster; the plan is mapped
back to the capabilities before validation.

Every plan is validated before it leaves the core, against the full (un-pruned, un-split)
task: by default with the symbolic simulator (``simulate.validate_plan``: every step's
precondition, the affordance and capability guards and the parameter types included, then
the goal; cost = sum of the actors' costs). ``validator="up"`` uses unified-planning's
``SequentialPlanValidator`` instead, ``"both"`` runs both and requires them to agree
(environment variable ``AFFPLAN_VALIDATOR`` sets the default).
"""
from __future__ import annotations

import importlib.util
import math
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from affplan_ros.core.knowledge.oam import load_oam
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.planning.encoding import PDDL_CONFIG
from affplan_ros.core.planning.pruning import goal_cost_bound, prune_scene, visit_bound
from affplan_ros.core.planning.relaxation import relax
from affplan_ros.core.planning.simulate import validate_plan as symbolic
from affplan_ros.core.planning.task import PlanningTask, build_task

# Search configurations; {t} is the remaining time (Fast Downward's own limit on search).
SEARCH_CONFIGS = {
    # A* with LM-cut: optimal for action costs; needs no axioms because disjunctive goals
    # are compiled into zero-cost goal actions. Strong per state, but slow per state on
    # tasks with thousands of operators.
    "lmcut": "astar(lmcut(),max_time={t})",
    # A* with the admissible landmark heuristic of BJOLP (FD's seq-opt-bjolp): weaker than
    # LM-cut per state but far cheaper to compute.
    "bjolp": "astar(landmark_cost_partitioning(lm_merged([lm_rhw(),lm_hm(m=1)])),max_time={t})",
    # A* with iPDB pattern databases (FD's seq-opt-ipdb style, construction time capped).
    "ipdb": "astar(ipdb(max_time=5),max_time={t})",
    # LAMA's landmark + FF greedy search with costs counted (+1, as LAMA's heuristics do):
    # fast and cost-aware (the unit-cost lama-first happily asks the human, cost 100).
    "greedy": ("let(hlm, eval_modify_costs(landmark_sum(lm_factory=lm_reasonable_orders_hps(lm_rhw()),"
               "pref=false),cost_type=plusone),let(hff, eval_modify_costs(ff(),cost_type=plusone),"
               "lazy_greedy([hff,hlm],preferred=[hff,hlm],reopen_closed=false,max_time={t})))"),
    # LAMA 2011 (FD's seq-sat-lama-2011): greedy, then weighted A* with falling weights, each
    # plan bounding the next; it writes plan.1, plan.2, ... and is stopped by the time limit.
    "anytime": ("let(hlm1, eval_modify_costs(landmark_sum(lm_factory=lm_reasonable_orders_hps(lm_rhw()),"
                "pref=false),cost_type=one),let(hff1, eval_modify_costs(ff(),cost_type=one),"
                "let(hlm2, eval_modify_costs(landmark_sum(lm_factory=lm_reasonable_orders_hps(lm_rhw()),"
                "pref=false),cost_type=plusone),let(hff2, eval_modify_costs(ff(),cost_type=plusone),"
                "iterated([lazy_greedy([hff1,hlm1],preferred=[hff1,hlm1],cost_type=one,reopen_closed=false),"
                "lazy_greedy([hff2,hlm2],preferred=[hff2,hlm2],reopen_closed=false),"
                "lazy_wastar([hff2,hlm2],preferred=[hff2,hlm2],w=5),"
                "lazy_wastar([hff2,hlm2],preferred=[hff2,hlm2],w=3),"
                "lazy_wastar([hff2,hlm2],preferred=[hff2,hlm2],w=2),"
                "lazy_wastar([hff2,hlm2],preferred=[hff2,hlm2],w=1)],"
                "repeat_last=true,continue_on_solve=true,max_time={t})))))"),
}
# Symbolic bidirectional uniform-cost search (SymK, a Fast Downward fork, from up-symk): sets
# of states as BDDs, no heuristic. Where many plans of equal cost differ only in the order of
# their steps (ten things carried off a table, one hand), it proves the optimum in a second where
# A* with any of the heuristics above runs past 30 s; it pays about 0.2 s to start (CUDD's tables).
# FD's variable order beat SymK's own ("Gamer") ordering 1.2 s to 3.8 s on that task.
SYMBOLIC_CONFIGS = {"symbolic": "sym_bd(gamer_ordering=false,max_time={t})"}
SEARCH_CONFIGS.update(SYMBOLIC_CONFIGS)
OPTIMAL_CONFIGS = ("lmcut", "bjolp", "ipdb", "symbolic")
# The optimal search used by mode="optimal" (AFFPLAN_OPTIMAL_SEARCH overrides it for experiments).
DEFAULT_OPTIMAL = "bjolp"
# mode="optimal" gives the optimal search at most this share of the time left after
# translation; if it runs out, the anytime search gets the rest, so there is a plan (reported
# as not proven optimal) instead of none.
OPTIMAL_SHARE = 0.75
# The relaxation stage of plan_for_goal gets at most this share of the time, and races these
# optimal searches: neither is the faster on every task (ten things off a table: A* past 30 s,
# the symbolic search 0.6 s; six screws into a box: A* 0.3 s, the symbolic search 5 s).
RELAXED_SHARE = 1 / 3
RELAXED_SEARCHES = ("bjolp", "symbolic")
MODES = ("optimal", "satisficing")
VALIDATORS = ("symbolic", "up", "both")


@dataclass(frozen=True)
class PlanStep:
    action: str
    args: tuple[str, ...]
    agent: str

    def __str__(self) -> str:
        return " ".join((self.action, *([self.agent] if self.agent else []), *self.args))

    @property
    def pddl_args(self) -> tuple[str, ...]:
        """The arguments as the PDDL action takes them: the agent first, if there is one."""
        return ((self.agent,) if self.agent else ()) + tuple(self.args)


@dataclass
class Timings:
    translate_s: Optional[float] = None   # wall time of the translator process
    search_s: Optional[float] = None      # wall time of the search process
    total_s: float = 0.0                  # everything, task building and validation included
    validate_s: float = 0.0
    build_s: float = 0.0                  # building (and pruning) the planning tasks


class PlanStatus(str, Enum):
    """How a planning call ended (a str enum: ``status == "solved"`` still reads as before)."""
    SOLVED = "solved"          # a plan, validated against the full problem
    UNSOLVABLE = "unsolvable"  # the goal cannot be reached from this state
    TIMEOUT = "timeout"        # no plan within the time limit
    INVALID = "invalid"        # the planner's plan did not pass validation
    ERROR = "error"            # the planner failed

    def __str__(self) -> str:  # reports and f-strings show "solved", as when this was a plain string
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass
class PlanResult:
    status: PlanStatus
    plan: list[PlanStep] = field(default_factory=list)
    cost: Optional[float] = None
    optimal: bool = False
    timings: Timings = field(default_factory=Timings)
    objects_total: int = 0
    objects_used: int = 0        # after pruning
    pruned: bool = False         # the returned plan comes from the pruned problem
    fallback: bool = False       # pruning gave no plan; solved unpruned
    relaxed: bool = False        # proven optimal on the relaxation (relaxation.py), not on the home's task
    operators: Optional[int] = None  # ground operators after translation
    # No plan for the whole home costs less (proven by the optimal search; the cost itself when
    # the plan is optimal). None where nothing was proven, e.g. in satisficing mode.
    lower_bound: Optional[float] = None
    message: str = ""
    log: str = ""

    @property
    def solved(self) -> bool:
        return self.status == PlanStatus.SOLVED


@lru_cache(maxsize=1)
def _fd_paths() -> tuple[Path, Path]:
    """(directory holding the ``fast_downward.translate`` package, the ``downward`` binary)."""
    spec = importlib.util.find_spec("up_fast_downward")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("up-fast-downward is not installed (pip install up-fast-downward)")
    bindir = Path(next(iter(spec.submodule_search_locations))) / "downward" / "builds" / "release" / "bin"
    return bindir, bindir / "downward"


@lru_cache(maxsize=1)
def _symk_binary() -> Path:
    """SymK's search binary (it reads the SAS file of Fast Downward's translator)."""
    spec = importlib.util.find_spec("up_symk")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("up-symk is not installed (pip install up-symk)")
    return Path(next(iter(spec.submodule_search_locations))) / "symk" / "builds" / "release" / "bin" / "downward"


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _spawn(cmd, *, cwd, timeout: float, stdin=None, env=None, stdout=subprocess.PIPE) -> subprocess.Popen:
    """Start ``cmd`` in its own process group, its CPU time limited to ``timeout`` + 1 s."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdin=stdin, stdout=stdout, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, env=env)
    # A kernel-enforced CPU limit (as FD's own driver sets) bounds the planner even if this
    # process is killed before it can kill the group. CPU time never exceeds wall time here,
    # so the limit cannot fire before our wall-clock timeout. Set from the parent: a
    # preexec_fn is unsafe in the multi-threaded nodes.
    try:
        cpu = int(math.ceil(timeout)) + 1
        resource.prlimit(proc.pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
    except (OSError, ValueError, AttributeError):
        pass
    return proc


def _reap(proc: subprocess.Popen) -> None:
    """Kill what is left of ``proc``'s group (children too) and reap it."""
    if proc.poll() is None:
        _kill_group(proc)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.stdout:
        proc.stdout.close()


def _run_group(cmd, *, cwd, timeout: float, stdin=None, env=None) -> tuple[Optional[int], str, float]:
    """Run ``cmd`` in its own process group; (exit code or None on timeout, output, wall s).
    Whatever happens, the group is killed and the process reaped before returning."""
    t0 = time.monotonic()
    proc = _spawn(cmd, cwd=cwd, timeout=timeout, stdin=stdin, env=env)
    try:
        out, _ = proc.communicate(timeout=max(0.01, timeout))
        rc: Optional[int] = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        # communicate() has read part of the output already: ask it again for all of it (what a
        # killed search logged tells how far it got). The group is dead, so the pipe is closed.
        try:
            out, _ = proc.communicate(timeout=5)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            out = ""
        rc = None
    finally:
        _reap(proc)
    return rc, out or "", time.monotonic() - t0


# Exit codes of a search that settled the task: a plan, or proven unsolvable (FD's 11 and 12).
_SETTLED = (0, 11, 12)


def _race(cmds: dict[str, list[str]], *, tmp: str, timeout: float) -> dict[str, tuple[Optional[int], str, float]]:
    """Run the searches ``cmds`` (name -> command) side by side on ``tmp``'s output.sas, each in
    its own folder ``tmp/name``; the first to settle the task ends the others. Name -> (exit
    code or None when stopped, output, wall s)."""
    t0 = time.monotonic()
    procs: dict[str, subprocess.Popen] = {}
    ended: dict[str, tuple[int, float]] = {}
    files = []
    try:
        for name, cmd in cmds.items():
            folder = Path(tmp, name)
            folder.mkdir(exist_ok=True)
            for old in folder.glob("plan*"):
                old.unlink()
            sas, log = open(Path(tmp, "output.sas")), open(folder / "log", "w+")
            files += [sas, log]
            procs[name] = _spawn(cmd, cwd=folder, timeout=timeout, stdin=sas, stdout=log)
        while len(ended) < len(procs) and time.monotonic() - t0 < timeout:
            for name, proc in procs.items():
                if name not in ended and proc.poll() is not None:
                    ended[name] = (proc.returncode, time.monotonic() - t0)
            if any(rc in _SETTLED for rc, _ in ended.values()):
                break
            time.sleep(0.005)
    finally:
        for proc in procs.values():
            _reap(proc)
        for f in files:
            f.close()
    wall = time.monotonic() - t0
    result = {}
    for name in cmds:
        rc, seconds = ended.get(name, (None, wall))
        log = Path(tmp, name, "log")
        result[name] = (rc, log.read_text(errors="replace") if log.exists() else "", seconds)
    return result


@dataclass
class SearchRun:
    """One search on the translated task."""
    config: str                      # key of SEARCH_CONFIGS
    status: str                      # plan | unsolvable | timeout | error
    seconds: float = 0.0
    plan_text: Optional[str] = None
    cost: Optional[float] = None     # FD's plan cost (total-cost metric)
    rc: Optional[int] = None
    lower_bound: Optional[float] = None  # an optimal search's last f layer: no plan costs less


@dataclass
class FDRun:
    status: str                      # plan | unsolvable | timeout | error (of the run as a whole)
    log: str = ""
    plan_text: Optional[str] = None  # the cheapest plan any search found
    translate_s: Optional[float] = None
    search_s: Optional[float] = None  # all searches together
    operators: Optional[int] = None
    rc: Optional[int] = None
    searches: list[SearchRun] = field(default_factory=list)
    optimal: bool = False            # the plan comes from an optimal search that finished

    @property
    def lower_bound(self) -> Optional[float]:
        """The least cost any plan for this task can have, as the optimal searches proved it
        (their plan's cost when one finished); None when no optimal search ran."""
        bounds = [s.cost if s.status == "plan" else s.lower_bound
                  for s in self.searches if s.config in OPTIMAL_CONFIGS]
        bounds = [b for b in bounds if b is not None]
        return max(bounds) if bounds else None

    @property
    def best(self) -> Optional[SearchRun]:
        found = [s for s in self.searches if s.status == "plan"]
        return min(found, key=lambda s: (s.cost if s.cost is not None else math.inf)) if found else None


_OPERATORS_RE = re.compile(r"Translator operators: (\d+)")
_PLAN_FILE_COST_RE = re.compile(r"^; cost = (\d+(?:\.\d+)?)", re.M)  # FD's last line of a plan file
# A* logs "f = N, ... evaluated, ... expanded" each time it starts expanding a higher f layer.
# With an admissible heuristic every cheaper plan would have been found by then, so N bounds
# the optimum from below even when the search runs out of time.
_F_LAYER_RE = re.compile(r"\] f = (\d+(?:\.\d+)?), ")
# SymK logs "BOUND: N < M" each time it has ruled out every plan cheaper than N.
_SYMBOLIC_BOUND_RE = re.compile(r"\] BOUND: (\d+(?:\.\d+)?) <")


def last_f_layer(log: str) -> Optional[float]:
    """The highest f layer an A* search logged, or the highest bound the symbolic search did (a
    lower bound on the optimal cost), or None."""
    layers = _F_LAYER_RE.findall(log) + _SYMBOLIC_BOUND_RE.findall(log)
    return max(float(f) for f in layers) if layers else None


def fast_downward(domain: str, problem: str, searches: Sequence[str | tuple[str, float]] | str,
                  time_limit: float, translate_options: Sequence[str] = ()) -> FDRun:
    """Translate ``domain``/``problem`` (PDDL text) once, then run ``searches`` one after
    another on the result, all within ``time_limit`` seconds. A search is a key of
    SEARCH_CONFIGS, or (key, share): then it gets at most that share (0..1] of the time left
    after translation, or (tuple of keys, share): a race of those searches side by side, ended
    by the first that finds a plan or proves there is none.

    Searches after one that proved the task unsolvable, or after an optimal one that found a
    plan, are skipped. The run's status is "plan" if any search found one (``plan_text`` is
    the cheapest); ``optimal`` says whether an optimal search finished with it."""
    searches = [searches] if isinstance(searches, str) else list(searches)
    searches = [(s, 1.0) if isinstance(s, str) else (s[0], float(s[1])) for s in searches]
    searches = [((s,) if isinstance(s, str) else tuple(s), share) for s, share in searches]
    bindir, downward = _fd_paths()
    deadline = time.monotonic() + time_limit
    with tempfile.TemporaryDirectory(prefix="affplan_fd_") as tmp:
        Path(tmp, "domain.pddl").write_text(domain)
        Path(tmp, "problem.pddl").write_text(problem)
        env = dict(os.environ)
        env["PYTHONPATH"] = str(bindir) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        rc, out, wall = _run_group([sys.executable, "-S", "-m", "fast_downward.translate", "domain.pddl",
                                    "problem.pddl", "--sas-file", "output.sas", *translate_options],
                                   cwd=tmp, timeout=time_limit, env=env)
        run = FDRun("error", log=out, translate_s=wall, rc=rc)
        m = _OPERATORS_RE.search(out)
        run.operators = int(m.group(1)) if m else None
        if rc is None:
            run.status = "timeout"
            return run
        if rc != 0 or not Path(tmp, "output.sas").exists():
            run.status = "unsolvable" if rc == 10 else "error"
            return run
        run.search_s = 0.0
        after_translate = deadline - time.monotonic()
        for names, share in searches:
            left = min(share * after_translate, deadline - time.monotonic())
            if left <= 0.05:
                run.searches += [SearchRun(name, "timeout") for name in names]
                continue
            # FD's own limit, to a tenth of a second (it counts CPU time: on a loaded machine our
            # kill comes first, and what the search logged until then is kept).
            cmds = {name: [str(_symk_binary() if name in SYMBOLIC_CONFIGS else downward), "--search",
                           SEARCH_CONFIGS[name].format(t=f"{max(0.1, left):.1f}"), "--internal-plan-file", "plan"]
                    for name in names}
            ended = _race(cmds, tmp=tmp, timeout=left + 0.5)
            for name in names:
                rc, out, wall = ended[name]
                run.log += out
                sr = _search_run(name, Path(tmp, name), rc, out, wall)
                run.searches.append(sr)
                run.rc = rc
            run.search_s += max(wall for _, _, wall in ended.values())
            if any(s.status == "unsolvable" or (s.status == "plan" and s.config in OPTIMAL_CONFIGS)
                   for s in run.searches):
                break
        best = run.best
        if best is not None:
            run.status, run.plan_text = "plan", best.plan_text
            run.optimal = any(s.status == "plan" and s.config in OPTIMAL_CONFIGS for s in run.searches)
            if run.optimal:  # the optimal plan, even if a quick search found one as cheap
                run.plan_text = next(s.plan_text for s in run.searches
                                     if s.status == "plan" and s.config in OPTIMAL_CONFIGS)
        elif any(s.status == "unsolvable" for s in run.searches):
            run.status = "unsolvable"
        elif any(s.status == "timeout" for s in run.searches):
            run.status = "timeout"
        return run


def _search_run(name: str, folder: Path, rc: Optional[int], out: str, wall: float) -> SearchRun:
    """What the search ``name`` that ran in ``folder`` found."""
    sr = SearchRun(name, "error", seconds=wall, rc=rc,
                   lower_bound=last_f_layer(out) if name in OPTIMAL_CONFIGS else None)
    # An anytime search writes plan.1, plan.2, ... (each cheaper than the one before) and may be
    # stopped by the time limit after finding some.
    plans = sorted(folder.glob("plan*"), key=lambda f: int(f.suffix[1:]) if f.suffix[1:].isdigit() else 0)
    if plans and (rc == 0 or name == "anytime"):
        sr.status, sr.plan_text = "plan", plans[-1].read_text()
        cost = _PLAN_FILE_COST_RE.search(sr.plan_text)
        sr.cost = float(cost.group(1)) if cost else None
    elif rc is None or "Time limit reached" in out:
        sr.status = "timeout"
    elif rc in (11, 12):
        sr.status = "unsolvable"
    return sr


def _parse_plan(text: str) -> list[tuple[str, tuple[str, ...]]]:
    steps = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("(") and line.endswith(")"):
            parts = line[1:-1].split()
            steps.append((parts[0], tuple(parts[1:])))
    return steps


def _default_validator() -> str:
    v = os.environ.get("AFFPLAN_VALIDATOR", "symbolic")
    return v if v in VALIDATORS else "symbolic"


def solve_task(task: PlanningTask, goal: Optional[Sequence[Sequence]] = None, *,
               mode: str = "optimal", time_limit: float = 30.0,
               validate_against: Optional[PlanningTask] = None, split: bool = True,
               validator: Optional[str] = None, optimal_search: str | tuple[str, ...] | None = None,
               anytime: bool = True) -> PlanResult:
    """Plan for ``task`` (goal given or the task's own), validate, return a PlanResult.

    ``validate_against``: the task the plan is checked on (the full task when ``task`` is a
    pruned one); ``split``: use the split encoding of high-arity actions; ``optimal_search``:
    a key of OPTIMAL_CONFIGS, or a tuple of them to race (default: AFFPLAN_OPTIMAL_SEARCH, else
    DEFAULT_OPTIMAL);
    ``anytime``: in optimal mode, give the anytime search what time the optimal one leaves."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    validator = validator or _default_validator()
    if validator not in VALIDATORS:
        raise ValueError(f"validator must be one of {VALIDATORS}, not {validator!r}")
    goal = goal if goal is not None else task.goal
    if not goal:
        raise ValueError("no goal to plan for")
    t0 = time.monotonic()
    compile_goal = mode == "optimal"
    domain = task.domain_pddl(goal_actions=goal if compile_goal else None, split=split)
    problem = task.problem_pddl(goal, goal_flag=compile_goal, split=split)
    # The translator's invariant synthesis (mutex groups, used only to make multi-valued
    # variables) blows up on the stage-chain bookkeeping of split actions (4 s of 10 s at
    # 25 objects) and on negated goal literals (each becomes a disjunction over the other
    # values of its multi-valued variable: "clear the counter" took 60 s to translate, 0.5 s
    # without). Searches are as fast without it, and it does not affect correctness.
    negated_goal = any(l.negated for c in goal for l in c)
    options = (["--invariant-generation-max-candidates", "0"]
               if negated_goal or (split and task.split_actions) else [])
    # The causal-graph variable order only serves FD's causal-graph heuristic, which no
    # configuration here uses; computing it was a third of the translator's time on big tasks.
    options.append("--skip-variable-reordering")
    if mode == "optimal":
        optimal = optimal_search or os.environ.get("AFFPLAN_OPTIMAL_SEARCH", DEFAULT_OPTIMAL)
        if any(o not in OPTIMAL_CONFIGS for o in ((optimal,) if isinstance(optimal, str) else optimal)):
            raise ValueError(f"AFFPLAN_OPTIMAL_SEARCH must be one of {OPTIMAL_CONFIGS}, not {optimal!r}")
        searches = [(optimal, OPTIMAL_SHARE), "anytime"] if anytime else [(optimal, 1.0)]
    else:
        searches = ["greedy"]
    run = fast_downward(domain, problem, searches, time_limit, options)
    res = PlanResult(status=PlanStatus.ERROR, log=run.log, objects_total=len(task.object_types),
                     objects_used=len(task.object_types), operators=run.operators)
    res.timings.translate_s, res.timings.search_s = run.translate_s, run.search_s
    res.lower_bound = run.lower_bound
    if run.status == "timeout":
        res.status, res.message = PlanStatus.TIMEOUT, f"no plan within {time_limit:.1f} s"
    elif run.status == "unsolvable":
        res.status, res.message = PlanStatus.UNSOLVABLE, "the goal cannot be reached from this state"
    elif run.status != "plan" or run.plan_text is None:
        res.status, res.message = PlanStatus.ERROR, f"Fast Downward failed (exit code {run.rc})"
    else:
        prefix = PDDL_CONFIG["goal_action_prefix"]
        steps = [(a, args) for a, args in _parse_plan(run.plan_text) if not a.startswith(prefix)]
        tv = time.monotonic()
        try:
            steps = task.merge_stages(steps) if split else steps
        except ValueError as exc:
            res.status, res.message = PlanStatus.INVALID, f"malformed split plan: {exc}"
        else:
            res.plan = []
            for a, args in steps:
                agent, params = task.step_parts(a, args)
                res.plan.append(PlanStep(a, params, agent))
            res.optimal = run.optimal
            ok, cost, msg = validate(validate_against or task, goal, steps, validator)
            res.status = PlanStatus.SOLVED if ok else PlanStatus.INVALID
            res.cost, res.message = cost, msg
            if ok and mode == "optimal" and not run.optimal:
                res.message = (f"the optimal search found no plan within {time_limit:.0f} s; this plan "
                               f"comes from the anytime (LAMA) search and may cost more than the optimum"
                               + _bound_text(res.lower_bound))
        res.timings.validate_s = time.monotonic() - tv
    res.timings.total_s = time.monotonic() - t0
    return res


def validate(task: PlanningTask, goal, steps: Sequence[tuple[str, Sequence[str]]],
             validator: str = "symbolic"):
    """(ok, cost, message) for a plan of ``(action, (actor, *args))`` steps on ``task``."""
    if validator == "symbolic":
        return symbolic(task, goal, steps)
    if validator == "up":
        return validate_plan(task, goal, steps)
    a, b = symbolic(task, goal, steps), validate_plan(task, goal, steps)
    if a[0] != b[0] or (a[0] and a[1] != b[1]):
        return False, None, f"validators disagree: symbolic {a}, unified-planning {b}"
    return a


def validate_plan(task: PlanningTask, goal, steps: Sequence[tuple[str, Sequence[str]]]):
    """Check a plan with unified-planning's SequentialPlanValidator; (ok, cost, message)."""
    from unified_planning.engines.plan_validator import SequentialPlanValidator
    from unified_planning.plans import ActionInstance, SequentialPlan
    from unified_planning.shortcuts import get_environment
    get_environment().credits_stream = None
    problem = task.up_problem(goal)
    try:
        plan = SequentialPlan([
            ActionInstance(problem.action(a), [problem.object(x) for x in args]) for a, args in steps])
    except Exception as exc:  # unknown action or object
        return False, None, f"plan rejected by the validator: {exc}"
    result = SequentialPlanValidator(environment=problem.environment).validate(problem, plan)
    ok = result.status.name == "VALID"
    cost = None
    if result.metric_evaluations:
        val = next(iter(result.metric_evaluations.values()))
        cost = float(val.constant_value() if hasattr(val, "constant_value") else val)
    return ok, cost, ("" if ok else f"plan rejected by the validator: {result.reason}")


def plan_for_goal(scene: Scene, goal: Sequence[Sequence], *, mode: str = "optimal",
                  time_limit: float = 30.0, prune: bool = True, split: bool = True,
                  validator: Optional[str] = None, **build_kwargs) -> PlanResult:
    """Build the task for ``scene`` and ``goal`` (DNF), prune, plan, validate.

    If the pruned problem yields no plan, the unpruned one is solved instead (within the
    remaining time), so pruning can never make a solvable goal unsolvable. Plans are always
    validated against the full, unpruned task.
    """
    t0 = time.monotonic()
    if "oam" not in build_kwargs or build_kwargs["oam"] is None:
        build_kwargs["oam"] = load_oam()
    full = build_task(scene, goal, **build_kwargs)
    opts = dict(mode=mode, split=split, validator=validator)
    relaxed_runs: list[PlanResult] = []    # their time counts; their plans are not the home's
    if prune:
        rest = {k: v for k, v in build_kwargs.items() if k not in ("agents", "capabilities")}
        kept = prune_scene(scene, goal, full)
        anchored = prune_scene(scene, goal, full, anchored=True)
        earlier: list[PlanResult] = []
        if mode == "optimal":
            # First the cheapest agents alone in the places the plan goes to anyway, a relaxation
            # (relaxation.py): its optimal plan, where the home can carry it out, is optimal.
            relaxed, _ = relax(kept, anchored, goal, full, build=lambda sc, ag, caps: build_task(
                sc, goal, agents=ag, capabilities=caps, **rest))
            if relaxed is not None:
                res = solve_task(relaxed.task, time_limit=time_limit * RELAXED_SHARE, validate_against=full,
                                 optimal_search=RELAXED_SEARCHES, anytime=False, **opts)
                res.objects_total, res.pruned = len(full.object_types), True
                res.objects_used = len(relaxed.task.object_types)
                if res.solved and res.optimal and res.cost < relaxed.below:
                    res.relaxed = True
                    return _finish(res, t0, [])
                relaxed_runs.append(res)
        for sub, bound in ((anchored, visit_bound(goal, full)), (kept, None)):
            if len(sub.objects) >= len(scene.objects) or (bound is not None and len(sub.objects) >= len(kept.objects)):
                continue
            if mode == "optimal" and bound is not None and goal_cost_bound(goal, full) > bound:
                continue  # every plan costs more than the first stage could prove optimal
            # First the places the plan must go to anyway: where that plan costs no more than
            # any plan going elsewhere must (visit_bound), it is optimal for the whole home.
            small = build_task(sub, goal, agents=full.agents, capabilities=full.capabilities, **rest)
            left = time_limit / 2 if bound is not None else max(1.0, time_limit - (time.monotonic() - t0))
            # Not bounded by visit_bound (FD's bound would end it at once where the plan costs
            # more): its optimal plan is the fallback when the whole home's search runs out of
            # time (a greedy plan there was far worse: one took the person's 100-cost action).
            res = solve_task(small, time_limit=left, validate_against=full, **opts)
            res.objects_total, res.objects_used, res.pruned = len(full.object_types), len(small.object_types), True
            if bound is not None:
                if res.solved and (mode != "optimal" or (res.optimal and res.cost <= bound)):
                    return _finish(res, t0, [*relaxed_runs, *earlier])
            elif res.solved and (res.optimal or mode != "optimal"):
                return _finish(res, t0, [*relaxed_runs, *earlier])
            elif res.solved or res.status == "timeout":
                # Out of time: the anytime plan, unless the places the plan goes to anyway gave a
                # cheaper one (the anytime search once had the person act five times, cost 507,
                # beside that plan's 7).
                first = next((e for e in earlier if e.solved), None)
                if first is None or (res.solved and res.cost <= first.cost):
                    return _finish(res, t0, [*relaxed_runs, *earlier])
                # The places the plan goes to anyway gave a plan; the whole home's search ran out
                # of time: that plan, said not to be proven optimal.
                earlier.remove(first)
                first.optimal = False
                # Only the whole-home search's bound holds for the home (rule 5 keeps its optimum).
                first.lower_bound = res.lower_bound
                first.message = (f"optimal among the {first.objects_used} objects of the places the plan goes to "
                                 f"anyway; planning with the other places ran out of time, so the plan may cost "
                                 f"more than the optimum" + _bound_text(first.lower_bound))
                return _finish(first, t0, [*relaxed_runs, *earlier, res])
            earlier.append(res)
        if earlier:
            res = solve_task(full, time_limit=max(1.0, time_limit - (time.monotonic() - t0)), **opts)
            res.fallback = True
            return _finish(res, t0, [*relaxed_runs, *earlier])
    left = max(1.0, time_limit - (time.monotonic() - t0))
    return _finish(solve_task(full, time_limit=left, **opts), t0, relaxed_runs)


def _bound_text(bound: Optional[float]) -> str:
    return f" (no plan costs less than {bound:g}, as far as the optimal search got)" if bound else ""


def _finish(res: PlanResult, t0: float, earlier: Sequence[PlanResult]) -> PlanResult:
    """``res`` with the whole call's timings: the planner time of the stages tried before it
    counted in, building and pruning the tasks as the rest."""
    t = res.timings
    for e in earlier:
        if e.timings.translate_s is not None:
            t.translate_s = (t.translate_s or 0.0) + e.timings.translate_s
        if e.timings.search_s is not None:
            t.search_s = (t.search_s or 0.0) + e.timings.search_s
        t.validate_s += e.timings.validate_s
    t.total_s = time.monotonic() - t0
    t.build_s = max(0.0, t.total_s - (t.translate_s or 0.0) - (t.search_s or 0.0) - t.validate_s)
    return res
