"""A frame seen as the view of one place: what Explore asks the camera (``Observe`` with a
location). The robot knows which place it looks at (its map names it, ``counter0``); the frame
shows that place's furniture, what stands on or in it, and often other places too. So the biggest
detection of the place's class *is* the place (named as the map names it), and only what stands
on or in it, directly or through other things, belongs to the view.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Optional, Sequence

from affplan_ros.core.model.scene import split_name
from affplan_ros.core.perception.pipeline import Observation
from affplan_ros.core.perception.relations import PLACEMENTS, box_area, placed_at

# What makes furniture a place to put things: a stand-in for the place shares these with its class.
_PLACE_KIND = ("support", "contain")
# With none of the place's class in the frame, a stand-in must cover this share of it: from where
# Explore stands the place fills the view (a counter close up: two thirds of it); a table across
# the room is not the counter.
STAND_IN_SHARE = 0.5


def at_location(seen: Observation, location: str,
                affordances_of: Optional[Callable[[str], Iterable[str]]] = None) -> Observation:
    """``seen`` as the view of ``location``: the place's largest detection named ``location``
    (a detection already called so gives that name up), and only what stands there.

    With ``affordances_of`` (the OAM's), furniture the detector calls by another class of the same
    kind (a counter close up looks like a table: both only support things) is the place too: the
    robot knows what it looks at. Such a detection over the place's box is the place seen twice;
    with none of the place's class in the frame, the largest such one is the place if it fills
    half the frame (``STAND_IN_SHARE``: Explore stands right before the place). What stands on
    either stands at the place."""
    match = split_name(location)
    objects = list(seen.objects)
    renames: dict[str, str] = {}
    if match:
        cls, instance = match
        candidates = [o for o in objects if o.class_name == cls]
        stand_ins = [o for o in objects if o.class_name != cls and _same_kind(cls, o, affordances_of)]
        if not candidates:  # a stand-in alone is the place only where it fills the view, as the place does
            frame = seen.image_size[0] * seen.image_size[1] if seen.image_size else 0.0
            stand_ins = [o for o in stand_ins if frame and box_area(o.box) >= STAND_IN_SHARE * frame]
        place = max(candidates or stand_ins, key=lambda o: box_area(o.box)) if candidates or stand_ins else None
        if place is not None:
            aliases = {id(o) for o in stand_ins if o is not place and _covers(place.box, o.box)}
            holder = next((o for o in objects if o.name == location and o is not place), None)
            if place.name != location:
                renames[place.name] = location
                if holder is not None:  # they swap names: each name stays one object's
                    renames[location] = place.name
            renames.update((o.name, location) for o in objects if id(o) in aliases)
            # A stand-in takes the place's class: what the map and memory know it as.
            as_place = replace(place, instance=instance) if place.class_name == cls else replace(
                place, class_name=cls, instance=instance, affordances=_affordances(cls, affordances_of, place))
            objects = [as_place if o is place else replace(o, instance=place.instance) if o is holder else o
                       for o in objects if id(o) not in aliases]
    relations = [replace(r, args=tuple(renames.get(a, a) for a in r.args)) for r in seen.relations]
    relations = [r for r in relations if len(set(r.args)) == len(r.args)]   # no (on counter0 counter0)
    kept = placed_at(location, [(r.predicate, r.args) for r in relations])
    return replace(seen, objects=[o for o in objects if o.name in kept],
                   relations=[r for r in relations if r.args and r.args[0] in kept],
                   implied=[(c, n) for c, n in seen.implied if n in kept])


def _same_kind(place_class: str, o: Any, affordances_of: Optional[Callable[[str], Iterable[str]]]) -> bool:
    """``o`` is furniture of the place's kind: not carried, and supporting / containing as the
    place's class does (a table for a counter; not a refrigerator)."""
    if affordances_of is None or "carry" in o.affordances:
        return False
    try:
        place = set(affordances_of(place_class))
    except (KeyError, ValueError, LookupError):
        return False
    kind = {a for a in _PLACE_KIND if a in place}
    return bool(kind) and "carry" not in place and kind == {a for a in _PLACE_KIND if a in o.affordances}


def _affordances(cls: str, affordances_of: Optional[Callable[[str], Iterable[str]]], o: Any) -> frozenset:
    try:
        return frozenset(affordances_of(cls)) if affordances_of is not None else o.affordances
    except (KeyError, ValueError, LookupError):
        return o.affordances


def _covers(a: Sequence[float], b: Sequence[float], share: float = 0.6) -> bool:
    """Boxes ``a`` and ``b`` are one thing's: their overlap is most of the smaller one."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return False
    return w * h >= share * min(box_area(a), box_area(b))


def merge_sightings(objects: Iterable[Any], relations: Iterable[Any],
                    args_of: Callable[[Any], Sequence[str]]) -> tuple[list, list]:
    """Sightings of one place from several views, as one: each object (``.name``,
    ``.confidence``) once, its most confident sighting; each thing on or in one parent, the surer
    estimate; the other relations (``.predicate``, ``args_of``) once. For the pipeline's views
    and for SceneObservation messages alike."""
    best: dict[str, Any] = {}
    for o in objects:
        if o.name not in best or o.confidence > best[o.name].confidence:
            best[o.name] = o
    placed: dict[str, Any] = {}
    other: dict[tuple, Any] = {}
    for r in relations:
        args = tuple(args_of(r))
        if r.predicate in PLACEMENTS and args:
            if args[0] not in placed or r.confidence > placed[args[0]].confidence:
                placed[args[0]] = r
        else:
            other.setdefault((r.predicate, args), r)
    return list(best.values()), [*placed.values(), *other.values()]


def merged(views: Sequence[Observation]) -> Observation:
    """Several views of one place (the head turned a little between them) as one
    (:func:`merge_sightings`)."""
    objects, relations = merge_sightings((o for v in views for o in v.objects),
                                         (r for v in views for r in v.relations), lambda r: r.args)
    implied = list(dict.fromkeys(pair for view in views for pair in view.implied))
    unknown = [d for view in views for d in view.unknown]
    return Observation(objects, relations, implied, unknown,
                       warnings=list(dict.fromkeys(w for view in views for w in view.warnings)))
