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


def read_section(path, section: str, error: type[Exception], what: str, shape: str) -> Mapping[str, Any]:
    """The mapping under ``section`` of the YAML file ``path``; ``error`` (naming the file, ``what``
    it should be, and the ``shape`` expected) where it cannot be read or is not such a mapping."""
    from pathlib import Path

    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise error(f"cannot read the {what} {path}: {exc}") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get(section), Mapping):
        raise error(f"{path}: expected {shape}")
    return data[section]
