"""Learned knowledge: preconditions and properties found from failures, kept in a file.

LASP learns that the domain lacks something (``putin`` needs an open container; a container
must be microwave-safe). This module

* validates a proposal before it may enter the domain: it parses; it uses only ``and``, ``or``,
  ``not``, ``=`` and predicates the domain has (affordance facts ``aff_<affordance>`` included)
  or that are declared with it, and comparisons of known static quantities
  (``(<= (mass ?object) (lift_capacity ?actor))``, :mod:`.quantities`, compiled to static
  predicates when applied); its arguments are the action's parameters with fitting types;
  it is not already there; and it *explains* the failure - it is false in the state where the
  step failed (a condition that held then cannot be why the step failed);
* keeps what was learned in a JSON file (atomic, synced writes under a lock, merged with what
  another process wrote meanwhile; a malformed file is reported and never overwritten), so the
  next task - after a restart too - plans with it and does not repeat the failure;
* applies it to a :class:`~.belief.Domain` and adds a learned property's values to a scene.

A learned property is unary (an object attribute, as LASP's). Its values come from the most
similar property the environment knows (:func:`most_similar_property`), remembered per
object class so that new objects of those classes get it without asking again.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.files.state_files import locked, write_atomic
from affplan_ros.core.goals.sexpr import render_sexpr
from affplan_ros.core.knowledge.affordances import load_affordances
from affplan_ros.core.knowledge.capabilities import BUILTIN_TYPES
from affplan_ros.core.model.predicates import PredicateDef
from affplan_ros.core.model.scene import Relation, Scene
from affplan_ros.core.planning.encoding import PDDL_CONFIG
from affplan_ros.core.planning.simulate import holds, initial_state, substitute
from affplan_ros.core.recovery.belief import Belief, Domain, parse_condition
from affplan_ros.core.recovery.quantities import (
    comparison_problems,
    compile_condition,
    has_comparison,
    is_comparison,
)

KNOWLEDGE_VERSION = 1
_NAME = re.compile(r"^[a-z][a-z0-9_\-]*$")
_LOGIC = {"and", "or", "not", "="}


class KnowledgeFileError(AffplanError, RuntimeError):
    """The knowledge file cannot be read or is malformed (it is left as it is)."""


@dataclass(frozen=True)
class LearnedPrecondition:
    action: str
    condition: str          # PDDL over the action's parameters (?actor included)
    text: str = ""          # the precondition in words
    cause: str = ""         # the cause it was learned for
    task: str = ""          # the task during which it was learned
    failure: str = ""       # the failure it explains
    learned_at: str = ""
    confirmed: bool = False  # a task succeeded with it

    @property
    def key(self) -> tuple[str, str]:
        return (self.action, " ".join(self.condition.split()))


@dataclass(frozen=True)
class LearnedProperty:
    name: str
    param: tuple[str, str]          # (variable, type)
    description: str
    source: str = ""                # the environment property its values come from
    true_classes: tuple[str, ...] = ()
    true_objects: tuple[str, ...] = ()
    task: str = ""
    learned_at: str = ""

    def predicate(self) -> PredicateDef:
        return PredicateDef(self.name, (self.param,), self.description)


@dataclass(frozen=True)
class EnvironmentProperty:
    """A property the environment (simulator ground truth, a knowledge base) can evaluate."""

    name: str
    description: str
    true_objects: frozenset[str]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


# -- validation ------------------------------------------------------------------------------

def _param_types(domain: Domain, action: str) -> dict[str, str]:
    cap = domain.capabilities[action]
    types = {} if cap.environment else {"?actor": "actor"}
    types.update({f"?{p.name}": p.type for p in cap.parameters})
    return types


def types_fit(domain: Domain, have: str, want: str) -> bool:
    """Can an object of type ``have`` (a parameter's affordance, class or built-in type) fill a
    place that asks for ``want``? Lenient where the domain cannot tell (built-in types)."""
    if have == want or want == "object" or have == "object":
        return True
    if want == "location":
        return have in ("location", "actor") or have not in BUILTIN_TYPES
    if want == "actor" or have == "actor":
        return have == want
    if have == "location":
        return True
    oam = domain.oam
    return any({have, want} <= (set(oam.affordances_of(c)) | {c}) for c in oam.classes())


def _known_unary_types(domain: Domain) -> set[str]:

    try:
        affs = set(load_affordances().names())
    except Exception:  # noqa: BLE001 - vocabulary file problems: fall back to the OAM's
        affs = set()
    for c in domain.oam.classes():
        affs |= set(domain.oam.affordances_of(c)) | {c}
    return affs


def condition_problems(domain: Domain, action: str, condition: str,
                       declared: Mapping[str, PredicateDef] = ()) -> list[str]:
    """Why ``condition`` may not become a precondition of ``action`` (empty: it may)."""
    if action not in domain.capabilities:
        return [f"the domain has no action {action!r}"]
    try:
        expr = parse_condition(condition)
    except ValueError as exc:
        return [f"{condition!r} does not parse: {exc}"]
    if isinstance(expr, str):
        return [f"{condition!r} is not a condition (write it in parentheses)"]
    params = _param_types(domain, action)
    preds = {**domain.predicates, **dict(declared or {})}
    aff = PDDL_CONFIG["affordance_prefix"]
    unary = None
    problems: list[str] = []

    def walk(e) -> None:
        nonlocal unary
        if isinstance(e, str) or not e:
            problems.append(f"{e!r} is not a condition")
            return
        head = e[0]
        if is_comparison(e):
            problems.extend(comparison_problems(e, params, domain.quantities))
            return
        if head in ("and", "or"):
            if len(e) < 2:
                problems.append(f"({head}) needs operands")
            for x in e[1:]:
                walk(x)
            return
        if head == "not":
            if len(e) != 2:
                problems.append("(not ...) takes one condition")
            else:
                walk(e[1])
            return
        if not isinstance(head, str) or head in ("exists", "forall", "imply", "when"):
            problems.append(f"{head!r} is not allowed here (use and, or, not, = and predicates)")
            return
        args = list(e[1:])
        for a in args:
            if not isinstance(a, str) or not a.startswith("?"):
                problems.append(f"({head} ...) names {a!r}: a learned precondition speaks about the action's "
                                f"parameters ({', '.join(params)}), not about particular objects")
            elif a not in params:
                problems.append(f"{a} is not a parameter of {action} (its parameters: {', '.join(params)})")
        if problems:
            return
        if head == "=":
            if len(args) != 2:
                problems.append("(= ?a ?b) takes two arguments")
            return
        if head.startswith(aff):
            if unary is None:
                unary = _known_unary_types(domain)
            name = head[len(aff):]
            if name not in unary:
                problems.append(f"{head}: {name!r} is no affordance or object class of the domain")
            elif len(args) != 1:
                problems.append(f"{head} takes one argument")
            elif not types_fit(domain, params[args[0]], name):
                problems.append(f"({head} {args[0]}): no object that can be {args[0]} (a {params[args[0]]}) "
                                f"can have {name}")
            return
        pdef = preds.get(head)
        if pdef is None:
            problems.append(f"unknown predicate {head!r} (the domain has {', '.join(sorted(preds))}); "
                            f"declare a new property to use one")
            return
        if len(args) != len(pdef.params):
            problems.append(f"{head} takes {len(pdef.params)} arguments, got {len(args)}")
            return
        for a, (_v, want) in zip(args, pdef.params):
            if not types_fit(domain, params[a], want):
                problems.append(f"({head} ...): {a} is a {params[a]}, but {head} wants a {want} there")

    walk(expr)
    if problems:
        return problems
    cap = domain.capabilities[action]
    pre = parse_condition(cap.precondition)
    conjuncts = list(pre[1:]) if not isinstance(pre, str) and pre[0] == "and" else [pre]
    expr = compile_condition(expr)[0]   # a comparison is in the domain as its static predicate
    if expr in conjuncts or (expr[0] == "and" and all(x in conjuncts for x in expr[1:])):
        return [f"{action} already requires {condition}"]
    return []


def compiled(domain: Domain, condition: str) -> tuple[Domain, str]:
    """``condition`` with its numeric comparisons compiled to static predicates, and ``domain``
    with those predicates (and their facts, through :meth:`Domain.with_statics`). A condition
    without comparisons comes back as it is."""
    expr = parse_condition(condition)
    if not has_comparison(expr):
        return domain, condition
    out, comps = compile_condition(expr)
    return domain.with_comparisons(comps), render_sexpr(out)


def explains_failure(belief: Belief, step, condition: str) -> tuple[bool, str]:
    """Is ``condition`` (over the step's action parameters) false where the step failed?"""
    task = belief.task()
    cap = task.capabilities.get(step.action)
    if cap is None:
        return False, f"unknown action {step.action}"
    binding = {f"?{p.name}": task._map(a) for p, a in zip(cap.parameters, step.args)}
    if step.agent:
        binding["?actor"] = task._map(step.agent)

    ground = substitute(compile_condition(parse_condition(condition))[0], binding)
    if holds(ground, initial_state(task)):
        return False, (f"{render_sexpr(ground)} holds in the state where {step} failed, so it cannot be "
                       f"why it failed")
    return True, ""


def property_problems(domain: Domain, name: str, param_type: str, description: str) -> list[str]:
    problems = []
    if not _NAME.match(name or ""):
        problems.append(f"{name!r} is not a valid predicate name (lower case letters, digits, _ and -)")
    taken = set(domain.predicates) | set(domain.capabilities) | _known_unary_types(domain) | set(BUILTIN_TYPES)
    if name in taken:
        problems.append(f"{name!r} already names a predicate, action, affordance or class of the domain")
    if param_type not in BUILTIN_TYPES and param_type not in _known_unary_types(domain):
        problems.append(f"parameter type {param_type!r} is no affordance, class or built-in type of the domain")
    if not (description or "").strip():
        problems.append("a new property needs a description")
    return problems


_STOP = {"the", "a", "an", "is", "be", "can", "of", "to", "in", "it", "that", "and", "or", "for", "with",
         "on", "safely", "safe", "object", "x", "o", "put", "into", "may", "must"}


def _tokens(text: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w and w not in _STOP}


def similarity(name_a: str, desc_a: str, name_b: str, desc_b: str) -> float:
    """0..1: how alike two properties are by name (characters) and words (name + description)."""
    chars = difflib.SequenceMatcher(None, name_a.lower(), name_b.lower()).ratio()
    ta, tb = _tokens(name_a + " " + desc_a), _tokens(name_b + " " + desc_b)
    words = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
    return 0.5 * chars + 0.5 * words


def most_similar_property(name: str, description: str, known: Iterable[EnvironmentProperty],
                          threshold: float = 0.3) -> tuple[Optional[EnvironmentProperty], float]:
    best, score = None, 0.0
    for p in known:
        s = similarity(name, description, p.name, p.description)
        if s > score:
            best, score = p, s
    return (best, score) if score >= threshold else (None, score)


def property_relations(props: Sequence[LearnedProperty], scene: Scene,
                       environment: Mapping[str, EnvironmentProperty] = ()) -> list[Relation]:
    """Facts of learned properties for the objects of ``scene``: from the environment's
    property when it knows it, else from the classes remembered when it was learned."""
    out = []
    env = dict(environment or {})
    for p in props:
        source = env.get(p.source)
        for name, obj in scene.objects.items():
            # Object names are scene-specific; without the environment, the classes generalize.
            true = (name in source.true_objects) if source is not None else obj.class_name in p.true_classes
            if true:
                out.append(Relation(p.name, (name,)))
    return out


# -- the store -------------------------------------------------------------------------------

@dataclass
class KnowledgeStore:
    """Learned preconditions and properties, persisted in ``path`` (None: memory only)."""

    path: Optional[Path] = None
    preconditions: list[LearnedPrecondition] = field(default_factory=list)
    properties: list[LearnedProperty] = field(default_factory=list)

    @classmethod
    def open(cls, path: Union[str, Path, None]) -> "KnowledgeStore":
        store = cls(Path(path) if path else None)
        if store.path is not None and store.path.exists():
            store._merge(cls._read(store.path))
        return store

    @staticmethod
    def _read(path: Path) -> "KnowledgeStore":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise KnowledgeFileError(f"cannot read the knowledge file {path}: {exc}; fix or move it away "
                                     f"(it is not overwritten)") from exc
        if not isinstance(data, dict) or data.get("version") != KNOWLEDGE_VERSION:
            raise KnowledgeFileError(f"{path} is not a version-{KNOWLEDGE_VERSION} knowledge file "
                                     f"(it is not overwritten)")
        try:
            pre = [LearnedPrecondition(**d) for d in data.get("preconditions", [])]
            props = [LearnedProperty(**{**d, "param": tuple(d["param"]),
                                        "true_classes": tuple(d.get("true_classes", ())),
                                        "true_objects": tuple(d.get("true_objects", ()))})
                     for d in data.get("properties", [])]
        except (TypeError, KeyError) as exc:
            raise KnowledgeFileError(f"{path}: malformed entry ({exc}); it is not overwritten") from exc
        return KnowledgeStore(path, pre, props)

    def _merge(self, other: "KnowledgeStore") -> None:
        have = {p.key: i for i, p in enumerate(self.preconditions)}
        for p in other.preconditions:
            if p.key in have:
                mine = self.preconditions[have[p.key]]
                if p.confirmed and not mine.confirmed:
                    self.preconditions[have[p.key]] = dataclasses.replace(mine, confirmed=True)
            else:
                have[p.key] = len(self.preconditions)
                self.preconditions.append(p)
        names = {p.name for p in self.properties}
        self.properties += [p for p in other.properties if p.name not in names]

    def save(self) -> None:
        """Write atomically, merged with what is on disk now (another process may have learned);
        the file's lock keeps two writers from losing each other's entries."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.path):
            if self.path.exists():
                self._merge(self._read(self.path))
            data = {"version": KNOWLEDGE_VERSION,
                    "preconditions": [dataclasses.asdict(p) for p in self.preconditions],
                    "properties": [dataclasses.asdict(p) for p in self.properties]}
            write_atomic(self.path, json.dumps(data, indent=1))

    # -- changes ---------------------------------------------------------------------------
    def add_precondition(self, item: LearnedPrecondition) -> None:
        if item.key not in {p.key for p in self.preconditions}:
            self.preconditions.append(dataclasses.replace(item, learned_at=item.learned_at or _now()))
            self.save()

    def add_property(self, item: LearnedProperty) -> None:
        if item.name not in {p.name for p in self.properties}:
            self.properties.append(dataclasses.replace(item, learned_at=item.learned_at or _now()))
            self.save()

    def confirm(self, keys: Iterable[tuple[str, str]]) -> None:
        keys = set(keys)
        changed = False
        for i, p in enumerate(self.preconditions):
            if p.key in keys and not p.confirmed:
                self.preconditions[i] = dataclasses.replace(p, confirmed=True)
                changed = True
        if changed:
            self.save()

    # -- use -------------------------------------------------------------------------------
    def apply(self, domain: Domain) -> tuple[Domain, list[str]]:
        """``domain`` with the learned properties and preconditions; entries that no longer
        fit this domain are left out and named in the notes (never an exception)."""
        notes = []
        for p in self.properties:
            if p.name in domain.predicates:
                continue
            domain = domain.with_predicate(p.predicate())
        for p in self.preconditions:
            problems = condition_problems(domain, p.action, p.condition)
            if problems:
                if not any("already requires" in x for x in problems):
                    notes.append(f"learned precondition of {p.action} {p.condition} not used: {problems[0]}")
                continue
            domain, condition = compiled(domain, p.condition)
            domain = domain.with_precondition(p.action, condition)
        return domain, notes

    def property_relations(self, scene: Scene, environment: Mapping[str, EnvironmentProperty] = ()) -> list[Relation]:
        return property_relations(self.properties, scene, environment)

    def render(self) -> str:
        """What was learned, for the user."""
        if not self.preconditions and not self.properties:
            return "nothing learned yet"
        lines = []
        for p in self.properties:
            lines.append(f"property ({p.name} ?{p.param[0]} - {p.param[1]}): {p.description}"
                         + (f" [values from the environment's {p.source!r}: {', '.join(p.true_classes)}]"
                            if p.source else ""))
        for p in self.preconditions:
            lines.append(f"{p.action} requires {p.condition}" + (f" - {p.text}" if p.text else "")
                         + ("" if p.confirmed else " (not yet confirmed by a successful task)"))
        return "\n".join(lines)
