"""Semantic checks of a goal in SWI-Prolog (AutoGPT+P's logical-contradiction check).

The rules live in ``semantic_rules.pl`` (data, replaceable per domain).  A goal
is checked per DNF disjunct: the disjunct's literals are asserted under a fresh
context, violations are collected, the facts retracted — all in one Prolog call.
The goal passes when at least one disjunct has no violation (the planner may pick
that one); otherwise the messages of the disjunct with the fewest violations are
fed back, since that is the alternative closest to being right.

pyswip drives one process-wide Prolog engine that fails with NestedQueryError when
two threads query at once, so every access goes through one module-level lock and
every query is consumed fully.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, Union

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.goals.formula import DNF, Conjunction, Goal, Literal, to_dnf

DEFAULT_RULES = Path(__file__).with_name("semantic_rules.pl")
DEFAULT_MODULE = "affplan_semantic"

# One lock for the whole process: pyswip has a single engine, whatever the checker.
_PROLOG_LOCK = threading.RLock()
_LOADED: set[str] = set()
_CTX_COUNTER = itertools.count()


class PrologUnavailableError(AffplanError, RuntimeError):
    """SWI-Prolog or pyswip is missing; the message says how to install them."""


class SemanticCheckError(AffplanError, RuntimeError):
    """The Prolog rules could not be loaded or queried."""


@dataclass(frozen=True)
class Violation:
    kind: str
    message: str


@dataclass(frozen=True)
class DisjunctResult:
    index: int
    literals: Conjunction
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass(frozen=True)
class SemanticResult:
    disjuncts: tuple[DisjunctResult, ...]

    @property
    def ok(self) -> bool:
        return any(d.ok for d in self.disjuncts)

    @property
    def consistent_dnf(self) -> DNF:
        """Only the disjuncts without violations (what the planner should get)."""
        return [d.literals for d in self.disjuncts if d.ok]

    @property
    def best(self) -> DisjunctResult | None:
        """The disjunct with the fewest violations (first on ties)."""
        return min(self.disjuncts, key=lambda d: len(d.violations), default=None)

    @property
    def violations(self) -> tuple[Violation, ...]:
        """Violations to report: none when ok, else those of :attr:`best`."""
        if self.ok or self.best is None:
            return ()
        return self.best.violations

    @property
    def messages(self) -> list[str]:
        return [v.message for v in self.violations]

    def feedback(self) -> str:
        if self.ok:
            return ""
        head = "There is a logical contradiction in the goal"
        if len(self.disjuncts) > 1:
            head += " (every alternative of the 'or' has one; the closest alternative has these)"
        msgs = self.messages
        body = msgs[0] if len(msgs) == 1 else " ".join(f"({i}) {m}" for i, m in enumerate(msgs, 1))
        return f"{head}: {body}"


def _load_pyswip() -> Any:
    try:
        from pyswip import Prolog  # noqa: WPS433 - imported lazily: optional system dependency
    except Exception as exc:  # ImportError, or pyswip failing to locate libswipl
        raise PrologUnavailableError(
            "The semantic goal check needs SWI-Prolog and pyswip: install them with "
            "'apt-get install swi-prolog-nox' and 'pip install pyswip' "
            f"(import failed: {type(exc).__name__}: {exc})."
        ) from exc
    return Prolog


def _quote(name: str) -> str:
    """A Prolog quoted atom: object names may contain '-' or start with digits."""
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _term(lit: Literal) -> str:
    if not lit.args:
        return _quote(lit.predicate)
    return _quote(lit.predicate) + "(" + ",".join(_quote(a) for a in lit.args) + ")"


def _as_list(values: Any) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


class SemanticChecker:
    """Checks goals against Prolog rules; thread-safe (serialised on a process lock)."""

    def __init__(self, rules_path: Union[str, Path, None] = None, module: str = DEFAULT_MODULE):
        self.rules_path = Path(rules_path) if rules_path is not None else DEFAULT_RULES
        self.module = module
        if not self.rules_path.is_file():
            raise SemanticCheckError(f"semantic rules file not found: {self.rules_path}")
        prolog_cls = _load_pyswip()
        with _PROLOG_LOCK:
            self._prolog = prolog_cls()
            key = str(self.rules_path.resolve())
            if key not in _LOADED:
                try:
                    list(self._prolog.query(f"consult({_quote(key)})"))
                except Exception as exc:
                    raise SemanticCheckError(f"could not load {self.rules_path}: {exc}") from exc
                _LOADED.add(key)

    def check_conjunction(self, conj: Sequence[Literal]) -> tuple[Violation, ...]:
        """Violations of one conjunction of literals."""
        pos = "[" + ",".join(_term(l) for l in conj if not l.negated) + "]"
        neg = "[" + ",".join(_term(l) for l in conj if l.negated) + "]"
        with _PROLOG_LOCK:
            ctx = f"ctx{next(_CTX_COUNTER)}"
            query = f"{self.module}:check_disjunct({ctx}, {pos}, {neg}, Kinds, Msgs)"
            try:
                answers = list(self._prolog.query(query))  # consume fully (see module doc)
            except Exception as exc:
                raise SemanticCheckError(f"semantic check query failed: {exc}") from exc
        if not answers:
            raise SemanticCheckError(f"semantic check query had no answer: {query}")
        kinds, msgs = _as_list(answers[0]["Kinds"]), _as_list(answers[0]["Msgs"])
        return tuple(Violation(k, m) for k, m in zip(kinds, msgs))

    def check_dnf(self, dnf: Sequence[Conjunction]) -> SemanticResult:
        return SemanticResult(tuple(
            DisjunctResult(i, tuple(conj), self.check_conjunction(conj)) for i, conj in enumerate(dnf)
        ))

    def check(self, goal: Union[Goal, Sequence[Conjunction]]) -> SemanticResult:
        """Check a goal AST or an already computed DNF."""
        dnf = goal if isinstance(goal, list) else to_dnf(goal)  # type: ignore[arg-type]
        return self.check_dnf(dnf)
