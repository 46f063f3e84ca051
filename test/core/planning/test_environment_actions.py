"""Environment capabilities (no actor, no cost): AutoGPT+P's `wetten`, end to end in the core."""
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.knowledge.capabilities import load_capabilities
from affplan_ros.core.planning.planner import plan_for_goal
from affplan_ros.core.planning.simulate import simulate, validate_plan
from affplan_ros.core.planning.task import build_task
from affplan_ros.sim.world import SimWorld

CLEANING = """OBJECTS
human:0
table:0
counter:0
sponge:0
bucket:0
{liquid}:0
END-OBJECTS
RELATIONS
on sponge:0 counter:0
on bucket:0 table:0
liquid_in {liquid}:0 bucket:0
at robot:0 counter:0
at human:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0 bucket:0 {liquid}:0
counter0 counter:0 sponge:0
END-LOCATIONS
"""


def scene(liquid="water"):
    return parse_scene_text(CLEANING.format(liquid=liquid), f"cleaning_{liquid}.txt")


def goal(text):
    return to_dnf(parse_goal(text))


def test_wetten_is_actorless_and_free_in_the_domain():
    cap = load_capabilities()["wetten"]
    assert cap.environment
    task = build_task(scene())
    text = task.actions["wetten"]
    assert "?actor" not in text and "(increase (total-cost) 0)" in text
    assert "can_wetten" not in task.domain_pddl()
    # The liquid parameter is typed by the class `water`: a static fact marks water0 only.
    assert "(aff_water water0)" in task.init


def test_wiping_plan_wets_the_sponge_in_water_at_no_cost():
    res = plan_for_goal(scene(), goal("(and (clean counter0))"))
    assert res.solved, res.message
    steps = [(s.action, s.agent, s.args) for s in res.plan]
    assert ("wetten", "", ("sponge0", "bucket0", "water0")) in steps
    # grasp sponge, move to the bucket, put it in, (wetten), take it out, move back, wipe
    assert res.cost == 6 and len(res.plan) == 7
    assert str(next(s for s in res.plan if s.action == "wetten")) == "wetten sponge0 bucket0 water0"
    task = build_task(scene())
    ok, cost, msg = validate_plan(task, goal("(and (clean counter0))"),
                                  [(s.action, s.pddl_args) for s in res.plan])
    assert ok and cost == 6, msg
    assert simulate(task, res.plan, goal("(and (clean counter0))")).success


def test_milk_does_not_wet_a_sponge():
    # Same scene with milk instead of water: no way to make the sponge wet.
    res = plan_for_goal(scene("milk"), goal("(and (clean counter0))"))
    assert res.status == "unsolvable"


def test_validator_rejects_wetten_when_its_precondition_is_false():
    task = build_task(scene())
    ok, _, msg = validate_plan(task, goal("(and (wet sponge0))"), [("wetten", ("sponge0", "bucket0", "water0"))])
    assert not ok and "precondition is false" in msg


@pytest.mark.parametrize("dunk", [True, False])
def test_sim_world_lets_the_environment_act(dunk):
    world = SimWorld(scene())
    assert world.execute([("grasp", "robot0", ("sponge0", "counter0", "counter0"))]).success
    assert world.execute([("move", "robot0", ("counter0", "table0"))]).success
    if dunk:
        assert world.execute([("putin", "robot0", ("sponge0", "bucket0", "table0"))]).success
        # Nobody ran wetten: the world applied it when the sponge lay in the water.
        assert world.holds("wet", "sponge0")
        assert world.execute([("take_out", "robot0", ("sponge0", "bucket0", "table0"))]).success
        assert world.execute([("wet_swipe", "robot0", ("sponge0", "table0", "table0"))]).success
    else:
        out = world.execute([("wet_swipe", "robot0", ("sponge0", "table0", "table0"))])
        assert not out.success and "wet" in out.failure.why
