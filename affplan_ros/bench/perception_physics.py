"""The physics frames of `affplan bench perception --source physics`: held-back rendered views of the
MuJoCo physics world (``sim/physics/dataset.py``) with their labelled boxes and the on/in relation
of every visible object, read from the physics state by ``sim/physics/relations.py``.

The detector for physics frames (``models/kitchen_physics.pt``) is trained on the dataset's low
seeds; the benchmark takes seeds from the dataset's evaluation range only.
"""
from __future__ import annotations

import time
from typing import Iterator, Optional

from affplan_ros.bench.perception import View


def first_eval_seed() -> int:
    from affplan_ros.sim.physics import dataset

    return int(dataset.EVAL_SEED)


def check_seed(seed: Optional[int]) -> int:
    """``seed``, or the first evaluation seed if None; ValueError for a training seed."""
    first = first_eval_seed()
    if seed is None:
        return first
    if seed < first:
        raise ValueError(f"--seed {seed} is a training seed of sim/physics/dataset.py: the benchmark takes "
                         f"held-back views, seeds from {first}")
    return seed


def views(seed: int, count: int, width: int, height: int) -> Iterator[View]:
    """``count`` views from ``dataset.random_views(seed, ...)`` as :class:`View`: colour as BGR (what the
    pipeline takes), the boxes, and for each visible object ("in"/"on", parent) from
    :func:`~affplan_ros.sim.physics.relations.resting_place` (parent None when it is out of view)."""
    import numpy as np

    from affplan_ros.sim.physics.dataset import random_views
    from affplan_ros.sim.physics.relations import resting_place
    from affplan_ros.sim.physics.skills import Skills
    from affplan_ros.sim.physics.world import ThingKind

    skills = None
    source = random_views(seed, count, width, height)
    while True:
        t0 = time.perf_counter()
        view = next(source, None)
        render_s = time.perf_counter() - t0
        if view is None:
            return
        world = view.world
        if skills is None or skills.world is not world:
            skills = Skills(world)
        index = {b.name: i for i, b in enumerate(view.boxes)}
        movable = frozenset(i for i, b in enumerate(view.boxes)
                            if b.name in world.things and world.things[b.name].kind == ThingKind.OBJECT)
        relations = []
        for i in sorted(movable):
            place = resting_place(world, skills, view.boxes[i].name)
            if place is not None:
                relations.append((place[0], i, index.get(place[1])))
        yield View(np.ascontiguousarray(view.rgb[..., ::-1]), view.depth, tuple(view.intrinsics),
                   [b.label for b in view.boxes], [tuple(b.box) for b in view.boxes], relations, movable,
                   render_s, view.scene)
