"""Settings dataclasses built from YAML mappings: unknown keys are errors (a typo must not be ignored)."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, TypeVar

T = TypeVar("T")


def from_mapping(cls: type[T], values: Mapping[str, Any], what: str) -> T:
    known = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"unknown {what} settings {sorted(unknown)} (known: {sorted(known)})")
    return cls(**dict(values))
