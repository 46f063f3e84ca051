"""The planner's search strategy: optimal first, anytime fallback, and the translator traps."""
from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.knowledge.capabilities import load_capabilities
from affplan_ros.core.planning.planner import fast_downward, last_f_layer, plan_for_goal, solve_task
from affplan_ros.core.planning.simulate import simulate
from affplan_ros.core.planning.splitting import split_capability
from affplan_ros.core.planning.task import build_task

ITEMS = ["apple", "banana", "tomato", "cucumber", "cup", "spoon", "fork", "kitchen_knife"]

COUNTER = """OBJECTS
human:0
table:0
counter:0
{objects}
END-OBJECTS
RELATIONS
{relations}
at robot:0 counter:0
at human:0 table:0
END-RELATIONS
LOCATIONS
table0 table:0
counter0 counter:0 {names}
END-LOCATIONS
"""


def cluttered_counter():
    return parse_scene_text(COUNTER.format(
        objects="\n".join(f"{i}:0" for i in ITEMS),
        relations="\n".join(f"on {i}:0 counter:0" for i in ITEMS),
        names=" ".join(f"{i}:0" for i in ITEMS)), "counter.txt")


def goal(text):
    return to_dnf(parse_goal(text))


def test_clearing_a_counter_plans_quickly():
    # Eight negated goal literals: with the translator's invariant synthesis each becomes a
    # disjunction over its variable's values and translation alone took over 40 s. Without it:
    # well under a second; the limit here leaves a wide margin on a loaded machine.
    g = goal("(and " + " ".join(f"(not (on {i}0 counter0))" for i in ITEMS) + ")")
    res = plan_for_goal(cluttered_counter(), g, time_limit=20)
    assert res.solved and res.optimal, res.message
    assert simulate(build_task(cluttered_counter()), res.plan, g).success


def test_anytime_search_answers_when_the_optimal_search_has_no_time():
    task = build_task(cluttered_counter())
    g = goal("(and (on apple0 table0) (on banana0 table0))")
    domain = task.domain_pddl(goal_actions=g)
    problem = task.problem_pddl(g, goal_flag=True)
    # A zero share leaves the optimal search no time at all; the anytime search still plans.
    run = fast_downward(domain, problem, [("bjolp", 0.0), "anytime"], 20)
    assert [s.status for s in run.searches] == ["timeout", "plan"]
    assert run.status == "plan" and not run.optimal and run.plan_text
    # Given time, the optimal search finishes and the anytime one is not run.
    run = fast_downward(domain, problem, ["bjolp", "anytime"], 20)
    assert [s.config for s in run.searches] == ["bjolp"] and run.optimal and run.best.cost == 7


def test_a_race_of_optimal_searches_ends_with_the_first_plan():
    task = build_task(cluttered_counter())
    g = goal("(and (on apple0 table0) (on banana0 table0))")
    run = fast_downward(task.domain_pddl(goal_actions=g), task.problem_pddl(g, goal_flag=True),
                        [(("bjolp", "symbolic"), 1.0)], 20)
    assert run.status == "plan" and run.optimal and run.best.cost == 7
    assert [s.config for s in run.searches] == ["bjolp", "symbolic"]
    done = [s for s in run.searches if s.status == "plan"]
    assert done and all(s.cost == 7 for s in done)     # both optimal: whichever came first
    # The one still searching (if any) was stopped.
    assert all(s.status == "plan" or s.rc is None for s in run.searches)


def test_the_symbolic_search_logs_its_bound_as_the_astar_search_does():
    log = "[t=0.1s, 1 KB] BOUND: 12 < 2147483647 [0/1 plans]\n[t=0.2s, 1 KB] BOUND: 14 < 2147483647 [0/1 plans]\n"
    assert last_f_layer(log) == 14


def test_the_last_f_layer_of_an_astar_log_is_its_lower_bound():
    log = ("[t=0.006s, 10676 KB] f = 12, 1 evaluated, 0 expanded\n"
           "[t=0.007s, 10676 KB] New best heuristic value for lmcount: 9\n"
           "[t=0.011s, 10800 KB] f = 17, 2492 evaluated, 333 expanded\n"
           "[t=1.000s, 10800 KB] Time limit reached. Abort search.\n")
    assert last_f_layer(log) == 17.0
    assert last_f_layer("[t=0.01s, 1 KB] New best heuristic value for ff: 3\n") is None


def test_an_optimal_search_that_runs_out_of_time_still_bounds_the_optimum():
    # Eight things from the counter to the table, one hand: the optimum is 31 (move there,
    # then grasp, move, place per thing, and a move back between them), which BJOLP needs
    # about 2 s here to prove. Given 30 % of 6 s (about 1.6 s after translating), it stops in
    # some f layer: that layer bounds the optimum from below, and the anytime plan is no cheaper.
    task = build_task(cluttered_counter())
    g = goal("(and " + " ".join(f"(on {i}0 table0)" for i in ITEMS) + ")")
    run = fast_downward(task.domain_pddl(goal_actions=g), task.problem_pddl(g, goal_flag=True),
                        [("bjolp", 0.3), "anytime"], 6.0)
    assert run.status == "plan" and run.searches[0].config == "bjolp"
    bjolp = run.searches[0]
    if bjolp.status == "plan":      # a much faster machine: proven, and the bound is the cost
        assert run.optimal and bjolp.cost == run.lower_bound == 31
    else:
        assert bjolp.status == "timeout" and not run.optimal
        assert 16 <= run.lower_bound < 31 <= run.best.cost   # at least a grasp and a place per thing
    assert solve_task(task, g, mode="satisficing", time_limit=20).lower_bound is None  # nothing proven


def test_solve_task_reports_a_fallback_plan_as_not_optimal(monkeypatch):
    from affplan_ros.core.planning import planner

    monkeypatch.setattr(planner, "OPTIMAL_SHARE", 0.0)
    task = build_task(cluttered_counter(), goal("(and (on apple0 table0))"))
    res = solve_task(task, time_limit=20)
    assert res.solved and not res.optimal
    assert "may cost more than the optimum" in res.message


def test_split_actions_charge_the_stage_that_adds_the_effect():
    pour = load_capabilities()["pour"]
    sp = split_capability(pour, split_above=3, stage_arity=3)
    assert sp is not None and len(sp.stages) > 1
    charged = [st for st in sp.stages if "(cost ?actor)" in st.text]
    assert len(charged) == 1
    # The stage applying (in ?poured_object ?target) pays, so that in the delete relaxation
    # every new fact costs one action, as in the unsplit domain.
    assert "(in ?poured_object ?target)" in charged[0].text.split(":effect")[1]
    assert {"?actor", "?poured_object", "?target"} <= set(charged[0].params)


def test_only_big_tasks_use_the_split_encoding():
    from affplan_ros.bench.scale import goals_for, household_scene

    # A kitchen-sized task keeps its actions whole (better heuristics for the search) ...
    assert build_task(cluttered_counter()).split_actions == {}
    # ... a 150-object scene splits the big ones (pruned, a home's tasks are now mostly small).
    scene = household_scene(150)
    g = goal(goals_for(scene)["clear_table"])
    assert {"grasp", "place"} <= set(build_task(scene, g).split_actions)
