"""The MuJoCo world as a robot's hardware: what a Tiago++ exposes under ROS 2, served from the
physics (nodes/sim_hardware.py). This package holds the ROS-free parts: the robot's names on the
graph (config/hardware/), its description as URDF, its frames and joint states read from the
physics, and its controllers (joint trajectories, grippers), each run by the physics loop.
"""
