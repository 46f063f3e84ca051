"""AutoGPT+P's derived `free` and our `enclosed`, compiled into fluents for Fast Downward's optimal
searches (core/planning/derived.py): plans respect them, the simulation judges them on its own,
and the PDDL has no axioms or conditional effects (which LM-cut, BJOLP and iPDB reject)."""
from __future__ import annotations

import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.planning.planner import OPTIMAL_CONFIGS, plan_for_goal, solve_task
from affplan_ros.core.planning.simulate import SimulationError, apply_step, holds, initial_state, simulate
from affplan_ros.core.planning.task import build_task

SCENE = """OBJECTS
table:0
counter:0
refrigerator:0
plate:0
apple:0
banana:0
cup:0
bottle:0
water:0
END-OBJECTS
RELATIONS
on plate:0 table:0
on apple:0 plate:0
on banana:0 plate:0
on cup:0 counter:0
in bottle:0 refrigerator:0
liquid_in water:0 bottle:0
closed refrigerator:0
closed bottle:0
at robot:0 counter:0
END-RELATIONS
LOCATIONS
table0 table:0 plate:0 apple:0 banana:0
counter0 counter:0 cup:0
refrigerator0 refrigerator:0 bottle:0 water:0
END-LOCATIONS
"""


def goal(text):
    return to_dnf(parse_goal(text))


@pytest.fixture(scope="module")
def scene():
    return parse_scene_text(SCENE, "derived.txt")


def steps_of(result):
    return [(s.action, s.agent, *s.args) for s in result.plan]


def test_the_capabilities_keep_free_and_the_pddl_has_no_axioms_or_conditional_effects(scene):
    task = build_task(scene, goal("(inhand plate0 robot0)"))
    assert "(free ?object)" in task.capabilities["grasp"].precondition
    domain, problem = task.domain_pddl(), task.problem_pddl()
    assert "(free ?object)" not in domain  # compiled away (declared only, for its description)
    assert "(not_on apple0 ?object)" in domain and "(:constants" in domain
    assert "forall" not in domain and "(when" not in domain
    assert "(not_on banana0 plate0)" not in problem and "(not_on cup0 plate0)" in problem
    assert "(loose water0)" in problem and "(loose bottle0)" not in problem   # the bottle is in the fridge
    # What the domain declares as constants is not declared again as a problem object.
    assert "apple0 - apple" in domain and "apple0 - apple" not in problem
    assert "not_on" not in task.signature.predicates and "enclosed" not in task.signature.predicates
    task.up_problem()  # unified-planning reads the compiled domain


def test_a_plate_is_grasped_only_when_nothing_stands_on_it(scene):
    res = plan_for_goal(scene, goal("(inhand plate0 robot0)"), mode="optimal")
    assert res.solved and res.optimal, res.message
    steps = steps_of(res)
    grasp_plate = steps.index(("grasp", "robot0", "plate0", "table0", "table0"))
    moved = {s[2] for s in steps[:grasp_plate] if s[0] in ("place", "putin", "stack")}
    assert moved == {"apple0", "banana0"}, steps
    # The simulation judges `free` from the `on` facts itself: grasping the plate with the
    # apple on it is refused.
    task = build_task(scene)
    state = apply_step(task, initial_state(task), "move", "robot0", ("counter0", "table0"))
    with pytest.raises(SimulationError):
        apply_step(task, state, "grasp", "robot0", ("plate0", "table0", "table0"))
    assert not holds(("free", "plate0"), state) and holds(("free", "apple0"), state)


@pytest.mark.parametrize("search", OPTIMAL_CONFIGS)
def test_every_optimal_search_accepts_the_compiled_domain(scene, search, monkeypatch):
    monkeypatch.setenv("AFFPLAN_OPTIMAL_SEARCH", search)
    task = build_task(scene, goal("(and (inhand plate0 robot0) (opened bottle0))"))
    res = solve_task(task, mode="optimal", time_limit=60)
    assert res.solved and res.optimal, (search, res.message)


def test_a_bottle_in_a_closed_refrigerator_is_opened_only_after_the_refrigerator(scene):
    res = plan_for_goal(scene, goal("(opened bottle0)"), mode="optimal")
    assert res.solved and res.optimal, res.message
    steps = steps_of(res)
    assert steps.index(("open", "robot0", "refrigerator0", "refrigerator0")) < \
        steps.index(("open", "robot0", "bottle0", "refrigerator0")), steps
    # Opening it through the closed door is refused by the simulation.
    task = build_task(scene)
    state = apply_step(task, initial_state(task), "move", "robot0", ("counter0", "refrigerator0"))
    assert holds(("enclosed", "bottle0"), state)
    with pytest.raises(SimulationError):
        apply_step(task, state, "open", "robot0", ("bottle0", "refrigerator0"))
    state = apply_step(task, state, "open", "robot0", ("refrigerator0", "refrigerator0"))
    assert not holds(("enclosed", "bottle0"), state)
    apply_step(task, state, "open", "robot0", ("bottle0", "refrigerator0"))


def test_what_is_taken_out_of_a_closed_container_is_free_to_use_and_both_validators_agree(scene):
    task = build_task(scene)
    state = initial_state(task)
    for action, args in (("move", ("counter0", "refrigerator0")), ("open", ("refrigerator0", "refrigerator0")),
                         ("take_out", ("bottle0", "refrigerator0", "refrigerator0"))):
        state = apply_step(task, state, action, "robot0", args)
    assert not holds(("enclosed", "bottle0"), state)  # in the hand now
    g = goal("(and (inhand bottle0 robot0) (opened bottle0) (closed refrigerator0))")
    res = plan_for_goal(scene, g, mode="optimal", validator="both")   # symbolic and unified-planning
    assert res.solved, res.message
    assert simulate(build_task(scene), res.plan, g).success


def test_closing_the_door_again_encloses_what_is_still_inside(scene):
    # The plan must open the bottle while the refrigerator is open (or take it out first): a
    # plan that closes the door and then opens the bottle through it is physically impossible.
    g = goal("(and (opened bottle0) (closed refrigerator0))")
    res = plan_for_goal(scene, g, mode="optimal")
    assert res.solved and res.optimal, res.message
    steps = steps_of(res)
    close = steps.index(("close", "robot0", "refrigerator0", "refrigerator0"))
    opened = next(i for i, s in enumerate(steps) if s[:3] == ("open", "robot0", "bottle0"))
    took_out = any(s[:3] == ("take_out", "robot0", "bottle0") for s in steps[:close])
    assert opened < close or took_out, steps

