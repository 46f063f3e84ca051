"""Pouring from the boxes a pose source gives (robots/pouring.py): the held thing's mouth, known
in the hand from the grasp, comes down over the middle of the target's opening when tipped."""
from __future__ import annotations

import math

import numpy as np
import pytest

from affplan_ros.robots.drivers import Pose
from affplan_ros.robots.poses import SeenObject
from affplan_ros.robots.pouring import ABOVE_RIM_M, CLEAR_RIM_M, mouth_in_hand, tips

CARTON = SeenObject("milk_cartoon0", 0.6, 0.1, 0.85, size=(0.07, 0.07, 0.2))
GRASP = Pose(0.6, 0.1, 0.91, 0.0, pitch=math.pi / 2)        # from above, 4 cm below its top
BOWL = SeenObject("bowl0", 0.7, -0.2, 0.8, size=(0.2, 0.2, 0.09))


def _up_axis(pose: Pose) -> np.ndarray:
    """The held thing's up axis: against the hand's approach axis for a grasp from above."""
    return -pose.matrix()[:3, 0]


def test_the_mouth_is_where_the_top_of_the_box_was_in_the_hand():
    assert mouth_in_hand(GRASP, CARTON) == pytest.approx((-0.04, 0.0, 0.0), abs=1e-9)


def test_tipped_the_mouth_is_over_the_middle_of_the_opening_and_upright_the_bottom_clears_the_rim():
    mouth = mouth_in_hand(GRASP, CARTON)
    hand = GRASP.matrix()[:3, :3]
    candidates = list(tips(mouth, CARTON.size[2], hand, BOWL, robot_xy=(0.0, 0.0)))
    assert len(candidates) == len(ABOVE_RIM_M) * 2 * 4
    upright = candidates[0].upright.matrix()
    assert (upright[:3, :3] @ mouth + upright[:3, 3])[2] == pytest.approx(BOWL.top + CLEAR_RIM_M + 0.2)
    assert _up_axis(candidates[0].upright) == pytest.approx((0.0, 0.0, 1.0), abs=1e-9)
    for tip in candidates:
        m = tip.tipped.matrix()
        at = m[:3, :3] @ mouth + m[:3, 3]
        assert (at[0], at[1]) == pytest.approx((BOWL.x, BOWL.y), abs=1e-6)
        assert at[2] - BOWL.top == pytest.approx(ABOVE_RIM_M[0], abs=1e-6) or at[2] - BOWL.top > ABOVE_RIM_M[0]
        assert _up_axis(tip.tipped)[2] < math.cos(1.4)        # tipped past where it pours
