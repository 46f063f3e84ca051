"""Split encoding of high-arity actions and the symbolic plan validator."""
import os

import pytest
from _oracle import REPO, autogpt_dir, run_oracle

from affplan_ros.core.files.scene_io import load_scene
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.knowledge.capabilities import load_capabilities
from affplan_ros.core.planning.planner import plan_for_goal, solve_task, validate
from affplan_ros.core.planning.splitting import split_capability
from affplan_ros.core.planning.task import build_task

SLOW = os.environ.get("AFFPLAN_SLOW") == "1"
GOALS = ["(and (inhand apple0 human0))", "(and (chopped apple0))", "(and (in banana0 cup0))",
         "(and (on cup0 table0) (not (closed refrigerator0)))", "(or (in apple0 bowl0) (inhand sponge0 human0))"]


def goal(text):
    return to_dnf(parse_goal(text))


@pytest.fixture(scope="module")
def kitchen():
    return load_scene(REPO / "config" / "scenarios" / "kitchen.txt")


def test_high_arity_capabilities_split_into_low_arity_stages():
    caps = load_capabilities()
    for name in ("pour", "fill", "chop", "heat_liquid", "grasp", "putin"):
        sp = split_capability(caps[name], split_above=3)
        assert sp is not None, name
        assert len(sp.stages) >= 2 and all(len(st.params) <= 3 for st in sp.stages)
        assert set().union(*(st.params for st in sp.stages)) == set(sp.params)
    assert split_capability(caps["move"], split_above=3) is None  # 3 parameters with the actor


@pytest.mark.parametrize("text", GOALS)
def test_split_and_unsplit_give_the_same_optimal_cost(kitchen, text):
    g = goal(text)
    task = build_task(kitchen, g)
    task.split_min_groundings = task.split_min_total = 0  # split everything that can be split
    assert task.split_actions
    split = solve_task(task, split=True, time_limit=60)
    plain = solve_task(task, split=False, time_limit=60)
    assert split.status == plain.status == "solved", (split.message, plain.message)
    assert split.cost == plain.cost
    # Merged steps are the capabilities' own actions.
    assert all(s.action in task.capabilities for s in split.plan)


def test_merge_stages_rejects_broken_chains(kitchen):
    task = build_task(kitchen)
    task.split_min_groundings = task.split_min_total = 0
    sp = task.split_actions["pour"]
    args = {v: f"x{i}" for i, v in enumerate(sp.params)}
    chain = [(st.name, tuple(args[v] for v in st.params)) for st in sp.stages]
    assert task.merge_stages(chain) == [("pour", tuple(args[v] for v in sp.params))]
    with pytest.raises(ValueError):
        task.merge_stages(chain[:-1])
    with pytest.raises(ValueError):
        task.merge_stages([chain[0], ("move", ("robot0", "a", "b"))] + chain[1:])


def test_symbolic_and_up_validators_agree(kitchen):
    g = goal("(and (inhand apple0 human0))")
    task = build_task(kitchen, g)
    res = plan_for_goal(kitchen, g, validator="both")
    assert res.solved, res.message
    steps = [(s.action, (s.agent, *s.args)) for s in res.plan]
    for v in ("symbolic", "up"):
        ok, cost, _ = validate(task, g, steps, v)
        assert ok and cost == res.cost
        # Dropping a step breaks a precondition or the goal; both reject it.
        for i in range(len(steps)):
            ok, _, msg = validate(task, g, steps[:i] + steps[i + 1:], v)
            assert not ok, (v, i)
        # A wrong actor type / unknown action is rejected too.
        assert not validate(task, g, [("grasp", ("apple0", "apple0", "table0", "table0"))], v)[0]
        assert not validate(task, g, [("teleport", ("robot0",))], v)[0]


@pytest.mark.slow
def test_validators_agree_on_oracle_scenarios(monkeypatch):
    autogpt_dir()
    monkeypatch.setenv("AFFPLAN_VALIDATOR", "both")  # "solved" means both accepted with one cost
    runs = run_oracle("evaluation_simple_task.csv", prune=True, limit=None if SLOW else 6)
    for case, res in runs:
        assert not isinstance(res, Exception), (case.where, res)
        assert res.status != "invalid", (case.where, res.message)
    assert sum(r.solved for _, r in runs) >= (27 if SLOW else 6)
