"""The predicates a belief may use: name, typed parameters and a description, as data
(``data/predicates.yaml``). The planner's domain, the memory's checks and recovery read them here."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

DEFAULT_PREDICATES = Path(__file__).resolve().parent / "data" / "predicates.yaml"


@dataclass(frozen=True)
class PredicateDef:
    name: str
    params: tuple[tuple[str, str], ...]  # (variable, affordance/builtin type)
    description: str
    internal: bool = False


def load_predicates(path: Optional[Path] = None) -> dict[str, PredicateDef]:
    data = yaml.safe_load((path or DEFAULT_PREDICATES).read_text(encoding="utf-8"))
    return {n: PredicateDef(n, tuple((str(v), str(t)) for v, t in d["params"]),
                            str(d.get("description", "")), bool(d.get("internal", False)))
            for n, d in data["predicates"].items()}
