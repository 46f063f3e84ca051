"""A goal out of an LLM's free text: prose, markdown fences, ``(:goal ...)`` wrappers, and in the
original AutoGPT+P data even a bare ``and (on spoon0 table0)``. Linear in the text's length
(4000 '(' took ~1 s when this was quadratic)."""
from __future__ import annotations

import itertools
import re
from typing import Iterable

from affplan_ros.core.goals.errors import GoalError, GoalErrorKind
from affplan_ros.core.goals.formula import CONNECTIVES, Goal, build_goal
from affplan_ros.core.goals.sexpr import parse_sexprs, strip_comments

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
    clean = strip_comments(text)
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
