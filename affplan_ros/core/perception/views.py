"""A frame seen as the view of one place: what Explore asks the camera (``Observe`` with a
location). The robot knows which place it looks at (its map names it, ``counter0``); the frame
shows that place's furniture, what stands on or in it, and often other places too. So the biggest
detection of the place's class *is* the place (named as the map names it), and only what stands
on or in it, directly or through other things, belongs to the view.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence

from affplan_ros.core.model.scene import split_name
from affplan_ros.core.perception.pipeline import Observation
from affplan_ros.core.perception.relations import PLACEMENTS, box_area, placed_at


def at_location(seen: Observation, location: str) -> Observation:
    """``seen`` as the view of ``location``: the place's largest detection named ``location``
    (a detection already called so gives that name up), and only what stands there."""
    match = split_name(location)
    objects = list(seen.objects)
    renames: dict[str, str] = {}
    if match:
        cls, instance = match
        candidates = [o for o in objects if o.class_name == cls]
        if candidates:
            place = max(candidates, key=lambda o: box_area(o.box))
            holder = next((o for o in objects if o.name == location and o is not place), None)
            if place.name != location:
                renames[place.name] = location
                if holder is not None:  # they swap names: each name stays one object's
                    renames[location] = place.name
            objects = [replace(o, instance=instance) if o is place else
                       replace(o, instance=place.instance) if o is holder else o for o in objects]
    relations = [replace(r, args=tuple(renames.get(a, a) for a in r.args)) for r in seen.relations]
    kept = placed_at(location, [(r.predicate, r.args) for r in relations])
    return replace(seen, objects=[o for o in objects if o.name in kept],
                   relations=[r for r in relations if r.args and r.args[0] in kept],
                   implied=[(c, n) for c, n in seen.implied if n in kept])


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
