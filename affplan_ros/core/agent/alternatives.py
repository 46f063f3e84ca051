"""Suggest Alternative: an object present in the scene to use instead of a missing one
(AutoGPT+P, Algorithm 2), and the naive variant it is compared with.

Affordance-guided (``method="affordance"``):

1. ask the LLM which affordances of the missing class the task needs (answer: a list);
   only affordances the class has are kept;
2. candidates: scene objects whose class has all of them. Exactly one candidate is the
   answer without a further question; none falls back to the direct question;
3. the rarest of those affordances in the scene (fewest objects having it; ties go to the
   one the LLM named first); none (the LLM named no usable affordance) falls back to the
   direct question;
4. ask which candidate replaces the missing class best for that affordance; an answer
   that is not a candidate is corrected (at most ``max_corrections`` times, as AutoGPT+P
   does), then falls back to the direct question.

The direct question (and the whole ``naive`` method) asks which object of the scene can
replace the missing one for the task; its answer must name a scene object class.
Every answer is parsed, never executed; the result records each branch taken.

Prompts come from an injected :class:`AlternativePrompter` (``affplan_ros.llm`` fills the
templates): ``core`` does not import the LLM layer.
"""
from __future__ import annotations

import ast
import json
import re
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterable, Optional, Protocol, Sequence

from affplan_ros.core.goals.loop import ChatModelError, Message, ask
from affplan_ros.core.model.scene import class_of
from affplan_ros.core.ports import ChatModel


class AlternativeMethod(str, Enum):
    AFFORDANCE = "affordance"
    NAIVE = "naive"


class Branch(str, Enum):
    """Which way Algorithm 2 went (recorded in order in :attr:`AlternativeResult.branches`)."""

    SINGLE_CANDIDATE = "single_candidate"      # one candidate: chosen without asking
    RAREST_AFFORDANCE = "rarest_affordance"    # the LLM chose among candidates for the rarest affordance
    CORRECTED = "corrected"                    # a non-candidate answer was corrected
    NO_CANDIDATES = "no_candidates"            # fallback: no object has all needed affordances
    NO_AFFORDANCE = "no_affordance"            # fallback: no usable affordance named
    NOT_A_CANDIDATE = "not_a_candidate"        # fallback: answers stayed outside the candidates
    UNKNOWN_CLASS = "unknown_class"            # fallback: the missing class is not in the OAM
    DIRECT = "direct"                          # the direct question was asked (naive, or a fallback)


@dataclass(frozen=True)
class AlternativeQuestion:
    """The structured question behind an alternative prompt (for backends that read it, see
    ``goals.loop.ask``): ``kind`` affordances | choose | direct | correction; ``options`` the
    affordances offered or the objects to choose from."""

    kind: str
    missing: str
    task: str
    options: tuple[str, ...]
    affordance: Optional[str] = None


class AlternativePrompter(Protocol):
    def system(self) -> str: ...

    def affordances_question(self, missing: str, task: str, affordances: Sequence[tuple[str, str]]) -> str: ...

    def choose_question(self, missing: str, affordance: str, candidates: Sequence[str]) -> str: ...

    def correction(self, answer: str, candidates: Sequence[str]) -> str: ...

    def direct_question(self, missing: str, task: str, objects: Sequence[str]) -> str: ...


@dataclass
class AlternativeResult:
    missing: str
    alternative: Optional[str] = None          # a class present in the scene, or None
    method: str = AlternativeMethod.AFFORDANCE.value
    branches: list[str] = field(default_factory=list)
    required: list[str] = field(default_factory=list)     # affordances the LLM said the task needs
    candidates: list[str] = field(default_factory=list)
    rarest: Optional[str] = None
    exchanges: list[tuple[str, str]] = field(default_factory=list)  # (question, answer)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    seconds: float = 0.0
    error: Optional[str] = None

    @property
    def message(self) -> str:
        if self.alternative:
            return f"{self.alternative} can replace {self.missing}"
        return f"no alternative for {self.missing} found" + (f": {self.error}" if self.error else "")


# -- parsing the answers ---------------------------------------------------------------------

DIRECT_CHOICES = 30    # kinds of things the direct question offers at most

def direct_choices(missing: str, objects: Sequence[str], affordances_of: Callable[[str], set[str]]) -> list[str]:
    """The kinds of things the direct question offers: every class of ``objects`` once; in a home
    of more than ``DIRECT_CHOICES`` kinds, those most like the missing one (most shared
    affordances), so the question stays the same size however much the home holds."""
    choices = list(dict.fromkeys(objects))
    if len(choices) > DIRECT_CHOICES:
        like = affordances_of(missing)
        choices = sorted(choices, key=lambda c: -len(like & affordances_of(c)))[:DIRECT_CHOICES]
    return choices


_LIST_RE = re.compile(r"\[[^\[\]]*\]")


def parse_affordance_list(text: str, offered: Sequence[str]) -> list[str]:
    """The affordances named in the answer, restricted to ``offered``, in the LLM's order.

    The last ``[...]`` list (Python or JSON) wins; without one, every offered name mentioned
    as a whole word counts (answers like "grasp, carry and heat-resistance")."""
    text = text or ""
    names: list[str] = []
    for m in reversed(list(_LIST_RE.finditer(text))):
        for loader in (ast.literal_eval, json.loads):
            try:
                value = loader(m.group(0))
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, (list, tuple)):
                names = [str(v).strip().lower() for v in value]
                break
        if names or m.group(0).replace(" ", "") == "[]":
            break
    else:
        found = []
        for a in offered:
            hit = re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", text, re.IGNORECASE)
            if hit:
                found.append((hit.start(), a))
        names = [a for _, a in sorted(found)]
    offered_set = set(offered)
    return list(dict.fromkeys(n for n in names if n in offered_set))


_OBJECT_RE = re.compile(r"OBJECT\s*:\s*\**\s*`?([A-Za-z][\w\- ]*)", re.IGNORECASE)


def parse_object_answer(text: str) -> Optional[str]:
    """The class after the last ``OBJECT:`` (``OBJECT: plastic cup`` -> ``plastic_cup``)."""
    hits = _OBJECT_RE.findall(text or "")
    if not hits:
        return None
    word = hits[-1].strip().splitlines()[0].strip().lower()
    return re.sub(r"[\s\-]+", "_", word) or None


def match_class(answer: Optional[str], classes: Sequence[str]) -> Optional[str]:
    """The class in ``classes`` the answer names: exact, an instance name (``banana0``),
    or words of a multi-word class (``plastic cup``); None otherwise."""
    if not answer:
        return None
    lowered = {c.lower(): c for c in classes}
    for cand in (answer, class_of(answer), answer.rstrip("s")):
        if cand in lowered:
            return lowered[cand]
    return None


# -- Algorithm 2 ---------------------------------------------------------------------------------


@dataclass
class AlternativeSuggester:
    """Runs Algorithm 2 (or the naive question) for one missing class at a time."""

    llm: ChatModel
    prompter: AlternativePrompter
    oam: object                                  # OamDatabase: affordances per class
    descriptions: object = None                  # AffordanceSet, for the affordance question
    method: AlternativeMethod = AlternativeMethod.AFFORDANCE
    max_corrections: int = 3

    def suggest(self, missing: str, task: str, scene_classes: Sequence[str],
                exclude: Iterable[str] = ()) -> AlternativeResult:
        """An alternative for ``missing`` among ``scene_classes`` (one entry per object in the
        scene, so rarity counts objects); ``exclude``: classes not to propose (rejected ones)."""
        t0 = time.monotonic()
        skip = set(exclude) | {missing}
        objects = [c for c in scene_classes if c not in skip]
        res = AlternativeResult(missing, method=AlternativeMethod(self.method).value)
        try:
            if AlternativeMethod(self.method) is AlternativeMethod.NAIVE:
                self._direct(res, task, objects)
            else:
                self._affordance(res, task, objects)
        except ChatModelError as exc:
            res.alternative, res.error = None, f"LLM error: {exc}"
        res.seconds = time.monotonic() - t0
        return res

    # -- steps ---------------------------------------------------------------------------
    def _ask(self, res: AlternativeResult, messages: list[Message], question: str,
             context: Optional[AlternativeQuestion] = None) -> str:
        messages.append({"role": "user", "content": question})
        c = ask(self.llm, messages, context)
        text = c.text or ""
        messages.append({"role": "assistant", "content": text})
        res.exchanges.append((question, text))
        res.llm_calls += 1
        res.prompt_tokens += c.prompt_tokens
        res.completion_tokens += c.completion_tokens
        res.llm_seconds += c.seconds
        return text

    def _fresh(self) -> list[Message]:
        return [{"role": "system", "content": self.prompter.system()}]

    def _affordance(self, res: AlternativeResult, task: str, objects: Sequence[str]) -> None:
        if res.missing not in self.oam:
            res.branches.append(Branch.UNKNOWN_CLASS.value)
            return self._direct(res, task, objects)
        offered = sorted(self.oam.affordances_of(res.missing))
        described = [(a, self._description(a)) for a in offered]
        messages = self._fresh()
        answer = self._ask(res, messages, self.prompter.affordances_question(res.missing, task, described),
                           AlternativeQuestion("affordances", res.missing, task, tuple(offered)))
        res.required = parse_affordance_list(answer, offered)
        affs = {c: self._affordances_of(c) for c in set(objects)}
        # Candidates are classes: two bananas are one candidate (AutoGPT+P counted objects
        # and could ask to choose between "banana" and "banana").
        res.candidates = list(dict.fromkeys(c for c in objects if set(res.required) <= affs[c]))
        if len(res.candidates) == 1:
            res.branches.append(Branch.SINGLE_CANDIDATE.value)
            res.alternative = res.candidates[0]
            return
        if not res.candidates:
            res.branches.append(Branch.NO_CANDIDATES.value)
            return self._direct(res, task, objects)
        res.rarest = rarest_affordance(res.required, objects, affs)
        if res.rarest is None:
            res.branches.append(Branch.NO_AFFORDANCE.value)
            return self._direct(res, task, objects)
        res.branches.append(Branch.RAREST_AFFORDANCE.value)
        answer = self._ask(res, messages, self.prompter.choose_question(res.missing, res.rarest, res.candidates),
                           AlternativeQuestion("choose", res.missing, task, tuple(res.candidates), res.rarest))
        chosen = self._corrected(res, messages, answer, res.candidates, task)
        if chosen is None:
            res.branches.append(Branch.NOT_A_CANDIDATE.value)
            return self._direct(res, task, objects)
        res.alternative = chosen

    def _direct(self, res: AlternativeResult, task: str, objects: Sequence[str]) -> None:
        res.branches.append(Branch.DIRECT.value)
        choices = direct_choices(res.missing, objects, self._affordances_of)
        if not choices:
            res.error = "the scene has no object that could replace it"
            return
        messages = self._fresh()
        answer = self._ask(res, messages, self.prompter.direct_question(res.missing, task, choices),
                           AlternativeQuestion("direct", res.missing, task, tuple(choices)))
        res.alternative = self._corrected(res, messages, answer, choices, task)
        if res.alternative is None:
            res.error = "the answers named no object of the scene"

    def _corrected(self, res: AlternativeResult, messages: list[Message], answer: str,
                   choices: Sequence[str], task: str = "") -> Optional[str]:
        """The choice the answer names; otherwise ask again (bounded) to pick from the list."""
        for attempt in range(self.max_corrections + 1):
            chosen = match_class(parse_object_answer(answer), choices)
            if chosen is not None or attempt == self.max_corrections:
                return chosen
            res.branches.append(Branch.CORRECTED.value)
            named = parse_object_answer(answer) or answer.strip()[:60]
            answer = self._ask(res, messages, self.prompter.correction(named, choices),
                               AlternativeQuestion("correction", res.missing, task, tuple(choices)))
        return None

    def _affordances_of(self, class_name: str) -> set[str]:
        return set(self.oam.affordances_of(class_name)) if class_name in self.oam else set()

    def _description(self, affordance: str) -> str:
        return self.descriptions.description(affordance) if self.descriptions is not None else ""


def rarest_affordance(required: Sequence[str], objects: Sequence[str], affordances_of) -> Optional[str]:
    """The required affordance fewest scene objects have (at least one must); ties: the
    first named. ``objects`` has one class entry per object; ``affordances_of``: class -> set."""
    counts = {a: sum(a in affordances_of[c] for c in objects) for a in required}
    present = [a for a in required if counts[a] > 0]
    return min(present, key=lambda a: counts[a]) if present else None
