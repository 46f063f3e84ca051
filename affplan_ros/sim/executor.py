"""A simulated executor for the tool-selection loop: a ground-truth world from a scenario.

The world holds every object of the scenario's scene; the robot's memory starts with only
the explored locations (:meth:`SimulatedExecutor.initial_memory`), and objects elsewhere are
revealed only by exploring their location. Plan steps are applied through
:class:`~affplan_ros.sim.world.SimWorld` (preconditions checked on the ground truth), and
steps assigned to a human are first put to the person through the human-help callback.
"""
from __future__ import annotations

import time
from typing import Iterable, Optional, Sequence, Union

from affplan_ros.core.agent.execution import (
    AskHuman,
    ExecutionResult,
    ExploreResult,
    HumanAnswer,
    HumanRequest,
    StepOutcome,
    ask_human,
    closed_container_to_open,
    human_failure,
    human_step_text,
)
from affplan_ros.core.model.failure import Failure, FailureCode
from affplan_ros.core.model.memory import Memory
from affplan_ros.core.model.records import ObjectRecord, Observation
from affplan_ros.core.model.scene import Relation, Scene
from affplan_ros.core.planning.planner import PlanStep
from affplan_ros.core.planning.simulate import goal_holds
from affplan_ros.core.planning.task import build_task
from affplan_ros.sim.world import SimWorld


def always_help(request: HumanRequest, timeout_s: float) -> bool:
    """The simulated person: does whatever is asked, at once."""
    return True


class ScenarioViews:
    """What the simulated executors (this symbolic one and the physics world's) share: the record
    of a scene object, and the robot's memory at the start of a scenario built from their views.
    A subclass has ``scene``, ``oam``, ``robot``, ``executed``, ``move_cost``, ``_costs``,
    ``observe(location, see_inside_closed=)``, ``location_of_robot()`` and ``_open_to_look(step)``."""

    scene: Scene
    oam: object
    robot: str

    def _record(self, name: str) -> ObjectRecord:
        obj = self.scene.objects[name]
        oam_affs = (self.oam.affordances_of(obj.class_name)
                    if self.oam is not None and obj.class_name in self.oam else ())
        affs = obj.affordances or oam_affs
        return ObjectRecord(name, obj.class_name, obj.instance, tuple(sorted(affs)))

    def initial_memory(self, explored: Union[str, Iterable[str], None] = "all") -> Memory:
        """The robot's memory at the start of a scenario: every agent, the robot's place,
        every location name, and what is at the explored ones (``"all"``: everything)."""
        mem = Memory()
        for name in self.scene.agents:
            mem.objects[name] = self._record(name)
        for name in self.scene.locations:
            mem.add_location(name)
        names = list(self.scene.locations) if explored in (None, "all") else (
            [explored] if isinstance(explored, str) else list(explored))
        for name in names:
            if name not in self.scene.locations:
                raise ValueError(f"explored location {name!r} is not a location of {self.scene.source}")
            mem.merge(self.observe(name, see_inside_closed=True))
        here = self.location_of_robot()
        if here is not None:
            mem.add_location(here)
            mem.set_agent_location(self.robot, here)
        return mem

    def _look(self, location: str, cost: float, moved_from: Optional[str] = None) -> ExploreResult:
        """Explore's view once the robot stands at ``location`` (``cost``: of getting there). The
        camera cannot see inside a closed container: it is opened first, a step that can fail (a
        full hand) like any other; if it does, the result says so with what was seen outside."""
        steps = [PlanStep("move", (moved_from, location), self.robot)] if moved_from else []
        seen = self.observe(location)
        step, note = closed_container_to_open(seen, location, self.robot)
        if step is not None:
            failure = self._open_to_look(step)
            if failure is None:
                opened = self._costs.get(self.robot, 1.0)
                cost += opened
                self.move_cost += opened
                self.executed.append(" ".join((step.action, step.agent, *step.args)))
                steps.append(step)
                seen, note = self.observe(location), ""
            else:
                note += f": {failure.why or 'it did not open'}"
        return ExploreResult(True, seen, cost=cost, note=note, steps=tuple(steps))

    def _open_to_look(self, step: PlanStep) -> Optional[Failure]:
        """Run the step that opens a container to look in: None when done, else why not."""
        raise NotImplementedError


class SimulatedExecutor(ScenarioViews):
    """Explores and executes on a ground-truth world; counts the cost of what it did."""

    def __init__(self, scene: Scene, *, oam=None, agents=None, robot: str = "robot0",
                 ask_human: Optional[AskHuman] = always_help, human_timeout_s: float = 30.0):
        self.scene = scene
        self.oam = oam
        self.task = build_task(scene, oam=oam, agents=agents, unknown_classes="warn")
        self.world = SimWorld(scene, self.task)
        self.robot = robot
        self.ask_human = ask_human
        self.human_timeout_s = human_timeout_s
        self._affs = {n: self.task.signature.objects.get(self.task._map(n), frozenset()) for n in scene.objects}
        self._humans = {a.name for a in self.task.agents if a.class_name == "human"}
        self._costs = {a.name: float(a.cost) for a in self.task.agents}
        self.plan_cost = 0.0       # cost of executed plan steps
        self.move_cost = 0.0       # cost of the moves made to explore
        self.executed: list[str] = []
        self.human_requests: list[HumanRequest] = []

    # -- what is where ----------------------------------------------------------------------
    def _inv(self, name: str) -> str:
        inv = {v: k for k, v in self.task.names.items()}
        return inv.get(name, name)

    def location_of_robot(self) -> Optional[str]:
        for atom in self.world.state:
            if atom[0] == "at" and atom[1] == self.task._map(self.robot):
                return self._inv(atom[2])
        return None

    def observe(self, location: str, *, see_inside_closed: bool = False) -> Observation:
        """What the robot sees at ``location`` now: the objects reachable there (the place's
        own object, agents standing there), what they hold and what stands on or in them,
        and the relations among these. A camera does not see through a door: what is in a
        closed container (and what is on or in that) is left out, unless ``see_inside_closed``
        (what the robot was told, not what it saw: the memory a scenario starts with)."""
        loc = self.task._map(location)
        state = [tuple(self._inv(x) for x in a) for a in self.world.state]
        closed = {a[1] for a in state if a[0] == "closed" and len(a) == 2}
        behind_doors = set() if see_inside_closed else {a[1] for a in state if a[0] == "in" and a[2] in closed}
        here = {a[1] for a in self.world.state if a[0] in ("located", "at") and a[2] == loc}
        here = {self._inv(n) for n in here} | ({location} if location in self.scene.objects else set())
        holders = {a[1]: a[2] for a in state if a[0] in ("on", "in", "liquid_in", "inhand") and len(a) == 3}
        here = {o for o in here if not _inside(o, behind_doors, holders)}
        grown = True
        while grown:  # what is on, in or held by something seen is seen too
            more = {a[1] for a in state if a[0] in ("on", "in", "liquid_in") and a[2] in here}
            more |= {a[1] for a in state if a[0] == "inhand" and a[2] in here}
            more -= behind_doors
            grown = bool(more - here)
            here |= more
        here &= set(self.scene.objects)
        keep = {p for p, d in self.task.predicates.items() if not d.internal}
        rels = sorted({Relation(a[0], a[1:]) for a in state if a[0] in keep and len(a) > 1
                       and all(x in here or x == location for x in a[1:])}, key=lambda r: (r.predicate, r.args))
        return Observation(tuple(self._record(n) for n in sorted(here)), tuple(rels), location)

    # -- Executor protocol -------------------------------------------------------------------
    def explore(self, location: str) -> ExploreResult:
        if location not in self.scene.locations:
            return ExploreResult(False, failure=Failure(FailureCode.NOT_FOUND, f"explore {location}",
                                                        f"there is no location {location!r}"))
        start = self.location_of_robot()
        cost = 0.0
        if start != location:
            out = self.world.execute([("move", self.robot, (start or "", location))])
            if not out.success:
                return ExploreResult(False, failure=out.failure)
            cost = self._costs.get(self.robot, 1.0)
            self.move_cost += cost
        return self._look(location, cost, start if start != location else None)

    def _open_to_look(self, step: PlanStep) -> Optional[Failure]:
        out = self.world.execute([(step.action, step.agent, tuple(step.args))])
        return None if out.success else out.failure or Failure(FailureCode.PHYSICAL, step.action, "it did not open")

    def execute(self, plan: Sequence) -> ExecutionResult:
        result = ExecutionResult(True)
        for step in plan:
            t0 = time.monotonic()
            text = " ".join(x for x in (step.action, step.agent, *step.args) if x)
            outcome = StepOutcome(text, step.agent, False)
            cap = self.task.capabilities.get(step.action)
            if getattr(cap, "environment", False):
                # Something that happens by itself (water wets a sponge in it): the world does
                # it after the step that enabled it; nobody executes or pays for it.
                outcome.success, outcome.seconds = True, time.monotonic() - t0
                result.outcomes.append(outcome)
                result.steps_done += 1
                continue
            if step.agent in self._humans:
                request = HumanRequest(step.agent, step.action, tuple(step.args), human_step_text(
                    step.action, step.agent, step.args, cap.description if cap else "",
                    [p.name for p in cap.parameters] if cap else ()))
                self.human_requests.append(request)
                answer, detail = ask_human(self.ask_human, request, self.human_timeout_s)
                outcome.human = answer
                if answer is not HumanAnswer.DONE:
                    outcome.failure = human_failure(text, answer, detail)
            if outcome.failure is None:
                out = self.world.execute([(step.action, step.agent, tuple(step.args))])
                outcome.success, outcome.failure = out.success, out.failure
            outcome.seconds = time.monotonic() - t0
            result.outcomes.append(outcome)
            if not outcome.success:
                result.success, result.failure = False, outcome.failure
                return result
            result.steps_done += 1
            self.executed.append(text)
            self.plan_cost += self._costs.get(step.agent, 0.0)
        return result

    # -- judging -----------------------------------------------------------------------------
    def goal_reached(self, dnf: Sequence[Sequence]) -> bool:
        """Does the ground truth satisfy ``dnf`` (the paper's criterion: some disjunct's
        positive literals hold and none of its negated ones)?"""
        return goal_holds(self.task, dnf, self.world.state)


def _inside(obj: str, enclosed: set[str], holders: dict[str, str]) -> bool:
    """Whether ``obj`` is one of ``enclosed`` or stands on / lies in one of them (any depth)."""
    seen: set[str] = set()
    while obj not in seen:
        if obj in enclosed:
            return True
        seen.add(obj)
        if obj not in holders:
            return False
        obj = holders[obj]
    return False
