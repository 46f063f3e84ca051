import os
import subprocess
import time

import pytest
from _oracle import autogpt_dir

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.knowledge.capabilities import (
    load_capabilities,
    load_original_capabilities,
)
from affplan_ros.core.planning.encoding import GoalVocabularyError
from affplan_ros.core.planning.planner import plan_for_goal, solve_task
from affplan_ros.core.planning.simulate import simulate, state_to_scene
from affplan_ros.core.planning.task import build_task

KITCHEN = """OBJECTS
human:0
table:0
counter:0
refrigerator:0
cup:0
apple:0
kitchen_knife:0
cutting_board:0
bottle:0
water:0
END-OBJECTS
RELATIONS
on cup:0 table:0
in apple:0 refrigerator:0
on kitchen_knife:0 counter:0
on cutting_board:0 counter:0
on bottle:0 counter:0
liquid_in water:0 bottle:0
closed refrigerator:0
closed bottle:0
at robot:0 table:0
at human:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 cup:0
counter0 counter:0 kitchen_knife:0 cutting_board:0 bottle:0 water:0
refrigerator0 refrigerator:0 apple:0
END-LOCATIONS
"""


def goal(text):
    return to_dnf(parse_goal(text))


@pytest.fixture(scope="module")
def kitchen():
    return parse_scene_text(KITCHEN, "kitchen.txt")


def test_domain_generation(kitchen):
    task = build_task(kitchen, goal("(and (inhand apple0 human0))"))
    dom, prob = task.domain_pddl(), task.problem_pddl()
    assert "(:action grasp" in dom and "(cost ?actor)" in dom and "; ?o stands on top" in dom
    assert "(located apple0 refrigerator0)" in prob and "(= (cost human0) 100)" in prob
    sig = task.signature
    assert sig.has_type("cup0", "carry") and sig.has_type("table0", "location")
    assert sig.has_type("robot0", "actor") and sig.predicates["on"] == ("carry", "support")
    assert "located" not in sig.predicates  # internal
    problem = task.up_problem()
    assert len(problem.actions) == len(load_capabilities())
    with pytest.raises(GoalVocabularyError):
        build_task(kitchen, goal("(and (inhand unicorn0 human0))"))


def test_plan_kitchen_end_to_end(kitchen):
    g = goal("(and (inhand apple0 human0) (chopped apple0))")
    res = plan_for_goal(kitchen, g, mode="optimal")
    assert res.solved, res.message
    # move fridge, open, take_out, move counter, place on board, grasp knife, chop,
    # place knife, grasp apple, move to human, handover
    assert res.cost == 11
    assert all(s.agent == "robot0" for s in res.plan)
    task = build_task(kitchen, g)
    sim = simulate(task, res.plan, g)
    assert sim.success
    after = state_to_scene(task, sim.state)
    assert any(r.predicate == "inhand" and r.args == ("apple0", "human0") for r in after.relations)


def test_satisficing_and_disjunction(kitchen):
    g = goal("(or (liquid_in water0 cup0) (inhand cup0 robot0))")
    opt = plan_for_goal(kitchen, g, mode="optimal")
    sat = plan_for_goal(kitchen, g, mode="satisficing")
    assert opt.solved and sat.solved and opt.cost == 1 and sat.cost >= opt.cost


def test_negative_goal_and_unsolvable(kitchen):
    assert plan_for_goal(kitchen, goal("(and (not (closed bottle0)))")).cost == 2
    res = plan_for_goal(kitchen, goal("(and (chopped cup0))"))
    assert res.status == "unsolvable"


def _downward_pids():
    # Planner processes that are ours (children of this test process) or orphans (parent 1);
    # others (a benchmark running beside the tests) are not counted.
    out = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout
    mine = {str(os.getpid()), "1"}
    return {l.split()[0] for l in out.splitlines()
            if ("/downward" in l and "--search" in l or "fast_downward.translate" in l)
            and l.split()[1] in mine}


def test_timeout_leaves_no_planner_process(kitchen):
    # A large scene so that Fast Downward is still running when the limit hits.
    lines = KITCHEN.replace("END-OBJECTS", "\n".join(f"cup:{i}" for i in range(1, 120)) + "\nEND-OBJECTS")
    lines = lines.replace("END-RELATIONS", "\n".join(f"on cup:{i} table:0" for i in range(1, 120)) + "\nEND-RELATIONS")
    lines = lines.replace("table0 table:0 cup:0", "table0 table:0 " + " ".join(f"cup:{i}" for i in range(120)))
    big = parse_scene_text(lines, "big.txt")
    before = _downward_pids()
    t0 = time.monotonic()
    res = solve_task(build_task(big, goal("(and (inhand apple0 human0))")), time_limit=1.0)
    assert time.monotonic() - t0 < 10
    assert res.status == "timeout"
    time.sleep(0.3)
    assert _downward_pids() - before == set()


def test_original_capabilities_convert():
    caps = load_original_capabilities(
        autogpt_dir() / "planning_memory/data/capabilities/all_capabilities.json")
    assert "reachable" not in caps["grasp"].precondition
    assert "(located ?from ?at)" in caps["grasp"].precondition
    assert caps["handover"].effect.count("(") == caps["handover"].effect.count(")")


TRANSFERS = """OBJECTS
human:0
table:0
counter:0
cup:0
glass:0
glass:1
pot:0
bowl:0
bowl:1
bowl:2
banana:0
bottle:0
water:0
END-OBJECTS
RELATIONS
on cup:0 table:0
on bowl:1 table:0
on glass:0 counter:0
on glass:1 counter:0
on pot:0 counter:0
on bowl:0 counter:0
on bowl:2 counter:0
in banana:0 bowl:0
on bottle:0 counter:0
liquid_in water:0 bottle:0
closed bottle:0
at robot:0 table:0
at human:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 cup:0 bowl:1
counter0 counter:0 glass:0 glass:1 pot:0 bowl:0 bowl:2 banana:0 bottle:0 water:0
END-LOCATIONS
"""


@pytest.mark.parametrize("text, dropped", [
    ("(liquid_in water0 cup0)", {"glass0", "glass1", "pot0", "bowl0", "bowl2"}),
    ("(in banana0 bowl1)", {"glass0", "glass1", "pot0", "bowl2", "cup0"}),
])
def test_pruning_keeps_only_the_current_holder_as_transfer_source(text, dropped):
    """Fill and pour move a goal object from holder to holder; a detour through another
    container never pays, so only where the object is now stays (the optimal cost with all
    containers is the same)."""
    from affplan_ros.core.planning.pruning import prune_scene

    scene = parse_scene_text(TRANSFERS, "transfers.txt")
    g = goal(f"(and {text})")
    kept = set(prune_scene(scene, g, build_task(scene, g)).objects)
    assert not dropped & kept, dropped & kept
    pruned = plan_for_goal(scene, g, mode="optimal", prune=True)
    full = plan_for_goal(scene, g, mode="optimal", prune=False)
    assert pruned.solved and full.solved and pruned.optimal and full.optimal
    assert pruned.cost == full.cost and pruned.objects_used < full.objects_used
