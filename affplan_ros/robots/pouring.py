"""How the hand holds a container to pour from it into another, from the boxes a pose source
gives: the mouth of what is held (the top of its box, where the hand took it) is brought over the
target's opening and the hand turns it about a horizontal axis until it pours.

Where the mouth is in the hand is known from the grasp: the thing's box and the hand's pose at
that moment. The hand first holds it upright high enough that its bottom clears the target's rim,
then tips it so that the mouth comes down over the middle of the opening.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from scipy.spatial.transform import Rotation

from affplan_ros.robots.drivers import Pose
from affplan_ros.robots.poses import SeenObject

TILTS_RAD = (1.75, 1.45)            # how far the container is tipped (about 100 and 83 degrees)
ABOVE_RIM_M = (0.06, 0.12)          # the mouth this far above the target's rim when tipped, lowest first
CLEAR_RIM_M = 0.05                  # upright, the container's bottom this far above the rim


@dataclass(frozen=True)
class Tip:
    upright: Pose    # the hand with the container upright above the target
    tipped: Pose     # the hand with the container tipped, its mouth over the target's opening


def mouth_in_hand(grasp: Pose, seen: SeenObject) -> np.ndarray:
    """The top middle of the thing's box in the hand's frame, as the hand took it."""
    hand = grasp.matrix()
    return hand[:3, :3].T @ (np.array([seen.x, seen.y, seen.top]) - hand[:3, 3])


def _pose(rotation: np.ndarray, position: np.ndarray, frame: str) -> Pose:
    yaw, pitch, roll = Rotation.from_matrix(rotation).as_euler("ZYX")    # q = qz(yaw) qy(pitch) qx(roll)
    return Pose(float(position[0]), float(position[1]), float(position[2]), float(yaw), frame, float(roll),
                float(pitch))


def tips(mouth: np.ndarray, height: float, hand_now: np.ndarray, target: SeenObject,
         robot_xy: tuple[float, float]) -> Iterator[Tip]:
    """Ways to pour, best first: for each height over the rim, each tilt, tipping across the way
    from the robot to the target (either way), then along it. ``mouth``: where the held thing's
    mouth is in the hand's frame; ``height``: the thing's; ``hand_now``: the hand's rotation
    (world) holding it upright as it is carried now."""
    toward = math.atan2(target.y - robot_xy[1], target.x - robot_xy[0])
    rim = target.top
    upright_at = np.array([target.x, target.y, rim + CLEAR_RIM_M + height]) - hand_now @ mouth
    upright = _pose(hand_now, upright_at, target.frame)
    for above in ABOVE_RIM_M:
        goal = np.array([target.x, target.y, rim + above])
        for tilt in TILTS_RAD:
            for side in (math.pi / 2, -math.pi / 2, 0.0, math.pi):    # the axis across, then along the way
                axis = np.array([math.cos(toward + side), math.sin(toward + side), 0.0])
                rotation = Rotation.from_rotvec(axis * tilt).as_matrix() @ hand_now
                yield Tip(upright, _pose(rotation, goal - rotation @ mouth, target.frame))
