"""The MuJoCo world as a robot's hardware: what a Tiago++ exposes under ROS 2, served from the
physics (nodes/sim_hardware.py). This package holds the ROS-free parts: the robot's names on the
graph (config/hardware/), its description as URDF, its frames and joint states read from the
physics, and its controllers (joint trajectories, grippers), each run by the physics loop.
"""
from __future__ import annotations

import os

# The head camera renders offscreen on the CPU through EGL (as sim/physics/__init__.py says);
# MuJoCo reads this once, when first imported, and the modules here import it before sim/physics.
os.environ.setdefault("MUJOCO_GL", "egl")
