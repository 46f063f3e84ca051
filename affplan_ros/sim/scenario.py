"""The project's own scenario format (YAML): a scene plus the ground truth the robot lacks.

::

    id: lasp_store_fruit_1
    set: lasp                     # lasp | copal (which paper's cases; also sets the default method)
    family: store fruit           # the task family (LASP's four, or CoPAL's kitchen / barman)
    title: "..."                  # one line for tables
    task: "put the apple into the refrigerator"
    goal: "(in apple0 refrigerator0)"   # success: the world satisfies it at the end
    oam: {sandwich: [grasp, carry, consumable]}   # classes added to the project's OAM
    capabilities: {heat_food: {...}}              # capabilities added (capabilities.yaml format)
    scene: |                      # the ground truth, in the AutoGPT+P scene format
      OBJECTS ...
    belief:                       # where the robot's knowledge differs from the truth
      unknown_objects: [plate1]   # in the environment but not in the planning problem
      unknown_relations: ["inhand sponge0 robot0"]   # true, but not believed
      wrong_relations: ["on sponge0 counter0"]       # believed, but false
    hidden:                       # what the robot's domain lacks
      preconditions:              # enforced by the world; removed from the robot's domain when
        - action: putin           # the default capability has the conjunct, else world-only
          condition: "(not (closed ?in))"
          why: "?in is closed"                  # optional, ?variables filled in
          suggestion: "open ?in first"          # optional
      properties:                 # object properties the environment knows, the domain does not
        microwave_safe: {description: "...", "true": [bowl0]}
      unreachable: {cup0: "it stands at the back of the top shelf"}   # also: ungraspable,
                                  # undetected, full (the grounding predicates' ground truth)
    quantities:                   # static quantities the world measures (over the table of
      mass: {melon0: 4.5}         # core/recovery/data/quantities.yaml); the robot knows them too,
      temperature: {pot0: 90}     # a hidden precondition may compare them:
                                  #   "(<= (mass ?object) (lift_capacity ?actor))"
    expect: {missing: [precondition], knowledge: ["putin requires (not (closed ?in))"]}

Relation edits and names use the PDDL names (``cup0``). Errors name the file and the field.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Union

import yaml

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.core.goals.errors import GoalError
from affplan_ros.core.goals.extraction import parse_goal
from affplan_ros.core.goals.formula import to_dnf
from affplan_ros.core.knowledge.capabilities import (
    Capability,
    _capability_from_mapping,
    load_capabilities,
)
from affplan_ros.core.knowledge.oam import OamDatabase, load_oam
from affplan_ros.core.model.scene import Relation, Scene
from affplan_ros.core.recovery.belief import (
    Domain,
    parse_condition,
    remove_precondition,
)
from affplan_ros.core.recovery.quantities import (
    Quantities,
    QuantityError,
    compile_condition,
    load_quantities,
)

GROUNDING_TRUTH = {"unreachable": "reachable", "ungraspable": "graspable", "undetected": "detected",
                   "full": "placeable"}
SETS = ("lasp", "copal")


class ScenarioError(ConfigError):
    """A scenario file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class HiddenRule:
    action: str
    condition: str
    why: str = ""
    suggestion: str = ""
    in_domain: bool = False      # removed from the robot's domain (the default capability has it)


@dataclass(frozen=True)
class HiddenProperty:
    name: str
    description: str
    true: frozenset[str]


@dataclass
class Scenario:
    id: str
    set: str
    family: str
    title: str
    task: str
    goal: str
    truth: Scene
    oam: OamDatabase
    capabilities: dict[str, Capability]          # the world's (full) capabilities
    hidden: list[HiddenRule] = field(default_factory=list)
    properties: dict[str, HiddenProperty] = field(default_factory=dict)
    grounding_false: dict[str, dict[str, str]] = field(default_factory=dict)  # predicate -> object -> why
    unknown_objects: list[str] = field(default_factory=list)
    unknown_relations: list[Relation] = field(default_factory=list)
    wrong_relations: list[Relation] = field(default_factory=list)
    expect: dict = field(default_factory=dict)
    description: str = ""
    path: str = ""
    quantities: Optional[Quantities] = None      # the table's, with what this world measures

    @property
    def goal_dnf(self):
        return to_dnf(parse_goal(self.goal))

    def robot_domain(self) -> Domain:
        """The robot's model: the world's capabilities without the hidden preconditions."""
        caps = dict(self.capabilities)
        for rule in self.hidden:
            if rule.in_domain:
                caps[rule.action] = remove_precondition(caps[rule.action], rule.condition)
        domain = Domain.default(self.oam, caps)
        domain.quantities = self.quantities
        return domain

    def world_rules(self) -> list[HiddenRule]:
        """Hidden preconditions the world must check itself (not in its capabilities)."""
        return [r for r in self.hidden if not r.in_domain]

    def belief_scene(self) -> Scene:
        """What the robot believes at the start."""
        unknown = set(self.unknown_objects)
        keep = [n for n in self.truth.objects if n not in unknown]
        scene = self.truth.subset(keep)
        drop = {(r.predicate, r.args) for r in self.unknown_relations}
        scene.relations = [r for r in scene.relations if (r.predicate, r.args) not in drop]
        for r in self.wrong_relations:
            scene.add_relation(r.predicate, *r.args)
        scene.source = f"{self.id} (belief)"
        return scene


def _relation(text: str, where: str) -> Relation:
    parts = str(text).replace("(", " ").replace(")", " ").split()
    if len(parts) < 2:
        raise ScenarioError(f"{where}: {text!r} is not a relation such as 'on cup0 table0'")
    return Relation(parts[0], tuple(parts[1:]))


def load_scenario(path: Union[str, Path], base_oam: Optional[OamDatabase] = None,
                  base_capabilities: Optional[Mapping[str, Capability]] = None) -> Scenario:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"cannot read scenario {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping (id, task, goal, scene, ...)")

    def need(key: str):
        if not data.get(key):
            raise ScenarioError(f"{path}: field {key!r} is missing")
        return data[key]

    sid = str(need("id"))
    where = f"{path} ({sid})"
    sset = str(data.get("set", "copal"))
    if sset not in SETS:
        raise ScenarioError(f"{where}: set must be one of {', '.join(SETS)}, not {sset!r}")
    try:
        truth = parse_scene_text(str(need("scene")), f"{sid}")
    except ValueError as exc:
        raise ScenarioError(f"{where}: scene: {exc}") from exc
    oam = base_oam if base_oam is not None else load_oam()
    extra = data.get("oam") or {}
    if extra:
        oam = oam.merged(OamDatabase.from_dict({"classes": extra}, name=f"{sid}-oam"))
    caps = dict(base_capabilities) if base_capabilities is not None else load_capabilities()
    for name, d in (data.get("capabilities") or {}).items():
        try:
            caps[str(name)] = _capability_from_mapping(str(name), d)
        except (KeyError, ValueError, TypeError) as exc:
            raise ScenarioError(f"{where}: capabilities.{name}: {exc}") from exc
    goal = str(need("goal"))
    try:
        to_dnf(parse_goal(goal))
    except GoalError as exc:
        raise ScenarioError(f"{where}: goal: {exc}") from exc
    try:
        quantities = load_quantities()
        measured = data.get("quantities") or {}
        if not isinstance(measured, dict) or not all(isinstance(v, dict) for v in measured.values()):
            raise QuantityError("quantities: expected quantity -> {object: number}")
        bad = sorted({o for v in measured.values() for o in v} - set(truth.objects))
        if bad:
            raise QuantityError(f"quantities: unknown objects {bad}")
        quantities = quantities.with_values(measured, "quantities")
    except QuantityError as exc:
        raise ScenarioError(f"{where}: {exc}") from exc
    hidden_data = data.get("hidden") or {}
    hidden = []
    for i, h in enumerate(hidden_data.get("preconditions") or []):
        action, cond = str(h.get("action", "")), str(h.get("condition", ""))
        if action not in caps:
            raise ScenarioError(f"{where}: hidden.preconditions[{i}]: unknown action {action!r}")
        try:
            comparisons = compile_condition(parse_condition(cond))[1]
        except ValueError as exc:   # (a malformed comparison too: QuantityError)
            raise ScenarioError(f"{where}: hidden.preconditions[{i}]: {exc}") from exc
        unknown_q = sorted({q for c in comparisons for q, _v in c.terms()} - set(quantities.defs))
        if unknown_q:
            raise ScenarioError(f"{where}: hidden.preconditions[{i}]: unknown quantities {unknown_q} "
                                f"(known: {quantities.describe()})")
        try:
            remove_precondition(caps[action], cond)
            in_domain = True
        except KeyError:
            in_domain = False
        hidden.append(HiddenRule(action, cond, str(h.get("why", "")), str(h.get("suggestion", "")), in_domain))
    props = {}
    for name, p in (hidden_data.get("properties") or {}).items():
        true = frozenset(str(x) for x in (p.get("true", p.get(True)) or []))  # YAML reads true: as a bool
        bad = true - set(truth.objects)
        if bad:
            raise ScenarioError(f"{where}: hidden.properties.{name}: unknown objects {sorted(bad)}")
        props[str(name)] = HiddenProperty(str(name), str(p.get("description", "")), true)
    grounding_false = {}
    for key, pred in GROUNDING_TRUTH.items():
        entries = hidden_data.get(key) or {}
        if isinstance(entries, list):
            entries = {str(x): "" for x in entries}
        bad = set(entries) - set(truth.objects)
        if bad:
            raise ScenarioError(f"{where}: hidden.{key}: unknown objects {sorted(bad)}")
        if entries:
            grounding_false[pred] = {str(k): str(v or "") for k, v in entries.items()}
    belief = data.get("belief") or {}
    unknown = [str(x) for x in belief.get("unknown_objects") or []]
    bad = set(unknown) - set(truth.objects)
    if bad:
        raise ScenarioError(f"{where}: belief.unknown_objects: unknown objects {sorted(bad)}")
    return Scenario(
        id=sid, set=sset, family=str(data.get("family", "")), title=str(data.get("title", sid)),
        task=str(need("task")), goal=goal, truth=truth, oam=oam, capabilities=caps, hidden=hidden,
        properties=props, grounding_false=grounding_false, unknown_objects=unknown,
        unknown_relations=[_relation(r, f"{where}: belief.unknown_relations")
                           for r in belief.get("unknown_relations") or []],
        wrong_relations=[_relation(r, f"{where}: belief.wrong_relations") for r in belief.get("wrong_relations") or []],
        expect=dict(data.get("expect") or {}), description=str(data.get("description", "")), path=str(path),
        quantities=quantities)


def load_scenarios(directory: Union[str, Path], sets: Optional[set[str]] = None) -> list[Scenario]:
    """Every ``*.yaml`` scenario of ``directory`` (sorted by id), optionally only some sets."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ScenarioError(f"scenario folder {directory} not found")
    base_oam, base_caps = load_oam(), load_capabilities()
    out = []
    for p in sorted(directory.glob("*.yaml")):
        head = yaml.safe_load(p.read_text(encoding="utf-8"))
        if not isinstance(head, dict) or "scene" not in head:
            continue  # not a scenario (e.g. the scripted answers file)
        s = load_scenario(p, base_oam, base_caps)
        if sets is None or s.set in sets:
            out.append(s)
    return sorted(out, key=lambda s: s.id)


def robot_capabilities(path: Union[str, Path, None]) -> dict[str, Capability]:
    """The robot's planning model, as the nodes' ``capabilities_file`` parameter names it: a
    capabilities file (``capabilities: {name: ...}``; None or "" = the built-in set) or a
    recovery scenario, whose robot lacks the scenario's hidden preconditions
    (:meth:`Scenario.robot_domain`) - so the suite reproduces the case and can learn them."""
    if not path:
        return load_capabilities()
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"cannot read the capabilities file {path}: {exc}") from exc
    if _is_recovery(data):
        return load_scenario(path).robot_domain().capabilities
    return load_capabilities(path)


def _is_recovery(data) -> bool:
    return isinstance(data, dict) and bool({"id", "set", "hidden"} & set(data))


def is_recovery_scenario(path: Union[str, Path]) -> bool:
    """Whether ``path`` is a recovery scenario (hidden ground truth, a robot model of its own),
    not an AutoGPT+P scene file or a plain YAML world."""
    path = Path(path)
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        return _is_recovery(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError):
        return False


def scenario_environment(path: Union[str, Path, None]) -> tuple[dict, dict]:
    """What the simulated world of a recovery scenario knows beyond the robot's model, as the
    suite's environment knowledge: (declared properties by name, measured quantities
    {quantity: {object: value}}); ({}, {}) for anything that is not a recovery scenario."""
    from affplan_ros.core.recovery.environment import DeclaredProperty

    if not path or not is_recovery_scenario(path):
        return {}, {}
    sc = load_scenario(path)
    props = {n: DeclaredProperty(n, p.description, p.true) for n, p in sc.properties.items()}
    return props, ({q: dict(v) for q, v in sc.quantities.objects.items()} if sc.quantities is not None else {})
