"""A ROS-free MuJoCo physics world for task-level testing (issue 15, first slice).

* ``robot``: a Tiago++-like mobile bimanual robot written as MJCF (figures and sources in its
  docstring); ``ik``: inverse kinematics with mink on the robot's own model.
* ``layout`` + ``bodies`` + ``world``: a room built from a scene file and the object class table
  (furniture along the walls, doors and drawers on joints, objects as free bodies placed by the
  scene's relations, liquids as quantities); ``PhysicsWorld`` maps scene names to MuJoCo ids.
* ``control``: the robot moved only through its position servos; ``navigation``: A* paths for
  the base; ``skills``: navigate, grasp, place, putin, open, close, each judged by the physics state.
* ``relations``: the domain's relations read back from the physics state; ``executor``:
  ``PhysicsExecutor``, plans of our domain executed on the world (SimulatedExecutor's interface).

Nothing here imports rclpy; the skill action servers are to call ``Skills`` in a later step.
Usage::

    world = build_world(load_scene("config/scenarios/kitchen.txt"))
    skills = Skills(world)
    skills.navigate("counter0", near="cup0"); result = skills.grasp("cup0")
"""
from __future__ import annotations

import os

# Offscreen rendering on the CPU through EGL (Mesa); MuJoCo reads this once, when it is first
# imported, so it is set here, before any module of this package imports mujoco.
os.environ.setdefault("MUJOCO_GL", "egl")

from affplan_ros.sim.physics.skills import SkillResult, Skills
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind, build_world

__all__ = ["PhysicsWorld", "SkillResult", "Skills", "ThingKind", "build_world"]
