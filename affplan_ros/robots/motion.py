"""Arm motions on the robot's own kinematics: collision-free joint paths (OMPL) and their timing
within the joint limits (TOPP-RA), ready for a FollowJointTrajectory controller.

A path is first tried as the straight line in joint space; only when that line touches
something does OMPL's RRT-Connect search, bounded in time, and its path is shortened by OMPL's
simplifier. Straight lines of the hand (a descent onto a grasp) are solved as IK along the line,
each pose from the one before.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from affplan_ros.robots.kinematics import RobotKinematics

CHECK_STEP_RAD = 0.02       # joint-space resolution of collision checks along a path
DENSE_STEP_RAD = 0.05       # waypoints this close before timing: the timed spline stays on the checked path
LINE_STEP_M = 0.01          # IK waypoints along a straight line of the hand
MAX_JOINT_JUMP_RAD = 0.35   # between two IK waypoints of a line: more is an elbow flip, not a line
SAMPLE_S = 0.05             # time between the points of a timed trajectory
# TOPP-RA meets its limits at its grid points; between them the spline can exceed them by a
# little (0.15 % seen): it is given limits this much lower.
LIMIT_MARGIN = 0.97


@dataclass(frozen=True)
class Limits:
    """Joint speed and acceleration limits, per joint name (rad/s, rad/s^2 or m/s, m/s^2)."""

    velocity: Mapping[str, float]
    acceleration: Mapping[str, float]


@dataclass(frozen=True)
class TimedPath:
    joint_names: tuple[str, ...]
    times: tuple[float, ...]
    positions: tuple[tuple[float, ...], ...]
    velocities: tuple[tuple[float, ...], ...]

    @property
    def duration(self) -> float:
        return self.times[-1] if self.times else 0.0


@dataclass(frozen=True)
class PathResult:
    waypoints: Optional[list[np.ndarray]] = None
    why: str = ""


def _vector(joints: Mapping[str, float], names: Sequence[str]) -> np.ndarray:
    return np.array([joints[n] for n in names], dtype=float)


def segment_collision(kin: RobotKinematics, rest: Mapping[str, float], names: Sequence[str],
                      a: np.ndarray, b: np.ndarray) -> str:
    """What the robot touches first going in a straight joint-space line from ``a`` to ``b``."""
    steps = max(1, int(np.ceil(np.max(np.abs(b - a)) / CHECK_STEP_RAD)))
    for k in range(1, steps + 1):
        q = a + (b - a) * k / steps
        hit = kin.collision({**rest, **dict(zip(names, q))})
        if hit:
            return hit
    return ""


def joint_path(kin: RobotKinematics, start: Mapping[str, float], goal: Mapping[str, float],
               names: Sequence[str], time_limit_s: float = 2.0) -> PathResult:
    """A collision-free path of ``names`` from ``start`` to ``goal`` (the rest of the robot stays
    as in ``start``)."""
    a, b = _vector(start, names), _vector(goal, names)
    rest = dict(start)
    first = [a]
    inside = inside_limits(kin, names, a)
    if not np.array_equal(inside, a):   # a joint resting a hair past its stop: OMPL refuses such a start
        first, a = [a, inside], inside
    where = kin.collision({**rest, **dict(zip(names, a))})
    if where:
        # As MoveIt's FixStartStateCollision adapter: an arm that stopped just touching a box
        # (a controller's small tracking error, a box the source has since moved) starts from a
        # free state close by instead of not moving at all.
        near = _free_near(kin, rest, names, a)
        if near is None:
            return PathResult(why=f"the arm starts in collision: {where}")
        first, a = [*first, near], near
    where = kin.collision({**rest, **dict(zip(names, b))})
    if where:
        return PathResult(why=f"the goal is in collision: {where}")
    if not segment_collision(kin, rest, names, a, b):
        return PathResult([*first, b])
    found = _ompl_path(kin, rest, names, a, b, time_limit_s)
    return found if found.waypoints is None else PathResult([*first[:-1], *found.waypoints])


START_JIGGLE_RAD = 0.05     # how far from a start in collision a free one is looked for, per joint
START_JIGGLE_TRIES = 100


def _free_near(kin: RobotKinematics, rest: Mapping[str, float], names: Sequence[str],
               q: np.ndarray) -> Optional[np.ndarray]:
    """A collision-free joint state within ``START_JIGGLE_RAD`` of ``q`` (seeded: the same every
    time), or None."""
    rng = np.random.default_rng(0)
    for scale in np.linspace(0.2, 1.0, 5):
        for _ in range(START_JIGGLE_TRIES // 5):
            candidate = inside_limits(kin, names, q + rng.uniform(-1.0, 1.0, len(q)) * START_JIGGLE_RAD * scale)
            if not kin.collision({**rest, **dict(zip(names, candidate))}):
                return candidate
    return None


def inside_limits(kin: RobotKinematics, names: Sequence[str], q: Sequence[float]) -> np.ndarray:
    """``q`` with each limited joint within its limits (a joint without limits as it is)."""
    out = np.array(q, dtype=float)
    for i, name in enumerate(names):
        lo, hi = kin.limits(name)
        if lo < hi:
            out[i] = min(max(out[i], lo), hi)
    return out


OMPL_SEED = 1


@functools.cache
def _ompl():
    """OMPL's modules, its random numbers seeded once per process (it takes a seed only before
    its first sampler): the same motions asked in the same order are planned the same, so that
    a run that failed can be run again to see why."""
    from ompl import base, geometric, util

    util.setLogLevel(util.LogLevel.LOG_WARN)
    util.RNG.setSeed(OMPL_SEED)
    return base, geometric


def _ompl_path(kin: RobotKinematics, rest: Mapping[str, float], names: Sequence[str], a: np.ndarray, b: np.ndarray,
               time_limit_s: float) -> PathResult:
    ob, og = _ompl()
    space = ob.RealVectorStateSpace(len(names))
    bounds = ob.RealVectorBounds(len(names))
    for i, name in enumerate(names):
        lo, hi = kin.limits(name)
        bounds.setLow(i, lo)
        bounds.setHigh(i, hi)
    space.setBounds(bounds)
    info = ob.SpaceInformation(space)
    info.setStateValidityChecker(
        lambda s: not kin.collision({**rest, **{n: s[i] for i, n in enumerate(names)}}))
    info.setStateValidityCheckingResolution(CHECK_STEP_RAD / max(space.getMaximumExtent(), 1e-6))
    info.setup()
    start, goal = info.allocState(), info.allocState()
    for i in range(len(names)):
        start[i], goal[i] = float(a[i]), float(b[i])
    setup = og.SimpleSetup(info)
    setup.setStartAndGoalStates(start, goal)
    setup.setPlanner(og.RRTConnect(info))
    if not setup.solve(time_limit_s) or not setup.haveExactSolutionPath():
        return PathResult(why=f"no collision-free path found in {time_limit_s:g} s (OMPL RRT-Connect)")
    setup.simplifySolution()
    path = setup.getSolutionPath()
    return PathResult([np.array([path.getState(k)[i] for i in range(len(names))])
                       for k in range(path.getStateCount())])


def line_path(kin: RobotKinematics, frame: str, start: Mapping[str, float], names: Sequence[str],
              position: Sequence[float], rotation: np.ndarray, avoid: bool = True) -> PathResult:
    """Joint waypoints that move ``frame`` in a straight line from where it is at ``start`` to
    ``position``/``rotation`` (root frame), the orientation turned along the way."""
    from scipy.spatial.transform import Rotation, Slerp

    p0, r0 = kin.forward(start, frame)
    p1 = np.asarray(position, float)
    steps = max(1, int(np.ceil(np.linalg.norm(p1 - p0) / LINE_STEP_M)))
    turn = Slerp([0.0, 1.0], Rotation.from_matrix([r0, np.asarray(rotation, float)]))
    joints = dict(start)
    waypoints = [_vector(start, names)]
    for k in range(1, steps + 1):
        f = k / steps
        solution = kin.solve(frame, p0 + (p1 - p0) * f, turn(f).as_matrix(), joints, names, avoid=avoid)
        if not solution.ok:
            return PathResult(why=f"the straight line stops {np.linalg.norm(p1 - p0) * (1 - f) * 100:.0f} cm "
                                  f"short: {solution.why}")
        q = _vector(solution.joints, names)
        if np.max(np.abs(q - waypoints[-1])) > MAX_JOINT_JUMP_RAD:
            return PathResult(why="the straight line needs the arm to turn over on the way")
        joints.update(solution.joints)
        waypoints.append(q)
    return PathResult(waypoints)


def timed(names: Sequence[str], waypoints: Sequence[np.ndarray], limits: Limits) -> TimedPath:
    """The fastest timing of the path through ``waypoints`` within the limits, starting and ending
    at rest (TOPP-RA), sampled every ``SAMPLE_S``."""
    import toppra
    import toppra.algorithm
    import toppra.constraint

    dense = [np.asarray(waypoints[0], float)]
    for q in waypoints[1:]:
        q = np.asarray(q, float)
        n = max(1, int(np.ceil(np.max(np.abs(q - dense[-1])) / DENSE_STEP_RAD)))
        dense += [dense[-1] + (q - dense[-1]) * k / n for k in range(1, n + 1)]
    # The path's parameter runs with its length, so the spline's speed is even along it.
    lengths = np.concatenate([[0.0], np.cumsum([np.linalg.norm(b - a) for a, b in zip(dense, dense[1:])])])
    if lengths[-1] < 1e-6:   # already there: one point, at rest
        return TimedPath(tuple(names), (0.0,), (tuple(map(float, dense[-1])),), (tuple(0.0 for _ in names),))
    keep = np.concatenate([[True], np.diff(lengths) > 1e-9])
    path = toppra.SplineInterpolator(lengths[keep] / lengths[-1], np.array(dense)[keep])
    velocity = LIMIT_MARGIN * np.array([[-limits.velocity[n], limits.velocity[n]] for n in names])
    acceleration = LIMIT_MARGIN * np.array([[-limits.acceleration[n], limits.acceleration[n]] for n in names])
    problem = toppra.algorithm.TOPPRA([toppra.constraint.JointVelocityConstraint(velocity),
                                       toppra.constraint.JointAccelerationConstraint(acceleration)],
                                      path, parametrizer="ParametrizeConstAccel")
    trajectory = problem.compute_trajectory()
    if trajectory is None:
        raise ValueError("TOPP-RA found no timing of the path within the joint limits")
    times = np.append(np.arange(0.0, trajectory.duration, SAMPLE_S), trajectory.duration)
    q, dq = trajectory(times), trajectory(times, 1)
    dq[-1] = 0.0
    return TimedPath(tuple(names), tuple(float(t) for t in times), tuple(tuple(map(float, r)) for r in q),
                     tuple(tuple(map(float, r)) for r in dq))
