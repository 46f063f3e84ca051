"""Physical faults injected into the MuJoCo world while a plan runs (``affplan bench physics --faults``).

``FaultyExecutor`` wraps a ``PhysicsExecutor`` (the executor port the recovery loop drives one
step at a time) and changes the *world*, never the robot's belief or the executor's answers:
whether the robot notices, and what it does about it, is left to the physics and to the
recovery loop, as on a real robot.

* ``moved``: just before the robot grasps or takes out an object, someone puts it on another
  place's surface (one of the free spots nearest its front, chosen by the seed), or, where no
  other place has room (or only places the goal names), elsewhere on the surface it stands on
  (at least 20 cm away);
* ``removed``: just before that grasp, the object is taken out of the room (put far outside
  the walls, where no camera of the robot looks);
* ``door_blocked``: the first time the robot opens a door or drawer, it is stuck (its joint may
  give a few millimetres) for that one attempt, as a door held by a wedge or a sticking seal;
* ``slipped``: on the first drive while the robot holds something, the grip gives way part way
  along (the fingers open after a seeded fraction of a second), and it falls where it is.

Each fault fires once, on its trigger; ``fired`` says when and what it did.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum
from typing import Optional, Sequence

import mujoco
import numpy as np

from affplan_ros.core.agent.execution import ExecutionResult, ExploreResult
from affplan_ros.sim.physics.bodies import object_geometry, vertical_half
from affplan_ros.sim.physics.executor import PhysicsExecutor
from affplan_ros.sim.physics.robot import finger_joints
from affplan_ros.sim.physics.world import ThingKind

JAM_RANGE = 0.005       # rad / m a stuck door or drawer still gives (a few millimetres at its edge)
SETTLE_S = 1.0          # s the world runs after something was put down, to come to rest
SLIP_AFTER_S = (0.5, 2.0)   # s into the drive when the grip gives way (seeded within this)
OUTSIDE = 50.0          # m from the room's centre where a removed object is kept
EASY_SPOTS = 6          # a moved object lands on one of this many free spots nearest the front of a place


class FaultKind(str, Enum):
    MOVED = "moved"
    REMOVED = "removed"
    DOOR_BLOCKED = "door_blocked"
    SLIPPED = "slipped"


@dataclass
class FaultyExecutor:
    """``inner`` with one fault of ``kind`` injected at its trigger (``seed`` picks where)."""

    inner: PhysicsExecutor
    kind: FaultKind
    seed: int = 0
    avoid: frozenset[str] = frozenset()  # places a moved object is not put on (those the goal names)
    fired: Optional[str] = None          # what was done, once it was
    fired_step: Optional[str] = None     # the step it was done before (or during)
    failures_after: int = 0              # steps that failed once it had fired
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __getattr__(self, name: str):
        # Everything else (observe, relations, goal_reached, ...) is the wrapped executor's.
        return getattr(self.inner, name)

    def explore(self, location: str) -> ExploreResult:
        return self.inner.explore(location)

    def execute(self, plan: Sequence) -> ExecutionResult:
        result = ExecutionResult(True)
        for step in plan:
            restore = self._before(step) if self.fired is None else None
            try:
                one = self.inner.execute([step])
            finally:
                if restore is not None:
                    restore()
            result.outcomes.extend(one.outcomes)
            result.steps_done += one.steps_done
            if not one.success and self.fired:
                self.failures_after += 1
            if not one.success:
                result.success, result.failure = False, one.failure
                break
        return result

    # -- triggers ----------------------------------------------------------------------------
    def _before(self, step):
        """Inject the fault if ``step`` is its trigger; returns what undoes a temporary fault."""
        names = {pddl: name for name, pddl in self.inner.task.names.items()}
        args = [names.get(a, a) for a in step.args]
        text = " ".join((step.action, *step.args))
        world = self.inner.world
        if self.kind in (FaultKind.MOVED, FaultKind.REMOVED) and step.action in ("grasp", "take_out") and args:
            obj = args[0]
            if obj in world.things and world.things[obj].body_id >= 0:
                self.fired = self._move(obj) if self.kind == FaultKind.MOVED else self._remove(obj)
                self.fired_step = text if self.fired else None
            return None
        if self.kind == FaultKind.DOOR_BLOCKED and step.action == "open" and args:
            thing = world.things.get(args[0])
            if thing is not None and thing.kind == ThingKind.FURNITURE and thing.joint:
                self.fired, self.fired_step = f"{args[0]}'s {'door' if 'hinge' in thing.joint else 'drawer'} " \
                                              "stuck for this attempt", text
                return self._jam(thing.joint)
            return None
        if self.kind == FaultKind.SLIPPED and step.action == "move":
            held = [(side, obj) for side, obj in self.inner.skills.held.items() if obj]
            if held:
                side, obj = held[0]
                delay = self._rng.uniform(*SLIP_AFTER_S)
                self.fired, self.fired_step = f"{obj} slips out of the hand {delay:.1f} s into the drive", text
                return self._slip(side, delay)
        return None

    # -- what the world undergoes ------------------------------------------------------------
    def _move(self, obj: str) -> Optional[str]:
        """Put ``obj`` on a free spot of another place's top surface; what was done, or None."""
        world, skills = self.inner.world, self.inner.skills
        here = {a[2] for a in self.inner.relations() if a[0] in ("on", "in") and a[1] == obj}
        props = world.things[obj].props
        half = object_geometry(props).half
        upright = np.eye(3)
        supports = sorted(name for name, t in world.things.items()
                          if t.kind == ThingKind.FURNITURE and name not in here | self.avoid
                          and world.has_site(t.top_site)
                          and world.site(t.top_site)[0][2] < 1.2)     # within a person's easy reach
        self._rng.shuffle(supports)
        supports += sorted(name for name in here if name in world.things and world.has_site(world.things[name].top_site)
                           and world.things[name].kind == ThingKind.FURNITURE and name not in self.avoid)
        for support in supports:
            site = world.things[support].top_site
            # Ordered by how easily a hand reaches them from the front of the place, as a person
            # puts a thing down: the seed picks one of the first few, not the far back of a table.
            spots = skills._free_spots(support, site, None, half, world.approach_pose(support), limit=None,
                                       rotation=upright)
            if support in here:     # at least 20 cm from where it stood
                spots = [p for p in spots if np.hypot(*(p[:2] - world.position(obj)[:2])) > 0.2]
            if not spots:
                continue
            spot = spots[self._rng.randrange(min(len(spots), EASY_SPOTS))]
            top = world.site(site)[0][2]
            self._put(obj, np.array([spot[0], spot[1], top + vertical_half(props, upright) + 0.005]))
            return f"{obj} put on {support}"
        return None

    def _remove(self, obj: str) -> str:
        self._put(obj, np.array([OUTSIDE, OUTSIDE + 2.0 * self._rng.random(), 0.5]))
        return f"{obj} taken out of the room"

    def _put(self, obj: str, position: np.ndarray) -> None:
        world = self.inner.world
        body = world.things[obj].body_id
        jnt = int(world.model.body_jntadr[body])
        qadr, vadr = int(world.model.jnt_qposadr[jnt]), int(world.model.jnt_dofadr[jnt])
        world.data.qpos[qadr:qadr + 3] = position
        world.data.qpos[qadr + 3:qadr + 7] = (1.0, 0.0, 0.0, 0.0)
        world.data.qvel[vadr:vadr + 6] = 0.0
        mujoco.mj_forward(world.model, world.data)
        world.step(world.steps(SETTLE_S))

    def _jam(self, joint: str):
        world = self.inner.world
        jid = world.model.joint(joint).id
        saved = world.model.jnt_range[jid].copy()
        q = world.qpos(joint)
        world.model.jnt_range[jid] = (q - JAM_RANGE, q + JAM_RANGE)

        def free() -> None:
            world.model.jnt_range[jid] = saved
        return free

    def _slip(self, side: str, delay: float):
        world = self.inner.world
        start = world.sim_seconds

        def watch() -> None:
            if world.sim_seconds - start >= delay:
                for j in finger_joints(side):
                    world.set_ctrl(j, world.spec.finger_stroke)
                world.watchers.remove(watch)
        world.watchers.append(watch)

        def stop() -> None:
            if watch in world.watchers:
                world.watchers.remove(watch)
        return stop


__all__ = ["FaultKind", "FaultyExecutor"]
