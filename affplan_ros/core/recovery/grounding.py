"""IALP's grounding predicates behind a provider protocol.

The robot computes facts the symbolic scene cannot know - is the cup detected, graspable,
reachable; is there room on the plate - and they enter the planner's state as predicates
guarding the capabilities that need them (``core/recovery/data/grounding.yaml``), so the plans are
feasible for this robot. Providers:

* the simulated world answers from its ground truth (``affplan_ros.sim.recovery_world``);
* :class:`CallbackGrounding` wraps a real robot's functions (MoveIt IK for ``reachable``,
  the perception node's detections for ``detected``); the robot backends supply them;
* :class:`UnavailableGrounding` is what a robot without them has: every predicate is "not
  available" with the reason, and :func:`ground_domain` then leaves it out of the domain
  (plans are not checked for it) and reports that - it never pretends a fact is known.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Protocol, Sequence, Union

import yaml

from affplan_ros.core.model.predicates import PredicateDef
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.recovery.belief import Domain, add_precondition

DATA_DIR = Path(__file__).resolve().parent / "data"

DEFAULT_GROUNDING = DATA_DIR / "grounding.yaml"


@dataclass(frozen=True)
class GroundingPredicate:
    name: str
    params: tuple[tuple[str, str], ...]
    description: str
    source: str
    guards: Mapping[str, str]   # capability -> precondition literal over its parameters
    failure: str = ""           # the reason a skill gives when it is false (?variables)

    def failure_text(self, *args: str) -> str:
        text = self.failure or f"it is not the case that {self.description}"
        for (var, _t), a in zip(self.params, args):
            text = text.replace(f"?{var}", a)
        return text

    def predicate(self) -> PredicateDef:
        # Not `internal` (build_task ignores scene relations of internal predicates), but the
        # description tells the goal writer to leave it alone, as for hand_occupied.
        return PredicateDef(self.name, self.params, f"do not use this predicate in goals ({self.description})")


def load_grounding(path: Union[str, Path, None] = None) -> dict[str, GroundingPredicate]:
    path = Path(path) if path else DEFAULT_GROUNDING
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = {}
    for name, d in (data.get("grounding") or {}).items():
        out[name] = GroundingPredicate(name, tuple((str(v), str(t)) for v, t in d["params"]),
                                       str(d.get("description", "")), str(d.get("source", "")),
                                       {str(k): str(v) for k, v in (d.get("guards") or {}).items()},
                                       str(d.get("failure", "")))
    return out


@dataclass(frozen=True)
class GroundingAnswer:
    predicate: str
    available: bool
    true: frozenset[tuple[str, ...]] = frozenset()   # argument tuples for which it holds
    reason: str = ""                                  # why it is not available


class GroundingProvider(Protocol):
    def ground(self, predicate: GroundingPredicate, candidates: Sequence[tuple[str, ...]]) -> GroundingAnswer:
        """Which of ``candidates`` (argument tuples) the predicate holds for, or not available."""
        ...


@dataclass
class UnavailableGrounding:
    """A robot without grounding functions: nothing is available, and it says why."""

    reason: str = ("no grounding functions are connected (real robots: the robot backend provides "
                   "MoveIt IK for reachable and the perception node's detections for detected)")

    def ground(self, predicate: GroundingPredicate, candidates) -> GroundingAnswer:
        return GroundingAnswer(predicate.name, False, reason=f"{predicate.name}: {self.reason}")


@dataclass
class CallbackGrounding:
    """Grounding from per-predicate functions ``f(*args) -> bool`` (e.g. an IK query).

    A predicate without a function is not available; a function that raises makes its
    predicate not available for this query, with the error as the reason."""

    functions: Mapping[str, Callable[..., bool]] = field(default_factory=dict)

    def ground(self, predicate: GroundingPredicate, candidates) -> GroundingAnswer:
        fn = self.functions.get(predicate.name)
        if fn is None:
            return GroundingAnswer(predicate.name, False, reason=f"{predicate.name}: no function connected "
                                                                 f"({predicate.source})")
        try:
            true = frozenset(tuple(c) for c in candidates if fn(*c))
        except Exception as exc:  # noqa: BLE001 - a robot-side failure: said, not fatal
            return GroundingAnswer(predicate.name, False, reason=f"{predicate.name}: {type(exc).__name__}: {exc}")
        return GroundingAnswer(predicate.name, True, true)


@dataclass
class GroundingReport:
    available: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)   # reasons
    false_facts: list[str] = field(default_factory=list)   # e.g. "(reachable cup0) is false"

    def text(self) -> str:
        parts = []
        if self.available:
            parts.append("grounding predicates used: " + ", ".join(self.available))
        if self.false_facts:
            parts.append("not feasible: " + ", ".join(self.false_facts))
        if self.unavailable:
            parts.append("not available: " + "; ".join(self.unavailable))
        return ". ".join(parts) or "no grounding"


def _candidates(domain: Domain, scene: Scene, gp: GroundingPredicate) -> list[tuple[str, ...]]:
    """Argument tuples worth asking about: non-agent objects having the parameter's type."""
    if len(gp.params) != 1:
        return []  # only unary grounding predicates are defined
    want = gp.params[0][1]

    def fits(name: str) -> bool:
        o = scene.objects[name]
        affs = set(o.affordances or (domain.oam.affordances_of(o.class_name) if o.class_name in domain.oam else ()))
        return want == "object" or want in affs or want == o.class_name

    return [(n,) for n, o in sorted(scene.objects.items()) if not o.is_agent and fits(n)]


def ground_domain(domain: Domain, scene: Scene, provider: Optional[GroundingProvider],
                  predicates: Optional[Mapping[str, GroundingPredicate]] = None,
                  use: Optional[Sequence[str]] = None) -> tuple[Domain, Scene, GroundingReport]:
    """The domain with the available grounding predicates as guards, and the scene with their
    facts. ``use``: which predicates to ask for (default: all defined)."""
    predicates = dict(predicates if predicates is not None else load_grounding())
    report = GroundingReport()
    if provider is None:
        provider = UnavailableGrounding()
    scene = scene.copy()
    for name in (use if use is not None else list(predicates)):
        gp = predicates.get(name)
        if gp is None:
            raise KeyError(f"unknown grounding predicate {name!r} (defined: {', '.join(predicates)})")
        cands = _candidates(domain, scene, gp)
        answer = provider.ground(gp, cands)
        if not answer.available:
            report.unavailable.append(answer.reason)
            continue
        if gp.name not in domain.predicates:  # grounding again (new objects) adds only facts
            domain = domain.with_predicate(gp.predicate())
            for cap_name, guard in gp.guards.items():
                if cap_name in domain.capabilities:
                    domain.capabilities[cap_name] = add_precondition(domain.capabilities[cap_name], guard)
        for args in cands:
            if args in answer.true:
                scene.add_relation(gp.name, *args)
            else:
                report.false_facts.append(f"({gp.name} {' '.join(args)})")
        report.available.append(name)
    return domain, scene, report


# -- grounding across a process boundary (the node suite) -----------------------------------------
# The robot's provider runs where the robot is (the simulated world's node, a real robot's
# backend); the planner asks it once per plan. `judge` turns a provider into plain facts that
# can travel (every predicate, every object the robot knows), and `FactGrounding` answers the
# planner's queries from those facts.

@dataclass
class GroundingFacts:
    """What a provider said about every predicate: judged facts and why others are unknown."""

    facts: dict[tuple[str, tuple[str, ...]], bool] = field(default_factory=dict)  # (predicate, args) -> holds
    unavailable: dict[str, str] = field(default_factory=dict)                      # predicate -> why


def judge(provider: GroundingProvider, objects: Sequence[str],
          predicates: Optional[Mapping[str, GroundingPredicate]] = None) -> GroundingFacts:
    """Ask ``provider`` about every (unary) grounding predicate for every one of ``objects``."""
    predicates = predicates if predicates is not None else load_grounding()
    out = GroundingFacts()
    cands = [(o,) for o in objects]
    for name, gp in predicates.items():
        if len(gp.params) != 1:
            continue
        answer = provider.ground(gp, cands)
        if not answer.available:
            out.unavailable[name] = answer.reason or f"{name}: not available"
            continue
        for c in cands:
            out.facts[(name, c)] = c in answer.true
    return out


@dataclass
class FactGrounding:
    """A provider answering from :class:`GroundingFacts` (e.g. what the robot's node sent).

    A predicate the facts say nothing about is not available; an object the robot did not judge
    does not hold (the planner will not count on a fact nobody established)."""

    known: GroundingFacts

    def ground(self, predicate: GroundingPredicate, candidates) -> GroundingAnswer:
        name = predicate.name
        if name in self.known.unavailable:
            return GroundingAnswer(name, False, reason=self.known.unavailable[name])
        if not any(p == name for p, _ in self.known.facts):
            return GroundingAnswer(name, False, reason=f"{name}: the robot's grounding said nothing about it")
        return GroundingAnswer(name, True, frozenset(tuple(c) for c in candidates
                                                     if self.known.facts.get((name, tuple(c)), False)))
