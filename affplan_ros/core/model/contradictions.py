"""Scene files that say two things which cannot both hold (a data error, not a planning or an
execution problem): a door both ``opened`` and ``closed``, a bowl ``on`` the desk and ``on`` the
table. The planner takes such a state as given; a physical world can only build one of them, so
a benchmark that judges by physics reports these cases as data errors, with the evidence.
"""
from __future__ import annotations

from dataclasses import dataclass

from affplan_ros.core.model.scene import Scene

PLACED = ("on", "in")   # where a thing rests: a carried thing rests in one place


OPEN_CLOSE = ("opened", "closed")


@dataclass(frozen=True)
class Contradiction:
    objects: tuple[str, ...]      # the things it is about
    text: str                     # the relations that clash, in words
    predicates: tuple[str, ...]   # the predicates that clash (opened/closed, on/in)

    def __str__(self) -> str:
        return self.text

    def behind(self, step: tuple[str, ...] = (), goal_atoms: tuple[tuple[str, ...], ...] = ()) -> bool:
        """Could this clash explain a failure at ``step`` (action, args...) or of a goal with
        ``goal_atoms``? A step on one of its objects that depends on what clashes (opening or
        closing a door said to be both; taking a bowl from one of its two places), or a goal
        atom about one of them with one of its predicates."""
        if any(a[0] in self.predicates and set(a[1:2]) & set(self.objects) for a in goal_atoms):
            return True
        if not step or not set(step[1:]) & set(self.objects):
            return False
        return step[0] in ("open", "close") if self.predicates == OPEN_CLOSE else True


def contradictions(scene: Scene) -> list[Contradiction]:
    """What ``scene`` says twice in ways that exclude each other."""
    facts = {(r.predicate, *r.args) for r in scene.relations}
    found = [Contradiction((o,), f"(opened {o}) and (closed {o})", OPEN_CLOSE)
             for o in sorted({f[1] for f in facts if f[0] == "opened" and len(f) == 2}) if ("closed", o) in facts]
    holders: dict[str, list[tuple[str, str]]] = {}
    for r in scene.relations:
        if r.predicate in PLACED and len(r.args) == 2:
            holders.setdefault(r.args[0], []).append((r.predicate, r.args[1]))
    for thing, held in sorted(holders.items()):
        places = list(dict.fromkeys(h for _, h in held))
        # In a bowl that stands on the counter is also "on the counter": not a clash.
        clash = [(a, b) for i, a in enumerate(places) for b in places[i + 1:]
                 if not (_within(a, b, holders) or _within(b, a, holders))]
        if clash:
            said = " and ".join(f"({p} {thing} {h})" for p, h in held)
            found.append(Contradiction((thing,), said, PLACED))
    return found


def _within(inner: str, outer: str, holders: dict[str, list[tuple[str, str]]], depth: int = 8) -> bool:
    """Does ``inner`` rest (transitively) on or in ``outer``?"""
    frontier = {h for _, h in holders.get(inner, ())}
    for _ in range(depth):
        if outer in frontier:
            return True
        frontier = {h for f in frontier for _, h in holders.get(f, ())}
        if not frontier:
            return False
    return False
