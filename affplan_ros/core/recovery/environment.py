"""The environment LASP asks on the running robot: what it perceived, and the properties its
knowledge can evaluate (ROS-free; the tool-selection node builds one per learning run).

LASP declares a new property ("microwavable") and takes its values from the most similar
property the environment knows. In the bench the scenario's world answers; on the robot the
:class:`SuiteEnvironment` does, from

* the memory: every object perceived (beyond the ones a problem was planned with) and the
  one-place facts it holds (``clean``, ``closed``, ...);
* the object-affordance mapping: each affordance of the perceived classes is a property
  (``heat-resistance``: true for the bowls and pots);
* the physical object table (the physics world's): what is fixed in place, a container,
  a liquid; and the static quantities (``quantities.py``): what the robot can lift (mass <=
  its configured lift capacity), what is hot (temperature above 50 degC);
* a knowledge base of declared properties (``environment_properties_file``, or the recovery
  scenario the suite runs, whose simulated world knows its hidden properties): per object or
  per class.

Declared properties come first: a property with the same name from another source does not
replace one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Union

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.files.settings import read_section
from affplan_ros.core.model.scene import Scene
from affplan_ros.core.recovery.knowledge import EnvironmentProperty
from affplan_ros.core.recovery.lasp import SceneEnvironment

HOT_C = 50.0   # degC: above this a thing is hot (burns a hand, softens thin plastic)


@dataclass(frozen=True)
class DeclaredProperty:
    """A property a knowledge base states: true for these objects and every object of these classes."""

    name: str
    description: str
    objects: frozenset = frozenset()
    classes: frozenset = frozenset()


def load_declared_properties(path: Union[str, Path]) -> dict[str, DeclaredProperty]:
    """``properties: {name: {description: ..., objects: [...], classes: [...]}}``; errors name the file."""
    path = Path(path)
    section = read_section(path, "properties", ConfigError, "environment properties",
                           "`properties: {name: {description, objects, classes}}`")
    out = {}
    for name, d in section.items():
        if not isinstance(d, Mapping) or not str(d.get("description", "")).strip():
            raise ConfigError(f"{path}: property {name}: a mapping with a description (and objects, classes)")
        lists = {}
        for key in ("objects", "classes"):
            v = d.get(key) or []
            if not isinstance(v, list):
                raise ConfigError(f"{path}: property {name}: {key} must be a list of names")
            lists[key] = frozenset(str(x) for x in v)
        out[str(name)] = DeclaredProperty(str(name), str(d["description"]), lists["objects"], lists["classes"])
    return out


def properties_from_scene(scene: Scene, *, oam=None, declared: Mapping[str, DeclaredProperty] = (),
                          quantities=None, object_table=None,
                          predicates: Mapping = ()) -> dict[str, EnvironmentProperty]:
    """The properties the robot's knowledge can evaluate on the things of ``scene``."""
    things = {n: o for n, o in scene.objects.items() if not o.is_agent}
    out: dict[str, EnvironmentProperty] = {}

    def put(name: str, description: str, true) -> None:
        if name not in out:
            out[name] = EnvironmentProperty(name, description, frozenset(true))

    for p in dict(declared or {}).values():
        put(p.name, p.description, [n for n, o in things.items() if n in p.objects or o.class_name in p.classes])
    # What memory holds: one-place facts.
    unary: dict[str, set] = {}
    for r in scene.relations:
        if len(r.args) == 1 and r.args[0] in things:
            unary.setdefault(r.predicate, set()).add(r.args[0])
    preds = dict(predicates or {})
    for name, true in sorted(unary.items()):
        pdef = preds.get(name)
        put(name, pdef.description if pdef is not None else f"?x is {name.replace('_', ' ')}", true)
    # The object-affordance mapping.
    if oam is not None:
        from affplan_ros.core.knowledge.affordances import load_affordances

        words = load_affordances()
        by_aff: dict[str, set] = {}
        for n, o in things.items():
            try:
                affs = oam.affordances_of(o.class_name)
            except Exception:  # noqa: BLE001 - a class the OAM does not know has no affordances
                affs = ()
            for a in affs:
                by_aff.setdefault(a, set()).add(n)
        for a, true in sorted(by_aff.items()):
            put(a, f"?x {words.description(a) or a.replace('-', ' ')}", true)
    # The physical object table (the physics world builds its bodies from it).
    if object_table is not None:
        known = {n: object_table.get(o.class_name) for n, o in things.items() if o.class_name in object_table}
        put("fixed", "?x is furniture or an appliance fixed in place; it cannot be carried",
            [n for n, p in known.items() if p.fixed])
        put("has_inner_space", "?x is a container with room inside it for other things",
            [n for n, p in known.items() if p.inner is not None])
        put("liquid", "?x is a liquid", [n for n, p in known.items() if p.liquid])
    # Static quantities.
    if quantities is not None:
        agents = [(n, o) for n, o in scene.objects.items() if o.is_agent and o.class_name == "robot"]
        if "mass" in quantities.defs and "lift_capacity" in quantities.defs and agents:
            cap = min((quantities.value("lift_capacity", n, o.class_name) or 0.0) for n, o in agents)
            light = [n for n, o in things.items()
                     if (m := quantities.value("mass", n, o.class_name)) is not None and m <= cap]
            put("liftable", f"?x is light enough for the robot to lift (at most {cap:g} kg)", light)
        if "temperature" in quantities.defs:
            hot = [n for n, o in things.items()
                   if (t := quantities.value("temperature", n, o.class_name)) is not None and t > HOT_C]
            put("hot", f"?x is hot (above {HOT_C:g} degC)", hot)
    return out


@dataclass
class SuiteEnvironment(SceneEnvironment):
    """A :class:`~.lasp.SceneEnvironment` over the memory's scene whose properties come from
    the robot's knowledge (see the module's docstring), computed when asked."""

    oam: object = None
    declared: Mapping[str, DeclaredProperty] = field(default_factory=dict)
    quantities: object = None
    object_table: object = None
    predicates: Mapping = field(default_factory=dict)

    def properties(self) -> dict[str, EnvironmentProperty]:
        props = properties_from_scene(self.scene, oam=self.oam, declared=self.declared, quantities=self.quantities,
                                      object_table=self.object_table, predicates=self.predicates)
        for name, prop in self.known_properties.items():
            props.setdefault(name, prop)     # declared properties are not replaced (module docstring)
        return props


@dataclass
class EnvironmentKnowledge:
    """What a node knows of the environment beyond its memory: the static quantities (table,
    robot configuration, measured values) and the declared properties."""

    quantities: object = None
    declared: Mapping[str, DeclaredProperty] = field(default_factory=dict)
    object_table: object = None

    def environment(self, scene: Scene, oam=None, predicates: Mapping = ()) -> SuiteEnvironment:
        if self.object_table is None:
            from affplan_ros.core.knowledge.objects import load_object_table

            self.object_table = load_object_table()
        return SuiteEnvironment(scene, oam=oam, declared=dict(self.declared), quantities=self.quantities,
                                object_table=self.object_table, predicates=dict(predicates or {}))
