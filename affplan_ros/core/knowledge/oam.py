"""Object-affordance mapping (OAM): which affordances each object class offers.

Formats read:
* ours (YAML or JSON): ``{"name": ..., "classes": {class: [affordance, ...]}}``
* AutoGPT+P's JSON: ``{"oams": [{"object": class, "affordances": [{"name": a}, ...]}]}``
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Union

import yaml

from affplan_ros.core.errors import AffplanError, ConfigError

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_OAM = DATA_DIR / "oam_kitchen.yaml"


class UnknownClassError(AffplanError, KeyError):
    """An object class the OAM knows nothing about."""

    def __init__(self, class_name: str, known: Iterable[str] = ()):
        known = sorted(known)
        hint = ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
        msg = (f"object class {class_name!r} is not in the object-affordance mapping"
               f"{'; known classes: ' + hint if hint else ''}. Add it to the OAM (or let an "
               f"LLM propose its affordances) before planning with it.")
        super().__init__(msg)
        self.class_name = class_name
        self.message = msg

    def __str__(self) -> str:  # KeyError would otherwise print the repr
        return self.message


class OamFormatError(ConfigError):
    """An OAM file that cannot be read as one: bad YAML/JSON or a malformed entry."""


@dataclass
class OamDatabase:
    mapping: dict[str, frozenset[str]] = field(default_factory=dict)
    name: str = ""

    # -- lookups -------------------------------------------------------------------------
    def __contains__(self, class_name: object) -> bool:
        return class_name in self.mapping

    def classes(self) -> list[str]:
        return sorted(self.mapping)

    def affordances_of(self, class_name: str) -> frozenset[str]:
        try:
            return self.mapping[class_name]
        except KeyError:
            raise UnknownClassError(class_name, self.mapping) from None

    def classes_with(self, affordance: str) -> list[str]:
        """Reverse lookup: every class that offers ``affordance``."""
        return sorted(c for c, affs in self.mapping.items() if affordance in affs)

    def has(self, class_name: str, affordance: str) -> bool:
        return affordance in self.affordances_of(class_name)

    # -- editing -------------------------------------------------------------------------
    def add_class(self, class_name: str, affordances: Iterable[str]) -> None:
        self.mapping[class_name] = frozenset(affordances)

    def merged(self, other: "OamDatabase") -> "OamDatabase":
        """A copy where ``other`` adds classes and overrides classes both define."""
        return OamDatabase({**self.mapping, **other.mapping}, self.name or other.name)

    def to_dict(self) -> dict:
        return {"name": self.name, "classes": {c: sorted(a) for c, a in sorted(self.mapping.items())}}

    @classmethod
    def from_dict(cls, data: Mapping, name: str = "", source: str = "") -> "OamDatabase":
        """The OAM of either format; a malformed one raises :class:`OamFormatError` naming
        ``source`` (the file) and the bad entry."""
        where = source or "the object-affordance mapping"
        if not isinstance(data, Mapping):
            raise OamFormatError(f"{where}: expected a mapping with 'classes' (or AutoGPT+P's 'oams'), "
                                 f"got {_kind(data)}")
        if "oams" in data:  # AutoGPT+P format
            entries = data["oams"]
            if not isinstance(entries, list):
                raise OamFormatError(f"{where}: 'oams' must be a list of {{object, affordances}} entries, "
                                     f"got {_kind(entries)}")
            mapping = {}
            for i, entry in enumerate(entries):
                if not isinstance(entry, Mapping) or "object" not in entry:
                    raise OamFormatError(f"{where}: oams[{i}] must be a mapping with 'object' and 'affordances', "
                                         f"got {_kind(entry)}")
                c = _class_name(entry["object"], f"{where}: oams[{i}].object")
                affs = entry.get("affordances") or []
                mapping[c] = _affordances([a["name"] if isinstance(a, Mapping) and "name" in a else a
                                           for a in affs] if isinstance(affs, list) else affs,
                                          f"{where}: oams[{i}] ({c})")
            return cls(mapping, name)
        classes = data.get("classes") or {}
        if not isinstance(classes, Mapping):
            raise OamFormatError(f"{where}: 'classes' must map class names to lists of affordances, "
                                 f"got {_kind(classes)}")
        mapping = {}
        for c, affs in classes.items():
            c = _class_name(c, f"{where}: class")
            mapping[c] = _affordances(affs or [], f"{where}: class {c!r}")
        return cls(mapping, str(data.get("name", name)))


# Affordances become predicate names (aff_<affordance>): PDDL names. Class names are looser
# (the AutoGPT+P files have "7up" and "Coffee Table"; the domain makes PDDL names of them).
_AFFORDANCE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_CLASS_RE = re.compile(r"[^\x00-\x1f\x7f]+")


def _kind(value: object) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def _class_name(value: object, where: str) -> str:
    if not isinstance(value, str):   # YAML reads yes/no/on/off/null/1 as other types
        raise OamFormatError(f"{where} {value!r} is not a name (a {type(value).__name__}); quote it")
    if not value.strip() or value != value.strip() or not _CLASS_RE.fullmatch(value):
        raise OamFormatError(f"{where} {value!r} is not a class name")
    return value


def _affordances(value: object, where: str) -> frozenset[str]:
    if not isinstance(value, list):
        hint = f"; write [{value}]" if isinstance(value, str) else ""
        raise OamFormatError(f"{where}: expected a list of affordance names, got {_kind(value)}{hint}")
    for a in value:
        if not isinstance(a, str) or not _AFFORDANCE_RE.fullmatch(a):
            quote = "; quote it" if a is None or isinstance(a, (bool, int, float)) else ""
            raise OamFormatError(f"{where}: {a!r} is not an affordance name (letters, digits, '_' and '-', "
                                 f"starting with a letter{quote})")
    return frozenset(value)


def load_oam(path: Union[str, Path, None] = None) -> OamDatabase:
    """The OAM in ``path`` (default: the built-in kitchen). A file that is no OAM raises
    :class:`OamFormatError` (a ValueError) naming it; a missing one OSError."""
    path = Path(path) if path else DEFAULT_OAM
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:   # JSONDecodeError, UnicodeDecodeError: ValueErrors
        fmt = "JSON" if path.suffix == ".json" else "YAML"
        raise OamFormatError(f"{path}: not valid {fmt} (UTF-8): {exc}") from exc
    return OamDatabase.from_dict(data or {}, name=path.stem, source=str(path))


def save_oam(oam: OamDatabase, path: Union[str, Path]) -> None:
    Path(path).write_text(yaml.safe_dump(oam.to_dict(), sort_keys=False), encoding="utf-8")
