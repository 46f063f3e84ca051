"""AutoGPT+P's original action semantics, written for the tests: an independent judge of our plans.

It shares no code with the planner (no ``affplan_ros`` import): it reads the original
``all_capabilities.json`` (preconditions and effects as PDDL text), the original OAM files (which
class affords what) and the original scene files, evaluates the two predicates AutoGPT+P derives
instead of storing them, and replays a plan step by step, listing every difference:

* ``free ?o``: nothing stands on ``?o``;
* ``reachable ?o ?l ?a``: the actor ``?a`` is at ``?l`` and ``?o`` is there: an object that stands
  on, lies in or is held by something is where that is (followed up the chain), a liquid is where
  its container is; otherwise where the scene's LOCATIONS section puts it, and a location (or an
  actor) is where it is itself.

Parameters our capability has that the original lacks are ignored; parameters the original has
that ours lacks (``heat_liquid``'s ``heated`` and ``on``) are bound to any object that makes the
precondition true. Each step's effect is applied even when a condition failed, so that one
difference does not hide the next ones. Our environment action ``wetten`` has no original
capability: it is reported and applied as its effect says (``wet`` the object).
"""
from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

Atom = tuple  # ("on", "cup0", "table0")


# -- PDDL text ---------------------------------------------------------------------------------
def parse(text: str):
    """PDDL text -> nested lists of strings (the capability file writes 'and (a) (b)' without the
    outer parentheses)."""
    tokens = re.findall(r"\(|\)|[^\s()]+", text)
    if tokens and tokens[0] != "(":
        tokens = ["(", *tokens, ")"]
    stack: list[list] = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                continue  # the file's handover/receive_object effects close one parenthesis too many
            done = stack.pop()
            stack[-1].append(done)
        else:
            stack[-1].append(tok.lower())
    return stack[0][0]


@dataclass(frozen=True)
class Capability:
    name: str
    params: tuple[tuple[str, str], ...]   # (name, type) without the actor
    pre: object
    eff: object


def load_capabilities(path: Path) -> dict[str, Capability]:
    out = {}
    for c in json.loads(path.read_text()):
        params = tuple((p["name"], p["type"]) for p in c["parameters"])
        out[c["name"]] = Capability(c["name"], params, parse(c["preconditions"]), parse(c["effects"]))
    return out


def load_oam(*paths: Path) -> dict[str, set[str]]:
    """class -> affordances from the original OAM files ({"oams": [{"object", "affordances": [{"name"}]}]});
    later files override earlier ones, class by class."""
    oam: dict[str, set[str]] = {}
    for path in paths:
        for entry in json.loads(path.read_text())["oams"]:
            oam[entry["object"]] = {a["name"] for a in entry["affordances"]}
    return oam


# -- scenes ------------------------------------------------------------------------------------
@dataclass
class Scene:
    classes: dict[str, str] = field(default_factory=dict)      # object -> class
    facts: set = field(default_factory=set)                     # atoms
    places: dict[str, str] = field(default_factory=dict)        # object -> LOCATIONS entry


def _name(token: str) -> str:
    cls, _, idx = token.partition(":")
    return f"{cls}{idx}"


def load_scene(path: Path) -> Scene:
    scene, section = Scene(), None
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line == "SCENE-DESCRIPTION":
            continue
        if line in ("OBJECTS", "RELATIONS", "LOCATIONS") or line.startswith("END-"):
            section = None if line.startswith("END-") else line
            continue
        words = line.split()
        if section == "OBJECTS" and ":" in words[0]:
            scene.classes[_name(words[0])] = words[0].partition(":")[0]
        elif section == "RELATIONS":
            scene.facts.add((words[0], *(_name(w) for w in words[1:])))
        elif section == "LOCATIONS":
            for obj in words[1:]:
                scene.places.setdefault(_name(obj), words[0])
    return scene


# -- the judge ---------------------------------------------------------------------------------
ACTORS = ("robot", "human", "robot_profile")


@dataclass
class Difference:
    step: int
    text: str
    what: str


class World:
    """The state of a scene under the original semantics."""

    def __init__(self, scene: Scene, oam: dict[str, set[str]]):
        self.scene, self.oam = scene, oam
        self.state: set = set(scene.facts)

    # derived predicates
    def free(self, obj: str) -> bool:
        return not any(a[0] == "on" and a[2] == obj for a in self.state)

    def where(self, obj: str, seen: Optional[set] = None) -> Optional[str]:
        seen = seen or set()
        if obj in seen:
            return None   # a containment cycle has no place
        seen.add(obj)
        for a in sorted(self.state):  # sorted: an object listed at two places is judged the same way every run
            if a[0] in ("on", "in", "liquid_in") and a[1] == obj:
                return self.where(a[2], seen)
            if a[0] == "inhand" and a[1] == obj:
                return self.where(a[2], seen)
        for a in self.state:
            if a[0] == "at" and a[1] == obj and len(a) == 3:
                return a[2]
        if obj in self.scene.places:
            return self.scene.places[obj]
        return obj

    def reachable(self, obj: str, at: str, actor: str) -> bool:
        return ("at", actor, at) in self.state and (self.where(obj) == at or obj == at)

    def cycle(self) -> Optional[str]:
        """The objects that stand on or lie in themselves through others (a box in a spoon on
        the box), sorted and comma-separated; None when there are none."""
        parent = {a[1]: a[2] for a in sorted(self.state) if a[0] in ("on", "in", "liquid_in", "inhand")}

        def loops(obj: str) -> bool:
            seen, x = set(), parent.get(obj)
            while x is not None and x not in seen:
                if x == obj:
                    return True
                seen.add(x)
                x = parent.get(x)
            return False

        return ", ".join(sorted(o for o in parent if loops(o))) or None

    def types(self, obj: str) -> set[str]:
        cls = self.scene.classes.get(obj, re.sub(r"\d+$", "", obj))
        kinds = set(self.oam.get(cls, set())) | {cls, "object"}
        if cls in ACTORS or cls.startswith("robot"):
            kinds |= {"actor", "location"}
        if obj in self.scene.places.values() or any(obj == p for p in self.scene.places):
            kinds.add("location")
        return kinds

    # formulas
    def holds(self, f, b: dict) -> bool:
        head = f[0]
        if head == "and":
            return all(self.holds(g, b) for g in f[1:])
        if head == "or":
            return any(self.holds(g, b) for g in f[1:])
        if head == "not":
            return not self.holds(f[1], b)
        args = [b.get(x, x) for x in f[1:]]
        if head == "=":
            return args[0] == args[1]
        if head == "free":
            return self.free(args[0])
        if head == "reachable":
            return self.reachable(*args)
        return (head, *args) in self.state

    def failed(self, f, b: dict) -> list[str]:
        """The literals of a conjunction that do not hold, as text."""
        if f[0] == "and":
            return [x for g in f[1:] for x in self.failed(g, b)]
        return [] if self.holds(f, b) else [_text(f, b)]

    def apply(self, eff, b: dict) -> None:
        adds, dels = [], []
        for lit in (eff[1:] if eff[0] == "and" else [eff]):
            if lit[0] == "not":
                dels.append(tuple([lit[1][0], *(b.get(x, x) for x in lit[1][1:])]))
            else:
                adds.append(tuple([lit[0], *(b.get(x, x) for x in lit[1:])]))
        self.state -= set(dels)
        self.state |= set(adds)


def _text(f, b: dict) -> str:
    if isinstance(f, str):
        return b.get(f, f)
    return "(" + " ".join(_text(g, b) for g in f) + ")"


def scene_names(world: World, args: Iterable[str]) -> list[str]:
    """Our PDDL names back to scene names: a name PDDL cannot start with a digit gets an ``n``."""
    return [a[1:] if a not in world.scene.classes and a[1:] in world.scene.classes else a for a in args]


def replay(world: World, caps: dict[str, Capability], steps: Iterable[tuple[str, str, list[str], list[str]]]
           ) -> list[Difference]:
    """Replay ``(action, actor, our parameter names, arguments)`` steps; every difference found."""
    out: list[Difference] = []
    for i, (action, actor, names, args) in enumerate(steps):
        args = scene_names(world, args)
        text = " ".join([action, actor, *args]).replace("  ", " ")
        if action == "wetten":  # ours: the environment wets a swipe in water (no original capability)
            out.append(Difference(i, text, "no original capability (our environment action)"))
            world.state.add(("wet", args[0]))
            continue
        cap = caps.get(action)
        if cap is None:
            out.append(Difference(i, text, "no original capability"))
            continue
        ours = dict(zip(names, args))
        b = {"?actor": actor}
        for pname, ptype in cap.params:
            if pname in ours:
                b[f"?{pname}"] = ours[pname]
                if ptype not in world.types(ours[pname]):
                    out.append(Difference(i, text, f"type: {ours[pname]} is not {ptype}"))
        missing = [f"?{p}" for p, _ in cap.params if f"?{p}" not in b]
        candidates = sorted(world.scene.classes) + [actor]
        bindings = [dict(b, **dict(zip(missing, combo)))
                    for combo in itertools.product(candidates, repeat=len(missing))] if missing else [b]
        good = next((bb for bb in bindings if world.holds(cap.pre, bb)), None)
        if good is None:
            failed = world.failed(cap.pre, b) if not missing else [f"no binding of {', '.join(missing)}"]
            out.append(Difference(i, text, "precondition: " + "; ".join(failed)))
            good = b if not missing else bindings[0]
        before = world.cycle()
        world.apply(cap.eff, good)
        if before is None and world.cycle() is not None:
            out.append(Difference(i, text, f"containment cycle: {world.cycle()} end up on or in themselves"))
    return out


def goal_holds(world: World, goal_text: str) -> bool:
    """The scenario's desired goal (DNF or any and/or/not formula) in the final state."""
    g = parse(goal_text)
    if g and g[0] in (":goal", "goal"):
        g = g[1]
    return world.holds(g, {})
