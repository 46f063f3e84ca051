"""Object-affordance mapping (OAM): which affordances each object class offers.

Formats read:
* ours (YAML or JSON): ``{"name": ..., "classes": {class: [affordance, ...]}}``
* AutoGPT+P's JSON: ``{"oams": [{"object": class, "affordances": [{"name": a}, ...]}]}``
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Union

import yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_OAM = DATA_DIR / "oam_kitchen.yaml"


class UnknownClassError(KeyError):
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
    def from_dict(cls, data: Mapping, name: str = "") -> "OamDatabase":
        if "oams" in data:  # AutoGPT+P format
            mapping = {}
            for entry in data["oams"]:
                mapping[str(entry["object"])] = frozenset(
                    str(a["name"]) if isinstance(a, Mapping) else str(a)
                    for a in entry.get("affordances", []))
            return cls(mapping, name)
        classes = data.get("classes", {})
        return cls({str(c): frozenset(map(str, a or [])) for c, a in classes.items()},
                   str(data.get("name", name)))


def load_oam(path: Union[str, Path, None] = None) -> OamDatabase:
    path = Path(path) if path else DEFAULT_OAM
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    return OamDatabase.from_dict(data or {}, name=path.stem)


def save_oam(oam: OamDatabase, path: Union[str, Path]) -> None:
    Path(path).write_text(yaml.safe_dump(oam.to_dict(), sort_keys=False), encoding="utf-8")
