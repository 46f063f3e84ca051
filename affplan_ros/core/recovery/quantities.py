"""Numeric conditions over static quantities, compiled to static predicates before grounding.

LASP's weight and temperature cases need preconditions such as "the robot lifts only what is
not heavier than its lift capacity" or "a container holds only what is not hotter than it
withstands". A learned precondition may say so with a comparison of *static* quantities::

    (<= (mass ?object) (lift_capacity ?actor))
    (<= (temperature ?object) (max_temperature ?in))
    (< (mass ?object) 1.5)

Operators ``<``, ``<=``, ``>``, ``>=``, ``=``; each side a quantity of one of the action's
parameters or a number. Quantities come from the table ``data/quantities.yaml`` (per class, or
a field of the object table), overridden by the robot's configuration (its lift capacity)
and by what a world measures (per object). They do not change while a plan runs, so every
comparison is compiled to a static predicate (``num_mass_le_lift_capacity ?x ?y``: the left
term's thing, then the right term's) whose facts are computed from the scene before the task
is built: Fast Downward sees only ordinary facts and stays classical. A value nobody knows
makes the comparison false (the planner does not count on it).
"""
from __future__ import annotations

import dataclasses
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

from affplan_ros.core.errors import ConfigError
from affplan_ros.core.files.settings import read_section
from affplan_ros.core.goals.sexpr import render_sexpr
from affplan_ros.core.model.predicates import PredicateDef
from affplan_ros.core.model.scene import Relation, Scene

DEFAULT_QUANTITIES = Path(__file__).resolve().parent / "data" / "quantities.yaml"
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}
OP_NAMES = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "=": "eq"}
OP_WORDS = {"<": "less than", "<=": "at most", ">": "more than", ">=": "at least", "=": "equal to"}
PREFIX = "num_"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# Things that look like a comparison operator but are not one of ours: said as such.
_NEAR_OPS = {"==", "=<", "=>", "!=", "<>", "/=", "le", "lt", "ge", "gt", "eq", "leq", "geq", "less", "greater"}


class QuantityError(ConfigError):
    """A quantity table is malformed."""


@dataclass(frozen=True)
class QuantityDef:
    name: str
    unit: str
    description: str
    of: str = "object"                                    # object | actor
    table: str = ""                                       # object-table field giving it per class
    classes: Mapping[str, float] = field(default_factory=dict)
    default: Optional[float] = None


@dataclass
class Quantities:
    """The static quantities a planner may compare, and their values."""

    defs: dict[str, QuantityDef]
    objects: dict[str, dict[str, float]] = field(default_factory=dict)   # quantity -> object -> value
    object_table: object = None                                          # ObjectTable (lazy default)
    source: str = ""

    def names(self) -> list[str]:
        return sorted(self.defs)

    def describe(self) -> str:
        return ", ".join(f"{d.name} ({d.unit})" for _n, d in sorted(self.defs.items())) or "none"

    def _table(self):
        if self.object_table is None:
            from affplan_ros.core.knowledge.objects import load_object_table

            self.object_table = load_object_table()
        return self.object_table

    def value(self, quantity: str, name: str, class_name: str) -> Optional[float]:
        """The value of ``quantity`` for the thing ``name`` of class ``class_name`` (None: unknown)."""
        d = self.defs.get(quantity)
        if d is None:
            return None
        mine = self.objects.get(quantity, {})
        if name in mine:
            return mine[name]
        if class_name in d.classes:
            return float(d.classes[class_name])
        if d.table:
            table = self._table()
            if class_name in table:
                props = table.get(class_name)
                if not props.liquid:
                    return float(getattr(props, d.table))
        return d.default

    def with_values(self, values: Mapping[str, Mapping[str, float]], source: str = "") -> "Quantities":
        """These values per object (measured by a world), over the table's."""
        out = dataclasses.replace(self, objects={q: dict(v) for q, v in self.objects.items()})
        for q, per in (values or {}).items():
            if q not in out.defs:
                raise QuantityError(f"{source or 'quantities'}: unknown quantity {q!r} (known: {self.describe()})")
            for obj, v in (per or {}).items():
                out.objects.setdefault(q, {})[str(obj)] = _number(v, f"{source}: {q}.{obj}")
        return out

    def with_class_value(self, quantity: str, class_name: str, value: float) -> "Quantities":
        """``quantity`` of every thing of ``class_name`` (e.g. the robot's lift capacity from its config)."""
        d = self.defs[quantity]
        defs = dict(self.defs)
        defs[quantity] = dataclasses.replace(d, classes={**d.classes, class_name: float(value)})
        return dataclasses.replace(self, defs=defs)


def _number(v, what: str) -> float:
    if isinstance(v, bool):
        raise QuantityError(f"{what} must be a number, not {v!r}")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise QuantityError(f"{what} must be a number, not {v!r}") from None


def load_quantities(path: Union[str, Path, None] = None, object_table=None) -> Quantities:
    path = Path(path) if path else DEFAULT_QUANTITIES
    section = read_section(path, "quantities", QuantityError, "quantity table", "a mapping with `quantities:`")
    defs = {}
    for name, d in section.items():
        where = f"{path}: quantity {name}"
        if not _NAME.match(str(name)):
            raise QuantityError(f"{where}: a name is lower case letters, digits and _")
        if not isinstance(d, Mapping):
            raise QuantityError(f"{where}: expected a mapping (unit, description, ...)")
        of = str(d.get("of", "object"))
        if of not in ("object", "actor"):
            raise QuantityError(f"{where}: of must be object or actor, not {of!r}")
        classes = {str(c): _number(v, f"{where}: classes.{c}") for c, v in (d.get("classes") or {}).items()}
        default = None if d.get("default") is None else _number(d["default"], f"{where}: default")
        table = str(d.get("table", ""))
        if table and table != "mass":
            raise QuantityError(f"{where}: table gives only mass (the object table's numeric field)")
        defs[str(name)] = QuantityDef(str(name), str(d.get("unit", "")), str(d.get("description", "")), of, table,
                                      classes, default)
    return Quantities(defs, object_table=object_table, source=str(path))


# -- comparisons -------------------------------------------------------------------------------

Term = Union[tuple[str, str], float]    # (quantity, ?var) or a number


@dataclass(frozen=True)
class Comparison:
    op: str
    left: Term
    right: Term

    @staticmethod
    def _term_name(t: Term) -> str:
        if isinstance(t, tuple):
            return t[0]
        # Exact (the shortest text that reads back as the same number): two thresholds that
        # differ only in the seventh digit are two predicates, not one that takes both's facts.
        text = str(int(t)) if float(t).is_integer() and abs(t) < 1e15 else repr(float(t))
        return "n" + text.replace("-", "m").replace(".", "p").replace("+", "")

    @property
    def predicate(self) -> str:
        return f"{PREFIX}{self._term_name(self.left)}_{OP_NAMES[self.op]}_{self._term_name(self.right)}"

    def terms(self) -> list[tuple[str, str]]:
        return [t for t in (self.left, self.right) if isinstance(t, tuple)]

    def atom(self) -> tuple:
        """The compiled atom over the action's variables (one argument per quantity term)."""
        return (self.predicate, *(v for _q, v in self.terms()))

    def pdef(self, quantities: Quantities) -> PredicateDef:
        params = tuple((f"x{i}", quantities.defs[q].of) for i, (q, _v) in enumerate(self.terms()))
        return PredicateDef(self.predicate, params, f"compiled from {self.text()} (static: from known quantities)")

    def text(self) -> str:
        def side(t):
            return f"({t[0]} {t[1]})" if isinstance(t, tuple) else f"{t:g}"
        return f"({self.op} {side(self.left)} {side(self.right)})"

    def holds(self, values: Sequence[float]) -> bool:
        it = iter(values)
        a = next(it) if isinstance(self.left, tuple) else self.left
        b = next(it) if isinstance(self.right, tuple) else self.right
        return OPS[self.op](a, b)


def _is_number(x) -> bool:
    if not isinstance(x, str):
        return False
    try:
        float(x)
    except ValueError:
        return False
    return not x.startswith("?")


def is_comparison(expr) -> bool:
    """Whether ``expr`` (parsed) is a numeric comparison (an operand is a term or a number)."""
    return (not isinstance(expr, str) and bool(expr) and isinstance(expr[0], str)
            and (expr[0] in OPS or expr[0] in _NEAR_OPS)
            and any(not isinstance(a, str) or _is_number(a) for a in expr[1:]))


def comparison_problems(expr, params: Mapping[str, str], quantities: Optional[Quantities]) -> list[str]:
    """Why the comparison ``expr`` may not be used (empty: it may)."""
    head = expr[0]
    if head not in OPS:
        return [f"{head!r} is no comparison operator: compare quantities with <, <=, >, >= or ="]
    if quantities is None or not quantities.defs:
        return [f"{render_sexpr(expr)} compares quantities, but the environment knows no quantities"]
    args = list(expr[1:])
    if len(args) != 2:
        return [f"({head} ...) compares two things, got {len(args)}"]
    problems = []
    terms = 0
    for a in args:
        if isinstance(a, str):
            if not _is_number(a):
                problems.append(f"{a!r} in ({head} ...) is neither a number nor a quantity such as (mass ?object)")
            continue
        terms += 1
        if len(a) != 2 or not all(isinstance(x, str) for x in a):
            problems.append(f"{render_sexpr(a)}: a quantity is (name ?parameter), e.g. (mass ?object)")
            continue
        q, v = a
        if q not in quantities.defs:
            problems.append(f"unknown quantity {q!r}; the known quantities are {quantities.describe()}")
        if not v.startswith("?"):
            problems.append(f"({q} {v}) names {v!r}: a learned precondition speaks about the action's parameters "
                            f"({', '.join(params)}), not about particular objects")
        elif v not in params:
            problems.append(f"{v} is not a parameter of the action (its parameters: {', '.join(params)})")
        elif q in quantities.defs:
            of = quantities.defs[q].of
            if (of == "actor") != (params[v] == "actor"):
                problems.append(f"({q} {v}): {q} is a quantity of {'an actor' if of == 'actor' else 'a thing'}, "
                                f"but {v} is a {params[v]}")
    if not problems and terms == 0:
        problems.append(f"{render_sexpr(expr)} compares two numbers: it says nothing about the action")
    return problems


def to_comparison(expr) -> Comparison:
    """The comparison ``expr`` (parsed); ``QuantityError`` where it is not one this module compiles
    (an operator other than ``OPS``, not two operands, an operand neither a number nor
    ``(quantity ?var)``) - a learned one is checked by :func:`comparison_problems` first, but a
    scenario's hidden rule reaches here as written."""
    if expr[0] not in OPS or len(expr) != 3:
        raise QuantityError(f"{render_sexpr(expr)}: a comparison is (op a b) with op one of {', '.join(OPS)}")

    def term(a):
        if isinstance(a, str):
            if not _is_number(a):
                raise QuantityError(f"{render_sexpr(expr)}: {a} is neither a number nor (quantity ?var)")
            return float(a)
        if len(a) != 2 or not all(isinstance(x, str) for x in a):
            raise QuantityError(f"{render_sexpr(expr)}: an operand is a number or (quantity ?var)")
        return (str(a[0]), str(a[1]))
    return Comparison(expr[0], term(expr[1]), term(expr[2]))


def compile_condition(expr) -> tuple[object, list[Comparison]]:
    """``expr`` (parsed) with every comparison replaced by its static predicate's atom."""
    found: list[Comparison] = []

    def walk(e):
        if isinstance(e, str) or not e:
            return e
        if is_comparison(e):
            c = to_comparison(e)
            if c not in found:
                found.append(c)
            return c.atom()
        return tuple(walk(x) for x in e)

    return walk(expr), found


def has_comparison(expr) -> bool:
    if isinstance(expr, str) or not expr:
        return False
    return is_comparison(expr) or any(has_comparison(x) for x in expr)


def comparison_relations(comparisons: Sequence[Comparison], scene: Scene, quantities: Quantities) -> list[Relation]:
    """The compiled predicates' facts for the things of ``scene`` (known values only)."""
    out = []
    for c in comparisons:
        cand = []
        for q, _v in c.terms():
            vals = {}
            for name, obj in scene.objects.items():
                if (quantities.defs[q].of == "actor") != bool(obj.is_agent):
                    continue
                x = quantities.value(q, name, obj.class_name)
                if x is not None:
                    vals[name] = x
            cand.append(vals)
        if len(cand) == 1:
            out += [Relation(c.predicate, (n,)) for n, x in sorted(cand[0].items()) if c.holds([x])]
        elif len(cand) == 2:
            out += [Relation(c.predicate, (a, b)) for a, xa in sorted(cand[0].items())
                    for b, xb in sorted(cand[1].items()) if c.holds([xa, xb])]
    return out


def quantities_prompt(quantities: Optional[Quantities]) -> str:
    """The quantities for the LLM roles, one a line."""
    if quantities is None or not quantities.defs:
        return ""
    lines = [f"({d.name} ?x) ; {d.description} (a number in {d.unit}; "
             f"of {'an actor' if d.of == 'actor' else 'a thing'})" for _n, d in sorted(quantities.defs.items())]
    return ("Static quantities (compare them in a precondition with <, <=, >, >=, =, e.g. "
            "(<= (mass ?object) (lift_capacity ?actor))):\n" + "\n".join(lines))
