"""The robot's belief for recovery: a scene on a domain that learning can extend.

:class:`Domain` bundles what ``build_task`` / ``plan_for_goal`` take (capabilities,
predicates, OAM, agents). It is the single extension point for everything recovery adds to
the planner's model - preconditions and properties learned by LASP, IALP's grounding
predicates - so nothing in ``core/planning/task.py`` or ``core/planning/planner.py`` needs to know about them:
they receive ordinary :class:`Capability` and :class:`PredicateDef` objects.

:class:`Belief` is a scene (what the robot believes is true) on such a domain. It is changed
only by executed steps (their effects) and by facts a failure observation reports.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Sequence

from affplan_ros.core.goals.errors import GoalError
from affplan_ros.core.goals.formula import Literal
from affplan_ros.core.goals.sexpr import parse_sexpr, render_sexpr
from affplan_ros.core.knowledge.capabilities import Agent, Capability, load_capabilities
from affplan_ros.core.knowledge.oam import OamDatabase, load_oam
from affplan_ros.core.model.predicates import PredicateDef, load_predicates
from affplan_ros.core.model.records import Source, Stamp
from affplan_ros.core.model.scene import Relation, Scene
from affplan_ros.core.planning.planner import plan_for_goal
from affplan_ros.core.planning.simulate import (
    Atom,
    apply_step,
    initial_state,
    state_to_scene,
    validate_plan,
)
from affplan_ros.core.planning.task import PlanningTask, build_task


def add_precondition(cap: Capability, condition: str) -> Capability:
    """``cap`` with ``condition`` (PDDL over its parameters) conjoined to its precondition."""
    return dataclasses.replace(cap, precondition=f"(and {cap.precondition} {condition.strip()})")


def remove_precondition(cap: Capability, condition: str) -> Capability:
    """``cap`` without the top-level conjunct ``condition`` (KeyError when it has none)."""
    pre = parse_sexpr(cap.precondition)
    drop = parse_sexpr(condition)
    conjuncts = list(pre[1:]) if not isinstance(pre, str) and pre and pre[0] == "and" else [pre]
    if drop not in conjuncts:
        raise KeyError(f"capability {cap.name} has no precondition conjunct {render_sexpr(drop)}")
    kept = [c for c in conjuncts if c != drop]
    return dataclasses.replace(cap, precondition=render_sexpr(("and", *kept)))


@dataclass
class Domain:
    """Capabilities, predicates, OAM and agents of the robot's planning model."""

    capabilities: dict[str, Capability]
    predicates: dict[str, PredicateDef]
    oam: OamDatabase
    agents: Optional[list[Agent]] = None   # None: the scene's agents with default profiles
    # Static quantities (mass, lift capacity, temperature, ...) and the comparisons of them that
    # learned preconditions use, compiled to static predicates (core/recovery/quantities.py):
    # their facts are added to the scene before every task is built, so the planner stays classical.
    quantities: Optional[object] = None    # Quantities
    comparisons: dict = field(default_factory=dict)   # compiled predicate name -> Comparison

    @classmethod
    def default(cls, oam: Optional[OamDatabase] = None,
                capabilities: Optional[Mapping[str, Capability]] = None) -> "Domain":
        return cls(dict(capabilities) if capabilities is not None else load_capabilities(),
                   load_predicates(), oam if oam is not None else load_oam())

    def copy(self) -> "Domain":
        return Domain(dict(self.capabilities), dict(self.predicates), self.oam,
                      list(self.agents) if self.agents is not None else None, self.quantities,
                      dict(self.comparisons))

    # -- extension -------------------------------------------------------------------------
    def with_precondition(self, action: str, condition: str) -> "Domain":
        if action not in self.capabilities:
            raise KeyError(f"the domain has no action {action!r}")
        out = self.copy()
        out.capabilities[action] = add_precondition(self.capabilities[action], condition)
        return out

    def with_predicate(self, pdef: PredicateDef) -> "Domain":
        out = self.copy()
        out.predicates[pdef.name] = pdef
        return out

    def with_comparisons(self, comparisons: Sequence) -> "Domain":
        """With the static predicates that ``comparisons`` (quantities.Comparison) compile to."""
        out = self.copy()
        for c in comparisons:
            out.predicates[c.predicate] = c.pdef(self.quantities)
            out.comparisons[c.predicate] = c
        return out

    def static_relations(self, scene: Scene) -> list[Relation]:
        """The facts of the compiled comparisons for the things of ``scene``."""
        if not self.comparisons or self.quantities is None:
            return []
        from affplan_ros.core.recovery.quantities import comparison_relations

        return comparison_relations(list(self.comparisons.values()), scene, self.quantities)

    def with_statics(self, scene: Scene) -> Scene:
        """``scene`` with the compiled comparisons' facts (itself when there are none)."""
        facts = self.static_relations(scene)
        if not facts and not self.comparisons:
            return scene
        out = scene.copy()
        out.relations = [r for r in out.relations if r.predicate not in self.comparisons] + facts
        return out

    # -- use ---------------------------------------------------------------------------------
    def build_kwargs(self) -> dict:
        kw = dict(oam=self.oam, capabilities=self.capabilities, predicates=self.predicates,
                  unknown_classes="warn")
        if self.agents is not None:
            kw["agents"] = self.agents
        return kw

    def build(self, scene: Scene, goal=None) -> PlanningTask:
        return build_task(self.with_statics(scene), goal, **self.build_kwargs())

    def plan(self, scene: Scene, goal, *, time_limit: float = 30.0, mode: str = "optimal"):

        return plan_for_goal(self.with_statics(scene), goal, mode=mode, time_limit=time_limit, **self.build_kwargs())


# Predicates that place an object somewhere: an object is in one place at a time, so an
# observed placement replaces the believed one.
_PLACEMENT = ("on", "in", "inhand", "liquid_in")
# Pairs of predicates that exclude each other on the same arguments.
_EXCLUSIVE = {"closed": "opened", "opened": "closed"}


@dataclass
class ObserveReport:
    applied: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)   # "<literal>: <why>"


class Belief:
    """What the robot believes (a scene), on ``domain``."""

    def __init__(self, scene: Scene, domain: Domain):
        self.scene = scene.copy()
        self.domain = domain

    def copy(self) -> "Belief":
        return Belief(self.scene, self.domain)

    def task(self, goal=None) -> PlanningTask:
        return self.domain.build(self.scene, goal)

    def state(self) -> set[Atom]:
        return initial_state(self.task())

    def _set_state(self, task: PlanningTask, state: set[Atom]) -> None:
        after = state_to_scene(task, state)
        self.scene = after

    # -- updates -----------------------------------------------------------------------------
    def apply_steps(self, steps: Sequence) -> None:
        """Apply executed plan steps (PlanSteps) as their effects say."""
        if not steps:
            return
        task = self.task()
        state = initial_state(task)
        for s in steps:
            state = apply_step(task, state, s.action, task._map(s.agent) if s.agent else "",
                               tuple(task._map(a) for a in s.args), check=False)
        self._set_state(task, state)

    def observe(self, facts: Iterable[Literal]) -> ObserveReport:
        """Make observed literals true in the belief (a negated one: its atom false).
        Literals over predicates or objects the belief does not know are reported, not applied."""
        report = ObserveReport()
        facts = list(facts)
        if not facts:
            return report
        task = self.task()
        state = initial_state(task)
        known = set(task.object_types)
        for lit in facts:
            text = ("(not " if lit.negated else "") + lit.atom_text() + (")" if lit.negated else "")
            pdef = task.predicates.get(lit.predicate)
            if pdef is None:
                report.ignored.append(f"{text}: the domain has no predicate {lit.predicate}")
                continue
            if pdef.internal:
                report.ignored.append(f"{text}: {lit.predicate} follows from other facts")
                continue
            args = tuple(task._map(a) for a in lit.args)
            if len(args) != len(pdef.params) or not all(a in known for a in args):
                report.ignored.append(f"{text}: unknown object or wrong number of arguments")
                continue
            atom = (lit.predicate, *args)
            if lit.negated:
                state.discard(atom)
            else:
                if lit.predicate in _PLACEMENT:
                    obj = args[0]
                    state = {a for a in state if not (a[0] in _PLACEMENT and a[1] == obj)}
                    state = {a for a in state if not (a[0] == "located" and a[1] == obj)}
                    if lit.predicate != "inhand":  # reachable from where its holder is
                        state |= {("located", obj, a[2]) for a in list(state)
                                  if a[0] == "located" and a[1] == args[1]}
                other = _EXCLUSIVE.get(lit.predicate)
                if other:
                    state.discard((other, *args))
                state.add(atom)
            report.applied.append(text)
        self._set_state(task, state)
        return report

    def add_objects(self, scene_part: Scene) -> list[str]:
        """Add objects (with their relations and locations) the robot did not plan with."""
        added = []
        for name, obj in scene_part.objects.items():
            if name not in self.scene.objects:
                self.scene.add_object(obj)
                added.append(name)
        for rel in scene_part.relations:
            self.scene.add_relation(rel.predicate, *rel.args)
        for name, loc in scene_part.locations.items():
            mine = self.scene.locations.get(name)
            members = tuple(dict.fromkeys((*(mine.objects if mine else ()), *loc.objects)))
            self.scene.locations[name] = dataclasses.replace(loc, objects=members)
        return added

    # -- queries -----------------------------------------------------------------------------
    def applicable(self, step) -> tuple[bool, str]:
        """Is the step's full precondition true in the belief? (ok, validator message)"""

        task = self.task()
        ok, _cost, msg = validate_plan(task, [[]], [(step.action, tuple(task._map(a) for a in step.pddl_args))])
        return ok, msg

    def holds(self, lit: Literal) -> bool:
        task = self.task()
        atom = (lit.predicate, *(task._map(a) for a in lit.args))
        return (atom in initial_state(task)) != lit.negated


def _lost(memory, obj: str, holder: str) -> None:
    """``obj`` was seen not to be in or on ``holder``: if no placement of it is left, it leaves
    the location lists there (it is a known object whose place is unknown), and every other
    location counts as unexplored again: what was seen there came before the object moved, so
    the robot may look again (the tool loop explores only unexplored locations)."""
    if any(r.predicate in _PLACEMENT and r.args[:1] == (obj,) for r in memory.relations):
        return
    left = [loc for loc in memory.locations.values() if obj in loc.objects and (loc.name == holder
                                                                               or holder in loc.objects)]
    for loc in left:
        loc.objects = [o for o in loc.objects if o != obj]
    if left:
        for loc in memory.locations.values():
            if loc not in left:
                loc.explored = False


def observe_memory(memory, facts: Iterable[Literal]) -> list[str]:
    """Observed facts into the tool-selection memory (``core.model.memory.Memory``), stamped now as
    observed: an observed placement replaces the believed one (and the object's place in the
    location lists, which the planner's reachability then derives from what holds it); a
    negated fact is removed (a negated placement that leaves the object nowhere: ``_lost``);
    facts about unknown objects are skipped. Returns what was applied."""

    stamp = Stamp.now(Source.OBSERVATION)
    applied = []
    for lit in facts:
        if not all(a in memory.objects or a in memory.locations for a in lit.args) or lit.predicate == "hand_occupied":
            continue
        rel = Relation(lit.predicate, tuple(lit.args))
        memory.remove_relation(rel, stamp)
        if lit.negated and lit.predicate in _PLACEMENT and len(lit.args) == 2:
            _lost(memory, *lit.args)
        if not lit.negated:
            obj = lit.args[0] if lit.args else None
            if lit.predicate in _PLACEMENT and obj is not None:
                for placed in [r for r in memory.relations if r.predicate in _PLACEMENT and r.args[:1] == (obj,)]:
                    memory.remove_relation(placed, stamp)
                for loc in memory.locations.values():
                    loc.objects = [o for o in loc.objects if o != obj]
            other = _EXCLUSIVE.get(lit.predicate)
            if other:
                memory.remove_relation(Relation(other, tuple(lit.args)), stamp)
            memory.add_relation(rel, stamp)
        applied.append(("(not " if lit.negated else "") + lit.atom_text() + (")" if lit.negated else ""))
    return applied


def parse_condition(text: str):
    """A PDDL condition parsed (raises ValueError with the reason)."""
    try:
        return parse_sexpr(text)
    except GoalError as exc:
        raise ValueError(str(exc)) from exc
