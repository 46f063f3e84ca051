"""Words of a command -> the categories of ``commands.lark`` (vocabulary in ``vocabulary.yaml``).

Why a lexer of our own in front of Lark: the object nouns are not fixed - they are the classes
of the current scene and OAM (plus synonyms and plural forms), multi-word ("cutting board")
and some words belong to two categories ("hand" gives, or is a hand; "cut" is a verb or a
state). The lexer matches phrases longest first and returns every way of reading the command
(bounded); Lark's Earley parser then parses each reading.
"""
from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Optional

import yaml

VOCABULARY = Path(__file__).with_name("vocabulary.yaml")
# A word: letters of any script and ASCII digits (a superscript is no number), with an English
# clitic ('s); punctuation that parts clauses. Anything else (an emoji, a symbol) separates words.
_WORD = re.compile(r"(?:[^\W\d_]|[0-9])+(?:'[^\W\d_]+)?|[,.;!?]")
MAX_PHRASE = 4
MAX_READINGS = 64


class UnknownWords(ValueError):
    def __init__(self, words: list[str]):
        self.words = words
        super().__init__(", ".join(f"'{w}'" for w in words))


@dataclass(frozen=True)
class Noun:
    """A noun phrase head: the classes it may name (preference order), plural or not."""

    classes: tuple[str, ...]
    plural: bool = False
    text: str = ""
    group: Optional[str] = None   # "locations" | "carryables" for group nouns


@dataclass(frozen=True)
class Tok:
    cat: str
    text: str
    value: object = None          # Noun for NOUN, int for NUM / ORD


@dataclass
class Vocabulary:
    categories: dict[str, list[str]]
    fillers: list[str]
    numbers: dict[str, int]
    ordinals: dict[str, int]
    synonyms: dict[str, list[str]]
    irregular_plurals: dict[str, str]
    discard_into: list[str]
    group_nouns: dict[str, str]
    measures: list[str]
    to_person_by_default: list[str]
    explore_prior: dict[str, list[str]]
    alternative_key_affordances: list[str]
    verb_affordances: dict[str, list[str]]
    map_fixtures: frozenset[str] = frozenset()
    purposes: dict[str, tuple[str, ...]] = field(default_factory=dict)   # phrase -> affordances
    needs: dict[str, tuple[str, ...]] = field(default_factory=dict)      # word -> purposes it calls for
    phrases: dict[str, set[str]] = field(default_factory=dict)   # phrase -> categories

    def __post_init__(self) -> None:
        for cat, words in self.categories.items():
            for w in words:
                self.phrases.setdefault(_norm(str(w)), set()).add(cat)
        for phrase in self.purposes:
            self.phrases.setdefault(phrase, set()).add("PURPOSE")

    @classmethod
    def load(cls, path: Optional[Path] = None) -> "Vocabulary":
        data = yaml.safe_load(Path(path or VOCABULARY).read_text(encoding="utf-8")) or {}
        try:
            return cls(categories={k: [str(x) for x in v] for k, v in data["categories"].items()},
                       fillers=[_norm(str(x)) for x in data.get("fillers", [])],
                       numbers={str(k): int(v) for k, v in data.get("numbers", {}).items()},
                       ordinals={str(k): int(v) for k, v in data.get("ordinals", {}).items()},
                       synonyms={_norm(str(k)): [str(c) for c in v] for k, v in data.get("synonyms", {}).items()},
                       irregular_plurals={str(k): str(v) for k, v in data.get("irregular_plurals", {}).items()},
                       discard_into=[str(x) for x in data.get("discard_into", [])],
                       group_nouns={str(k): str(v) for k, v in data.get("group_nouns", {}).items()},
                       measures=[str(x) for x in data.get("measures", [])],
                       to_person_by_default=[_norm(str(x)) for x in data.get("to_person_by_default", [])],
                       explore_prior={str(k): [str(c) for c in v] for k, v in data.get("explore_prior", {}).items()},
                       alternative_key_affordances=[str(x) for x in data.get("alternative_key_affordances", [])],
                       verb_affordances={str(k): [str(a) for a in v]
                                         for k, v in data.get("verb_affordances", {}).items()},
                       map_fixtures=frozenset(str(x) for x in data.get("map_fixtures", [])),
                       purposes={_norm(str(k)): tuple(str(a) for a in v)
                                 for k, v in data.get("purposes", {}).items()},
                       needs={_norm(str(k)): tuple(_norm(str(p)) for p in v)
                              for k, v in data.get("needs", {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed interpreter vocabulary {path or VOCABULARY}: {exc}") from exc

    # -- nouns ------------------------------------------------------------------------------
    def plural(self, word: str) -> str:
        """English plural of a class noun. Why not a library (inflect): only the nouns of known
        classes are pluralised, the irregular ones are data (vocabulary.yaml)."""
        if word in self.irregular_plurals:
            return self.irregular_plurals[word]
        if re.search(r"(s|x|z|ch|sh)$", word):
            return word + "es"
        if re.search(r"[^aeiou]y$", word):
            return word[:-1] + "ies"
        if word.endswith("fe"):
            return word[:-2] + "ves"
        return word + "s"

    def noun_table(self, classes: Iterable[str]) -> dict[str, list[Noun]]:
        """phrase -> the nouns it may be, for the given classes (scene and OAM)."""
        table: dict[str, list[Noun]] = {}

        def add(phrase: str, noun: Noun) -> None:
            phrase = _norm(phrase)
            if phrase and noun not in table.setdefault(phrase, []):
                table[phrase].append(noun)

        classes = sorted(set(classes))
        named = {c.replace("_", " ") for c in classes}
        heads: dict[str, list[str]] = {}
        for c in classes:
            words = c.replace("_", " ").split()
            if len(words) > 1 and words[-1] not in named:
                heads.setdefault(words[-1], []).append(c)
        for c in classes:
            words = c.replace("_", " ").split()
            if not words:
                continue
            single, plural = " ".join(words), " ".join(words[:-1] + [self.plural(words[-1])])
            add(single, Noun((c,), False, single))
            add(plural, Noun((c,), True, plural))
            if len(words) > 1:
                add("".join(words), Noun((c,), False, single))
        # "the chips" may be any class whose name ends in chips (unless a class is called chips)
        for head, targets in heads.items():
            add(head, Noun(tuple(targets), False, head))
            add(self.plural(head), Noun(tuple(targets), True, head))
        for word in self.measures:  # "a bag of chips": only meaningful before "of"
            if word not in named:
                add(word, Noun((), False, word, "measure"))
        for phrase, targets in self.synonyms.items():
            words = phrase.split()
            add(phrase, Noun(tuple(targets), False, phrase))
            add(" ".join(words[:-1] + [self.plural(words[-1])]), Noun(tuple(targets), True, phrase))
        for word, group in self.group_nouns.items():
            add(word, Noun((), False, word, group))
            add(self.plural(word), Noun((), True, word, group))
        return table


@lru_cache(maxsize=1)
def default_vocabulary() -> Vocabulary:
    return Vocabulary.load()


def _norm(text: str) -> str:
    return " ".join(words_of(text))


def words_of(text: str) -> list[str]:
    """The words of ``text``, lower case, accents folded (``cúp`` -> ``cup``, as a person typing on
    a foreign keyboard means it; the vocabulary is folded the same way)."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("_", " ").replace("\u2019", "'"))
    return _WORD.findall("".join(c for c in decomposed if not unicodedata.combining(c)))


def lex(text: str, vocab: Vocabulary, nouns: Mapping[str, list[Noun]]) -> list[list[Tok]]:
    """Every reading of ``text`` as category tokens (at most MAX_READINGS); raises
    :class:`UnknownWords` naming every word that is in no category and names no class."""
    words = words_of(text)
    fillers = set(vocab.fillers)
    options: list[list[Tok]] = []
    unknown: list[str] = []
    i = 0
    while i < len(words):
        match = None
        for n in range(min(MAX_PHRASE, len(words) - i), 0, -1):
            phrase = " ".join(words[i:i + n])
            toks = _options(phrase, vocab, nouns, fillers)
            if toks is not None:
                match = (n, toks)
                break
        if match is None:
            if words[i] not in unknown:
                unknown.append(words[i])
            i += 1
            continue
        n, toks = match
        if toks:  # [] = a filler, dropped
            options.append(toks)
        i += n
    if unknown:
        raise UnknownWords(unknown)
    readings = []
    for combo in itertools.islice(itertools.product(*options), MAX_READINGS):
        readings.append(list(combo))
    return readings


def _options(phrase: str, vocab: Vocabulary, nouns: Mapping[str, list[Noun]],
             fillers: set[str]) -> Optional[list[Tok]]:
    if phrase in fillers:
        return []
    out: list[Tok] = []
    for cat in sorted(vocab.phrases.get(phrase, ())):
        out.append(Tok(cat, phrase))
    for noun in nouns.get(phrase, ()):
        out.append(Tok("NOUN", phrase, noun))
    if phrase in vocab.numbers:
        out.append(Tok("NUM", phrase, vocab.numbers[phrase]))
    elif phrase.isdigit() and len(phrase) <= 2:
        out.append(Tok("NUM", phrase, int(phrase)))
    if phrase in vocab.ordinals:
        out.append(Tok("ORD", phrase, vocab.ordinals[phrase]))
    return out or None
