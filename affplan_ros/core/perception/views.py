"""A frame seen as the view of one place: what Explore asks the camera (``Observe`` with a
location). The robot knows which place it looks at (its map names it, ``counter0``); the frame
shows that place's furniture, what stands on or in it, and often other places too. So the biggest
detection of the place's class *is* the place (named as the map names it), and only what stands
on or in it, directly or through other things, belongs to the view.
"""
from __future__ import annotations

import re
from dataclasses import replace

from affplan_ros.core.perception.pipeline import Observation
from affplan_ros.core.perception.relations import placed_at

_NAME = re.compile(r"^(?P<cls>.+?)(?P<instance>\d+)$")


def _area(box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def at_location(seen: Observation, location: str) -> Observation:
    """``seen`` as the view of ``location``: the place's largest detection named ``location``
    (a detection already called so gives that name up), and only what stands there."""
    match = _NAME.match(location)
    objects = list(seen.objects)
    renames: dict[str, str] = {}
    if match:
        cls, instance = match["cls"], int(match["instance"])
        candidates = [o for o in objects if o.class_name == cls]
        if candidates:
            place = max(candidates, key=lambda o: _area(o.box))
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
