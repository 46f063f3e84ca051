"""pose_to_matrix (nodes/convert.py): the camera pose the perception node takes from its pose
topic; a pose that is no pose (not a unit quaternion, not finite) is refused, not used."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.ros


def pose(x=0.0, y=0.0, z=0.0, qx=0.0, qy=0.0, qz=0.0, qw=1.0):
    from geometry_msgs.msg import Pose

    p = Pose()
    p.position.x, p.position.y, p.position.z = x, y, z
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = qx, qy, qz, qw
    return p


def test_a_unit_quaternion_becomes_the_rotation_it_stands_for():
    from affplan_ros.nodes.convert import pose_to_matrix

    half = math.sqrt(0.5)  # 90 degrees about z
    rotation, position = pose_to_matrix(pose(1.0, 2.0, 3.0, qz=half, qw=half))
    assert np.allclose(rotation @ [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]) and list(position) == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("bad", [dict(qw=0.0), dict(qw=3.0), dict(qw=float("nan")), dict(x=float("inf"))])
def test_a_pose_that_is_no_pose_is_refused(bad):
    from affplan_ros.nodes.convert import pose_to_matrix

    assert pose_to_matrix(pose(**bad)) is None
