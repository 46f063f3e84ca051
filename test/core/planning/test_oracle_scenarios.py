"""AutoGPT+P oracle scenarios: plan the desired goal, compare with min_costs.

The full comparison (all of simple_task, simple_goal, complex_goal, with and without
pruning) takes several minutes; it runs with AFFPLAN_SLOW=1. The default run plans
simple_task with pruning and checks pruning on a sample against the unpruned problem.
"""
import os

import pytest
from _oracle import autogpt_dir, run_oracle, sim_oam_path

SLOW = os.environ.get("AFFPLAN_SLOW") == "1"


def _summary(runs):
    reached = [c for c, r in runs if not isinstance(r, Exception) and r.solved and r.cost <= c.min_costs]
    lines = [f"{c.where} {c.task!r}: "
             + (f"error {r}" if isinstance(r, Exception) else f"{r.status} cost={r.cost} min={c.min_costs}")
             for c, r in runs]
    return len(reached), "\n".join(lines)


def test_simple_task_pruned_reaches_min_costs():
    autogpt_dir()
    # The whole file takes ~80 s on 2 cores; by default the first 15 cases (all reachable).
    runs = run_oracle("evaluation_simple_task.csv", prune=True, limit=None if SLOW else 15)
    n, report = _summary(runs)
    print(f"simple_task pruned: {n}/{len(runs)} reach min_costs\n{report}")
    # Known misses of the full file: 'Wipe the counter' needs a wetting capability the
    # original capability file lacks; two goals use AutoGPT+P's derived `free` predicate.
    assert n >= (27 if SLOW else 15)


@pytest.mark.parametrize("csv_name", ["evaluation_simple_task.csv", "evaluation_simple_goal.csv"])
def test_pruning_keeps_optimal_cost(csv_name):
    autogpt_dir()
    limit = None if SLOW else 3
    pruned = run_oracle(csv_name, prune=True, limit=limit)
    full = run_oracle(csv_name, prune=False, limit=limit)
    for (case, rp), (_, rf) in zip(pruned, full):
        if isinstance(rp, Exception) or isinstance(rf, Exception):
            assert type(rp) is type(rf), case.where
            continue
        assert rp.status == rf.status, case.where
        if not (rp.optimal and rf.optimal):
            # The full problem can be too slow to search optimally in the time limit (then
            # the anytime search answers); only proven optima are compared.
            continue
        assert rp.cost == rf.cost, f"{case.where}: pruned {rp.cost} vs full {rf.cost}"


@pytest.mark.skipif(not SLOW, reason="set AFFPLAN_SLOW=1 for the full oracle comparison")
@pytest.mark.parametrize("csv_name", ["evaluation_simple_goal.csv", "evaluation_complex_goal.csv"])
def test_other_oracle_sets(csv_name):
    autogpt_dir()
    n, report = _summary(run_oracle(csv_name, prune=True))
    print(f"{csv_name}: {n} reach min_costs\n{report}")
    assert n >= {"evaluation_simple_goal.csv": 27, "evaluation_complex_goal.csv": 24}[csv_name]


def test_the_goal_cost_bound_never_exceeds_a_known_plan_cost():
    # goal_cost_bound lets the planner skip the first stage where no plan can cost as little as
    # that stage proves optimal; it must never claim more than a plan really costs. Every
    # evaluation case with the oracle's plan cost (min_costs), no planning needed (~2 s).
    from affplan_ros.core.files.scene_io import load_scene, read_scenarios
    from affplan_ros.core.goals.extraction import parse_goal
    from affplan_ros.core.goals.formula import to_dnf
    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.core.planning.pruning import goal_cost_bound, visit_bound
    from affplan_ros.core.planning.task import build_task

    base = autogpt_dir() / "autogpt_p" / "data" / "evaluation"
    oam = load_oam(sim_oam_path())
    checked, above_visit, wrong = 0, 0, []
    for csv in sorted(base.joinpath("scenarios").glob("evaluation_*.csv")):
        for case in read_scenarios(csv).cases:
            goal = to_dnf(parse_goal(case.desired_goal))
            task = build_task(load_scene(base / "scenes" / case.scene_file), goal, oam=oam, unknown_classes="warn")
            bound = goal_cost_bound(goal, task)
            checked += case.min_costs is not None
            above_visit += bound > visit_bound(goal, task)
            if case.min_costs is not None and bound > case.min_costs:
                wrong.append(f"{csv.name} {case.task!r}: bound {bound} > plan cost {case.min_costs}")
    assert checked >= 150 and not wrong, (checked, wrong)   # the cases that give a plan cost
    assert above_visit >= 10   # multi-object goals: the bound does skip the first stage
