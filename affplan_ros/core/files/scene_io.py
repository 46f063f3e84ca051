"""Readers for the AutoGPT+P evaluation format: scene files and scenario CSVs.

Scene files have OBJECTS / RELATIONS / LOCATIONS sections with ``class:id`` objects. The
original data contains typos (objects used in relations but never declared, misspelled
section ends, ...): those become warnings naming file and line, and reading goes on.
Only a file without the sections at all is rejected with :class:`SceneFormatError`.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.model.scene import (
    Location,
    Relation,
    Scene,
    SceneObject,
    object_name,
)

PathLike = Union[str, Path]

_SECTIONS = ("OBJECTS", "RELATIONS", "LOCATIONS")
_TOKEN = re.compile(r"^([A-Za-z0-9_][\w\-]*?):(\d+)$")
# Relations whose arguments are all scene objects; anything else is kept but warned about.
_KNOWN_PREDICATES = frozenset({
    "on", "in", "liquid_in", "at", "inhand", "opened", "closed", "warm", "liquid_warm",
    "wet", "chopped", "clean", "visited", "hand_occupied", "carried", "indirect_on", "free",
})


class SceneFormatError(ConfigError):
    """The file is not a scene file at all (structure, not content, is broken)."""

    def __init__(self, source: str, line: int, message: str):
        super().__init__(f"{source}:{line}: {message}")
        self.source, self.line, self.message = source, line, message


def parse_object_token(token: str) -> Optional[tuple[str, int]]:
    """``"cup:0"`` -> ``("cup", 0)``; None when the token is not ``class:id``."""
    m = _TOKEN.match(token.strip())
    return (m.group(1), int(m.group(2))) if m else None


def _to_name(token: str) -> str:
    parsed = parse_object_token(token)
    return object_name(*parsed) if parsed else token


def parse_scene_text(text: str, source: str = "<string>") -> Scene:
    scene = Scene(source=source)
    warn = scene.warnings.append
    lines = text.splitlines()
    found = {s for s in _SECTIONS if any(l.strip().upper() == s for l in lines)}
    if not found:
        raise SceneFormatError(source, 1, "no OBJECTS, RELATIONS or LOCATIONS section; "
                                          "is this an AutoGPT+P scene file?")
    for missing in sorted(set(_SECTIONS) - found):
        warn(f"{source}: section {missing} is missing (treated as empty)")

    section: Optional[str] = None
    pending_locations: list[tuple[int, str, list[str]]] = []
    pending_relations: list[tuple[int, str, list[str]]] = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#") or line.upper() == "SCENE-DESCRIPTION":
            continue
        upper = line.upper()
        if upper in _SECTIONS:
            if section is not None:
                warn(f"{source}:{lineno}: section {upper} starts before END-{section}")
            section = upper
            continue
        if upper.startswith("END"):
            expected = f"END-{section}" if section else None
            if upper != expected:
                warn(f"{source}:{lineno}: '{line}' does not close a section as expected "
                     f"({expected or 'no section open'})")
            section = None
            continue
        if section is None:
            warn(f"{source}:{lineno}: line outside any section ignored: {line!r}")
            continue
        if section == "OBJECTS":
            parsed = parse_object_token(line)
            if parsed is None:
                warn(f"{source}:{lineno}: object {line!r} is not of the form class:id; ignored")
                continue
            obj = SceneObject(*parsed)
            if obj.name in scene.objects:
                warn(f"{source}:{lineno}: object {line} declared twice")
            scene.add_object(obj)
        elif section == "RELATIONS":
            parts = line.split()
            pending_relations.append((lineno, parts[0], parts[1:]))
        else:
            parts = line.split()
            pending_locations.append((lineno, parts[0], parts[1:]))

    # Relations and locations are resolved after all objects are known, because some
    # files declare objects late; undeclared objects are added (with a warning) so that
    # the relation is not lost.
    def resolve(lineno: int, token: str) -> str:
        parsed = parse_object_token(token)
        if parsed is None:
            return token  # a bare name, e.g. a location written as table0
        name = object_name(*parsed)
        if name not in scene.objects:
            obj = SceneObject(*parsed)
            # Robots are never declared in the original files; that is not a typo.
            if not obj.is_agent:
                warn(f"{source}:{lineno}: {token} is used but not declared in OBJECTS; added")
            scene.add_object(obj)
        return name

    for lineno, pred, args in pending_relations:
        if pred not in _KNOWN_PREDICATES:
            warn(f"{source}:{lineno}: unknown relation {pred!r}")
        if not args:
            warn(f"{source}:{lineno}: relation {pred!r} without arguments ignored")
            continue
        rel = Relation(pred, tuple(resolve(lineno, a) for a in args))
        if rel in scene.relations:
            warn(f"{source}:{lineno}: duplicate relation {rel}")
            continue
        scene.relations.append(rel)
    for lineno, name, members in pending_locations:
        names = []
        for tok in members:
            n = resolve(lineno, tok)
            if n not in names:
                names.append(n)
        if name in scene.locations:
            warn(f"{source}:{lineno}: location {name} listed twice; merged")
            names = list(scene.locations[name].objects) + [n for n in names
                                                          if n not in scene.locations[name].objects]
        scene.locations[name] = Location(name, tuple(names))
    _check_consistency(scene)
    return scene


def _check_consistency(scene: Scene) -> None:
    warn, src = scene.warnings.append, scene.source
    listed: dict[str, list[str]] = {}
    for loc in scene.locations.values():
        for o in loc.objects:
            listed.setdefault(o, []).append(loc.name)
    for o, locs in listed.items():
        if len(locs) > 1:
            warn(f"{src}: {o} is listed under several locations: {', '.join(locs)}")
    # Objects listed under no location are resolved (or reported) by domain generation,
    # which can follow on/in relations to a located object.


def load_scene(path: PathLike) -> Scene:
    path = Path(path)
    return parse_scene_text(path.read_text(encoding="utf-8", errors="replace"), str(path))


# --------------------------------------------------------------------------------------
# Scenario CSVs


@dataclass
class ScenarioCase:
    """One row of a scenario CSV (both the planning and the tool-selection variant)."""

    task: str
    scene_file: str
    desired_goal: str
    min_costs: Optional[int] = None
    explored: Optional[str] = None
    substitutions_file: Optional[str] = None
    min_tool_calls: Optional[int] = None
    source: str = ""
    line: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


@dataclass
class ScenarioFile:
    cases: list[ScenarioCase]
    warnings: list[str]
    variant: str  # "planning" or "tool_selection"


_INT_FIELDS = ("min_costs", "min_tool_calls")


def read_scenarios(path: PathLike) -> ScenarioFile:
    path = Path(path)
    src = str(path)
    warnings: list[str] = []
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise SceneFormatError(src, 1, "empty scenario file") from None
        for required in ("task", "scene_file", "desired_goal"):
            if required not in header:
                raise SceneFormatError(src, 1, f"header lacks column {required!r}: {header}")
        variant = "tool_selection" if "explored" in header else "planning"
        cases: list[ScenarioCase] = []
        for lineno, row in enumerate(reader, 2):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                warnings.append(f"{src}:{lineno}: {len(row)} fields, header has {len(header)}")
                if len(row) < 3:
                    continue
            rec = dict(zip(header, (c.strip() for c in row)))
            case = ScenarioCase(task=rec.get("task", ""), scene_file=rec.get("scene_file", ""),
                                desired_goal=rec.get("desired_goal", ""), source=src, line=lineno)
            for f in _INT_FIELDS:
                val = rec.get(f)
                if val:
                    try:
                        setattr(case, f, int(float(val)))
                    except ValueError:
                        warnings.append(f"{src}:{lineno}: {f}={val!r} is not a number")
            case.explored = rec.get("explored") or None
            case.substitutions_file = rec.get("substitutions_file") or None
            case.extra = {k: v for k, v in rec.items()
                          if k not in {"task", "scene_file", "desired_goal", "explored",
                                       "substitutions_file", *_INT_FIELDS}}
            cases.append(case)
    return ScenarioFile(cases, warnings, variant)
