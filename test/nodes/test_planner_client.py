"""What the tool-selection node says of a plan the planning node sent (clients/planner.py)."""


def test_what_the_robot_says_of_a_plans_cost_beside_the_optimum():
    from affplan_ros.clients.planner import _optimality
    from affplan_ros.msg import Plan

    assert _optimality(Plan(cost=4.0, planner="fast-downward-opt", optimal=True, lower_bound=4.0)) == ""
    assert _optimality(Plan(cost=40.0, planner="fast-downward", lower_bound=29.0)) == \
        " (not proven optimal; no plan costs less than 29)"
    assert _optimality(Plan(cost=40.0, planner="fast-downward")) == ""     # nothing proven: nothing said
    assert _optimality(Plan(cost=3.0, planner="recovery", lower_bound=2.0)) == ""
