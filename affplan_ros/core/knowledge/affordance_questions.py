"""What the LLM is asked about a class, and how its answers are read: affordance definitions
(``data/affordance_questions.yaml`` or the original CSV), logic formulas over yes/no questions
(``&``, ``|``, ``!``), and the parsers of list and yes/no answers, with the errors of OAM
generation."""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import yaml

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.knowledge.affordances import load_affordances

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_QUESTIONS = DATA_DIR / "affordance_questions.yaml"


class OamGenerationError(AffplanError, RuntimeError):
    """OAM generation cannot go on (bad definitions, bad answers, LLM failure)."""


class FormulaError(OamGenerationError):
    """An affordance formula does not parse."""


class AnswerFormatError(OamGenerationError):
    """The LLM answered a yes/no question with something else, also after the retries."""

    def __init__(self, class_name: str, question: str, answer: str, attempts: int):
        self.class_name, self.question, self.answer, self.attempts = class_name, question, answer, attempts
        short = " ".join(answer.split())[:160] or "(empty)"
        super().__init__(f"class {class_name!r}: the LLM answered {short!r} to the yes/no question {question!r} "
                         f"({attempts} attempt{'s' if attempts != 1 else ''}); expected 'yes' or 'no'")


# -- logic formulas ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Atom:
    question: str          # with "{}" where the class name goes

    def atoms(self) -> list["Atom"]:
        return [self]

    def evaluate(self, ask: Callable[[str], bool]) -> bool:
        return ask(self.question)

    def __str__(self) -> str:
        return f"({self.question})"


@dataclass(frozen=True)
class Not:
    operand: "Formula"

    def atoms(self) -> list[Atom]:
        return self.operand.atoms()

    def evaluate(self, ask: Callable[[str], bool]) -> bool:
        return not self.operand.evaluate(ask)

    def __str__(self) -> str:
        return f"!{self.operand}"


@dataclass(frozen=True)
class And:
    operands: tuple["Formula", ...]

    def atoms(self) -> list[Atom]:
        return [a for o in self.operands for a in o.atoms()]

    def evaluate(self, ask: Callable[[str], bool]) -> bool:
        return all(o.evaluate(ask) for o in self.operands)  # short-circuits: later atoms are not asked

    def __str__(self) -> str:
        return "&".join(_wrap(o, Or) for o in self.operands)


@dataclass(frozen=True)
class Or:
    operands: tuple["Formula", ...]

    def atoms(self) -> list[Atom]:
        return [a for o in self.operands for a in o.atoms()]

    def evaluate(self, ask: Callable[[str], bool]) -> bool:
        return any(o.evaluate(ask) for o in self.operands)

    def __str__(self) -> str:
        return "|".join(str(o) for o in self.operands)


Formula = Union[Atom, Not, And, Or]


def _wrap(f: Formula, weaker) -> str:
    return f"({f})" if isinstance(f, weaker) else str(f)


def parse_formula(text: str) -> Formula:
    """Parse ``(q1)&!(q2)|((q3)|(q4))&(q5)``: a parenthesised text that starts with ``(`` or ``!``
    is a group, any other parenthesised text is an atomic question."""
    tokens = _tokenize(text)
    if not tokens:
        raise FormulaError(f"empty formula: {text!r}")
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def parse_or() -> Formula:
        nonlocal pos
        parts = [parse_and()]
        while peek() == "|":
            pos += 1
            parts.append(parse_and())
        return parts[0] if len(parts) == 1 else Or(tuple(parts))

    def parse_and() -> Formula:
        nonlocal pos
        parts = [parse_not()]
        while peek() == "&":
            pos += 1
            parts.append(parse_not())
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def parse_not() -> Formula:
        nonlocal pos
        tok = peek()
        if tok == "!":
            pos += 1
            return Not(parse_not())
        if isinstance(tok, tuple):
            pos += 1
            kind, inner = tok
            return parse_formula(inner) if kind == "group" else Atom(inner)
        raise FormulaError(f"formula {text!r}: expected a question in parentheses or '!' at token {pos + 1}, "
                           f"found {tok!r}")

    result = parse_or()
    if pos != len(tokens):
        raise FormulaError(f"formula {text!r}: unexpected {tokens[pos]!r} at token {pos + 1}")
    return result


def _tokenize(text: str) -> list:
    tokens: list = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "&|!":
            tokens.append(ch)
            i += 1
        elif ch == "(":
            depth, j = 1, i + 1
            while j < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
            if depth:
                raise FormulaError(f"formula {text!r}: unbalanced parenthesis at character {i + 1}")
            inner = text[i + 1:j - 1].strip()
            if not inner:
                raise FormulaError(f"formula {text!r}: empty parentheses at character {i + 1}")
            tokens.append(("group" if inner[0] in "(!" else "atom", inner))
            i = j
        else:
            raise FormulaError(f"formula {text!r}: text outside parentheses at character {i + 1} "
                               f"({text[i:i + 20]!r}); questions go in parentheses")
    return tokens


# -- affordance definitions -------------------------------------------------------------------

@dataclass(frozen=True)
class AffordanceQuestions:
    """What the LLM is asked about one affordance, in each strategy."""

    name: str
    description: str
    question: str          # yes/no strategy: one question with "{}" for the class ("" if the file has none)
    formula: Formula       # logic strategy


def load_affordance_questions(path: Union[str, Path, None] = None,
                              questions_from: Union[str, Path, None] = None) -> list[AffordanceQuestions]:
    """Definitions from our YAML (``affordances: [{name, description, question, formula}]``) or
    the original AutoGPT+P CSV/JSON (``proposed_affordances_alternative`` holds formulas,
    ``proposed_affordances`` single questions). ``questions_from`` takes the yes/no questions from
    a second file (the paper asked its yes/no strategy with ``proposed_affordances``)."""
    path = Path(path) if path else DEFAULT_QUESTIONS
    rows = _read_rows(path)
    single = {r["name"]: r["prompt"] for r in _read_rows(Path(questions_from))} if questions_from else {}

    descriptions = load_affordances()  # our wording, for files that give none
    out = []
    for r in rows:
        prompt = r["prompt"].strip()
        if not prompt:
            raise OamGenerationError(f"{path}: affordance {r['name']!r} has no question/formula")
        formula_text = r.get("formula") or (prompt if prompt.startswith(("(", "!")) else f"({prompt})")
        try:
            formula = parse_formula(formula_text)
        except FormulaError as exc:
            raise OamGenerationError(f"{path}: affordance {r['name']!r}: {exc}") from exc
        question = single.get(r["name"]) or r.get("question") or ""
        if not question:  # a formula file without single questions: a one-atom formula is its question
            atoms = formula.atoms()
            question = atoms[0].question if len(atoms) == 1 else ""
        for text in ([question] if question else []) + [a.question for a in formula.atoms()]:
            if "{}" not in text:
                raise OamGenerationError(f"{path}: affordance {r['name']!r}: question {text!r} has no '{{}}' "
                                         "for the object class")
        description = r.get("description", "").strip() or descriptions.description(r["name"])
        out.append(AffordanceQuestions(r["name"], description, question, formula))
    if not out:
        raise OamGenerationError(f"{path}: no affordance definitions")
    return out


def _read_rows(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OamGenerationError(f"cannot read affordance definitions {path}: {exc}") from exc
    if path.suffix in (".yaml", ".yml"):
        data = yaml.safe_load(text) or {}
        return [{"name": str(a["name"]), "description": str(a.get("description", "")),
                 "prompt": str(a.get("formula") or a.get("question") or ""),
                 "formula": str(a.get("formula", "")), "question": str(a.get("question", ""))}
                for a in data.get("affordances", [])]
    if path.suffix == ".json":
        entries = json.loads(text).get("affordance_types", [])
    else:
        entries = [dict(zip(("a", "b", "prompt", "description"), row)) for row in csv.reader(io.StringIO(text))]
        entries = [{"name": e["b"] if e["a"].isdigit() else e["a"],
                    "id": e["a"] if e["a"].isdigit() else e["b"], **e} for e in entries[1:]]
    rows = []
    for e in entries:
        name, prompt = str(e.get("name", "")).strip(), str(e.get("prompt", "")).strip()
        # The original JSON and CSV carry their header as a first entry; its id is not a number.
        if not name or not str(e.get("id", "0")).strip().isdigit():
            continue
        rows.append({"name": name, "description": str(e.get("description", "")), "prompt": prompt})
    return rows


# -- answers ------------------------------------------------------------------------------------

_ANSWER_KEY = re.compile(r"answer\s*[:=]\s*", re.IGNORECASE)
_WORDS = re.compile(r"[a-z]+")


def parse_yes_no(text: str) -> Optional[bool]:
    """True for yes, False for no, None when the answer is neither (or both)."""
    if text is None:
        return None
    t = text.strip().lower()
    keys = list(_ANSWER_KEY.finditer(t))
    m = keys[-1] if keys else None
    if m is not None:  # "... ANSWER: yes" (chain-of-thought style): the final verdict counts
        t = t[m.end():]
    said = {w for w in _WORDS.findall(t) if w in ("yes", "no")}
    return (said == {"yes"}) if len(said) == 1 else None  # "yes and no" is no answer


def _class_lines(text: str, classes: Sequence[str]) -> dict[str, str]:
    """Per class display name the rest of its line (``<class>: ...``) in an answer about several
    classes; a class without a line is left out (the first line of a class counts)."""
    wanted = {c.lower(): c for c in classes}
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        head, sep, rest = line.partition(":")
        name = re.sub(r"^(\d+[.)]\s*)?(a |an |the )?(typical )?", "", head.strip().strip("-*•`'\" ").lower())
        if sep and name in wanted and wanted[name] not in out:
            out[wanted[name]] = rest
    return out


def parse_yes_no_rows(text: str, classes: Sequence[str], count: int) -> dict[str, list[bool]]:
    """Per class the verdicts of its line (``<class>: yes, no, ...``, one per question in order)
    in an answer to ``count`` questions about ``classes``; a class whose line is missing or
    does not hold exactly ``count`` yes/no words is left out."""
    out = {}
    for cls, rest in _class_lines(text, classes).items():
        words = [w for w in re.split(r"[^a-z]+", rest.lower()) if w]
        if len(words) == count and set(words) <= {"yes", "no"}:
            out[cls] = [w == "yes" for w in words]
    return out


def parse_affordance_lines(text: str, classes: Sequence[str], vocabulary: Sequence[str]
                           ) -> dict[str, tuple[list[str], list[str]]]:
    """Per class display name the :func:`parse_affordance_list` of its line (``<class>: a, b``)
    in an answer about several classes; a class without a line is left out."""
    return {c: parse_affordance_list(rest, vocabulary) for c, rest in _class_lines(text, classes).items()}


def parse_affordance_list(text: str, vocabulary: Sequence[str]) -> tuple[list[str], list[str]]:
    """(known affordances in the answer, other terms) from a comma/newline separated list."""
    known = {v.lower(): v for v in vocabulary}
    found, other = [], []
    for raw in re.split(r"[,\n;]+", text or ""):
        term = raw.strip().strip("-*•. `'\"").strip().lower()
        term = re.sub(r"^\d+[.)]\s*", "", term)      # "1. grasp"
        term = term.split(":")[0].strip()            # "grasp: can be held" -> "grasp"
        if not term or term in ("none", "no affordances"):
            continue
        if term in known:
            if known[term] not in found:
                found.append(known[term])
        elif term.replace(" ", "-") in known:
            found.append(known[term.replace(" ", "-")])
        else:
            other.append(term)
    return found, other
