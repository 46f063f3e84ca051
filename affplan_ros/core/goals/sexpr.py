"""S-expressions: the tokens of PDDL read into nested tuples (with positions in errors), and written back."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from affplan_ros.core.goals.errors import GoalError, GoalErrorKind

# ---------------------------------------------------------------------------
# S-expressions

SExpr = Union[str, tuple["SExpr", ...]]


@dataclass(frozen=True)
class _Token:
    text: str
    pos: int


_TOKEN_RE = re.compile(r"\(|\)|[^\s()]+")


def strip_comments(text: str) -> str:
    # PDDL comments run from ';' to the end of the line; blank them out with spaces
    # of the same length so reported positions still index the original text.
    return re.sub(r";[^\n]*", lambda m: " " * len(m.group(0)), text)


def _tokenize(text: str) -> list[_Token]:
    return [_Token(m.group(0), m.start()) for m in _TOKEN_RE.finditer(strip_comments(text))]


def _snippet(text: str, pos: int, width: int = 30) -> str:
    return text[pos:pos + width].replace("\n", " ") + ("..." if len(text) > pos + width else "")


def parse_sexprs(text: str) -> list[SExpr]:
    """Parse a sequence of s-expressions; unbalanced parentheses raise with a position."""
    stack: list[tuple[int, list[SExpr]]] = []
    top: list[SExpr] = []
    for tok in _tokenize(text):
        if tok.text == "(":
            stack.append((tok.pos, []))
        elif tok.text == ")":
            if not stack:
                raise GoalError(
                    GoalErrorKind.UNBALANCED_PARENTHESES,
                    f"Unbalanced parentheses: the ')' at character {tok.pos} of the goal "
                    f"`{text.strip()}` closes nothing (near `{_snippet(text, max(0, tok.pos - 20))}`). "
                    "Every '(' needs exactly one matching ')'.",
                    tok.pos,
                )
            _, items = stack.pop()
            node: SExpr = tuple(items)
            (stack[-1][1] if stack else top).append(node)
        else:
            (stack[-1][1] if stack else top).append(tok.text)
    if stack:
        pos = stack[-1][0]
        raise GoalError(
            GoalErrorKind.UNBALANCED_PARENTHESES,
            f"Unbalanced parentheses: the '(' at character {pos} of the goal `{text.strip()}` "
            f"(starting `{_snippet(text, pos)}`) is never closed; {len(stack)} ')' missing. "
            "Every '(' needs exactly one matching ')'.",
            pos,
        )
    return top


def parse_sexpr(text: str) -> SExpr:
    """Parse exactly one s-expression."""
    items = parse_sexprs(text)
    if len(items) != 1:
        raise GoalError(GoalErrorKind.MALFORMED,
                        f"Expected one expression but found {len(items)} in `{text.strip()}`.")
    return items[0]


def render_sexpr(expr: SExpr) -> str:
    if isinstance(expr, str):
        return expr
    return "(" + " ".join(render_sexpr(e) for e in expr) + ")"
