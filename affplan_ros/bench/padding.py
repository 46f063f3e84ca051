"""Scenes padded with distractors: the benchmark's kitchen inside a large home (``--pad N``).

A scene of the AutoGPT+P data is a kitchen of 10-40 objects. Padding adds ``N`` objects on
new places (about one place per ten objects, at most ``MAX_PLACES``), copies of the furniture
and of the carryable kinds the scene already has, with new instance numbers: nothing that was
there changes (no distractor stands on, in or under an object of the scene), so the desired
goal, its minimal cost and the answers replayed for the case stay what they were, while every
prompt, the memory, pruning and planning see a home of ``N`` more things. Deterministic per
seed.
"""
from __future__ import annotations

import random

MAX_PLACES = 30
_HOLDING = ("on", "in")


def pad_scene(scene, objects: int, seed: int = 0):
    """A copy of ``scene`` with ``objects`` distractors on new places (see the module doc)."""
    from affplan_ros.core.model.scene import Location, SceneObject

    if objects <= 0:
        return scene
    out = scene.copy()
    rng = random.Random(seed * 7919 + objects)
    instances: dict[str, int] = {}
    for o in scene.objects.values():
        instances[o.class_name] = max(instances.get(o.class_name, -1), o.instance)
    liquids = {r.args[0] for r in scene.relations if r.predicate == "liquid_in"}
    carried = sorted({scene.objects[r.args[0]].class_name for r in scene.relations
                      if r.predicate in _HOLDING and r.args[0] in scene.objects and r.args[0] not in liquids
                      and not scene.objects[r.args[0]].is_agent and r.args[0] not in scene.locations})
    places = sorted({scene.objects[p].class_name for p in scene.locations
                     if p in scene.objects and not scene.objects[p].is_agent})   # a person is no furniture
    # A place whose furniture holds things "in" (a cupboard) gets them in, else on.
    inside = {scene.objects[r.args[1]].class_name for r in scene.relations
              if r.predicate == "in" and r.args[1] in scene.locations and r.args[1] in scene.objects}
    if not carried or not places:
        return scene

    def new(cls: str) -> str:
        instances[cls] = instances.get(cls, -1) + 1
        obj = SceneObject(cls, instances[cls])
        out.add_object(obj)
        return obj.name

    n_places = max(1, min(MAX_PLACES, objects // 10))
    new_places = [new(rng.choice(places)) for _ in range(n_places)]
    members: dict[str, list[str]] = {p: [p] for p in new_places}
    for i in range(objects - n_places):
        place = new_places[i % n_places]
        thing = new(rng.choice(carried))
        how = "in" if out.objects[place].class_name in inside else "on"
        out.add_relation(how, thing, place)
        members[place].append(thing)
    for p in new_places:
        out.locations[p] = Location(p, tuple(members[p]))
    return out
