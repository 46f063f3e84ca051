"""One way to declare a node's parameters: a table of :class:`Param` and one :func:`declare_params`.

Each node module holds its parameters as a module-level table (name, default, description and
the checks a value must pass); shared groups (the LLM endpoint, the agents, ...) are tables too
and are added to a node's table. :func:`declare_params` declares them all, each with a
``ParameterDescriptor`` whose ``description`` is the text and whose ``additional_constraints``
states the checks in words, so ``ros2 param describe`` shows both, and then checks every value:
one ValueError names every bad parameter at once (``run_node`` prints it as ``error: ...``).

Checks that need code (parsing an enum with its own message, reading a file) stay with the
node, after the declaration.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Optional, Sequence

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.node import Node
from rclpy.parameter import Parameter


@dataclass(frozen=True)
class Param:
    """One parameter: its name, default (its type), description and the checks on its value.

    ``minimum``: value >= minimum; ``above``: value > above; ``choices``: one of these values;
    ``nonempty``: a string or list that must not be empty. Read-only unless said otherwise: the
    nodes read their parameters once, at start-up, so a change at run time would be shown by
    ``ros2 param get`` but never used; it is refused instead. A writable parameter's checks
    also hold for a change at run time.

    An empty list default declares a string array (a list of numbers must not be empty); a
    float default accepts an integer (``-p time_scale:=0``) and its value is a float."""

    name: str
    default: Any
    description: str
    minimum: Optional[float] = None
    above: Optional[float] = None
    choices: tuple = ()
    nonempty: bool = False
    read_only: bool = True
    # (false word, true word), e.g. ("off", "on"): YAML and `-p grounding:=on` read on/off as
    # booleans, so a string parameter with these words also takes a boolean and means its word.
    bool_words: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        problem = self.problem(self.default) if not self._type_problem(self.default) else ""
        if problem:  # a table's own mistake: found when its module is imported
            raise ValueError(f"the default of parameter {problem}")

    @property
    def is_float(self) -> bool:
        return isinstance(self.default, float)

    def _checks(self) -> list[tuple[str, str, Any]]:
        """(words for the describe text, words for an error, test) per check, in order."""
        checks: list[tuple[str, str, Any]] = []
        if self.minimum is not None:
            checks.append((f">= {self.minimum:g}", f"must be >= {self.minimum:g}", lambda v: v >= self.minimum))
        if self.above is not None:
            checks.append((f"> {self.above:g}", f"must be > {self.above:g}", lambda v: v > self.above))
        if self.choices:
            words = "one of: " + ", ".join(str(c) for c in self.choices)
            checks.append((words, "must be " + words, lambda v: v in self.choices))
        if self.nonempty:
            checks.append(("not empty", "must not be empty", lambda v: len(v) > 0))
        return checks

    def constraints(self) -> str:
        """The checks in words (``additional_constraints``): "> 0", "one of: a, b"; "" = none."""
        return "; ".join(words for words, _, _ in self._checks())

    def value(self, raw: Any) -> Any:
        """The declared value as the node uses it (a float for a float parameter, a list for an
        unset string array)."""
        if isinstance(self.default, list) and not self.default:
            return list(raw or [])
        if self.is_float and not self._type_problem(raw):
            return float(raw)
        if self.bool_words and isinstance(raw, bool):
            return self.bool_words[int(raw)]
        return raw

    def _type_problem(self, raw: Any) -> str:
        if self.is_float and (isinstance(raw, bool) or not isinstance(raw, (int, float))):
            return f"{self.name} must be a number (got {raw!r})"
        if self.bool_words and not isinstance(raw, (str, bool)):
            return f"{self.name} must be one of: {', '.join(self.bool_words)} (got {raw!r})"
        return ""

    def problem(self, raw: Any) -> str:
        """What is wrong with ``raw`` as this parameter's value ("" when nothing is)."""
        problem = self._type_problem(raw)
        if problem:
            return problem
        value = self.value(raw)
        for _, error, test in self._checks():
            if not test(value):
                return f"{self.name} {error} (got {value!r})"
        return ""


def declare_params(node: Node, table: Sequence[Param]) -> SimpleNamespace:
    """Declare every parameter of ``table`` on ``node`` and return their values by name
    (``p.max_rounds``). Raises one ValueError that names every bad value (a check that fails,
    or a value of the wrong type): "invalid parameters: max_rounds must be >= 1 (got 0); ..."."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for param in table:
        try:
            raw = _declare(node, param)
        except InvalidParameterTypeException:
            problems.append(f"{param.name} must be {_type_words(param)} (got {_override(node, param.name)})")
            continue
        problem = param.problem(raw)
        if problem:
            problems.append(problem)
        else:
            values[param.name] = param.value(raw)
    if problems:
        raise ValueError("invalid parameters: " + "; ".join(problems))
    writable = {p.name: p for p in table if not p.read_only and p.constraints()}
    if writable:
        node.add_on_set_parameters_callback(lambda params: _check_change(writable, params))
    return SimpleNamespace(**values)


def _declare(node: Node, param: Param) -> Any:
    """Declare one parameter with its descriptor; its raw value (None: an unset string array)."""
    descriptor = ParameterDescriptor(description=param.description, additional_constraints=param.constraints(),
                                     read_only=param.read_only)
    if isinstance(param.default, list) and not param.default:
        # rclpy would type an empty list as a byte array: declare the type, unset means empty.
        return node.declare_parameter(param.name, Parameter.Type.STRING_ARRAY, descriptor).value
    if param.is_float or param.bool_words:
        # `-p time_scale:=0` arrives as an integer: accept any number where a float is meant;
        # `-p grounding:=on` arrives as a boolean: accept it where its word is meant.
        descriptor.dynamic_typing = True
    return node.declare_parameter(param.name, param.default, descriptor).value


def _type_words(param: Param) -> str:
    """The type a parameter's value must have, in words (the type of its default)."""
    default = param.default
    if isinstance(default, list):
        return f"a list of {_TYPE_WORDS.get(type(default[0]), 'value')}s" if default else "a list of strings"
    return {bool: "true or false", int: "an integer", str: "a string"}.get(type(default), "a number")


_TYPE_WORDS = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _override(node: Node, name: str) -> str:
    """The value given for ``name`` (``-p``, a parameter file) as the error quotes it."""
    given = getattr(node, "_parameter_overrides", {}).get(name)  # rclpy keeps no public accessor
    return repr(given.value) if given is not None else "a value of another type"


def _check_change(table: dict[str, Param], params) -> SetParametersResult:
    """A run-time change of a writable parameter passes the same checks as its start-up value."""
    problems = [table[p.name].problem(p.value) for p in params if p.name in table]
    problems = [p for p in problems if p]
    return SetParametersResult(successful=not problems, reason="; ".join(problems))
