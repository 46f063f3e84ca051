"""GBNF grammars generated from the current domain and scene, for constrained decoding.

llama.cpp (and servers built on it) accept a GBNF grammar per request (``extra_body={"grammar":
...}``) and only sample text the grammar admits. The goal grammar admits exactly the goals
``(:goal ...)`` in disjunctive normal form whose atoms use the domain's predicates with the
right number of arguments, each argument an object of the scene that has the parameter's type
(affordance) - an unknown predicate, object, wrong arity or wrong type cannot be generated.
The tool grammar admits exactly the tool answers the tool-selection loop accepts, with the
memory's unexplored locations and the classes the memory lacks as parameters.

:func:`gbnf_to_lark` reads our GBNF back (Lark's Earley parser) so a grammar can be checked
against text without llama.cpp - the property-based tests use it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.model.signature import Signature

_SAFE = re.compile(r"[^a-zA-Z0-9]+")


class GrammarError(AffplanError, ValueError):
    """No grammar can be built (e.g. no predicate has objects of the right types)."""


def _literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _names(prefix: str, keys: Iterable[str]) -> dict[str, str]:
    """A GBNF rule name per key (letters, digits, '-'), unique even when keys sanitize alike."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for k in keys:
        base = f"{prefix}-{_SAFE.sub('-', k).strip('-').lower() or 'x'}"
        name, i = base, 1
        while name in used:
            i += 1
            name = f"{base}-{i}"
        used.add(name)
        out[k] = name
    return out


def goal_grammar(signature: Signature, *, forbidden: Sequence[str] = (), negation: bool = True,
                 disjunction: bool = True, max_literals: Optional[int] = None) -> str:
    """The GBNF of every well-typed goal over ``signature`` (DNF: or of ands of literals).

    ``max_literals`` (a Partial Plan request's K): one conjunction of at most that many literals,
    no disjunction - so the goal loop's bound on predicates cannot be exceeded either."""
    by_type: dict[str, list[str]] = {}
    preds: dict[str, tuple[str, ...]] = {}
    for p, params in signature.predicates.items():
        if p in forbidden:
            continue
        fitting = [sorted(o for o, ts in signature.objects.items() if t in ts) for t in params]
        if params and all(fitting):
            preds[p] = tuple(params)
            for t, objs in zip(params, fitting):
                by_type[t] = objs
    if not preds:
        raise GrammarError("no predicate of the domain has objects of the right types in this scene")
    tnames = _names("t", sorted(by_type))
    pnames = _names("p", sorted(preds))
    if max_literals is not None and max_literals < 1:
        raise GrammarError(f"a goal needs at least one literal, not {max_literals}")
    more = '(" " lit)+'
    if max_literals is not None:  # GBNF's x{0,n} unrolled: our reader (and older servers) need no {}
        more = '" " lit' + "".join(' (" " lit' for _ in range(max_literals - 1)) + ")?" * (max_literals - 1)
    lines = ['root ::= "(:goal " goal ")"']
    lines.append('goal ::= conj' + (' | "(or" (" " conj)+ ")"' if disjunction and max_literals is None else ""))
    lines.append(f'conj ::= lit | "(and" {more} ")"')
    lines.append('lit ::= atom' + (' | "(not " atom ")"' if negation else ""))
    lines.append("atom ::= " + " | ".join(pnames[p] for p in sorted(preds)))
    for p in sorted(preds):
        body = [_literal(f"({p} ")]
        for i, t in enumerate(preds[p]):
            if i:
                body.append('" "')
            body.append(tnames[t])
        body.append('")"')
        lines.append(f"{pnames[p]} ::= " + " ".join(body))
    for t in sorted(by_type):
        lines.append(f"{tnames[t]} ::= " + " | ".join(_literal(o) for o in by_type[t]))
    return "\n".join(lines) + "\n"


def tool_grammar(unexplored: Sequence[str] = (), missing_classes: Sequence[str] = ()) -> str:
    """The GBNF of every valid tool answer: PLAN, PARTIAL_PLAN, EXPLORE <unexplored location>,
    SUGGEST_ALTERNATIVE <class the memory lacks>, or FAILURE."""
    tools = ['"PLAN"', '"PARTIAL_PLAN"']
    extra = []
    if unexplored:
        tools.append('"EXPLORE " location')
        extra.append("location ::= " + " | ".join(_literal(l) for l in sorted(set(unexplored))))
    if missing_classes:
        tools.append('"SUGGEST_ALTERNATIVE " class')
        extra.append("class ::= " + " | ".join(_literal(c) for c in sorted(set(missing_classes))))
    return "\n".join(['root ::= "SELECTED TOOL: " tool | "FAILURE"', "tool ::= " + " | ".join(tools), *extra]) + "\n"


def tool_grammar_for(memory, oam=None) -> str:
    """The tool grammar of a memory: its unexplored locations; as missing classes the OAM's
    classes that are neither known nor already replaced (none without an OAM)."""
    classes: list[str] = []
    if oam is not None:
        present = memory.classes() | set(memory.substitutions)
        classes = [c for c in oam.classes() if c not in present]
    return tool_grammar(memory.unexplored(), classes)


# ---------------------------------------------------------------------------------------------
# Reading GBNF back


_RULE = re.compile(r"^([a-zA-Z0-9-]+)\s*::=\s*(.*)$")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[a-zA-Z0-9-]+|[()|*+?]|\s+')


def gbnf_to_lark(gbnf: str) -> str:
    """Lark grammar text for the GBNF subset these grammars use (literals, rule references,
    alternatives, groups, ``* + ?``); ``root`` becomes Lark's ``start``."""
    rules = []
    for line in gbnf.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _RULE.match(line)
        if not m:
            raise GrammarError(f"not a GBNF rule this reader knows: {line!r}")
        name, body = m.groups()
        out = []
        pos = 0
        while pos < len(body):
            t = _TOKEN.match(body, pos)
            if not t:
                raise GrammarError(f"unexpected text in GBNF rule {name}: {body[pos:pos + 20]!r}")
            tok = t.group(0)
            pos = t.end()
            if tok.isspace():
                continue
            out.append(_lark_name(tok) if re.fullmatch(r"[a-zA-Z0-9-]+", tok) else tok)
        rules.append(f"{_lark_name(name)}: {' '.join(out)}")
    return "start: root_\n" + "\n".join(rules) + "\n"


def _lark_name(name: str) -> str:
    return "root_" if name == "root" else "r_" + name.lower().replace("-", "_")


@dataclass
class GbnfRecognizer:
    """Does a GBNF grammar admit a text? (Lark Earley parser over the converted grammar.)"""

    gbnf: str

    def __post_init__(self) -> None:
        from lark import Lark

        self._parser = Lark(gbnf_to_lark(self.gbnf), parser="earley", lexer="dynamic")

    def accepts(self, text: str) -> bool:
        from lark.exceptions import LarkError

        try:
            self._parser.parse(text)
        except LarkError:
            return False
        return True


def grammar_for(context: object, oam=None) -> Optional[str]:
    """The grammar for a structured question (see ``goals.loop.ask``), or None."""
    from affplan_ros.core.agent.tool_loop import ToolPromptView
    from affplan_ros.core.goals.loop import GoalRequest

    if isinstance(context, GoalRequest):
        from affplan_ros.core.goals.loop import GoalMode

        k = context.max_predicates if context.mode is GoalMode.PARTIAL_PLAN else None
        try:
            return goal_grammar(context.signature, forbidden=context.forbidden_predicates, max_literals=k)
        except GrammarError:
            return None
    if isinstance(context, ToolPromptView) and context.memory is not None:
        return tool_grammar_for(context.memory, oam)
    return None


def merged(extra_body: Optional[Mapping], grammar: Optional[str]) -> dict:
    body = dict(extra_body or {})
    if grammar:
        body["grammar"] = grammar
    return body
