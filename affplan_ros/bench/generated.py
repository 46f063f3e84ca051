"""Random homes for `affplan bench physics --generated N --seed S`: kitchens and offices built from
the object table and the home's object-affordance map, each with one random task of a
capability the home allows, so that skills are measured on scenes nobody tuned them on.

A home: its furniture (a kitchen: table, counter, refrigerator; an office: desk, table,
cupboard), 5 to 9 carryable things of the classes both the object table and the OAM know, each on
a piece of furniture, in a cabinet, in a container it fits into or on a plate or board; doors and
lids open or closed at random; a bottle of water sometimes; a person half of the time. Its task
is drawn among the capabilities the home allows (a chop needs a knife and food, a pour a liquid
and an open container), and written as the scenario sets write theirs: a sentence and a desired
goal in the domain's predicates, which Fast Downward plans as for the oracle.

Everything follows from the seed: the same N and S give the same homes and tasks.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from affplan_ros.core.knowledge.oam import OamDatabase
from affplan_ros.core.knowledge.objects import ObjectProperties, ObjectTable

ROOMS = {"kitchen": ("table", "counter", "refrigerator"), "office": ("desk", "table", "cupboard")}
# Carryable things per room, drawn from where both tables know them.
THINGS = {
    "kitchen": ("apple", "banana", "orange", "tomato", "cucumber", "bowl", "plate", "cup", "glass", "plastic_cup",
                "cutting_board", "kitchen_knife", "sponge", "spoon", "fork", "pot", "box", "milk_cartoon",
                "cornflakes", "yoghurt", "bottle"),
    "office": ("book", "keyboard", "cup", "coffee_cup", "glass", "scissors", "box", "basket", "apple", "banana",
               "sponge", "bottle", "tablet", "plate"),
}
HOLDERS = ("plate", "cutting_board")   # what other things may lie on
FOOD = ("apple", "banana", "orange", "tomato", "cucumber")   # what a knife may chop
CAPABILITIES = ("pick", "bring", "place", "put_in", "stack", "open", "close", "pour", "chop", "wipe", "go")
MIN_THINGS, MAX_THINGS = 5, 9
HOMES_PER_TASK = 200     # homes drawn for one capability before it gives way to a walk


@dataclass(frozen=True)
class GeneratedCase:
    index: int
    room: str
    capability: str
    task: str
    desired_goal: str
    scene_text: str


class _Home:
    """One random home as it is drawn: names, where each thing is, what is open."""

    def __init__(self, rng: np.random.Generator, room: str, table: ObjectTable, oam: OamDatabase):
        self.rng, self.room, self.table, self.oam = rng, room, table, oam
        self._count: dict[str, int] = {}
        self.furniture = [self.name(c) for c in ROOMS[room]]
        self.things: list[str] = []
        self.where: dict[str, tuple[str, str]] = {}      # thing -> (relation, holder)
        self.closed: set[str] = set()
        self.liquids: dict[str, str] = {}                # liquid -> its container
        self.human = False

    def name(self, cls: str) -> str:
        n = self._count.get(cls, 0)
        self._count[cls] = n + 1
        return f"{cls}{n}"

    def props(self, name: str) -> ObjectProperties:
        return self.table.get(self.cls(name))

    @staticmethod
    def cls(name: str) -> str:
        return name.rstrip("0123456789")

    def affords(self, name: str, affordance: str) -> bool:
        cls = self.cls(name)
        return cls in self.oam and self.oam.has(cls, affordance)

    def build(self) -> None:
        rng = self.rng
        kinds = [c for c in THINGS[self.room] if c in self.oam and c in self.table.classes]
        for cls in rng.choice(kinds, size=int(rng.integers(MIN_THINGS, MAX_THINGS + 1))):
            self._place(self.name(str(cls)))
        for cabinet in self.furniture:   # closed only where the home's knowledge says it opens
            if self.props(cabinet).articulation == "door" and self.affords(cabinet, "open") and rng.random() < 0.5:
                self.closed.add(cabinet)
        for thing in self.things:
            if self.props(thing).articulation == "lid" and rng.random() < 0.5:
                self.closed.add(thing)
        bottles = [t for t in self.things if self.cls(t) == "bottle"]
        if bottles and "water" in self.oam:
            self.liquids["water0"] = bottles[0]
        self.human = bool(rng.random() < 0.5)
        self.start = self.furniture[int(rng.integers(len(self.furniture)))]
        self.human_at = self.furniture[int(rng.integers(len(self.furniture)))]

    def _place(self, thing: str) -> None:
        """On a piece of furniture, in a cabinet, in a container it fits, or on a plate or board."""
        rng, props = self.rng, self.props(thing)
        holders = [t for t in self.things if self.where[t][0] != "in"]
        into = [c for c in holders if self.props(c).inner is not None and self.props(c).articulation != "lid"
                and props.fits_into(self.props(c)) and self.props(c).size[0] > 0.15]
        onto = [s for s in holders if self.cls(s) in HOLDERS and self.cls(thing) not in HOLDERS
                and not props.too_wide_for(self.props(s)) and props.inner is None]
        cabinets = [f for f in self.furniture if self.props(f).inner is not None and props.fits_into(self.props(f))]
        draw = rng.random()
        if into and draw < 0.15:
            self.where[thing] = ("in", into[int(rng.integers(len(into)))])
        elif onto and draw < 0.3:
            self.where[thing] = ("on", onto[int(rng.integers(len(onto)))])
        elif cabinets and draw < 0.45:
            self.where[thing] = ("in", cabinets[int(rng.integers(len(cabinets)))])
        else:
            surfaces = [f for f in self.furniture if self.props(f).inner is None]
            self.where[thing] = ("on", surfaces[int(rng.integers(len(surfaces)))])
        self.things.append(thing)

    def furniture_of(self, thing: str) -> str:
        thing = self.liquids.get(thing, thing)
        while thing not in self.furniture:
            thing = self.where[thing][1]
        return thing

    def text(self) -> str:
        def obj(name: str) -> str:
            return f"{self.cls(name)}:{name[len(self.cls(name)):]}"

        objects = [*self.furniture, *self.things, *self.liquids, "robot0", *(["human0"] if self.human else [])]
        relations = [f"{rel} {obj(t)} {obj(h)}" for t, (rel, h) in self.where.items() if t not in self.liquids]
        relations += [f"liquid_in {obj(liquid)} {obj(c)}" for liquid, c in self.liquids.items()]
        # Whatever the knowledge says opens is said open or closed (the planner takes it closed else).
        relations += [f"{'closed' if n in self.closed else 'opened'} {obj(n)}" for n in [*self.furniture, *self.things]
                      if self.props(n).articulation in ("door", "lid") or self.affords(n, "open")]
        relations.append(f"at robot:0 {obj(self.start)}")
        if self.human:
            relations.append(f"at human:0 {obj(self.human_at)}")
        located = [*self.things, *self.liquids]
        locations = [f"{f} {obj(f)} " + " ".join(obj(t) for t in located if self.furniture_of(t) == f)
                     for f in self.furniture]
        return "\n".join(["SCENE-DESCRIPTION", "OBJECTS", *map(obj, objects), "END-OBJECTS", "RELATIONS",
                          *relations, "END-RELATIONS", "LOCATIONS", *(loc.rstrip() for loc in locations),
                          "END-LOCATIONS", ""])


def _said(name: str) -> str:
    return "the " + name.rstrip("0123456789").replace("_", " ")


def _tasks(home: _Home) -> dict[str, list[tuple[str, str]]]:
    """Per capability, the (sentence, desired goal) the home allows."""
    loose = [t for t in home.things if home.where[t][1] not in home.closed and not home.props(t).fixed]
    out: dict[str, list[tuple[str, str]]] = {c: [] for c in CAPABILITIES}
    for t in loose:
        out["pick"].append((f"Pick up {_said(t)}", f"and (inhand {t} robot0)"))
        if home.human and not home.affords(t, "assisted-carry"):   # a person takes it from one hand
            out["bring"].append((f"Bring me {_said(t)}", f"and (inhand {t} human0)"))
        for f in home.furniture:
            if home.props(f).inner is None and home.where[t] != ("on", f):
                out["place"].append((f"Put {_said(t)} on {_said(f)}", f"and (on {t} {f})"))
        for c in home.things + home.furniture:
            props = home.props(c)
            if c != t and props.inner is not None and home.props(t).fits_into(props) and home.where[t] != ("in", c) \
                    and home.affords(c, "contain") and not (c in home.things and props.articulation == "lid"):
                out["put_in"].append((f"Put {_said(t)} in {_said(c)}", f"and (in {t} {c})"))
        for s in home.things:
            if s != t and home.cls(s) in HOLDERS and home.cls(t) not in HOLDERS and home.where[t] != ("on", s) \
                    and not home.props(t).too_wide_for(home.props(s)) and home.props(t).inner is None:
                out["stack"].append((f"Lay {_said(t)} on {_said(s)}", f"and (on {t} {s})"))
    for n in [*home.furniture, *home.things]:
        if home.affords(n, "open") and home.props(n).articulation in ("door", "lid"):
            verb, state = ("Open", "opened") if n in home.closed else ("Close", "closed")
            out["open" if verb == "Open" else "close"].append((f"{verb} {_said(n)}", f"and ({state} {n})"))
    for liquid in home.liquids:
        for c in home.things:
            if home.liquids[liquid] != c and home.affords(c, "liquid-contain") and c not in home.closed \
                    and home.props(c).articulation != "lid":
                out["pour"].append((f"Pour {_said(liquid)[4:]} into {_said(c)}", f"and (liquid_in {liquid} {c})"))
    knives = [t for t in loose if home.affords(t, "cut")]
    boards = [t for t in home.things if home.affords(t, "sturdy-support")]
    if knives and boards:
        for t in loose:
            if home.cls(t) in FOOD:
                out["chop"].append((f"Cut {_said(t)}", f"and (chopped {t})"))
    wipers = [t for t in loose if home.affords(t, "wet-swipe")]
    soaks = [c for c in home.things if home.affords(c, "liquid-contain") and home.props(c).articulation != "lid"
             and any(home.props(w).fits_into(home.props(c)) for w in wipers)]   # a bowl the sponge goes into
    if wipers and home.liquids and soaks:
        for f in home.furniture:
            if home.props(f).inner is None:
                out["wipe"].append((f"Wipe {_said(f)}", f"and (clean {f})"))
    for f in home.furniture:
        out["go"].append((f"Go to {_said(f)}", f"and (at robot0 {f})"))
    return out


def generated_cases(count: int, seed: int, table: ObjectTable, oam: OamDatabase,
                    builds: Callable[[str], bool] = lambda text: True) -> list[GeneratedCase]:
    """``count`` homes and tasks from ``seed``: the capabilities in turn, each from the first home
    drawn that allows it and ``builds`` (the physics world lays it out as written: nothing too
    big for the cabinet or bowl it was put in), so that every capability is measured as often."""
    if count < 1:
        raise ValueError(f"--generated {count}: a number of homes >= 1")
    rng = np.random.default_rng(seed)
    cases: list[GeneratedCase] = []
    for index in range(count):
        wanted = CAPABILITIES[index % len(CAPABILITIES)]
        for _ in range(HOMES_PER_TASK):    # homes in turn until one allows the capability ("go": any)
            room = "kitchen" if rng.random() < 0.6 else "office"
            home = _Home(rng, room, table, oam)
            home.build()
            tasks = _tasks(home)
            if tasks[wanted] and builds(home.text()):
                break
        capability = wanted if tasks[wanted] else "go"
        task, goal = tasks[capability][int(rng.integers(len(tasks[capability])))]
        cases.append(GeneratedCase(index, room, capability, task, goal, home.text()))
    return cases


def write_cases(cases: list[GeneratedCase], folder: Path, seed: int, oam_spec: str,
                keep: Optional[Callable[[int], bool]] = None) -> list[dict]:
    """The scenes into ``folder`` and the cases as `bench physics` runs them (set ``generated``)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for c in cases:
        if keep is not None and not keep(c.index):
            continue
        scene_file = f"generated_{seed}_{c.index}.txt"
        (folder / scene_file).write_text(c.scene_text, encoding="utf-8")
        out.append({"set": "generated", "index": c.index, "where": c.room, "task": c.task, "scene_file": scene_file,
                    "scene_path": str(folder / scene_file), "desired_goal": c.desired_goal, "min_costs": None,
                    "answers": [c.desired_goal], "oam": oam_spec, "paper": None, "capability": c.capability})
    return out
