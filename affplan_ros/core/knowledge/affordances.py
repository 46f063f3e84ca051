"""Affordance definitions (name + description), loaded from data files.

Reads the project's YAML (``data/affordances.yaml``) and the AutoGPT+P JSON format
(``{"affordance_types": [{"name", "description", ...}]}``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

import yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_AFFORDANCES = DATA_DIR / "affordances.yaml"


@dataclass(frozen=True)
class Affordance:
    name: str
    description: str = ""


class AffordanceSet:
    """An ordered collection of affordances with lookup by name."""

    def __init__(self, affordances: Iterable[Affordance]):
        self._by_name: dict[str, Affordance] = {}
        for a in affordances:
            self._by_name[a.name] = a

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> list[str]:
        return list(self._by_name)

    def get(self, name: str) -> Optional[Affordance]:
        return self._by_name.get(name)

    def description(self, name: str) -> str:
        a = self._by_name.get(name)
        return a.description if a else ""


def load_affordances(path: Union[str, Path, None] = None) -> AffordanceSet:
    """Load affordances from our YAML or the original JSON (chosen by content)."""
    path = Path(path) if path else DEFAULT_AFFORDANCES
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    items = data.get("affordances") or data.get("affordance_types") or []
    return AffordanceSet(Affordance(str(i["name"]), str(i.get("description", "")).strip())
                         for i in items)
