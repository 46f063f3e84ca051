"""Plans of our domain executed on the MuJoCo world: the physics, not the planner, judges each step.

``PhysicsExecutor`` has the interface of the symbolic ``SimulatedExecutor`` (``execute``,
``explore``, ``observe``, ``initial_memory``, ``goal_reached``, ``location_of_robot``), so the
tool-selection loop and the benchmarks can run either. Each plan step becomes skills
(``skills.py``):

* ``move s e``: navigate to ``e`` (a location or a person);
* ``grasp o f a`` / ``take_out o f a``: when the robot stands at ``a``, it first lines its base
  up with ``o`` at that location (what a real grasp skill does); then grasp (from the open
  container, for take_out). From elsewhere the grasp is tried from where the robot stands, and
  the physics says how far out of reach the object is;
* ``place o s a`` / ``stack o s a``: place on ``s``'s top; ``putin o c a``: into ``c``'s inner space;
* ``open x a`` / ``close x a``: the door or drawer along its joint (the robot must be at ``a``);
* ``handover p o``: hold ``o`` out to the person, who grips it; ``receive_object p o``: the
  person holds ``o`` out, the robot grasps it and the person lets go (``handover.py``);
* ``open`` / ``close`` of a lid: the cap turned by the hand (``lids.py``);
* ``fill`` / ``pour``: the held source tilted with its mouth over the target (``pouring.py``);
* ``chop`` / ``wet_swipe``: the held knife down onto the target, the held tool drawn over the
  surface (``tools.py``); ``wetten`` (an environment action) holds if the physics shows the
  object lying in the water;
* ``heat_liquid l c h a``: press the heater's start button; the heater runs and warms ``l`` only
  if the physics has ``c`` on its top (a stove) or inside it with the door shut (a microwave,
  an oven), or ``h`` is a pan standing there (``heating.py``);
* a capability the executor has no motion for fails (code UNAVAILABLE, "no motion for ... in the
  physics world yet"), never pretends;
* a person's own steps fail: the person model takes what it is handed and does nothing else.

A step succeeds only if its skills say so. What holds afterwards is read back from the physics
(``relations.py``) for observe() and goal_reached(), never copied from the PDDL effects.
"""
from __future__ import annotations

import dataclasses
import time
from math import hypot
from typing import Callable, Optional, Sequence

import numpy as np

from affplan_ros.core.agent.execution import (
    ExecutionResult,
    ExploreResult,
    StepOutcome,
)
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.model.failure import Cause, Failure, FailureCode
from affplan_ros.core.model.records import Observation
from affplan_ros.core.model.scene import Relation, Scene
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.planning.simulate import goal_satisfied
from affplan_ros.core.planning.task import build_task
from affplan_ros.core.recovery.feedback import format_detail
from affplan_ros.sim.executor import ScenarioViews
from affplan_ros.sim.physics.camera import aim_point, head_angles
from affplan_ros.sim.physics.control import RobotControl
from affplan_ros.sim.physics.handover import handover, receive_object, start_in_person_hand
from affplan_ros.sim.physics.heating import heat_liquid
from affplan_ros.sim.physics.lids import turn_lid
from affplan_ros.sim.physics.pouring import fill, pour
from affplan_ros.sim.physics.relations import Anchors, Atom, read_relations
from affplan_ros.sim.physics.skills import SkillResult, Skills
from affplan_ros.sim.physics.tools import chop, wipe
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind, build_world

# The relations that place an object (what a failed step's observation reports about it).
_PLACEMENTS = ("on", "in", "inhand")

# What to try instead, per physical failure (CoPAL's suggestion).
SUGGESTIONS = {
    Cause.UNREACHABLE: "move closer or pick another object",
    Cause.BLOCKED: "clear the way or approach from another side",
    Cause.SLIPPED: "try the grasp again",
    Cause.NO_FREE_SPACE: "clear some space there or choose another support",
    Cause.CONTAINER_CLOSED: "open the container first",
    Cause.TOO_LARGE: "choose a larger container or another object",
    Cause.NOT_HELD: "grasp the object first",
    Cause.HAND_FULL: "put down what the robot holds first",
    Cause.UNKNOWN: "check the object's name",
    Cause.NOT_ARTICULATED: "choose something with a door or drawer",
    Cause.NOT_FOUND: "look for the object where it is now",
    Cause.DOOR_OPEN: "close the door first",
    Cause.NOT_HEATED: "put the container on or into the heater first",
    Cause.NOT_A_HEATER: "use a stove, a microwave or an oven",
}


class PhysicsExecutor(ScenarioViews):
    """Executes and explores on a :class:`PhysicsWorld`; ``time_limit_s`` bounds one ``execute``
    (checked between steps: a step that started finishes, so a run may overrun by one step)."""

    def __init__(self, scene: Scene, *, oam=None, agents=None, robot: str = "robot0",
                 world: Optional[PhysicsWorld] = None, time_limit_s: Optional[float] = None):
        self.scene = scene
        self.oam = oam
        # The task only maps scene names to PDDL names and says which actions are environmental.
        self.task = build_task(scene, oam=oam, agents=agents, unknown_classes="warn")
        self.world = world or build_world(scene)
        self.skills = Skills(self.world)
        self.robot = robot
        self.time_limit_s = time_limit_s
        self.anchors = Anchors.of(scene)
        self._humans = {a.name for a in self.task.agents if a.class_name == "human"}
        self._costs = {a.name: float(a.cost) for a in self.task.agents}
        self.plan_cost = 0.0
        self.move_cost = 0.0
        self.executed: list[str] = []
        self.skill_results: list[SkillResult] = []
        # Where the robot has stood (the domain's ``visited``): a history, so it is kept here,
        # from the physics' ``at`` after every step, never from a step's effects.
        self.visited: set[str] = set()
        self.on_step: Optional[Callable[[str], None]] = None   # told each step as it starts (a video caption)
        self._scene_names: Optional[dict[str, str]] = None
        for rel in scene.relations:
            if rel.predicate == "inhand" and rel.args[1:] == (robot,):
                start = self.skills.start_holding(rel.args[0])
                if not start.success:
                    self.world.warnings.append(f"{rel.args[0]}: the scene has it in the robot's hand; {start.reason}")
            elif rel.predicate == "inhand" and rel.args[1:2] and rel.args[1] in self._humans:
                why = start_in_person_hand(self.world, rel.args[0], rel.args[1])
                if why is not None:
                    self.world.warnings.append(f"{rel.args[0]}: the scene has it in {rel.args[1]}'s hand; {why}")
        self._note_visits()

    # -- what the physics shows ---------------------------------------------------------------
    def relations(self) -> set[Atom]:
        """Every relation that holds now, read from the physics state (scene names), and the
        places the robot has stood at (``visited``)."""
        return read_relations(self.world, self.skills, self.scene, self.anchors) | {
            ("visited", loc) for loc in self.visited}

    def _note_visits(self) -> None:
        state = read_relations(self.world, self.skills, self.scene, self.anchors)
        self.visited |= {a[2] for a in state if a[0] == "at" and a[1] == self.robot}

    def location_of_robot(self, state: Optional[set[Atom]] = None) -> Optional[str]:
        """Where the robot stands (``state``: relations already read, else read now)."""
        locs = [a[2] for a in (self.relations() if state is None else state) if a[0] == "at" and a[1] == self.robot]
        places = [loc for loc in locs if loc in self.scene.locations]
        return (places or locs or [None])[0]

    def observe(self, location: str, *, see_inside_closed: bool = False) -> Observation:
        """What a camera at ``location`` sees now: the place, what stands on or in it (not inside
        a closed door or lid, unless ``see_inside_closed``: what the robot was told), people there,
        what the robot holds if it is there, and the relations among these."""
        return self._view(location, self.relations(), see_inside_closed)

    def _view(self, location: str, state: set[Atom], see_inside_closed: bool = False) -> Observation:
        """``observe`` on relations already read."""
        here = {location} if location in self.scene.objects else set()
        here |= {a[1] for a in state if a[0] in ("located", "at") and len(a) == 3 and a[2] == location}
        if self.robot in here:
            here |= {a[1] for a in state if a[0] == "inhand" and a[2] == self.robot}
        if not see_inside_closed:
            here = {n for n in here if not self._hidden(n)}
        here &= set(self.scene.objects)
        keep = {p for p, d in self.task.predicates.items() if not d.internal}
        rels = sorted({Relation(a[0], a[1:]) for a in state if a[0] in keep and len(a) > 1
                       and all(x in here or x == location for x in a[1:])}, key=lambda r: (r.predicate, r.args))
        return Observation(tuple(self._record(n) for n in sorted(here)), tuple(rels), location)

    def clear_view(self) -> list[str]:
        """Free arms up out of the head camera's view before it looks (``Skills.clear_view``);
        the arms moved, for :meth:`end_view`."""
        return self.skills.clear_view()

    def end_view(self, sides: Sequence[str]) -> None:
        """The arms :meth:`clear_view` raised tucked again (before anything else moves)."""
        self.skills.end_view(sides)

    def look_at(self, location: str, pan_offset: float = 0.0) -> bool:
        """Point the head camera at ``location``'s furniture (what Explore looks at), turned
        ``pan_offset`` radians to the left; False if the head could not get there (the physics
        runs while it turns)."""
        angles = self._head_towards(location)
        if angles is None:
            return False
        low, high = self.world.spec.head_pan
        pan = float(np.clip(angles[0] + pan_offset, low, high))
        return RobotControl(self.world).follow([{"head_pan": pan, "head_tilt": angles[1]}]).ok

    def _head_towards(self, name: str) -> Optional[tuple[float, float]]:
        """Pan and tilt that point the head at ``name`` (a place: its furniture), None if not a body."""
        thing = self.world.things.get(self._place_of(name))
        if thing is None or thing.body_id < 0:
            return None
        return head_angles(self.world, aim_point(self.world, thing.name))

    def _observed_after_failure(self, args: Sequence[str]) -> list[Literal]:
        """What the robot sees of a failed step's objects from where it stands now, as facts for
        the failure's ``detail`` (``observed:``; the memory takes them): where each one is, if the
        camera sees it or the hand holds it, and which placement among the step's arguments does
        not hold where the robot can tell (the cup is not on the counter in front of it, the
        apple is no longer in its hand), so the memory stops believing what the world undid."""
        state = self.relations()
        here = self.location_of_robot(state)
        visible = {r.name for r in self._view(here, state).objects} if here else set()
        out: list[Literal] = []
        for o in args:
            thing = self.world.things.get(o)
            if thing is None or thing.kind != ThingKind.OBJECT:
                continue
            if o in visible:
                out += [Literal(a[0], a[1:]) for a in sorted(state) if a[0] in _PLACEMENTS and a[1] == o]
            for x in dict.fromkeys((*args, self.robot)):
                # Only what it can tell: its own hand, or a visible holder it can see into.
                if x == o or not (x == self.robot or (x in visible and not self._hidden_inside(x))):
                    continue
                out += [Literal(p, (o, x), negated=True) for p in _PLACEMENTS if (p, o, x) not in state]
        return out

    def _hidden_inside(self, name: str) -> bool:
        """Is the inside of ``name`` out of the camera's sight (a closed door or lid)?"""
        thing = self.world.things.get(name)
        return thing is not None and (name in self.world.closed_lids
                                      or (bool(thing.joint) and not self.world.is_open(name)))

    def _hidden(self, name: str) -> bool:
        thing = self.world.things.get(name)
        if thing is None or thing.kind != ThingKind.OBJECT or thing.body_id < 0:
            # A liquid is as hidden as its container.
            holder = next((c for c, ls in self.world.liquids.items() if name in ls), None)
            return holder is not None and (holder in self.world.closed_lids or self._hidden(holder))
        return self.skills._enclosing_closed(name) is not None

    def goal_reached(self, dnf: Sequence[Sequence]) -> bool:
        """Does the physics-derived state satisfy ``dnf`` (some disjunct's positive literals hold
        and none of its negated ones)?"""
        m = self.task._map
        state = {tuple(m(x) for x in atom) for atom in self.relations()}
        mapped = [[Literal(l.predicate, tuple(m(a) for a in l.args), l.negated) for l in c] for c in dnf]
        return goal_satisfied(state, mapped) is not None

    # -- explore ------------------------------------------------------------------------------
    def explore(self, location: str) -> ExploreResult:
        if location not in self.scene.locations:
            return ExploreResult(False, failure=Failure(FailureCode.NOT_FOUND, f"explore {location}",
                                                        f"there is no location {location!r}"))
        cost, start = 0.0, self.location_of_robot()
        if start != location:
            res = self._skill(self.skills.navigate, self._place_of(location))
            if not res.success:
                return ExploreResult(False, failure=self._physical(f"explore {location}", "navigate", res))
            cost = self._costs.get(self.robot, 1.0)
            self.move_cost += cost
        return self._look(location, cost, start if start != location else None)

    def _open_to_look(self, step: PlanStep) -> Optional[Failure]:
        outcome = self._step(step)
        return None if outcome.success else outcome.failure or Failure(
            FailureCode.PHYSICAL, outcome.step, "it did not open")

    # -- execute ------------------------------------------------------------------------------
    def execute(self, plan: Sequence) -> ExecutionResult:
        result = ExecutionResult(True)
        deadline = time.monotonic() + self.time_limit_s if self.time_limit_s is not None else None
        for step in plan:
            text = " ".join(x for x in (step.action, step.agent, *step.args) if x)
            if deadline is not None and time.monotonic() > deadline:
                failure = Failure(FailureCode.TIMEOUT, text, f"no time left for {text}",
                                  f"the execution time limit of {self.time_limit_s:g} s ran out",
                                  "run with a longer time limit", recoverable=True)
                result.outcomes.append(StepOutcome(text, step.agent, False, failure))
                result.success, result.failure = False, failure
                return result
            outcome = self._step(step)
            result.outcomes.append(outcome)
            if not outcome.success:
                result.success, result.failure = False, outcome.failure
                return result
            result.steps_done += 1
            self.executed.append(text)
            self.plan_cost += self._costs.get(step.agent, 0.0)
        return result

    def _step(self, step) -> StepOutcome:
        t0 = time.monotonic()
        text = " ".join(x for x in (step.action, step.agent, *step.args) if x)
        if self.on_step is not None:
            self.on_step(text)
        outcome = StepOutcome(text, step.agent, False)
        args = tuple(self.world_name(a) for a in step.args)
        try:
            cap = self.task.capabilities.get(step.action)
            if getattr(cap, "environment", False):
                # Happens by itself, if the physics shows what causes it; nobody executes it.
                outcome.failure = self._environment_step(text, step.action, args)
                outcome.success = outcome.failure is None
            elif step.agent in self._humans or step.agent != self.robot:
                outcome.failure = Failure(
                    FailureCode.UNAVAILABLE, text, f"{step.agent} cannot act in the physics world",
                    "the person model only takes what it is handed", "plan the step for the robot",
                    detail="no_person_model", recoverable=True)
            else:
                outcome.failure = self._robot_step(text, step.action, args)
                outcome.success = outcome.failure is None
        except Exception as exc:  # noqa: BLE001 - a crash in a skill is that step's failure
            outcome.failure = Failure(FailureCode.PHYSICAL, text, f"{step.action} crashed",
                                      f"{type(exc).__name__}: {exc}", detail="error")
        if outcome.failure is not None and outcome.failure.code in (FailureCode.PHYSICAL, FailureCode.NOT_FOUND):
            observed = self._observed_after_failure(args)
            if observed:
                outcome.failure = dataclasses.replace(
                    outcome.failure, detail=format_detail(observed=observed, text=outcome.failure.detail))
        self._note_visits()
        outcome.seconds = time.monotonic() - t0
        return outcome

    def world_name(self, name: str) -> str:
        """The world's name of a thing a plan names: plans name things as PDDL does (``n7up0``),
        the world as the scene does (``7up0``)."""
        if self._scene_names is None:
            self._scene_names = {pddl: scene for scene, pddl in self.task.names.items()}
        return self._scene_names.get(name, name)

    def _robot_step(self, text: str, action: str, args: tuple[str, ...]) -> Optional[Failure]:
        """The skills of one robot step; None when all of them succeeded."""
        sk = self.skills
        self._glance(args[-1] if action == "move" else args[0] if args else "")
        if action == "move":
            return self._check(text, "navigate", self._skill(sk.navigate, self._place_of(args[-1])))
        if action in ("fill", "pour"):
            source, content, target, at = args
            self._line_up(at, target)
            motion = fill if action == "fill" else pour
            return self._check(text, action, self._skill(motion, sk, source, content, target))
        if action == "chop":
            knife, target, support, at = args
            self._line_up(at, target)
            return self._check(text, "chop", self._skill(chop, sk, knife, target, support))
        if action == "wet_swipe":
            tool, target, at = args
            self._line_up(at, target)
            along = self._place_of(at) if self.location_of_robot() == at else None
            return self._check(text, "wipe", self._skill(wipe, sk, tool, target, along))
        if action == "heat_liquid":
            liquid, container, heater, at = args
            self._glance(heater)
            far = self._too_far(at, heater)
            if far is not None:
                return far_failure(text, action, far)
            return self._check(text, action, self._skill(heat_liquid, sk, liquid, container, heater))
        if action in ("handover", "receive_object"):
            person, obj = args
            motion = handover if action == "handover" else receive_object
            return self._check(text, action, self._skill(motion, sk, obj, person))
        if action in ("grasp", "take_out"):
            obj, source, at = args
            self._line_up(at, obj)
            # Standing at the step's place, the base may stand elsewhere round it to reach the grasp.
            along = self._place_of(at) if self.location_of_robot() == at else None
            return self._check(text, "grasp", self._skill(sk.grasp, obj, source, None, along))
        if action in ("place", "stack", "putin"):
            obj, target, at = args
            self._line_up(at, target)
            skill = sk.putin if action == "putin" else sk.place
            # Standing at the step's place, the base may move along it to reach a free spot.
            along = self._place_of(at) if self.location_of_robot() == at else None
            return self._check(text, skill.__name__, self._skill(skill, obj, target, along))
        if action in ("open", "close"):
            obj, at = args
            thing = self.world.things.get(obj)
            if thing is not None and thing.kind == ThingKind.OBJECT and thing.props.articulation == "lid":
                self._line_up(at, obj)
                return self._check(text, action, self._skill(turn_lid, sk, obj, action == "open"))
            far = self._too_far(at, obj)
            if far is not None:
                return far_failure(text, action, far)
            failure = self._check(text, action, self._skill(sk.open if action == "open" else sk.close, obj))
            if failure is not None or self.location_of_robot() != at:
                # Swinging a door moves the base round the hinge, also when the door stops it
                # half way; the skill ends, as a robot's would, back in front of the place (if
                # that drive fails, the next step says so).
                self._skill(sk.navigate, self._place_of(at))
            return failure
        return Failure(FailureCode.UNAVAILABLE, text, f"no motion for {action} in the physics world yet",
                       f"{action!r} is not a capability the physics executor knows",
                       "plan without this step, or run it on the symbolic simulator", detail="no_motion")

    def _glance(self, name: str) -> None:
        """Turn the head towards what the step is about while the step runs (its servos move with
        the physics; nothing waits for them): the camera then shows what the robot works on."""
        angles = self._head_towards(name)
        if angles is not None:
            self.world.set_ctrl("head_pan", angles[0])
            self.world.set_ctrl("head_tilt", angles[1])

    def _environment_step(self, text: str, action: str, args: tuple[str, ...]) -> Optional[Failure]:
        """``wetten o c l``: ``o`` gets wet if the physics shows it in ``c`` while ``c`` holds the
        liquid; another environment action is taken as happening (none other exists today)."""
        if action != "wetten":
            return None
        obj, container, liquid = args
        w = self.world
        if self.skills.inside(obj, container) and w.liquids.get(container, {}).get(liquid, 0.0) > 0:
            w.wet.add(obj)
            return None
        return Failure(FailureCode.PHYSICAL, text, f"{obj} did not get wet",
                       f"{obj} is not lying in {container} with {liquid} in it", "put it into the water first",
                       recoverable=True, cause=Cause.NOT_FOUND)

    # -- helpers ------------------------------------------------------------------------------
    def _skill(self, fn, *args) -> SkillResult:
        result = fn(*args)
        self.skill_results.append(result)
        return result

    def _place_of(self, location: str) -> str:
        """The physics thing to drive to for a location (its anchor) or a person."""
        return self.anchors.by_location.get(location, location)

    def _line_up(self, at: str, near: str) -> None:
        """At the step's location, stand opposite the object (a grasp skill's base alignment).
        Elsewhere the robot stays put: the physics then says how far out of reach things are."""
        if self.location_of_robot() != at:
            return
        place = self._place_of(at)
        thing = self.world.things.get(near)
        target = near if thing is not None and thing.kind == ThingKind.OBJECT else None
        # Lining up is a motion too; if it fails, the step's own skill reports from where it stands.
        self._skill(self.skills.navigate, place, target)

    def _too_far(self, at: str, obj: str) -> Optional[float]:
        """Distance from the base to ``obj`` when the robot is not at the step's location."""
        if self.location_of_robot() == at or obj not in self.world.things:
            return None
        thing = self.world.things[obj]
        if thing.placement is None:
            return None
        pose = self.world.base_pose()
        lx, ly = thing.placement.to_local(pose.x, pose.y)
        return hypot(max(abs(lx) - thing.placement.width / 2, 0.0), max(abs(ly) - thing.placement.depth / 2, 0.0))

    def _check(self, text: str, skill: str, result: SkillResult) -> Optional[Failure]:
        return None if result.success else self._physical(text, skill, result)

    @staticmethod
    def _physical(text: str, skill: str, result: SkillResult) -> Failure:
        code = result.code or Cause.BLOCKED
        core = FailureCode.NOT_FOUND if code in (Cause.UNKNOWN, Cause.NOT_FOUND) else FailureCode.PHYSICAL
        suggestion = SUGGESTIONS.get(code, "")
        if code == Cause.HAND_FULL and skill == "handover":
            # The person's hands are full (the robot's free hand is what a handover needs anyway).
            suggestion = "let the person put something down first, or hand it over later"
        return Failure(core, text, f"{skill} failed: {code.value.replace('_', ' ')}", result.reason,
                       suggestion, recoverable=True, cause=code)


def far_failure(text: str, action: str, distance: float) -> Failure:
    return Failure(FailureCode.PHYSICAL, text, f"{action} failed: unreachable",
                   f"the robot stands {distance:.2f} m away from it, beyond the arm's reach",
                   SUGGESTIONS[Cause.UNREACHABLE], recoverable=True, cause=Cause.UNREACHABLE)
