"""The domain and scene a plan is made on, from the robot's model and what it knows.

One place for the steps both the recovery loop (runner.py) and the planning node take before
planning: the learned knowledge applied to the robot's model (preconditions, properties), the
learned properties' facts from the environment, and with a grounding provider (IALP) the
robot's grounding - its predicates guard the capabilities that need them, the scene holds
their facts as they are now (any earlier ones dropped first).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from affplan_ros.core.model.scene import Scene
from affplan_ros.core.recovery.belief import Domain
from affplan_ros.core.recovery.grounding import GroundingProvider, GroundingReport, ground_domain, load_grounding
from affplan_ros.core.recovery.knowledge import KnowledgeStore


@dataclass
class Problem:
    domain: Domain
    scene: Scene
    notes: list[str] = field(default_factory=list)      # knowledge that could not be applied, and why
    grounding: Optional[GroundingReport] = None          # None: no grounding asked


def prepare_problem(domain: Domain, knowledge: KnowledgeStore, scene: Scene,
                    environment: Optional[Callable[[Domain], object]] = None,
                    grounding: Optional[GroundingProvider] = None) -> Problem:
    """``environment(domain)``: what LASP's properties are read from (its ``properties()``), for
    the domain with the knowledge applied; asked only where a property was learned. ``scene`` is
    not changed."""
    domain, notes = knowledge.apply(domain)
    scene = scene.copy()
    env = environment(domain) if environment is not None and knowledge.properties else None
    env = env.properties() if env is not None else {}
    for rel in knowledge.property_relations(scene, env):
        scene.add_relation(rel.predicate, *rel.args)
    report = None
    if grounding is not None:
        domain, scene, report = ground_scene(domain, scene, grounding)
    return Problem(domain, scene, notes, report)


def ground_scene(domain: Domain, scene: Scene, grounding: GroundingProvider) -> tuple[Domain, Scene, GroundingReport]:
    """The robot's grounding on ``scene`` as it is now: the grounding facts it held before (an
    earlier answer) are dropped first."""
    names = set(load_grounding())
    scene = scene.copy()
    scene.relations = [r for r in scene.relations if r.predicate not in names]
    return ground_domain(domain, scene, grounding)
