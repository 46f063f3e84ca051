"""Rule 5 of the pruning (places that stand in for each other, the places a plan goes to anyway
first): it drops places and tools, and the optimal cost stays what the unpruned search finds."""
import pytest

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.planning.planner import plan_for_goal
from affplan_ros.core.planning.pruning import prune_scene, visit_bound
from affplan_ros.core.planning.task import build_task

PLACES = ["table:0", "table:1", "counter:0", "counter:1", "counter:2", "counter:3", "cupboard:0"]


def scene(things: dict[str, list[str]], extra: list[str] = ()):
    """A home of PLACES; ``things``: place -> "relation object" lines of what is there."""
    objects = {p for p in PLACES} | {"human:0"}
    relations = ["at robot:0 counter:0", "at human:0 table:0", "closed cupboard:0", *extra]
    members: dict[str, list[str]] = {p: [] for p in PLACES}
    for place, lines in things.items():
        for line in lines:
            rel, obj, *holder = line.split()
            objects.add(obj)
            relations.append(f"{rel} {obj} {holder[0] if holder else place}")
            members[place].append(obj)
    text = ("OBJECTS\n" + "\n".join(sorted(objects)) + "\nEND-OBJECTS\nRELATIONS\n" + "\n".join(relations)
            + "\nEND-RELATIONS\nLOCATIONS\n"
            + "\n".join(f"{p.replace(':', '')} {p} {' '.join(members[p])}" for p in PLACES) + "\nEND-LOCATIONS\n")
    return parse_scene_text(text, "places.txt")


CHOP = to_dnf(parse_goal("(and (chopped tomato0))"))


def both(s, goal=CHOP):
    pruned = plan_for_goal(s, goal, time_limit=60)
    full = plan_for_goal(s, goal, time_limit=60, prune=False)
    assert pruned.solved and full.solved and full.optimal, (pruned.message, full.message)
    return pruned, full


def test_tools_elsewhere_two_equal_counters_one_kept_and_the_cost_unchanged():
    s = scene({"counter:0": ["on tomato:0"],
               "counter:1": ["on kitchen_knife:1", "on cutting_board:1"],
               "counter:2": ["on kitchen_knife:2", "on cutting_board:2"],
               "cupboard:0": ["in kitchen_knife:3"],
               "table:1": ["on kitchen_knife:4"]})
    full_task = build_task(s, CHOP)
    kept = prune_scene(s, CHOP, full_task)
    # counter1 and counter2 offer the same: one of them is kept; counter3 (empty) is a counter
    # like counter0, where the robot is; the knife on a table is no easier to take than the one
    # on the kept counter, which serves whatever a table does: the table goes; the knife in the
    # closed cupboard is another state (taken out, not picked up): it stays.
    assert len({"counter1", "counter2"} & set(kept.objects)) == 1
    assert not {"counter3", "table1", "kitchen_knife4"} & set(kept.objects)
    assert "kitchen_knife3" in kept.objects and "cupboard0" in kept.objects
    pruned, full = both(s)
    assert pruned.cost == full.cost
    assert pruned.objects_used < full.objects_used


def test_a_knife_in_a_closed_box_here_against_a_free_one_at_another_counter():
    s = scene({"counter:0": ["on tomato:0", "on cutting_board:0", "on box:0", "in kitchen_knife:0 box:0"],
               "counter:1": ["on kitchen_knife:1"],
               "counter:2": ["on box:1", "in kitchen_knife:2 box:1"]},
              ["closed box:0", "closed box:1"])
    kept = prune_scene(s, CHOP, build_task(s, CHOP))
    assert "counter2" not in kept.objects and "kitchen_knife2" not in kept.objects  # counter1 is easier
    pruned, full = both(s)
    assert pruned.cost == full.cost


def test_everything_here_a_smaller_task_gives_the_plan_proven_optimal():
    s = scene({"counter:0": ["on cutting_board:0", "on tomato:0 cutting_board:0", "on kitchen_knife:0"],
               "counter:1": ["on kitchen_knife:1", "on cutting_board:1"],
               "table:1": ["on kitchen_knife:2"]})
    full_task = build_task(s, CHOP)
    anchored = prune_scene(s, CHOP, full_task, anchored=True)
    assert not {"counter1", "table1", "kitchen_knife1", "kitchen_knife2"} & set(anchored.objects)
    pruned, full = both(s)
    assert pruned.cost == full.cost == 2 <= visit_bound(CHOP, full_task)
    # Planned without the other places (the relaxation stage merges them into counter0).
    assert pruned.objects_used < len(prune_scene(s, CHOP, full_task).objects)
    assert pruned.optimal and pruned.lower_bound == pruned.cost   # proven for the whole home


@pytest.mark.parametrize("goal_text", ["(and (inhand kitchen_knife1 human0))", "(and (in apple0 cupboard0))"])
def test_goals_that_name_what_is_elsewhere_keep_its_place(goal_text):
    s = scene({"counter:0": ["on apple:0"], "counter:1": ["on kitchen_knife:1"],
               "counter:2": ["on kitchen_knife:2"]})
    g = to_dnf(parse_goal(goal_text))
    kept = prune_scene(s, g, build_task(s, g))
    for lit in g[0]:
        for a in lit.args:
            assert a in kept.objects
            loc = s.location_of(a)
            assert loc is None or loc in kept.objects
    pruned, full = both(s, g)
    assert pruned.cost == full.cost


def test_goal_cost_bound_counts_the_actions_a_goal_needs_at_least():
    from affplan_ros.core.planning.pruning import _adds_per_action, goal_cost_bound

    # one place adds one `on`; under forall or when one action may add any number
    assert _adds_per_action("(and (on ?o ?p) (located ?o ?l) (not (inhand ?o ?a)))") == {"on": 1, "located": 1}
    assert _adds_per_action("(and (forall (?x - object) (when (wet ?x) (clean ?x))))") == {"clean": float("inf")}
    s = scene({"counter:0": ["on apple:0", "on banana:0", "on cup:0"]})
    three = to_dnf(parse_goal("(and (on apple0 table0) (on banana0 table0) (on cup0 table0))"))
    task = build_task(s, three)
    assert goal_cost_bound(three, task) == 3      # three places by the robot (cost 1 each)
    # what holds already needs nothing; the cheaper disjunct counts
    either = to_dnf(parse_goal("(or (and (on apple0 counter0) (on banana0 table0)) (and (on cup0 table0) "
                               "(on apple0 table0)))"))
    assert goal_cost_bound(either, build_task(s, either)) == 1
    assert goal_cost_bound(to_dnf(parse_goal("(and (not (on apple0 counter0)))")), task) == 0
    pruned = plan_for_goal(s, three, time_limit=60)
    assert pruned.solved and pruned.optimal and pruned.cost >= 3


def test_furniture_only_an_irrelevant_action_uses_does_not_keep_a_place():
    from affplan_ros.bench.scale import household_scene
    from affplan_ros.core.knowledge.capabilities import load_capabilities
    from affplan_ros.core.planning.pruning import goal_relevant_capabilities

    caps = load_capabilities()
    away = to_dnf(parse_goal("(and (on apple0 counter0))"))
    # putting a thing somewhere needs no heating, filling, chopping or wiping
    assert {"heat_liquid", "fill", "chop", "wet_swipe"}.isdisjoint(goal_relevant_capabilities(away, caps))
    assert {"grasp", "place", "move", "take_out", "open"} <= goal_relevant_capabilities(away, caps)
    assert "chop" in goal_relevant_capabilities(CHOP, caps)
    # In a home with a stove and a microwave: for putting the apple on the counter the counter
    # stands in for the stove and the cupboard for the microwave; warming the water keeps both.
    home = household_scene(70, 0)
    assert {"stove0", "microwave0"} <= set(home.locations)
    kept = prune_scene(home, away, build_task(home, away))
    assert not {"stove0", "microwave0"} & set(kept.objects)
    warm = to_dnf(parse_goal("(and (liquid_warm water0))"))
    assert "heat_liquid" in goal_relevant_capabilities(warm, caps)
    kept = prune_scene(home, warm, build_task(home, warm))
    assert {"stove0", "microwave0"} & set(kept.objects)
