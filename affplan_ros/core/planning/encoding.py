"""PDDL names and literals: names made safe for PDDL, goals written as PDDL, the planning data
(``data/pddl.yaml``) and a cache for default data files. Shared by the task builder and the
split encoding."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

import yaml

from affplan_ros.core.errors import AffplanError

DATA_DIR = Path(__file__).resolve().parent / "data"


_DATA_CACHE: dict = {}


def cached_default(loader, path: Path):
    """``loader()`` for a default data file, re-read only when the file changes (YAML parsing
    was a third of the fixed cost of planning a small scene). Callers get their own dict."""
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return loader()
    hit = _DATA_CACHE.get(loader)
    if hit is None or hit[0] != stamp:
        hit = (stamp, loader())
        _DATA_CACHE[loader] = hit
    value = hit[1]
    return dict(value) if isinstance(value, dict) else value


PDDL_CONFIG = yaml.safe_load((DATA_DIR / "pddl.yaml").read_text(encoding="utf-8"))
_VALID_NAME = re.compile(r"^[A-Za-z][\w\-]*$")
PDDL_RESERVED = {"object", "either", "and", "or", "not", "define", "domain", "problem",
                  "number", "total-cost", "cost", "forall", "exists", "when", "imply"}


def pddl_name(name: str) -> str:
    """A valid PDDL name for a scene name (``7up0`` -> ``n7up0``)."""
    return name if _VALID_NAME.match(name) else "n" + re.sub(r"[^\w\-]", "_", name)


def fmt_literal(pred: str, args: Sequence[str], negated: bool = False) -> str:
    atom = "(" + " ".join((pred, *args)) + ")"
    return f"(not {atom})" if negated else atom


def goal_to_pddl(dnf: Sequence[Sequence]) -> str:
    """PDDL text of a DNF goal (a list of conjunctions of goal.Literal-like objects)."""
    def conj(c) -> str:
        return "(and " + " ".join(fmt_literal(l.predicate, l.args, l.negated) for l in c) + ")"
    if not dnf:
        raise ValueError("empty goal: a DNF goal needs at least one conjunction")
    return conj(dnf[0]) if len(dnf) == 1 else "(or " + " ".join(conj(c) for c in dnf) + ")"


class GoalVocabularyError(AffplanError, ValueError):
    """The goal mentions a predicate or object the problem does not have."""


def builtin_parent(t: str) -> str:
    """The PDDL parent of a type: ``location`` and ``actor`` are built in, the rest is ``object``."""
    return t if t in ("location", "actor") else "object"
