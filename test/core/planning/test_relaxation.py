"""The relaxation stage (core/planning/relaxation.py): the cheapest agents alone in the places
the plan goes to anyway. Its plan, where the home can carry it out, costs what the whole home's
optimal search finds; where it cannot (the person must help), the home's own search plans."""
import pytest

from affplan_ros.bench.scale import goals_for, household_scene
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.goals.sexpr import parse_sexpr
from affplan_ros.core.knowledge.capabilities import Agent, load_capabilities
from affplan_ros.core.planning.planner import plan_for_goal, validate
from affplan_ros.core.planning.pruning import prune_scene
from affplan_ros.core.planning.relaxation import TWIN_SUFFIX, _twin, relax
from affplan_ros.core.planning.task import build_task


def _goal(scene, kind):
    return to_dnf(parse_goal(goals_for(scene)[kind]))


def _relax(scene, goal):
    full = build_task(scene, goal)
    relaxed, why = relax(prune_scene(scene, goal, full), prune_scene(scene, goal, full, anchored=True), goal, full,
                         build=lambda sc, ag, caps: build_task(sc, goal, agents=ag, capabilities=caps))
    return full, relaxed, why


def test_the_empty_places_merge_into_a_support_and_the_person_is_left_out():
    scene = household_scene(150)
    goal = _goal(scene, "clear_table")
    full, relaxed, why = _relax(scene, goal)
    assert relaxed is not None, why
    # The sink and the cupboard hold nothing: they merge into the table (the goal's counter is
    # not chosen, so nothing can be poured onto it for free); the person (cost 100) goes.
    assert relaxed.merged == {"cupboard0": "table0", "sink0": "table0"}
    assert relaxed.left_out == ("human0",) and relaxed.below == 100
    assert relaxed.twins == ("pour" + TWIN_SUFFIX,)
    objects = set(relaxed.task.object_types)
    assert not {"sink0", "cupboard0", "human0"} & objects and {"table0", "counter0", "robot0"} <= objects


def test_the_twin_of_pour_pours_onto_the_support_and_keeps_the_other_conditions():
    pour = load_capabilities()["pour"]
    twin = _twin(pour, "target", "table")
    assert twin.name == "pour" + TWIN_SUFFIX
    assert [q.type for q in twin.parameters if q.name == "target"] == ["table"]
    pre, eff = twin.precondition, twin.effect
    assert "(in ?poured_object ?source)" in pre and "(inhand ?source ?actor)" in pre   # untouched
    assert "(located ?target ?at)" in pre
    assert "fits" not in pre and "closed" not in pre and "enclosed" not in pre         # ?target's, dropped
    assert "(on ?poured_object ?target)" in eff and "(in ?poured_object ?target)" not in eff
    parse_sexpr(pre), parse_sexpr(eff)


def test_a_step_of_a_twin_is_no_plan_for_the_home():
    scene = household_scene(35)
    goal = _goal(scene, "clear_table")
    full, relaxed, why = _relax(scene, goal)
    assert relaxed is not None, why
    ok, _, msg = validate(full, goal, [("pour" + TWIN_SUFFIX, ("robot0", "bowl0", "banana0", "table0", "table0"))])
    assert not ok and msg


@pytest.mark.parametrize("size,seed", [(20, 0), (20, 1)])
def test_the_relaxation_plan_costs_what_the_whole_home_search_finds(size, seed):
    scene = household_scene(size, seed)
    relaxed = 0
    for kind in ("clear_table", "put_away", "open_take_out", "pour", "chop"):
        goal = _goal(scene, kind)
        pruned = plan_for_goal(scene, goal, time_limit=60)
        whole = plan_for_goal(scene, goal, time_limit=60, prune=False)
        assert pruned.solved and whole.solved and whole.optimal, (kind, pruned.message, whole.message)
        assert pruned.optimal and pruned.cost == whole.cost, kind
        relaxed += pruned.relaxed
    assert relaxed >= 4      # the stage proved (nearly) all of them


def test_where_the_person_must_help_the_home_search_plans_with_them():
    # The robot cannot open anything: the apple in the closed refrigerator needs the person.
    scene = household_scene(20)
    goal = _goal(scene, "open_take_out")
    caps = load_capabilities()
    agents = [Agent("robot0", "robot", 1, frozenset(caps) - {"open"}), Agent("human0", "human", 100, None)]
    res = plan_for_goal(scene, goal, time_limit=60, agents=agents)
    assert res.solved and res.optimal and not res.relaxed
    assert any(step.action == "open" and step.agent == "human0" for step in res.plan)
    assert res.cost >= 100


def test_ten_things_off_the_table_of_a_thousand_object_home_are_planned_optimally():
    scene = household_scene(1000)
    goal = _goal(scene, "clear_table")
    assert len(goal[0]) == 10
    res = plan_for_goal(scene, goal, time_limit=30)
    # Before the relaxation stage: 30 s, then the anytime plan (cost 40, not proven optimal).
    assert res.solved and res.optimal and res.relaxed and res.cost == res.lower_bound == 40
    assert not any(step.agent == "human0" for step in res.plan)
