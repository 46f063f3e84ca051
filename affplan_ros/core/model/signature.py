"""What a goal may mention: the contract between domain generation and goal checking.

Domain generation (``planning/task.py``) produces a :class:`Signature`; the goal checks
(``goals/syntax.py``) and grammars consume it.  Keeping it here lets both sides be
built and tested without importing each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Signature:
    """Predicates and objects of one planning problem.

    ``predicates`` maps a predicate name to the types of its parameters, in order.
    ``objects`` maps an object name (as written in PDDL, e.g. ``cup0``) to every type
    it belongs to, ancestors and affordances included, so ``"grasp" in objects["cup0"]``
    answers "may ``cup0`` stand where a ``grasp`` parameter is expected".
    ``descriptions`` gives a human-readable sentence per predicate (for error messages
    and prompts).
    """

    predicates: Mapping[str, tuple[str, ...]]
    objects: Mapping[str, frozenset[str]]
    descriptions: Mapping[str, str] = field(default_factory=dict)

    def has_type(self, obj: str, type_name: str) -> bool:
        return type_name in self.objects.get(obj, frozenset())
