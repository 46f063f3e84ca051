"""PDDL goals written by an LLM: extraction, parsing, the goal AST, DNF, rendering.

The LLM answers in free text (prose, markdown fences, ``(:goal ...)`` wrappers, and
in the original AutoGPT+P data even a bare ``and (on spoon0 table0)``).  This module
turns such text into a small AST (and/or/not over :class:`Literal`), converts it to
disjunctive normal form (the semantic check and the planner work per disjunct), and
renders goals back to PDDL.

Every failure raises :class:`GoalError` with a machine-readable ``kind`` and an
actionable message, because the message is fed back to the LLM verbatim.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterable, Sequence, Union

# ---------------------------------------------------------------------------
# Errors


class GoalErrorKind:
    """Kinds of structural failures (string constants so they serialise trivially)."""

    NO_GOAL = "no_goal"
    UNBALANCED_PARENTHESES = "unbalanced_parentheses"
    EMPTY_GOAL = "empty_goal"
    UNSUPPORTED_CONSTRUCT = "unsupported_construct"
    MALFORMED = "malformed"
    TYPED_ARGUMENT = "typed_argument"
    TOO_COMPLEX = "too_complex"


class GoalError(ValueError):
    """A goal could not be extracted/parsed/built; ``message`` is meant for the LLM."""

    def __init__(self, kind: str, message: str, position: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.position = position


# ---------------------------------------------------------------------------
# S-expressions

SExpr = Union[str, tuple["SExpr", ...]]


@dataclass(frozen=True)
class _Token:
    text: str
    pos: int


_TOKEN_RE = re.compile(r"\(|\)|[^\s()]+")


def _strip_comments(text: str) -> str:
    # PDDL comments run from ';' to the end of the line; blank them out with spaces
    # of the same length so reported positions still index the original text.
    return re.sub(r";[^\n]*", lambda m: " " * len(m.group(0)), text)


def _tokenize(text: str) -> list[_Token]:
    return [_Token(m.group(0), m.start()) for m in _TOKEN_RE.finditer(_strip_comments(text))]


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


# ---------------------------------------------------------------------------
# Goal AST


@dataclass(frozen=True)
class Literal:
    """A (possibly negated) ground atom such as ``(on cup0 table0)``."""

    predicate: str
    args: tuple[str, ...] = ()
    negated: bool = False

    def positive(self) -> "Literal":
        return Literal(self.predicate, self.args, False)

    def negate(self) -> "Literal":
        return Literal(self.predicate, self.args, not self.negated)

    def atom_text(self) -> str:
        return "(" + " ".join((self.predicate, *self.args)) + ")"

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class And:
    children: tuple["Goal", ...]


@dataclass(frozen=True)
class Or:
    children: tuple["Goal", ...]


@dataclass(frozen=True)
class Not:
    child: "Goal"


Goal = Union[Literal, And, Or, Not]
Conjunction = tuple[Literal, ...]
DNF = list[Conjunction]

CONNECTIVES = ("and", "or", "not")
# Constructs the planner does not accept in goals (no quantifiers/ADL-implications/
# numeric fluents/equality): each gets an explicit message instead of "unknown predicate".
_UNSUPPORTED_ADVICE = {
    "exists": "Name the concrete objects instead; a choice between objects is written with 'or', "
              "e.g. (or (inhand apple0 human0) (inhand banana0 human0)).",
    "forall": "List every object explicitly inside 'and', e.g. (and (in nail0 box0) (in nail1 box0)).",
    "imply": "Rewrite (imply A B) as (or (not A) B), or state only the desired result.",
    "implies": "Rewrite (implies A B) as (or (not A) B), or state only the desired result.",
    "when": "Conditional goals are not supported; state only the desired result.",
    "if": "Conditional goals are not supported; state only the desired result.",
    "preference": "Preferences are not supported; state only the required result.",
    "at-end": "Temporal goals are not supported.",
    "at end": "Temporal goals are not supported.",
    "always": "Temporal goals are not supported.",
    "sometime": "Temporal goals are not supported.",
    "either": "Types are not written in goals; use object names only.",
}
_NUMERIC_HEADS = {"=", "<", ">", "<=", ">=", "increase", "decrease", "assign", "+", "-", "*", "/",
                  "scale-up", "scale-down", "total-cost"}


def _unsupported(head: str, expr: SExpr) -> GoalError:
    text = render_sexpr(expr)
    if head in _NUMERIC_HEADS:
        return GoalError(
            GoalErrorKind.UNSUPPORTED_CONSTRUCT,
            f"The goal uses '{head}' in `{text}`: numeric conditions, costs and equality are not "
            "supported in goals. Use only and, or, not and the domain's predicates with objects "
            "from the scene.",
        )
    return GoalError(
        GoalErrorKind.UNSUPPORTED_CONSTRUCT,
        f"The goal uses '{head}' in `{text}`, which is not supported. "
        + _UNSUPPORTED_ADVICE.get(head, "")
        + " Use only and, or, not and the domain's predicates with objects from the scene.",
    )


def is_unsupported_head(head: str) -> bool:
    return head.lower() in _UNSUPPORTED_ADVICE or head.lower() in _NUMERIC_HEADS


MAX_GOAL_DEPTH = 64  # nesting of a goal; deeper ones are refused before the recursive passes overflow


def _depth(expr: SExpr) -> int:
    deepest, todo = 0, [(expr, 1)]
    while todo:
        e, d = todo.pop()
        if not isinstance(e, str):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in e)
    return deepest


def build_goal(expr: SExpr) -> Goal:
    """Turn an s-expression into a goal AST.

    Keywords are case-insensitive (LLMs write ``OR``); predicate and object names are kept
    as written and checked against the signature later.  ``(not <atom>)`` becomes a
    negated :class:`Literal` directly so that the AST has one spelling per goal.
    """
    depth = _depth(expr)
    if depth > MAX_GOAL_DEPTH:
        raise GoalError(
            GoalErrorKind.TOO_COMPLEX,
            f"The goal nests {depth} levels of parentheses (at most {MAX_GOAL_DEPTH}); write it as one "
            "(and ...) or (or ...) of predicates, e.g. (and (on cup0 table0) (in apple0 bowl0)).",
        )
    return _build_goal(expr)


def _build_goal(expr: SExpr) -> Goal:
    if isinstance(expr, str):
        raise GoalError(
            GoalErrorKind.MALFORMED,
            f"`{expr}` is not a goal: write predicates in parentheses, e.g. (on cup0 table0).",
        )
    if not expr:
        raise GoalError(GoalErrorKind.EMPTY_GOAL,
                        "The goal contains empty parentheses `()`; write a predicate such as (on cup0 table0).")
    head = expr[0]
    if not isinstance(head, str):
        raise GoalError(
            GoalErrorKind.MALFORMED,
            f"`{render_sexpr(expr)}` starts with a parenthesis; an expression must start with "
            "and/or/not or a predicate name, e.g. (and (on cup0 table0)).",
        )
    low = head.lower()
    if low in ("and", "or"):
        if len(expr) == 1:
            raise GoalError(
                GoalErrorKind.EMPTY_GOAL,
                f"`({head})` contains nothing: '{low}' needs at least one predicate, "
                "e.g. (and (on cup0 table0)).",
            )
        children = tuple(_build_goal(c) for c in expr[1:])
        return And(children) if low == "and" else Or(children)
    if low == "not":
        if len(expr) != 2:
            raise GoalError(
                GoalErrorKind.MALFORMED,
                f"`{render_sexpr(expr)}`: 'not' takes exactly one expression, e.g. (not (on cup0 table0)).",
            )
        child = _build_goal(expr[1])
        if isinstance(child, Literal) and not child.negated:
            return child.negate()
        return Not(child)
    if is_unsupported_head(low):
        raise _unsupported(low, expr)
    args = expr[1:]
    for i, a in enumerate(args):
        if not isinstance(a, str):
            inner = a[0] if a and isinstance(a[0], str) else ""
            if inner and is_unsupported_head(inner):
                raise _unsupported(inner.lower(), a)
            raise GoalError(
                GoalErrorKind.MALFORMED,
                f"In `{render_sexpr(expr)}` the argument `{render_sexpr(a)}` is an expression; "
                f"arguments of '{head}' must be object names, e.g. ({head} cup0 table0). "
                "Combine predicates with and/or/not instead of nesting them.",
            )
        if a == "-" or (a.startswith("-") and len(a) > 1 and i > 0):
            raise GoalError(
                GoalErrorKind.TYPED_ARGUMENT,
                f"`{render_sexpr(expr)}` contains a type annotation ('- type'); goals name objects "
                f"only, without types, e.g. ({head} {' '.join(x for x in args[:i] if isinstance(x, str))}).",
            )
    if head.startswith("?"):
        raise GoalError(GoalErrorKind.MALFORMED,
                        f"`{render_sexpr(expr)}` starts with the variable '{head}'; it must start with a predicate.")
    return Literal(head, tuple(args))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Extraction from free LLM text

_WRAPPER_RE = re.compile(r"\(\s*:?goal\b\s*:?", re.IGNORECASE)
_FENCE_RE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
_BARE_CONNECTIVE_RE = re.compile(r"(?<![\w(-])(and|or|not)\s*\(", re.IGNORECASE)
_PAREN_RE = re.compile(r"[()]")
_HEAD_RE = re.compile(r"\(\s*([^\s()]+)")
_NAME_RE = re.compile(r"[a-z][\w-]*")
_STRIPPED = "() "   # what the prose check strips from a candidate's ends


def _balanced_ends(text: str) -> dict[int, int]:
    """For every '(' of ``text``, the index just past the ')' that closes it (comments ignored);
    an unclosed '(' is missing. One pass: a scan per '(' made extraction quadratic."""
    clean = _strip_comments(text)
    ends: dict[int, int] = {}
    stack: list[int] = []
    for m in _PAREN_RE.finditer(clean):
        if m.group() == "(":
            stack.append(m.start())
        elif stack:
            ends[stack.pop()] = m.end()
    if len(ends) + len(stack) < text.count("("):
        ends.update(_commented_ends(text, clean))
    return ends


def _commented_ends(text: str, clean: str) -> dict[int, int]:
    """For a '(' inside a comment, what counting parentheses from there gives: the end of the
    first ')' after it that brings the depth back to the depth before it."""
    opens: list[tuple[int, int]] = []   # (position of a commented '(', depth before it)
    closes: list[tuple[int, int]] = []  # (position of a ')', depth after it)
    depth = 0
    for m in _PAREN_RE.finditer(text):
        i = m.start()
        if clean[i] == "(":
            depth += 1
        elif clean[i] == ")":
            depth -= 1
            closes.append((i, depth))
        else:
            opens.append((i, depth))
    ends: dict[int, int] = {}
    nearest: dict[int, int] = {}        # depth -> end of the nearest ')' right of the current '('
    k = len(closes) - 1
    for i, before in reversed(opens):
        while k >= 0 and closes[k][0] > i:
            nearest[closes[k][1]] = closes[k][0] + 1
            k -= 1
        if before in nearest:
            ends[i] = nearest[before]
    return ends


def _balanced_end(text: str, open_pos: int) -> int | None:
    """Index just past the ')' matching the '(' at ``open_pos``; None if never closed."""
    return _balanced_ends(text).get(open_pos)


def _block_end(text: str, start: int) -> int:
    """End of the paragraph/code block starting at ``start`` (for unclosed goals)."""
    ends = [len(text)]
    fence = text.find("```", start)
    if fence >= 0:
        ends.append(fence)
    blank = re.search(r"\n\s*\n", text[start:])
    if blank:
        ends.append(start + blank.start())
    return min(ends)


def _wrap_content(content: str) -> str:
    """Normalise the inside of a goal wrapper to a single expression text.

    ``and (a) (b)`` (bare connective, as in the original AutoGPT+P example prompt)
    becomes ``(and (a) (b))``; several top-level atoms become an implicit conjunction.
    """
    stripped = content.strip()
    m = re.match(r"(and|or|not)\b", stripped, re.IGNORECASE)
    if m:
        return "(" + stripped + ")"
    try:
        items = parse_sexprs(stripped)
    except GoalError:
        return stripped  # let the parser report the precise error
    if len(items) > 1 and all(not isinstance(i, str) for i in items):
        return "(and " + stripped + ")"
    return stripped


def _candidate_expressions(text: str, heads: set[str] | None) -> list[tuple[int, int]]:
    """Spans of top-level parenthesised expressions that look like goals (linear in ``text``:
    closing parentheses are matched once, and the checks of a span read only its ends)."""
    spans: list[tuple[int, int]] = []
    ends = _balanced_ends(text)
    kept_before: list[int] | None = None    # [k]: last index < k whose character is not stripped
    spaces: list[int] | None = None         # [k]: how many ' ' text[:k] has
    i = 0
    for j in sorted(ends):                  # an unclosed '(' is never a candidate
        if j < i:
            continue
        end = ends[j]
        m = _HEAD_RE.match(text, j, end)
        head = m.group(1).lower() if m else ""
        plausible = head in CONNECTIVES or (
            (heads is None and _NAME_RE.fullmatch(head) is not None)
            or (heads is not None and head in heads)
        )
        # require at least one argument or a connective: "(see above)" style prose
        # with a known predicate name is rare, bare words in parentheses are common
        if plausible and not (head in CONNECTIVES or heads is not None):
            if kept_before is None:
                kept_before = list(itertools.accumulate(
                    (-1 if c in _STRIPPED else k for k, c in enumerate(text)), max, initial=-1))
                spaces = list(itertools.accumulate((c == " " for c in text), initial=0))
            # " " in text[j:end].strip("() "): the head is kept, so the stripped text runs from
            # the first kept character (at most the head's start) to the last one before end
            first = j
            while text[first] in _STRIPPED:
                first += 1
            last = kept_before[end]
            plausible = last > first and spaces[last] - spaces[first + 1] > 0
        if plausible:
            spans.append((j, end))
            i = end
    return spans


def extract_goal_text(answer: str, predicates: Iterable[str] | None = None) -> str:
    """Find the goal expression inside a free-text LLM answer.

    Order of preference, each taking the *last* occurrence because the final answer
    follows the reasoning: an explicit ``(:goal ...)`` wrapper (also ``(goal: ...)``
    and ``(goal ...)`` seen in the original logs); the last markdown code block with a
    parenthesis; a bare ``and (...)`` / ``or (...)``; the last run of goal-like
    parenthesised expressions in prose.  ``predicates`` (if given) makes the prose
    fallback recognise only known predicate names.  Raises :class:`GoalError`.
    """
    if answer is None or not answer.strip():
        raise GoalError(GoalErrorKind.NO_GOAL,
                        "Your answer was empty. Answer with the goal in PDDL, e.g. (:goal (and (on cup0 table0))).")
    heads = {p.lower() for p in predicates} if predicates is not None else None

    whole = answer.strip()
    if whole.startswith("(") and whole.endswith(")") and not _WRAPPER_RE.search(whole):
        # the answer is nothing but expressions: hand it over whole, so that an extra or
        # missing ')' is reported by the parser instead of being silently cut off
        return _wrap_content(whole)

    wrappers = list(_WRAPPER_RE.finditer(answer))
    if wrappers:
        w = wrappers[-1]
        end = _balanced_end(answer, w.start())
        if end is None:
            # Unclosed wrapper: hand the rest of the block to the parser, which reports
            # the unmatched '(' precisely.
            content = answer[w.end():_block_end(answer, w.end())]
            return _wrap_content(content)
        return _wrap_content(answer[w.end():end - 1])

    fences = [m.group(1) for m in _FENCE_RE.finditer(answer) if "(" in m.group(1)]
    if fences:
        return extract_goal_text(_unfenced(fences[-1]), predicates) if _WRAPPER_RE.search(fences[-1]) \
            else _wrap_content(_unfenced(fences[-1]))

    bare = list(_BARE_CONNECTIVE_RE.finditer(answer))
    spans = _candidate_expressions(answer, heads)
    if bare:
        b = bare[-1]
        stop = _block_end(answer, b.start())
        # a bare connective that is not itself inside a parenthesised candidate and is
        # not followed by a later goal-like expression in another paragraph
        if not any(s <= b.start() < e for s, e in spans) and not any(s >= stop for s, _ in spans):
            return _wrap_content(answer[b.start():stop].strip().rstrip(".").strip())
    if spans:
        # the last run of expressions separated only by whitespace/commas
        run = [spans[-1]]        # newest first
        for s, e in reversed(spans[:-1]):
            if answer[e:run[-1][0]].strip(" \t\n,`") == "":
                run.append((s, e))
            else:
                break
        return _wrap_content(" ".join(answer[s:e] for s, e in reversed(run)))
    raise GoalError(
        GoalErrorKind.NO_GOAL,
        "Your answer did not contain a goal in PDDL. Write the goal as (:goal (and (predicate object ...) ...)), "
        "e.g. (:goal (and (on cup0 table0))).",
    )


def _unfenced(body: str) -> str:
    return body.strip()


def parse_goal(text: str, predicates: Iterable[str] | None = None) -> Goal:
    """Extract, parse and build a goal from free LLM text (raises :class:`GoalError`)."""
    expr_text = extract_goal_text(text, predicates)
    items = parse_sexprs(expr_text)
    if not items:
        raise GoalError(GoalErrorKind.EMPTY_GOAL,
                        "The goal is empty. Write at least one predicate, e.g. (:goal (and (on cup0 table0))).")
    if len(items) > 1:
        if all(not isinstance(i, str) for i in items):
            items = [("and", *items)]
        else:
            raise GoalError(
                GoalErrorKind.MALFORMED,
                f"`{expr_text.strip()}` is not one expression; wrap the goal in (and ...) or (or ...).",
            )
    return build_goal(items[0])


# ---------------------------------------------------------------------------
# Rendering


def render(goal: Goal) -> str:
    """PDDL text of a goal; ``parse_goal(render(g)) == g``."""
    if isinstance(goal, Literal):
        atom = goal.atom_text()
        return f"(not {atom})" if goal.negated else atom
    if isinstance(goal, And):
        return "(and " + " ".join(render(c) for c in goal.children) + ")"
    if isinstance(goal, Or):
        return "(or " + " ".join(render(c) for c in goal.children) + ")"
    if isinstance(goal, Not):
        return "(not " + render(goal.child) + ")"
    raise TypeError(f"not a goal: {goal!r}")


def render_dnf(dnf: Sequence[Conjunction]) -> str:
    """PDDL text of a DNF: ``(and ...)`` for one disjunct, ``(or (and ...) ...)`` otherwise."""
    conj = ["(and " + " ".join(render(lit) for lit in c) + ")" if c else "(and)" for c in dnf]
    if len(conj) == 1:
        return conj[0]
    return "(or " + " ".join(conj) + ")"


def literals(goal: Goal) -> list[Literal]:
    """All literals in the goal, in order of appearance (negations as written)."""
    if isinstance(goal, Literal):
        return [goal]
    if isinstance(goal, Not):
        return literals(goal.child)
    return [lit for c in goal.children for lit in literals(c)]


# ---------------------------------------------------------------------------
# Negation normal form and DNF


def to_nnf(goal: Goal, negate: bool = False) -> Goal:
    """Push negations down to the atoms (de Morgan); no Not node remains."""
    if isinstance(goal, Literal):
        return goal.negate() if negate else goal
    if isinstance(goal, Not):
        return to_nnf(goal.child, not negate)
    children = tuple(to_nnf(c, negate) for c in goal.children)
    if isinstance(goal, And):
        return Or(children) if negate else And(children)
    return And(children) if negate else Or(children)


def to_dnf(goal: Goal, max_disjuncts: int = 4096) -> DNF:
    """Disjunctive normal form: a list of conjunctions of literals.

    Duplicate literals inside a conjunction and duplicate conjunctions are removed
    (order of first appearance kept, so rendering is stable).  Distribution can blow up
    exponentially; beyond ``max_disjuncts`` a :class:`GoalError` asks for a simpler goal.
    """

    def go(g: Goal) -> DNF:
        if isinstance(g, Literal):
            return [(g,)]
        if isinstance(g, Or):
            out: DNF = []
            for c in g.children:
                out.extend(go(c))
                _guard(len(out))
            return out
        if isinstance(g, And):
            acc: DNF = [()]
            for c in g.children:
                sub = go(c)
                _guard(len(acc) * len(sub))
                acc = [a + b for a in acc for b in sub]
            return acc
        raise TypeError(f"unexpected node after NNF: {g!r}")

    def _guard(n: int) -> None:
        if n > max_disjuncts:
            raise GoalError(
                GoalErrorKind.TOO_COMPLEX,
                f"The goal expands to more than {max_disjuncts} alternatives; write a simpler goal "
                "with fewer nested 'or' expressions.",
            )

    result: DNF = []
    seen: set[Conjunction] = set()
    for conj in go(to_nnf(goal)):
        dedup = tuple(dict.fromkeys(conj))
        if dedup not in seen:
            seen.add(dedup)
            result.append(dedup)
    return result


def dnf_to_goal(dnf: Sequence[Conjunction]) -> Goal:
    """Goal AST of a DNF (``Or`` of ``And``; a single disjunct becomes an ``And``)."""
    conj = [And(tuple(c)) for c in dnf]
    return conj[0] if len(conj) == 1 else Or(tuple(conj))
