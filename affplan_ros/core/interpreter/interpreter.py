"""The offline instruction interpreter: a command in words -> a PDDL goal, or a clear "no".

Pipeline: the lexer turns the words into categories (every reading, see ``lexicon.py``),
Lark's Earley parser parses each reading with the grammar in ``commands.lark`` (every
derivation), and each derivation is interpreted over the :class:`World`: noun phrases become
objects (class, synonyms, plural / "all", counts, ordinals, "the other ...", relative
phrases such as "the cup on the counter"), commands become goal literals whose argument
types are checked against the domain. The result is a goal only when every reading that
parses gives the SAME goal; otherwise, or when a word is unknown, an object is ambiguous or
a type does not fit, the interpreter declines and says why. It never produces an action:
its goal goes through the same checks as a language model's answer.

Objects the command names but the world lacks are reported as missing (with the place the
command names, if any), so the tool selection can explore or suggest an alternative; in
Partial Plan mode the goal keeps only the parts whose objects are present.

Over 500 lines on purpose: one method per grammar rule of ``commands.lark``, kept beside each
other so grammar and meaning are read together; the words are in lexicon.py, the world in world.py.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from affplan_ros.core.goals.formula import And, Goal, Literal, Not, Or, literals, render
from affplan_ros.core.interpreter.lexicon import (
    Noun,
    Tok,
    UnknownWords,
    Vocabulary,
    default_vocabulary,
    lex,
)
from affplan_ros.core.interpreter.questions import Question, is_question, question_of
from affplan_ros.core.interpreter.world import World

GRAMMAR = Path(__file__).with_name("commands.lark")
MAX_DERIVATIONS = 64
MAX_COMBINATIONS = 20
POSITION_PREDICATES = ("inhand", "on", "in", "liquid_in")


@dataclass(frozen=True)
class Missing:
    """A class the command needs that the world does not have (``count`` more of it)."""

    class_name: str
    place: Optional[str] = None     # the place the command names ("the apple from the table")
    count: int = 1

    def text(self) -> str:
        where = f" at {self.place}" if self.place else ""
        return f"{self.count} more {self.class_name}{where}" if self.count > 1 else f"{self.class_name}{where}"


@dataclass
class Interpretation:
    """``goal`` when understood (in Partial mode: the achievable part); ``reason`` otherwise."""

    goal: Optional[Goal] = None
    missing: list[Missing] = field(default_factory=list)
    reason: str = ""
    kind: str = "declined"          # goal | missing | declined | question
    question: Optional[Question] = None   # kind "question": what is asked (answered from memory)
    readings: int = 0               # derivations that gave a goal
    clauses: int = 0                # commands in the request

    @property
    def ok(self) -> bool:
        return self.goal is not None and self.kind == "goal"

    @property
    def goal_text(self) -> Optional[str]:
        return f"(:goal {render(self.goal)})" if self.goal is not None else None


class _Fail(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


class _Missing(Exception):
    def __init__(self, missing: Sequence[Missing]):
        super().__init__(", ".join(m.text() for m in missing))
        self.missing = list(missing)


@lru_cache(maxsize=2)
def _parser(path: str):
    from lark import Lark, Token
    from lark.lexer import Lexer

    class _Pass(Lexer):  # the tokens come from lexicon.lex, already categorised
        def __init__(self, conf):  # noqa: D401 - Lark's lexer interface
            pass

        def lex(self, data):
            for i, tok in enumerate(data):
                yield Token(tok.cat, i)

    return Lark(Path(path).read_text(encoding="utf-8"), parser="earley", lexer=_Pass, ambiguity="explicit")


def derivations(tokens: Sequence[Tok], grammar: Path = GRAMMAR) -> list:
    """Every parse tree of one reading (at most MAX_DERIVATIONS); [] when it does not parse."""
    from lark.exceptions import LarkError
    from lark.visitors import CollapseAmbiguities

    try:
        tree = _parser(str(grammar)).parse(list(tokens))
    except LarkError:
        return []
    return CollapseAmbiguities().transform(tree)[:MAX_DERIVATIONS]


@dataclass
class Interpreter:
    vocabulary: Vocabulary = field(default_factory=default_vocabulary)
    grammar: Path = GRAMMAR

    def interpret(self, text: str, world: World, *, partial: bool = False,
                  max_predicates: Optional[int] = None) -> Interpretation:
        text = (text or "").strip()
        if not text:
            return Interpretation(reason="the request is empty")
        nouns = self.vocabulary.noun_table(world.classes() | set(world.known_classes))
        try:
            readings = lex(text, self.vocabulary, nouns)
        except UnknownWords as exc:
            return Interpretation(reason=f"I do not know the word{'s' if len(exc.words) > 1 else ''} {exc}")
        # Per reading: gapped or not (below), and what it gave.
        goals: dict[bool, dict[str, tuple[Goal, list[Missing], int]]] = {False: {}, True: {}}
        fails: list[_Fail] = []
        missing_by: dict[bool, dict[tuple, list[Missing]]] = {False: {}, True: {}}
        parsed = 0
        for toks in readings:
            for tree in derivations(toks, self.grammar):
                parsed += 1
                if is_question(tree):
                    q = question_of(tree, toks, self.vocabulary.verb_affordances, self.vocabulary.purposes)
                    return Interpretation(kind="question", question=q, readings=parsed,
                                          reason=f"a question ({q.kind.value}), not a task: it is answered from "
                                                 "memory")
                gapped = any(getattr(c, "data", None) == "also" for c in tree.children)
                ev = _Reading(self.vocabulary, world, toks, partial)
                try:
                    goal, clauses = ev.sentence(tree)
                except _Fail as f:
                    fails.append(f)
                    continue
                except _Missing as m:
                    missing_by[gapped][tuple(m.missing)] = m.missing
                    continue
                if goal is None:
                    missing_by[gapped][tuple(ev.missing)] = ev.missing
                    continue
                if max_predicates is not None:
                    goal = _first_predicates(goal, max_predicates)
                goals[gapped].setdefault(render(goal), (goal, ev.missing, clauses))
        # "put the apple on the table and the cup in the bowl": a place after a put's object is
        # where it goes, so the gapped reading wins over "the apple (that is) on the table and the
        # cup, in the bowl" whenever it gives anything.
        prefer = bool(goals[True] or missing_by[True])
        goals, missing_only = goals[prefer], missing_by[prefer]
        if len(goals) == 1:
            goal, missing, clauses = next(iter(goals.values()))
            if missing and not partial:
                return Interpretation(missing=missing, kind="missing", clauses=clauses,
                                      reason="not in the scene: " + ", ".join(m.text() for m in missing))
            return Interpretation(goal=goal, missing=missing, kind="goal", readings=parsed, clauses=clauses,
                                  reason="partial: left out " + ", ".join(m.text() for m in missing)
                                  if missing else "")
        if len(goals) > 1:
            shown = " or ".join(sorted(goals)[:3])
            return Interpretation(reason=f"the request can mean different goals: {shown}")
        if missing_only:
            missing = next(iter(missing_only.values()))
            return Interpretation(missing=missing, kind="missing",
                                  reason="not in the scene: " + ", ".join(m.text() for m in missing))
        if fails:
            # The most specific reason: ambiguity and types before "not understood".
            order = {"ambiguous": 0, "type": 1, "agent": 2, "nothing": 3, "unsupported": 4}
            f = min(fails, key=lambda x: order.get(x.kind, 9))
            return Interpretation(reason=f.message)
        return Interpretation(reason="I do not understand this request (no command form I know fits it)")


def _first_predicates(goal: Goal, k: int) -> Goal:
    if isinstance(goal, And) and len(goal.children) > k:
        return And(tuple(goal.children[:k]))
    return goal


# ---------------------------------------------------------------------------------------------
# Interpretation of one derivation


@dataclass
class _Ref:
    """A resolved noun phrase: candidate objects and how many of them the phrase means."""

    objects: list[str]
    quant: str                      # the | a | all | num
    count: Optional[int] = None
    label: str = ""
    liquid: Optional["_Ref"] = None  # "a glass of water": the liquid that goes into the objects
    missing: Optional[Missing] = None


# Commands whose objects go to a destination: a gapped command after one of them shares its verb.
_PLACING = frozenset({"put", "putdown", "discard", "want_state", "also"})


class _Reading:
    def __init__(self, vocab: Vocabulary, world: World, toks: Sequence[Tok], partial: bool):
        self.v, self.w, self.toks, self.partial = vocab, world, toks, partial
        self.missing: list[Missing] = []
        self.last: Optional[_Ref] = None
        self.mentioned: list[str] = []

    # -- helpers ------------------------------------------------------------------------
    def tok(self, leaf) -> Tok:
        return self.toks[int(leaf.value)]

    @staticmethod
    def kids(tree) -> list:
        return list(tree.children)

    def leaves(self, tree, cat: str) -> list[Tok]:
        return [self.tok(c) for c in tree.children if not hasattr(c, "data") and c.type == cat]

    def sub(self, tree, data: str):
        return [c for c in tree.children if hasattr(c, "data") and c.data == data]

    def agent(self, cls: str) -> str:
        found = self.w.agents(cls)
        if len(found) != 1:
            raise _Fail("agent", f"the scene has {'no' if not found else len(found)} {cls}s; "
                                 f"I need exactly one to say who gets it")
        return found[0]

    def lit(self, pred: str, *args: str, types: Sequence[str] = ()) -> Literal:
        for a, t in zip(args, types):
            if t and not self.w.fits(a, t):
                raise _Fail("type", f"{a} cannot be used in ({pred} {' '.join(args)}): it is not '{t}'")
        return Literal(pred, tuple(args))

    # -- sentence and commands ------------------------------------------------------------
    def sentence(self, tree) -> tuple[Optional[Goal], int]:
        parts: list[Goal] = []
        commands = [c for c in tree.children if hasattr(c, "data")]
        for i, cmd in enumerate(commands):
            self.mentioned = []
            self.before = commands[i - 1].data if i else None
            try:
                g = getattr(self, "c_" + cmd.data)(cmd)
            except _Missing as m:
                if not self.partial:
                    raise
                self.missing.extend(m.missing)
                continue
            if g is not None:
                parts.append(g)
        if not parts:
            if self.missing:
                raise _Missing(self.missing)
            return None, len(commands)
        return _and(_supersede(parts)), len(commands)

    def c_give(self, t) -> Goal:
        verb = self.leaves(t, "GIVE")[0]
        to_me = bool(self.leaves(t, "ME")) or verb.text in self.v.to_person_by_default
        who = self.agent("human") if to_me else self.agent("robot")
        return self.each(self.objs(t), lambda o: self.lit("inhand", o, who, types=("carry", "actor")),
                         filled_to=who)

    def c_take(self, t) -> Goal:
        robot = self.agent("robot")
        return self.each(self.objs(t), lambda o: self.lit("inhand", o, robot, types=("carry", "actor")))

    def c_put(self, t) -> Goal:
        return self.place(self.objs(t), self.sub_any(t))

    def c_putdown(self, t) -> Goal:
        dest = self.sub_any(t)
        if dest is not None:
            return self.place(self.objs(t), dest)
        supports = [o for o in self.w.locations if self.w.fits(o, "support")]
        if not supports:
            raise _Fail("nothing", "there is nothing to put it down on")
        return self.each(self.objs(t), lambda o: _or([self.lit("on", o, s, types=("carry", "support"))
                                                      for s in supports]))

    def c_discard(self, t) -> Goal:
        dest = self.sub_any(t)
        if dest is not None:
            return self.place(self.objs(t), dest)
        for cls in self.v.discard_into:
            bins = self.w.of_class(cls)
            if bins:
                target = bins[0]
                # the loop ends here: the closure is called (by each) with this bin, bound explicitly
                return self.each(self.objs(t),
                                 lambda o, target=target: self.lit("in", o, target, types=("carry", "contain")))
        raise _Fail("nothing", "there is no trash can or basket to throw it into")

    def c_go(self, t) -> Goal:
        robot = self.agent("robot")
        if self.leaves(t, "ME"):
            return self.lit("at", robot, self.agent("human"), types=("", "location"))
        ref = self.np(self.sub(t, "np_plain")[0] if self.sub(t, "np_plain") else self.sub_np(t))
        return self.choose(ref, lambda o: self.lit("at", robot, o, types=("", "location")))

    def c_pour(self, t) -> Goal:
        refs = self.objs(t)
        dest = self.sub_any(t)
        if dest is None:  # "pour me a glass of water": the liquid goes into the named container
            return self.each(refs, lambda o: None, need_liquid=True)
        return self.place(refs, dest, liquid=True)

    def c_fill(self, t) -> Goal:
        nps = [c for c in t.children if hasattr(c, "data") and c.data.startswith("np_")]
        if nps and self.sub_objs(t):  # fill CONTAINER with LIQUIDS
            container = self.np(nps[0])
            liquids = self.objs(t)
            return self.choose(container, lambda c: self.each(
                liquids, lambda l: self.lit("liquid_in", l, c, types=("liquid", "liquid-contain"))))
        dest = self.sub_any(t)
        if dest is None:
            return self.each(self.objs(t), lambda o: None, need_liquid=True)
        return self.place(self.objs(t), dest, liquid=True)

    def c_open(self, t) -> Goal:
        self.instrument(t)
        return self.each(self.objs(t), lambda o: self.lit("opened", o, types=("open",)))

    def c_close(self, t) -> Goal:
        self.instrument(t)
        return self.each(self.objs(t), lambda o: self.lit("closed", o, types=("close",)))

    def c_clean(self, t) -> Goal:
        self.instrument(t)
        return self.each(self.objs(t), lambda o: self.lit("clean", o, types=("object",)))

    def c_cut(self, t) -> Goal:
        self.instrument(t)
        return self.each(self.objs(t), lambda o: self.lit("chopped", o, types=("consumable",)))

    def c_heat(self, t) -> Goal:
        self.instrument(t)
        dest = self.sub_any(t)
        if dest is not None:
            self.destination_objects(dest)
        return self.each(self.objs(t), self.warm)

    def c_clear(self, t) -> Goal:
        ref = self.np(self.sub_np(t))
        return self.choose(ref, self.cleared)

    def c_visit(self, t) -> Goal:
        return self.each(self.objs(t), lambda o: self.lit("visited", o, types=("location",)))

    def c_want_state(self, t) -> Goal:
        refs = self.objs(t)
        state = next(c for c in t.children if hasattr(c, "data") and (c.data.startswith("state") or
                                                                     c.data.startswith("dest")))
        if state.data == "state":
            state = state.children[0]
        if state.data.startswith("dest"):
            return self.place(refs, state)
        simple = {"state_chopped": lambda o: self.lit("chopped", o, types=("consumable",)),
                  "state_opened": lambda o: self.lit("opened", o, types=("open",)),
                  "state_closed": lambda o: self.lit("closed", o, types=("close",)),
                  "state_cleaned": lambda o: self.lit("clean", o, types=("object",)),
                  "state_warm": self.warm, "state_free": self.cleared}
        if state.data in simple:
            return self.each(refs, simple[state.data])
        if state.data == "state_at":  # "I want the cup to be at the table"
            return self.place(refs, state, to=True)
        raise _Fail("unsupported", f"I cannot express the state '{state.data}'")

    def c_also(self, t) -> Goal:
        """Objects and a destination with the verb left out: they go where the command before
        (a put, a discard, an "I want ... on") put its own."""
        if self.before not in _PLACING:
            raise _Fail("unsupported", "I do not understand this request (a part without a verb)")
        return self.place(self.objs(t), self.sub_any(t))

    def c_want_object(self, t) -> Goal:
        human = self.agent("human")
        return self.each(self.objs(t), lambda o: self.lit("inhand", o, human, types=("carry", "actor")),
                         filled_to=human)

    def c_want_at(self, t) -> Goal:
        robot = self.agent("robot")
        if self.leaves(t, "ME"):
            return self.lit("at", robot, self.agent("human"), types=("", "location"))
        return self.choose(self.np(self.sub_np(t)), lambda o: self.lit("at", robot, o, types=("", "location")))

    def c_want_nothing(self, t) -> Goal:
        return self.choose(self.np(self.sub_np(t)), self.cleared)

    # -- building blocks ------------------------------------------------------------------
    def warm(self, o: str) -> Literal:
        if self.w.fits(o, "liquid"):
            return self.lit("liquid_warm", o, types=("liquid",))
        return self.lit("warm", o, types=("consumable",))

    def cleared(self, support: str) -> Goal:
        on = [o for o in self.w.on_top_of(support) if self.w.fits(o, "carry")]
        if not on:
            raise _Fail("nothing", f"nothing is on {support}; there is nothing to clear")
        return _and([Not(self.lit("on", o, support)) for o in on])

    def instrument(self, t) -> None:
        for ins in self.sub(t, "instrument"):
            for np in [c for c in ins.children if hasattr(c, "data")]:
                self.np(np)  # must exist (a missing knife is missing), not part of the goal

    def sub_np(self, t):
        return next(c for c in t.children if hasattr(c, "data") and c.data.startswith("np_"))

    def sub_objs(self, t):
        return next((c for c in t.children if hasattr(c, "data") and c.data.startswith("objs_")), None)

    def sub_any(self, t):
        return next((c for c in t.children if hasattr(c, "data") and c.data.startswith("dest")), None)

    def objs(self, t) -> tuple[str, list[_Ref]]:
        node = self.sub_objs(t)
        nps = [c for c in node.children if hasattr(c, "data")]
        refs: list[_Ref] = []
        missing: list[Missing] = []
        for np in nps:
            try:
                refs.append(self.np(np))
            except _Missing as m:
                missing.extend(m.missing)
        mode = "or" if node.data == "objs_or" else "and"
        if missing:
            if not refs or not self.partial or mode == "or" and not refs:
                raise _Missing(missing)
            if mode == "and" or self.partial:
                self.missing.extend(missing)
        return mode, refs

    def each(self, objs: tuple[str, list[_Ref]], make: Callable[[str], Optional[Goal]], *,
             filled_to: Optional[str] = None, need_liquid: bool = False) -> Goal:
        """``make`` for every object the phrases mean; "a glass of water" adds the liquid."""
        mode, refs = objs
        parts = []
        for ref in refs:
            def one(o: str, ref=ref) -> Goal:
                lits = []
                if ref.liquid is not None:
                    lits.append(self.choose(ref.liquid, lambda l: self.lit("liquid_in", l, o,
                                                                           types=("liquid", "liquid-contain"))))
                elif need_liquid:
                    raise _Fail("unsupported", f"say which liquid goes into {o}")
                g = make(o)
                if g is not None:
                    lits.append(g)
                return _and(lits)
            parts.append(self.choose(ref, one))
        return _or(parts) if mode == "or" else _and(parts)

    def place(self, objs, dest, *, liquid: bool = False, to: bool = False) -> Goal:
        kind = dest.data
        if kind in ("dest_me", "dest_my_hand"):
            who = self.agent("human")
            return self.each(objs, lambda o: self.lit("inhand", o, who, types=("carry", "actor")))
        if kind == "dest_your_hand":
            who = self.agent("robot")
            return self.each(objs, lambda o: self.lit("inhand", o, who, types=("carry", "actor")))
        target = self.np(self.sub_np(dest))

        def put(o: str, d: str) -> Literal:
            if self.w.fits(o, "liquid") or liquid:
                return self.lit("liquid_in", o, d, types=("liquid", "liquid-contain"))
            if kind == "dest_on":
                return self.lit("on", o, d, types=("carry", "support"))
            if kind == "dest_in":
                return self.lit("in", o, d, types=("carry", "contain"))
            if self.w.fits(d, "actor"):
                return self.lit("inhand", o, d, types=("carry", "actor"))
            if self.w.fits(d, "contain"):
                return self.lit("in", o, d, types=("carry", "contain"))
            return self.lit("on", o, d, types=("carry", "support"))

        def into(o: str) -> Goal:
            if liquid and not self.w.fits(o, "liquid"):
                # "pour the bottle into the glass": what is in the bottle goes there
                inside = self.w.liquids_in(o)
                if len(inside) != 1:
                    raise _Fail("type", f"{o} is not a liquid and holds {'no' if not inside else 'several'} liquid")
                return self.choose(target, lambda d: put(inside[0], d))
            return self.choose(target, lambda d: put(o, d))
        return self.each(objs, into)

    def destination_objects(self, dest) -> None:
        if dest.data not in ("dest_me", "dest_my_hand", "dest_your_hand"):
            self.np(self.sub_np(dest))

    # -- noun phrases ---------------------------------------------------------------------
    def np(self, t) -> _Ref:
        if t.data == "np_it":
            if self.last is None:
                raise _Fail("ambiguous", "I do not know what 'it' refers to")
            return self.last
        if t.data == "np_purpose":
            ref = self.purpose(self.leaves(t, "PURPOSE")[0].text)
            self.last = ref
            self.mentioned.extend(ref.objects)
            return ref
        det = self.sub(t, "det")
        det_words = {self.tok(c).cat for d in det for c in d.children}
        nums = self.leaves(t, "NUM")
        ords = self.leaves(t, "ORD")
        other = bool(self.leaves(t, "OTHER"))
        nouns = self.leaves(t, "NOUN")
        head: Noun = nouns[-1].value if t.data == "np_plain" else nouns[0].value
        liquid = None
        if t.data == "np_of":
            first, second = nouns[0].value, nouns[1].value
            if first.group != "measure" and any(self.w.fits(o, "liquid-contain") for o in self._present(first)):
                head = first
                liquid = self._resolve(second, [], "a", None, None, False, [])
            else:  # a measure word ("a bag of chips"): the second noun is the object
                if first.group != "measure" and first.text not in self.v.measures:
                    raise _Fail("unsupported", f"I do not understand '{first.text} of {second.text}'")
                head = second
        if "ALL" in det_words or head.plural and not nums:
            quant = "all"
        elif nums:
            quant = "num"
        elif "A" in det_words:
            quant = "a"
        else:
            quant = "the"
        ref = self._resolve(head, self.sub_rels(t), quant, nums[0].value if nums else None,
                            ords[0].value if ords else None, other, det_words)
        ref.liquid = liquid or ref.liquid   # "a drink" brings its own (a cup of water)
        self.last = ref
        self.mentioned.extend(ref.objects)
        return ref

    def purpose(self, phrase: str) -> _Ref:
        """"something to drink": any known object with the purpose's affordances; a liquid comes
        in something to drink from. None known: missing, as the first class the OAM says fits (so
        the tool loop looks for it where such things are likely)."""
        affs = {a for a in self.v.purposes[phrase] if not a.startswith("-")}
        never = {a[1:] for a in self.v.purposes[phrase] if a.startswith("-")}
        label = f"something to {phrase}"
        fits = [o for o, ob in self.w.objects.items()
                if ob.known and affs <= ob.types and not never & ob.types and o not in self.w.locations]
        fits.sort(key=lambda o: (self.w.objects[o].class_name, self.w.objects[o].instance))
        liquids = [o for o in fits if self.w.fits(o, "liquid")]
        solids = [o for o in fits if o not in liquids]
        if solids:
            return _Ref(solids, "a", label=label)
        if liquids:
            cups = sorted((o for o, ob in self.w.objects.items() if ob.known and "drink" in ob.types),
                          key=lambda o: (self.w.objects[o].class_name, self.w.objects[o].instance))
            if not cups:
                raise _Fail("nothing", f"there is {', '.join(liquids)} to {phrase}, but nothing to pour it into")
            return _Ref(cups, "a", label=label, liquid=_Ref(liquids, "a", label=phrase))
        classes = sorted(c for c, a in self.w.class_affordances.items() if affs <= a and not never & a)
        if not classes:
            raise _Fail("nothing", f"I know of nothing that affords {', '.join(sorted(affs))}")
        raise _Missing([Missing(classes[0])])

    def sub_rels(self, t) -> list:
        return [c for c in t.children if hasattr(c, "data") and c.data.startswith("rel_")]

    def _present(self, noun: Noun) -> list[str]:
        return [o for cls in noun.classes for o in self.w.of_class(cls)]

    def _resolve(self, noun: Noun, rels, quant: str, count: Optional[int], ordinal: Optional[int],
                 other: bool, det_words) -> _Ref:
        if noun.group == "measure":
            raise _Fail("unsupported", f"a {noun.text} of what?")
        if noun.group and noun.group.startswith("purpose:"):
            return self.purpose(noun.group.split(":", 1)[1])
        if noun.group == "locations":
            cands = [o for o in self.w.locations]
        elif noun.group == "carryables":
            cands = [o for o, ob in self.w.objects.items() if "carry" in ob.types]
        elif noun.group:   # named by an affordance ("a container": whatever affords contain; no liquid)
            cands = sorted((o for o, ob in self.w.objects.items() if ob.known and noun.group in ob.types
                            and "liquid" not in ob.types and o not in self.w.locations),
                           key=lambda o: (self.w.objects[o].class_name, self.w.objects[o].instance))
        else:
            cands = [o for o in self._present(noun) if self.w.objects[o].known]
        place = None
        for rel in rels:
            target = self.np(rel.children[-1])
            place = place or next((o for o in target.objects if o in self.w.locations), None)
            # keep is used within this iteration only; target is bound explicitly all the same
            if rel.data == "rel_on":
                def keep(o, target=target):
                    return any(self.w.on_or_in(o, d, ("on",)) for d in target.objects)
            elif rel.data == "rel_in":
                def keep(o, target=target):
                    return any(self.w.on_or_in(o, d, ("in", "liquid_in")) for d in target.objects)
            else:
                def keep(o, target=target):
                    return any(self.w.located_under(o, d) for d in target.objects)
            unknown_place = [d for d in target.objects if not self.w.objects[d].known]
            cands = [o for o in cands if keep(o)]
            if not cands and unknown_place:
                place = unknown_place[0]
        if other:
            related = set(self.mentioned) | {h for m in self.mentioned for h in self.w.holders(m)}
            related |= {loc for loc, objs in self.w.locations.items() if set(objs) & set(self.mentioned)}
            cands = [o for o in cands if o not in related]
        label = noun.text or "/".join(noun.classes)
        if ordinal is not None:
            ranked = sorted(cands, key=lambda o: self.w.objects[o].instance)
            idx = ordinal - 1 if ordinal > 0 else len(ranked) + ordinal
            if not 0 <= idx < len(ranked):
                raise _Fail("ambiguous", f"there is no {label} number {ordinal} ({len(ranked)} in the scene)")
            cands, quant = [ranked[idx]], "the"
        if not cands:
            cls = noun.classes[0] if noun.classes else label
            if noun.group:
                raise _Fail("nothing", f"there are no {label}s here")
            raise _Missing([Missing(cls, place, count or 1)])
        if quant == "num" and count is not None and len(cands) < count:
            raise _Missing([Missing(self.w.objects[cands[0]].class_name, place, count - len(cands))])
        return _Ref(cands, quant, count, label)

    def choose(self, ref: _Ref, make: Callable[[str], Goal]) -> Goal:
        """The goal for the objects a phrase means: the one, any one (or), all (and), or any
        ``count`` of them."""
        objs = ref.objects
        if ref.quant == "the":
            if len(objs) > 1:
                raise _Fail("ambiguous", f"which {ref.label} do you mean: {', '.join(objs)}?")
            return make(objs[0])
        if ref.quant == "a":
            return _or([make(o) for o in objs])
        if ref.quant == "all":
            return _and([make(o) for o in objs])
        combos = list(itertools.islice(itertools.combinations(objs, ref.count or 1), MAX_COMBINATIONS + 1))
        if len(combos) > MAX_COMBINATIONS:
            raise _Fail("ambiguous", f"too many ways to choose {ref.count} of {len(objs)} {ref.label}s")
        return _or([_and([make(o) for o in c]) for c in combos])


def _flat(kind, parts: Iterable[Goal]) -> list[Goal]:
    out: list[Goal] = []
    for p in parts:
        if isinstance(p, kind):
            out.extend(p.children)
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def _and(parts: Iterable[Goal]) -> Goal:
    items = _flat(And, parts)
    return items[0] if len(items) == 1 else And(tuple(items))


def _or(parts: Iterable[Goal]) -> Goal:
    items = _flat(Or, parts)
    return items[0] if len(items) == 1 else Or(tuple(items))


def _supersede(parts: list[Goal]) -> list[Goal]:
    """A later command that places an object replaces an earlier one that placed it ("pick
    up the sponge and bring it to me" means only the second)."""
    out: list[Goal] = []
    for i, g in enumerate(parts):
        later = {l.args[0] for p in parts[i + 1:] for l in literals(p) if l.predicate in POSITION_PREDICATES}
        lits = literals(g)
        if isinstance(g, (Literal, And)) and lits and all(
                l.predicate in POSITION_PREDICATES and l.args[0] in later for l in lits):
            continue
        out.append(g)
    return out
