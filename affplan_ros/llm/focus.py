"""What part of the home a request concerns: the objects a prompt lists, the rest as counts.

A home the robot has lived in knows hundreds of objects; listing every one in every prompt made
the goal prompt 3,151 tokens at 1,000 objects ("I am thirsty": 11,207). A prompt lists at most
``PROMPT_OBJECTS`` objects; a home that has more is narrowed to what the request can concern,
in this order, until the budget is used:

1. the agents (and where they are);
2. the objects the request names by name (``cup3``) or by class ("the apple", "fridge"), at most
   ``PROMPT_PER_CLASS`` of a class (the reachable ones first: not shut inside something);
3. a request that names no object: the objects whose affordances serve its need, through the
   OAM ("thirsty" -> drinkable liquids and what one drinks from; vocabulary.yaml ``needs``);
   a need nobody can tell: one object of each class, so each kind of thing is seen once;
4. what holds each of those (the bottle a liquid is in, the table the bottle stands on);
5. what a named place or container holds ("clear the table": what is on the table).

Everything else is summarised as counts per class ("apple 56"): bounded by the kinds of things,
never by the number of things. A home within the budget is listed whole, as before.
The offline interpreter, goal grammars and checks keep reading the whole memory (no LLM cost
there); the planner plans on the whole scene.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional, Sequence

from affplan_ros.core.model.scene import Relation, split_name

PROMPT_OBJECTS = 40          # objects a prompt lists at most (agents not counted)
PROMPT_PER_CLASS = 4         # instances of one named class listed at most
PROMPT_PER_PLACE = 12        # things listed of what a named place holds
TOOL_PER_CLASS = 2           # a tool choice only asks whether a kind of thing is known
TOOL_PER_PLACE = 6
PROMPT_LOCATIONS = 10        # unexplored locations a tool prompt lists at most
RECENT_REQUESTS = 3          # earlier requests a tool prompt repeats verbatim
RELATED_REQUESTS = 2         # older requests shown because they name what this one names
SUMMARY_CLASSES = 30         # classes the "not listed" line counts at most (the rest: "N other")

# Relations that say where a thing is (its holder is their second argument).
_HOLDING = ("on", "in", "liquid_in", "inhand", "at")
_SHUT = ("closed",)


@dataclass(frozen=True)
class Focus:
    """What a prompt shows of the home.

    ``selected``: the objects the request concerns, shown with their types and relations
    (``None``: all, for a request whose need nobody can tell in a small home); ``listed``: the
    objects named at all (``None``: all of them, a home within the budget); ``omitted``: how
    many of each class are left out."""

    selected: Optional[frozenset[str]] = None
    listed: Optional[frozenset[str]] = None
    omitted: Mapping[str, int] = field(default_factory=dict)
    reason: str = "all"        # all | named | need | each class

    def shows(self, name: str) -> bool:
        return self.listed is None or name in self.listed

    def summary(self, classes: Optional[Iterable[str]] = None, besides: Iterable[str] = ()) -> str:
        """``958 more, not listed: cup 95, plate 93, ...`` ("" when nothing is left out).
        ``classes``: count only these by name, the rest as one number; ``besides``: classes
        already shown by name, not counted (more of them is said once)."""
        if not self.omitted:
            return ""
        keep = None if classes is None else set(classes)
        besides = set(besides)
        counts = sorted(((c, n) for c, n in self.omitted.items()
                         if (keep is None or c in keep) and c not in besides), key=lambda kv: (-kv[1], kv[0]))
        parts = [f"{c} {n}" for c, n in counts[:SUMMARY_CLASSES]]
        more_shown = besides & set(self.omitted)
        rest = len(self.omitted) - len(parts) - len(more_shown)
        if rest > 0:
            parts.append(f"{rest} other classes")
        if more_shown:
            parts.append("more of the listed classes")
        return f"{sum(self.omitted.values())} more, not listed: {', '.join(parts)}"


def request_focus(request: str, classes: Mapping[str, str], relations: Sequence[Relation],
                  affordances: Callable[[str], Iterable[str]], agents: Iterable[str] = (),
                  places: Iterable[str] = (), budget: int = PROMPT_OBJECTS, per_class: int = PROMPT_PER_CLASS,
                  per_place: int = PROMPT_PER_PLACE) -> Focus:
    """The :class:`Focus` of ``request`` over the objects ``classes`` (name -> class, agents
    included); ``affordances(name)``: an object's affordances (for a need); ``places``: the
    locations (furniture); ``budget``, ``per_class``, ``per_place``: how many objects a large
    home's prompt lists, of one class, of what a named place holds."""
    agents = set(agents)
    things = [n for n in classes if n not in agents]
    small = len(things) <= budget
    if small:
        budget = len(things)
    held_by: dict[str, str] = {}
    contents: dict[str, list[str]] = {}
    shut = {r.args[0] for r in relations if r.predicate in _SHUT and r.args}
    for r in relations:
        if r.predicate in _HOLDING and len(r.args) == 2 and r.args[0] not in held_by:
            held_by[r.args[0]] = r.args[1]
            contents.setdefault(r.args[1], []).append(r.args[0])

    def enclosed(name: str) -> bool:
        seen = set()
        while name in held_by and name not in seen:
            seen.add(name)
            name = held_by[name]
            if name in shut:
                return True
        return False

    order = {n: (enclosed(n), natural_key(n)) for n in things}
    listed: list[str] = []
    chosen: set[str] = set()

    def take(names: Iterable[str]) -> bool:
        """List ``names`` (with what holds them) while the budget lasts; False once it is used."""
        for n in names:
            chain = []
            while n is not None and n not in chosen and n not in agents and n in classes:
                chain.append(n)
                n = held_by.get(n)
            if len(listed) + len(chain) > budget:
                return False
            for c in chain:
                chosen.add(c)
                listed.append(c)
        return True

    take(held_by[a] for a in sorted(agents) if a in held_by)   # where the agents are
    words = set(re.findall(r"[a-z][a-z0-9_\-]*", request.lower()))
    literal = sorted((n for n in things if n.lower() in words), key=order.get)
    take(literal)
    by_class = _group(things, classes, order)
    named = _named_classes(request, set(by_class))
    per_class = len(things) if small else per_class
    reason = "named"
    if named:
        take(n for c in sorted(named) for n in by_class[c][:per_class])
        # Only places named ("clear the table"): what the first of them holds (where a person is
        # first) is what the request is about.
        places = set(places)
        if all(any(n in places for n in by_class[c]) for c in named):
            first = next((n for n in listed if n in places and classes[n] in named), None)
            inside = sorted((o for o in contents.get(first, ()) if o not in agents), key=order.get)
            take(inside[:len(inside) if small else per_place])
    elif not literal:
        wanted = _needs(request)
        if wanted:
            reason = "need"
            fits = [n for n in things if any(_serves(set(affordances(n)), a) for a in wanted)]
            fit_classes = _group(fits, classes, order)
            take(n for c in sorted(fit_classes) for n in fit_classes[c][:per_class])
        if not wanted or not chosen:
            reason = "each class"
            take(by_class[c][0] for c in sorted(by_class))
    if small:   # everything fits: listed whole; a request that names nothing sees it all in full
        return Focus(None if reason != "named" else frozenset(chosen) | agents, None, {}, reason)
    omitted = Counter(classes[n] for n in things if n not in chosen)
    selected = frozenset(chosen) | agents
    return Focus(selected, selected, dict(omitted), reason)


def recent_requests(previous: Sequence[str], request: str, classes: Iterable[str]) -> tuple[list[str], int]:
    """The earlier requests a tool prompt repeats: the newest ``RECENT_REQUESTS`` and up to
    ``RELATED_REQUESTS`` older ones that name a class this one names; and how many it leaves out
    (a year of requests would otherwise grow every prompt)."""
    previous = list(previous)
    recent = previous[-RECENT_REQUESTS:] if RECENT_REQUESTS else []
    older = previous[:len(previous) - len(recent)]
    named = _named_classes(request, set(classes))
    related: list[str] = []
    if named:
        for text in reversed(older):
            if len(related) >= RELATED_REQUESTS:
                break
            if text not in related and text not in recent and _named_classes(text, named):
                related.append(text)
    shown = list(reversed(related)) + recent
    return shown, len(previous) - len(shown)


# -- pieces ------------------------------------------------------------------------------------

def natural_key(name: str) -> tuple[str, int]:
    """``cup10`` after ``cup9``."""
    return split_name(name) or (name, -1)


def _group(names: Iterable[str], classes: Mapping[str, str], order) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for n in names:
        out.setdefault(classes[n], []).append(n)
    for members in out.values():
        members.sort(key=order.get)
    return out


def _named_classes(text: str, classes: set[str]) -> set[str]:
    from affplan_ros.llm.prompting import named_classes

    return named_classes(text, classes) if classes else set()


def _needs(text: str) -> list[tuple[str, ...]]:
    """The affordance sets (``-x``: must not have x) of the purposes the request's words name:
    "I am thirsty" -> [(drinkable,), (drink,)] (vocabulary.yaml ``needs`` and ``purposes``)."""
    from affplan_ros.core.interpreter.lexicon import default_vocabulary, words_of

    v = default_vocabulary()
    words = words_of(text)
    found: list[tuple[str, ...]] = []
    for i in range(len(words)):
        for n in (2, 1):
            phrase = " ".join(words[i:i + n])
            for purpose in v.needs.get(phrase, ()):
                affs = v.purposes.get(purpose)
                if affs and affs not in found:
                    found.append(affs)
    return found


def _serves(has: set[str], wanted: tuple[str, ...]) -> bool:
    need = {a for a in wanted if not a.startswith("-")}
    never = {a[1:] for a in wanted if a.startswith("-")}
    return need <= has and not never & has
