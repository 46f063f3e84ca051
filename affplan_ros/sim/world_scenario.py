"""What the simulated robot's world starts from: a ground-truth scene plus what the robot knows.

Formats, chosen by the file:

* an AutoGPT+P scene file (``*.txt``, OBJECTS / RELATIONS / LOCATIONS): everything explored;
* the project's YAML (``*.yaml``)::

    description: The apple is in the closed fridge; the robot has only seen the table.
    scene: kitchen.txt              # an AutoGPT+P scene file, relative to this file, or inline:
    # objects:   [table:0, apple:0, robot:0, human:0]
    # relations: ["on apple:0 table:0", "at robot:0 table:0"]
    # locations: {table0: [table:0, apple:0]}
    explored: [table0, counter0]    # locations the robot has seen (default: all). Objects at the
                                    # others are hidden until the robot explores them.

* a recovery scenario (``sim/scenario.py``: ``id``, ``set``, ``scene``, ``belief``, ``hidden``
  ...): its ground-truth scene, everything explored; ``recovery`` holds the whole scenario, so
  the simulated world enforces its hidden rules (``ScenarioWorld``) and the memory starts from
  what the robot believes (:meth:`Scenario.memory_scene`).

The simulated world holds the whole scene (ground truth); the memory starts with the explored
part only, so a task may need the Explore tool.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import yaml

from affplan_ros.core.files.scene_io import (
    SceneFormatError,
    load_scene,
    parse_scene_text,
)
from affplan_ros.core.model.scene import Scene
from affplan_ros.sim.scenario import ScenarioError

PathLike = Union[str, Path]
_KEYS = {"description", "scene", "objects", "relations", "locations", "explored"}




@dataclass
class Scenario:
    scene: Scene
    explored: Optional[list[str]] = None      # None: every location is known
    description: str = ""
    source: str = ""
    hidden: list[str] = field(default_factory=list)   # objects the robot cannot know at the start
    recovery: object = None                   # the recovery scenario (sim/scenario.py), if it is one

    def memory_scene(self) -> Scene:
        """What the robot believes at the start (a recovery scenario may differ from the truth)."""
        return self.recovery.belief_scene() if self.recovery is not None else self.scene

    def explored_locations(self) -> list[str]:
        return list(self.scene.locations) if self.explored is None else list(self.explored)


def load_scenario(path: PathLike) -> Scenario:
    """A scene file (everything explored) or a YAML scenario; ScenarioError when malformed."""
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        try:
            return _finish(Scenario(load_scene(path), None, "", str(path)))
        except (OSError, SceneFormatError) as exc:
            raise ScenarioError(f"cannot read the scene file {path}: {exc}") from exc
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"cannot read the scenario {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping with `scene:` or `objects:`")
    if {"id", "set", "belief", "hidden"} & set(data):
        from affplan_ros.sim import scenario as recovery

        try:
            full = recovery.load_scenario(path)
            return _finish(Scenario(full.truth, None, str(data.get("title", "")), str(path), recovery=full))
        except recovery.ScenarioError as exc:
            raise ScenarioError(str(exc)) from exc
    unknown = set(data) - _KEYS
    if unknown:
        raise ScenarioError(f"{path}: unknown keys {sorted(unknown)} (known: {sorted(_KEYS)})")
    try:
        if data.get("scene"):
            scene = load_scene(path.parent / str(data["scene"]))
        elif data.get("objects"):
            locations = data.get("locations") or {}
            text = "\n".join(["OBJECTS", *map(str, data["objects"]), "END-OBJECTS",
                              "RELATIONS", *map(str, data.get("relations") or []), "END-RELATIONS",
                              "LOCATIONS", *(f"{n} {' '.join(map(str, objs))}" for n, objs in locations.items()),
                              "END-LOCATIONS"])
            scene = parse_scene_text(text, str(path))
        else:
            raise ScenarioError(f"{path}: give `scene:` (a scene file) or `objects:` (inline)")
    except (OSError, SceneFormatError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    explored = data.get("explored")
    if explored is not None:
        if isinstance(explored, str) or not isinstance(explored, list):
            raise ScenarioError(f"{path}: `explored` must be a list of location names")
        explored = [str(x) for x in explored]
        missing = [x for x in explored if x not in scene.locations]
        if missing:
            raise ScenarioError(f"{path}: explored locations {missing} are not locations of the scene "
                                f"({', '.join(sorted(scene.locations))})")
    return _finish(Scenario(scene, explored, str(data.get("description", "")), str(path)))


def _finish(scenario: Scenario) -> Scenario:
    known = set(scenario.explored_locations())
    scenario.hidden = sorted(o for name, loc in scenario.scene.locations.items() if name not in known
                             for o in loc.objects if o != name)
    return scenario
