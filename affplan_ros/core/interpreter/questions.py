"""Questions a person asks about what the robot knows, answered from its memory (CoPAL's dialogue
level): nothing moves, nothing is planned.

``question_of`` reads a parse of ``commands.lark``'s ``question`` rule into a :class:`Question`;
``answer`` words the reply from a :class:`~affplan_ros.core.model.memory.Memory`: what is in or
on a place, where things are, how many there are, what affords a verb's use, what the robot did
last and why it failed. Every answer says what the robot has not looked at yet, so "nothing" is
never claimed for a place it has not seen.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Mapping, Sequence

from affplan_ros.core.model.memory import Memory
from affplan_ros.core.model.scene import class_of

MAX_LISTED = 12   # objects named in one answer; more are counted


class QuestionKind(str, Enum):
    CONTENTS = "contents"    # what is in / on the fridge
    WHERE = "where"          # where is the cup
    COUNT = "count"          # how many apples are there (on the table)
    TOOLS = "tools"          # what can I cut with
    DID = "did"              # what did you just do
    WHY = "why"              # why did that fail


@dataclass(frozen=True)
class Question:
    kind: QuestionKind
    classes: tuple[str, ...] = ()          # the noun's classes (CONTENTS: the place's)
    noun: str = ""                         # the noun as said ("fridge")
    preposition: str = ""                  # in | on | at (CONTENTS, COUNT with a place)
    place_classes: tuple[str, ...] = ()    # COUNT: the place's classes
    place_noun: str = ""
    affordances: tuple[str, ...] = ()      # TOOLS: what the verb needs
    group: str = ""                        # the noun is a group ("things": carryables), not a class


_KINDS = {"q_contents": QuestionKind.CONTENTS, "q_where": QuestionKind.WHERE, "q_count": QuestionKind.COUNT,
          "q_tools": QuestionKind.TOOLS, "q_did": QuestionKind.DID, "q_why": QuestionKind.WHY}
_PREPOSITIONS = {"IN": "in", "ON": "on", "AT": "at"}


def is_question(tree) -> bool:
    return bool(tree.children) and getattr(tree.children[0], "data", "") in _KINDS


def question_of(tree, toks: Sequence, verb_affordances: Mapping[str, Sequence[str]],
                purposes: Mapping[str, Sequence[str]]) -> Question:
    """The question a parse tree (``start`` whose child is a ``q_*`` rule) asks; ``toks`` are the
    reading's tokens (the tree's leaves index them); the vocabulary's verb and purpose affordances."""
    node = tree.children[0]
    leaves = [toks[int(c.value)] for c in node.children if not hasattr(c, "data")]
    kind = _KINDS[node.data]
    nouns = [t for t in leaves if t.cat == "NOUN"]
    prep = next((_PREPOSITIONS[t.cat] for t in leaves if t.cat in _PREPOSITIONS), "")
    if kind is QuestionKind.TOOLS:
        verb = next(t for t in leaves if t.cat not in ("WHAT", "WITH"))
        if verb.cat == "PURPOSE":   # "cut with"
            return Question(kind, affordances=tuple(purposes.get(verb.text, ())), noun=verb.text)
        return Question(kind, affordances=tuple(verb_affordances.get(verb.cat, ())), noun=f"{verb.cat.lower()} with")
    group = (nouns[0].value.group or "") if nouns else ""
    if kind is QuestionKind.COUNT and len(nouns) > 1:
        return Question(kind, nouns[0].value.classes, nouns[0].text, prep, nouns[1].value.classes, nouns[1].text,
                        group=group)
    if nouns:
        return Question(kind, nouns[0].value.classes, nouns[0].text, prep, group=group)
    return Question(kind)


def answer(q: Question, memory: Memory, oam=None) -> str:
    """The reply to ``q`` from ``memory`` (``oam``: affordances of classes, for TOOLS)."""
    return _ANSWERS[q.kind](q, memory, oam)


# -- the answers ----------------------------------------------------------------------------

def _contents(q: Question, memory: Memory, oam) -> str:
    places = _instances(memory, q.classes, places_too=True)
    if not places:
        return f"I know of no {q.noun} here."
    parts = []
    for place in places:
        preps = ("in", "on") if q.preposition == "at" else (q.preposition or "in",)
        held = sorted({r.args[0] for r in memory.relations
                       if r.predicate in preps and len(r.args) == 2 and r.args[1] == place})
        record = memory.locations.get(place)
        if held:
            parts.append(f"{_say_list(held)} {'is' if len(held) == 1 else 'are'} {preps[0]} {place}")
        elif record is not None and not record.explored:
            parts.append(f"I have not looked {preps[0]} {place} yet")
        else:
            parts.append(f"nothing that I know of is {preps[0]} {place}")
    return _sentence("; ".join(parts))


def _where(q: Question, memory: Memory, oam) -> str:
    things = _members(q, memory)
    if not things:
        return _sentence(f"I have not seen any {q.noun}" + _unexplored_note(memory))
    return _sentence("; ".join(_whereabouts(memory, t) for t in things[:MAX_LISTED])
                     + _more(len(things)) + (_unexplored_note(memory) if len(things) == 1 else ""))


def _count(q: Question, memory: Memory, oam) -> str:
    things = _members(q, memory)
    where = ""
    if q.place_classes:
        places = set(_instances(memory, q.place_classes, places_too=True))
        preps = ("in", "on") if q.preposition == "at" else (q.preposition,)
        things = [t for t in things if any(r.predicate in preps and r.args[:1] == (t,) and r.args[-1] in places
                                           for r in memory.relations)]
        where = f" {q.preposition} the {q.place_noun}"
    n = len(things)
    said = q.classes[0].replace("_", " ") if n == 1 and q.classes and not q.group else (
        q.noun if q.noun.endswith("s") else q.noun + "s")
    listed = f": {_say_list(things)}" if things else ""
    return _sentence(f"I know of {n} {said}{where}{listed}" + _unexplored_note(memory))


def _tools(q: Question, memory: Memory, oam) -> str:
    if not q.affordances:
        return f"I do not know what {q.noun} needs."
    need = {a for a in q.affordances if not a.startswith("-")}
    never = {a[1:] for a in q.affordances if a.startswith("-")}   # "-drinkable": not eaten
    fits = sorted(o for o, rec in memory.objects.items() if not rec.is_agent and o not in memory.locations
                  and need <= set(_affordances(rec, oam)) and not never & set(_affordances(rec, oam)))
    if not fits:
        return _sentence(f"Nothing I know of affords {' and '.join(sorted(need))}" + _unexplored_note(memory))
    return _sentence(f"{_say_list(fits)} {'is' if len(fits) == 1 else 'are'} there to {q.noun}"
                     + _unexplored_note(memory))


def _did(q: Question, memory: Memory, oam) -> str:
    plan = memory.last_plan
    if plan is None:
        return "I have not done anything yet."
    steps = "; ".join(plan.steps) or "nothing (the goal already held)"
    if not plan.executed:
        return f"For \"{plan.task}\" I planned {steps}, but did not carry it out."
    outcome = "it worked" if plan.success else f"it failed: {plan.message}"
    return f"For \"{plan.task}\" I carried out {steps}; {outcome}."


def _why(q: Question, memory: Memory, oam) -> str:
    plan = memory.last_plan
    if plan is None or not plan.executed:
        return "Nothing has failed: I have not carried out a plan yet."
    if plan.success:
        return f"Nothing failed: \"{plan.task}\" worked."
    return f"\"{plan.task}\" failed: {plan.message or 'the robot did not say why'}."


_ANSWERS = {QuestionKind.CONTENTS: _contents, QuestionKind.WHERE: _where, QuestionKind.COUNT: _count,
            QuestionKind.TOOLS: _tools, QuestionKind.DID: _did, QuestionKind.WHY: _why}


# -- helpers ----------------------------------------------------------------------------------

def _members(q: Question, memory: Memory) -> list[str]:
    """What the question's noun names in memory: its classes' objects, or a group's members."""
    if q.group == "carryables":
        return sorted(n for n, rec in memory.objects.items() if not rec.is_agent and n not in memory.locations
                      and rec.class_name not in {_class(memory, p) for p in memory.locations})
    if q.group == "locations":
        return sorted(memory.locations)
    return _instances(memory, q.classes)


def _instances(memory: Memory, classes: Iterable[str], places_too: bool = False) -> list[str]:
    """The objects (and places, with ``places_too``) of ``classes``, in the classes' order."""
    names = list(memory.objects) + ([p for p in memory.locations if p not in memory.objects] if places_too else [])
    out = []
    for cls in classes:
        out += sorted(n for n in names if _class(memory, n) == cls and n not in out)
    return out


def _class(memory: Memory, name: str) -> str:
    rec = memory.objects.get(name)
    return rec.class_name if rec is not None else class_of(name)


def _affordances(rec, oam) -> tuple[str, ...]:
    if rec.affordances:
        return tuple(rec.affordances)
    if oam is not None and rec.class_name in oam:
        return tuple(oam.affordances_of(rec.class_name))
    return ()


def _whereabouts(memory: Memory, thing: str) -> str:
    placed = [r for r in memory.relations if r.args[:1] == (thing,) and len(r.args) == 2
              and r.predicate in ("in", "on", "inhand", "at", "liquid_in")]
    if placed:
        said = {"inhand": "is held by", "liquid_in": "is in"}
        return ", ".join(f"{thing} {said.get(r.predicate, 'is ' + r.predicate)} {r.args[1]}"
                         + (" (assumed)" if r in memory.assumed else "") for r in placed)
    at = next((loc for loc, rec in memory.locations.items() if thing in rec.objects), None)
    return f"{thing} is at {at}" if at else f"I know of {thing} but not where it is now"


def _unexplored_note(memory: Memory) -> str:
    left = memory.unexplored()
    return f" (I have not looked at {_say_list(left)} yet)" if left else ""


def _say_list(names: Sequence[str]) -> str:
    shown = list(names[:MAX_LISTED])
    text = ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else (shown[0] if shown else "")
    return text + _more(len(names))


def _more(n: int) -> str:
    return f" and {n - MAX_LISTED} more" if n > MAX_LISTED else ""


def _sentence(text: str) -> str:
    """A full stop at the end (names keep their case: ``cup0`` is a name, not a word)."""
    text = text.strip()
    return text + ("" if not text or text.endswith(".") else ".")

