"""Collision-free arm paths: OMPL's RRT-Connect in joint space, collisions checked by MuJoCo.

The skills move an arm between IK poses (tucked, pre-grasp, over a container, holding something
out) by interpolating the joints. That straight line in joint space can sweep the elbow or what
the hand holds through a shelf, a bucket or the person; the physics then stops the arm and the
step fails as blocked, although another way round exists. This module finds that other way, as a
motion planner (MoveIt's OMPL pipeline) would on a real robot:

* a state is the arm's seven joints (and the torso lift when it moves);
* a state is valid if no geom of that arm, nor what its hand holds (carried with the hand), is
  within ``CLEARANCE`` of anything else: furniture, objects, the person, the robot's own body
  (what the hand holds) — found by MuJoCo's collision detection on a scratch copy of the world's
  state, so the world itself is never touched;
* what touches the arm already where it starts (an object resting against the fingers, the
  thing just put down) is not counted, or no path could leave it;
* the straight line is kept when it is clear (no planning, the motion as before); else RRT-Connect
  plans within ``PLAN_SECONDS``, the path is simplified, and the arm follows its waypoints.

OMPL's random numbers are seeded once per process (``SEED``; it cannot be re-seeded once it has
drawn): a process that runs the same motions in the same order plans the same paths, as the
physics is repeatable; cases run in another order (``bench physics --jobs 2``) may get other
paths.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.robot import TORSO_JOINT, arm_joints, tcp_site
from affplan_ros.sim.physics.world import PhysicsWorld

CLEARANCE = 0.01        # m kept between the moving arm (and what it holds) and anything else
PLAN_SECONDS = 1.0      # wall-time budget of one RRT-Connect query (the motion planner's, not the robot's)
RESOLUTION = 0.02       # rad between collision checks along a path segment (the hand, 0.6 m out, moves ~1 cm)
SEED = 1                # OMPL's random seed, set once before its first query
_MARGIN = 2 * CLEARANCE   # geom margin in the scratch model: contacts are reported up to this distance
_seeded = False


@dataclass(frozen=True)
class ArmPath:
    """Joint-space waypoints from the start (excluded) to the goal (last)."""
    waypoints: list[dict[str, float]]
    planned: bool                      # False: the straight line was clear
    seconds: float = 0.0               # wall time spent checking and planning
    checks: int = 0                    # collision checks made


@dataclass
class _Query:
    side: str
    names: tuple[str, ...]             # the joints that move, in state order
    fixed: dict[str, float]            # the other joints of the arm, as they are
    held: Optional[str]
    held_offset: Optional[tuple[np.ndarray, np.ndarray]]    # (position, rotation) in the TCP frame
    excused: set[tuple[int, int]] = field(default_factory=set)
    checks: int = 0


class ArmPathPlanner:
    """Plans one arm's motion in the present world state (``world.data``, read, never written)."""

    def __init__(self, world: PhysicsWorld):
        self.world = world
        model = copy.copy(world.model)
        # Report near misses as contacts (distance up to the margin), and never skip a sleeping
        # body's contacts: this model only ever runs collision detection.
        model.geom_margin[:] = _MARGIN
        model.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        self.model = model
        self.data = mujoco.MjData(model)
        self._qadr = {model.joint(j).name: int(model.jnt_qposadr[j]) for j in range(model.njnt)}
        self._arm_geoms = {side: self._geoms_under(f"{side}_link_1") for side in ("l", "r")}

    def _geoms_under(self, body_name: str) -> frozenset[int]:
        root = self.model.body(body_name).id
        bodies = {root}
        for b in range(root + 1, self.model.nbody):      # children follow their parent in MuJoCo's order
            if int(self.model.body_parentid[b]) in bodies:
                bodies.add(b)
        return frozenset(g for g in range(self.model.ngeom) if int(self.model.geom_bodyid[g]) in bodies)

    # -- the collision check ---------------------------------------------------------------
    def _load(self) -> None:
        self.data.qpos[:] = self.world.data.qpos
        self.data.mocap_pos[:] = self.world.data.mocap_pos
        self.data.mocap_quat[:] = self.world.data.mocap_quat

    def _pose(self, query: _Query, values: Mapping[str, float]) -> None:
        """Put the scratch state in this arm pose, carrying the held object with the hand."""
        for name, value in values.items():
            self.data.qpos[self._qadr[name]] = value
        mujoco.mj_kinematics(self.model, self.data)
        if query.held is not None and query.held_offset is not None:
            site = self.data.site(tcp_site(query.side))
            rot = site.xmat.reshape(3, 3)
            pos = site.xpos + rot @ query.held_offset[0]
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, (rot @ query.held_offset[1]).ravel())
            adr = self._free_qpos(query.held)
            self.data.qpos[adr:adr + 3] = pos
            self.data.qpos[adr + 3:adr + 7] = quat
            mujoco.mj_kinematics(self.model, self.data)

    def _free_qpos(self, name: str) -> int:
        body = self.world.things[name].body_id
        return int(self.model.jnt_qposadr[self.model.body_jntadr[body]])

    def _touching(self, query: _Query) -> set[tuple[int, int]]:
        """Pairs (moving geom, other geom) nearer than the clearance."""
        mujoco.mj_collision(self.model, self.data)
        moving = self._moving(query)
        pairs: set[tuple[int, int]] = set()
        for i in range(self.data.ncon):
            c = self.data.contact[i]
            if c.dist >= CLEARANCE:
                continue
            g1, g2 = int(c.geom1), int(c.geom2)
            if (g1 in moving) == (g2 in moving):
                continue                                  # both move together (the grip) or neither moves
            pair = (g1, g2) if g1 in moving else (g2, g1)
            if pair in query.excused:
                continue
            pairs.add(pair)
        return pairs

    def _moving(self, query: _Query) -> frozenset[int]:
        geoms = self._arm_geoms[query.side]
        if query.held is not None:
            geoms = geoms | frozenset(self.world.things[query.held].geom_ids)
        return geoms

    def _valid(self, query: _Query, vector: Iterable[float]) -> bool:
        query.checks += 1
        self._pose(query, {**query.fixed, **dict(zip(query.names, vector))})
        return not self._touching(query)

    def _segment_clear(self, query: _Query, a: np.ndarray, b: np.ndarray) -> bool:
        n = max(1, int(np.ceil(float(np.max(np.abs(b - a))) / RESOLUTION)))
        return all(self._valid(query, a + (b - a) * k / n) for k in range(1, n + 1))

    # -- queries ---------------------------------------------------------------------------
    def _query(self, side: str, start: Mapping[str, float], goal: Mapping[str, float],
               held: Optional[str]) -> _Query:
        names = tuple(j for j in (TORSO_JOINT,) + arm_joints(side)
                      if j in goal and (j != TORSO_JOINT or abs(goal[j] - start.get(j, goal[j])) > 1e-3))
        fixed = {j: start[j] for j in start if j not in names}
        offset = None
        if held is not None:
            self._load()
            mujoco.mj_kinematics(self.model, self.data)
            site = self.data.site(tcp_site(side))
            rot = site.xmat.reshape(3, 3).copy()
            body = self.world.things[held].body_id
            offset = (rot.T @ (self.data.xpos[body] - site.xpos), rot.T @ self.data.xmat[body].reshape(3, 3))
        return _Query(side, names, fixed, held, offset)

    def collision(self, side: str, joints: Mapping[str, float], held: Optional[str] = None) -> list[str]:
        """What this arm (and ``held``) would come within the clearance of in the pose ``joints``
        (scene names, the robot's for its own body, 'the room' for floor and walls), sorted;
        empty when it is clear."""
        query = self._query(side, joints, joints, held)
        self._load()
        self._pose(query, joints)
        return sorted({self.world.owner(other) or "the room" for _, other in self._touching(query)})

    def path(self, side: str, start: Mapping[str, float], goal: Mapping[str, float], held: Optional[str] = None,
             seconds: float = PLAN_SECONDS) -> Optional[ArmPath]:
        """Waypoints that take ``side``'s arm (and the torso, if it moves) from ``start`` to
        ``goal`` clear of everything: the goal alone when the straight line is clear, else an
        RRT-Connect path; None when the goal itself is in collision or no path is found in
        ``seconds``."""
        t0 = time.perf_counter()
        query = self._query(side, start, goal, held)
        self._load()
        self._pose(query, start)
        query.excused = self._touching(query)          # what it touches where it starts
        a = np.array([start[j] for j in query.names])
        b = np.array([goal[j] for j in query.names])
        if not self._valid(query, b):
            return None
        if self._segment_clear(query, a, b):
            return ArmPath([dict(goal)], planned=False, seconds=time.perf_counter() - t0, checks=query.checks)
        states = self._rrt_connect(query, a, b, seconds)
        if states is None:
            return None
        waypoints = [{**dict(goal), **dict(zip(query.names, s))} for s in states[1:]]
        waypoints[-1] = dict(goal)
        return ArmPath(waypoints, planned=True, seconds=time.perf_counter() - t0, checks=query.checks)

    def _rrt_connect(self, query: _Query, a: np.ndarray, b: np.ndarray, seconds: float) -> Optional[list[np.ndarray]]:
        # Imported here: only a motion that needs planning pays for loading OMPL.
        from ompl import base as ob
        from ompl import geometric as og
        from ompl import util as ou

        global _seeded
        if not _seeded:
            ou.setLogLevel(ou.LOG_WARN)
            ou.RNG.setSeed(SEED)
            _seeded = True
        space = ob.RealVectorStateSpace(len(query.names))
        bounds = ob.RealVectorBounds(len(query.names))
        for i, name in enumerate(query.names):
            lo, hi = self.model.jnt_range[self.model.joint(name).id]
            bounds.setLow(i, float(lo))
            bounds.setHigh(i, float(hi))
        space.setBounds(bounds)
        setup = og.SimpleSetup(space)
        n = len(query.names)
        setup.setStateValidityChecker(lambda state: self._valid(query, [state[i] for i in range(n)]))
        info = setup.getSpaceInformation()
        info.setStateValidityCheckingResolution(RESOLUTION / max(space.getMaximumExtent(), 1e-6))
        start, goal = space.allocState(), space.allocState()
        for i in range(n):
            start[i], goal[i] = float(a[i]), float(b[i])
        setup.setStartAndGoalStates(start, goal)
        setup.setPlanner(og.RRTConnect(info))
        solved = setup.solve(seconds)
        if not solved or not setup.haveExactSolutionPath():
            return None
        setup.simplifySolution(min(0.2, seconds / 4))
        path = setup.getSolutionPath()
        return [np.array([path.getState(k)[i] for i in range(n)]) for k in range(path.getStateCount())]


__all__ = ["ArmPath", "ArmPathPlanner", "CLEARANCE", "PLAN_SECONDS"]
