"""What the tool-selection node says of a plan the planning node sent (clients/planner.py)."""


def test_what_the_robot_says_of_a_plans_cost_beside_the_optimum():
    from affplan_ros.clients.planner import _optimality
    from affplan_ros.msg import Plan

    assert _optimality(Plan(cost=4.0, planner="fast-downward-opt", optimal=True, lower_bound=4.0)) == ""
    assert _optimality(Plan(cost=40.0, planner="fast-downward", lower_bound=29.0)) == \
        " (not proven optimal; no plan costs less than 29)"
    assert _optimality(Plan(cost=40.0, planner="fast-downward")) == ""     # nothing proven: nothing said
    assert _optimality(Plan(cost=3.0, planner="recovery", lower_bound=2.0)) == ""


def test_a_goal_no_plan_reaches_is_told_apart_from_other_planning_failures(monkeypatch):
    """The tool loop explores only when the planning node found well-formed goals no plan
    reaches (its errors of stage "planning"), not when the goal was malformed or nobody answered."""
    from types import SimpleNamespace

    import affplan_ros.clients.planner as planner
    from affplan_ros.srv import PlanTask

    node = SimpleNamespace(plan_timeout=5.0, server_wait=0.1, calls={"plan": None})
    run = SimpleNamespace(node=node, canceled=lambda: False, say=lambda *a, **k: None, sync_memory=lambda: "")
    answers = {
        "unreachable": PlanTask.Response(success=False, errors=[
            "(planning) The goal is well formed, but no plan reaches it from the current state: ...",
            "(planning) the goal (and (warm sandwich0)) was given again although no plan reaches it ..."],
            message="no goal was accepted (repeated_unreachable after 2 rounds)"),
        "malformed": PlanTask.Response(success=False, errors=["(syntax) unknown object 'plate0'"],
                                       message="no goal was accepted (bound_reached after 1 rounds)"),
    }
    for kind, response in answers.items():
        monkeypatch.setattr(planner, "call_service", lambda *a, response=response, **k: (response, ""))
        got = planner.RemotePlanner(run).plan("warm up the sandwich", None)
        assert not got.ok and got.unreachable is (kind == "unreachable"), kind
    monkeypatch.setattr(planner, "call_service", lambda *a, **k: (None, "no planning node"))
    assert planner.RemotePlanner(run).plan("warm up the sandwich", None).unreachable is False
