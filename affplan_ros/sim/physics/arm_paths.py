"""Collision-free arm paths: RRT-Connect in joint space, collisions checked by MuJoCo.

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
  plans within ``MAX_CHECKS`` collision checks, the path is shortened, and the arm follows its
  waypoints.

The planner is seeded the same for every query and bounded by a count, not by wall time: a query
plans the same path every time, whatever ran before it and however loaded the machine is (why
not OMPL: ``_rrt_connect``).
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional

import mujoco
import numpy as np

from affplan_ros.sim.physics.robot import TORSO_JOINT, arm_joints, tcp_site
from affplan_ros.sim.physics.world import PhysicsWorld, is_long

CLEARANCE = 0.01        # m kept between the moving arm (and what it holds) and anything else
# m kept between a long held thing (a broom) and anything else: its far end, 1.5 m out from the
# shoulder, moves 3 cm per checked step and lags and sags behind the servos' set-points (a
# broom's path planned with 1 cm of room clipped a paper towel on the counter as it was followed).
# (From the robot's own body, ``CLEARANCE``: carried across the front it passes the tucked hand.)
LONG_CLEARANCE = 0.04
MAX_CHECKS = 6000       # collision checks one query may make (~0.2 ms each here: about a second at most)
STEP = 0.35             # rad (joint-space distance) a tree grows by at a time
RESOLUTION = 0.02       # rad between collision checks along a path segment (the hand, 0.6 m out, moves ~1 cm)
SEED = 1                # the sampler's seed, the same for every query: a query plans the same path every time
EXCUSE_SLACK = 0.005    # m a long held thing may come nearer to what it touched at the start (the steps' noise)
_MARGIN = 2 * CLEARANCE   # geom margin in the scratch model: contacts are reported up to this distance


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
    # pairs touching where it starts, with how near they were then: the arm may leave them, and a
    # long held thing may not come any nearer to what it touched (its far end swung on into it)
    excused: dict[tuple[int, int], float] = field(default_factory=dict)
    long_geoms: frozenset[int] = frozenset()    # a held long thing's geoms (``LONG_CLEARANCE``)
    checks: int = 0
    fingers: bool = True               # False: the fingers are not checked (they straddle what they take)


class ArmPathPlanner:
    """Plans one arm's motion in the present world state (``world.data``, read, never written)."""

    def __init__(self, world: PhysicsWorld):
        self.world = world
        model = copy.copy(world.model)
        # Report near misses as contacts (distance up to the margin), and never skip a sleeping
        # body's contacts: this model only ever runs collision detection.
        model.geom_margin[:] = _MARGIN
        for thing in world.things.values():
            if thing.props is not None and thing.geom_ids and is_long(thing.props):
                model.geom_margin[list(thing.geom_ids)] = LONG_CLEARANCE + CLEARANCE
        model.opt.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        self.model = model
        self.data = mujoco.MjData(model)
        self._qadr = {model.joint(j).name: int(model.jnt_qposadr[j]) for j in range(model.njnt)}
        self._arm_geoms = {side: self._geoms_under(f"{side}_link_1") for side in ("l", "r")}
        self._finger_geoms = {side: self._geoms_under(f"{side}_finger_a") | self._geoms_under(f"{side}_finger_b")
                              for side in ("l", "r")}
        self._robot_geoms = frozenset(g for g in range(model.ngeom) if world.owner(g) == world.robot_name)

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

    def _touching(self, query: _Query) -> dict[tuple[int, int], float]:
        """Pairs (moving geom, other geom) nearer than the clearance, with their distance."""
        mujoco.mj_collision(self.model, self.data)
        moving = self._moving(query)
        pairs: dict[tuple[int, int], float] = {}
        for i in range(self.data.ncon):
            c = self.data.contact[i]
            g1, g2 = int(c.geom1), int(c.geom2)
            if (g1 in moving) == (g2 in moving):
                continue                                  # both move together (the grip) or neither moves
            pair = (g1, g2) if g1 in moving else (g2, g1)
            long = pair[0] in query.long_geoms and pair[1] not in self._robot_geoms
            if c.dist >= (LONG_CLEARANCE if long else CLEARANCE):
                continue
            if pair in query.excused and (not long or c.dist >= query.excused[pair] - EXCUSE_SLACK):
                continue
            pairs[pair] = min(float(c.dist), pairs.get(pair, np.inf))
        return pairs

    def _moving(self, query: _Query) -> frozenset[int]:
        geoms = self._arm_geoms[query.side]
        if not query.fingers:
            geoms = geoms - self._finger_geoms[query.side]
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
        long = held is not None and is_long(self.world.things[held].props)
        return _Query(side, names, fixed, held, offset,
                      long_geoms=frozenset(self.world.things[held].geom_ids) if long else frozenset())

    def collision(self, side: str, joints: Mapping[str, float], held: Optional[str] = None,
                  fingers: bool = True) -> list[str]:
        """What this arm (and ``held``) would come within the clearance of in the pose ``joints``
        (scene names, the robot's for its own body, 'the room' for floor and walls), sorted;
        empty when it is clear. ``joints`` may name the base's joints too (a place to stand not
        driven to yet); without ``fingers``, the arm but its fingers (a grasp pose's fingers reach
        down beside what they take, to its support)."""
        query = self._query(side, joints, joints, held)
        query.fingers = fingers
        self._load()
        self._pose(query, joints)
        return sorted({self.world.owner(other) or "the room" for _, other in self._touching(query)})

    def path(self, side: str, start: Mapping[str, float], goal: Mapping[str, float], held: Optional[str] = None,
             max_checks: int = MAX_CHECKS) -> Optional[ArmPath]:
        """Waypoints that take ``side``'s arm (and the torso, if it moves) from ``start`` to
        ``goal`` clear of everything: the goal alone when the straight line is clear, else an
        RRT-Connect path; None when the goal itself is in collision or no path is found within
        ``max_checks`` collision checks."""
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
        states = self._rrt_connect(query, a, b, query.checks + max_checks)
        if states is None:
            return None
        waypoints = [{**dict(goal), **dict(zip(query.names, s))} for s in states[1:]]
        waypoints[-1] = dict(goal)
        return ArmPath(waypoints, planned=True, seconds=time.perf_counter() - t0, checks=query.checks)

    def straight_clear(self, side: str, start: Mapping[str, float], goal: Mapping[str, float],
                       held: Optional[str] = None) -> Optional[bool]:
        """Whether the straight joint-space line from ``start`` to ``goal`` is clear (as ``path``
        checks it); None when the goal itself is not (no line to it is)."""
        query = self._query(side, start, goal, held)
        self._load()
        self._pose(query, start)
        query.excused = self._touching(query)
        a = np.array([start[j] for j in query.names])
        b = np.array([goal[j] for j in query.names])
        if not self._valid(query, b):
            return None
        return self._segment_clear(query, a, b)

    def _rrt_connect(self, query: _Query, a: np.ndarray, b: np.ndarray, max_checks: int) -> Optional[list[np.ndarray]]:
        """RRT-Connect (Kuffner and LaValle, 2000): two trees, from the start and from the goal,
        each extended one step towards a random sample and then greedily towards the other
        tree's newest node, until they meet; then the path is shortened greedily. Bounded by
        ``max_checks`` collision checks (not by wall time, so a loaded machine plans the same
        path); seeded per query (``SEED``).

        Written here rather than taken from OMPL (the ``ompl`` wheel, tried): its Python
        bindings seed the random numbers once per process (``RNG::setSeed`` refuses after the
        first draw) and do not let a Python state sampler replace OMPL's, so a query's path
        depended on every query made before it in the process (measured: the same query twice
        gave two paths, and a test's grasp passed alone and failed after another test file);
        its simplifier is bounded by wall time. A skill must be repeatable as the physics is.
        """
        lo = np.array([self.model.jnt_range[self.model.joint(n).id][0] for n in query.names])
        hi = np.array([self.model.jnt_range[self.model.joint(n).id][1] for n in query.names])
        rng = np.random.default_rng(SEED)
        trees = [([a], [-1]), ([b], [-1])]           # (nodes, parent index) from the start, from the goal

        def budget_left() -> bool:
            return query.checks < max_checks

        def extend(tree: tuple[list[np.ndarray], list[int]], target: np.ndarray) -> Optional[int]:
            nodes, parents = tree
            near = int(np.argmin([float(np.sum((n - target) ** 2)) for n in nodes]))
            step = target - nodes[near]
            length = float(np.linalg.norm(step))
            new = target if length <= STEP else nodes[near] + step * (STEP / length)
            if not self._segment_clear(query, nodes[near], new):
                return None
            nodes.append(new)
            parents.append(near)
            return len(nodes) - 1

        def branch(tree: tuple[list[np.ndarray], list[int]], index: int) -> list[np.ndarray]:
            nodes, parents = tree
            out = []
            while index >= 0:
                out.append(nodes[index])
                index = parents[index]
            return out

        grow, other = 0, 1
        while budget_left():
            new = extend(trees[grow], rng.uniform(lo, hi))
            if new is not None:
                target = trees[grow][0][new]
                # Connect: the other tree steps towards the new node until it gets there or is stopped.
                while budget_left():
                    reached = extend(trees[other], target)
                    if reached is None:
                        break
                    if np.allclose(trees[other][0][reached], target):
                        ends = {grow: new, other: reached}
                        path = branch(trees[0], ends[0])[::-1] + branch(trees[1], ends[1])[1:]
                        return self._shortcut(query, path, max_checks)
            grow, other = other, grow
        return None

    def _shortcut(self, query: _Query, path: list[np.ndarray], max_checks: int) -> list[np.ndarray]:
        """From each kept waypoint, straight on to the furthest later one that is reachable in a
        straight line (deterministic; within the check budget, else the rest as it is)."""
        out, i = [path[0]], 0
        while i < len(path) - 1:
            j = i + 1
            for k in range(len(path) - 1, i + 1, -1):
                if query.checks >= max_checks:
                    break
                if self._segment_clear(query, path[i], path[k]):
                    j = k
                    break
            out.append(path[j])
            i = j
        return out


__all__ = ["ArmPath", "ArmPathPlanner", "CLEARANCE", "MAX_CHECKS"]
