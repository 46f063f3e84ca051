"""The symbolic relations of the domain, read from the physics state (never from PDDL effects).

After every step the executor asks :func:`read_relations` what holds now, so that observe() and
goal_reached() judge what the physics did:

* ``inhand o robot``: a hand the skills closed on ``o`` and both finger pads touch it;
  ``inhand o person``: the person's hand grips ``o`` (their weld is on) and ``o`` hangs there;
* ``in o c``: ``o``'s centre lies in ``c``'s inner volume (the innermost container wins: an apple
  in a bowl in the fridge is in the bowl);
* ``on o s``: ``o`` touches ``s`` and its bottom is at ``s``'s top surface, within the surface's
  extent (an object leaning on a wall of a box is on nothing);
* ``opened`` / ``closed``: a door or drawer joint past 60 % of its range / within 5 % of shut (in
  between: ajar, neither). Lids are not bodies yet: their state is the world's Python flag;
* ``liquid_in``: the quantities the world keeps per container; ``chopped``, ``clean``, ``wet``: the
  world's sets, changed only by the motion that cuts or wipes, or by lying in water;
  ``liquid_warm``: a liquid whose temperature (``PhysicsWorld.temperatures``, raised only by a
  heater that ran with it on or in it: ``heating.py``) is at least ``WARM_C``;
* ``at robot loc``: the base centre within ``AT_DISTANCE`` of a location's footprint (the nearest
  one), or within ``NEAR_PERSON`` of a person; people stay where the scene put them;
* ``located o loc`` (internal): the location whose anchor ``o`` stands on or in, through any chain
  of supports; ``hand_occupied`` (internal) for a robot holding something.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import hypot
from typing import Optional

import numpy as np

from affplan_ros.core.model.scene import Scene
from affplan_ros.sim.physics.bodies import vertical_half
from affplan_ros.sim.physics.skills import Skills
from affplan_ros.sim.physics.two_hands import both_hands, touching_hands
from affplan_ros.sim.physics.world import PhysicsWorld, ThingKind

AT_DISTANCE = 0.75     # m from the base centre to a location's footprint that counts as "at" it
NEAR_PERSON = 0.8      # m from the base centre to a person's centre (navigate stands 0.6 m off)
ON_TOLERANCE = 0.03    # m between an object's bottom and a surface it rests on
OPENED_FRACTION = 0.6  # of a joint's range: a robot arm fits through (PhysicsWorld.is_open)
PERSON_HOLD = 0.25     # m from a person's hand to the centre of an object their grip holds
WARM_C = 50.0          # °C from which a liquid counts as warm (a warm drink; room temperature is 20)

Atom = tuple[str, ...]


@dataclass(frozen=True)
class Anchors:
    """Location name <-> the scene object it is named after."""

    by_location: dict[str, str]

    @classmethod
    def of(cls, scene: Scene) -> "Anchors":
        out = {}
        for name, loc in scene.locations.items():
            anchor = name if name in scene.objects else (loc.objects[0] if loc.objects else None)
            if anchor is not None:
                out[name] = anchor
        return cls(out)

    def location_of_anchor(self, anchor: str) -> Optional[str]:
        return next((loc for loc, a in self.by_location.items() if a == anchor), None)


def _touching(world: PhysicsWorld) -> dict[str, set[str]]:
    """What touches what, by scene name, from one contact pass."""
    out: dict[str, set[str]] = {}
    for g1, g2 in world.contact_pairs():
        a, b = world.owner(g1), world.owner(g2)
        if a != b:
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return out


def _held(world: PhysicsWorld, skills: Skills, obj: str, touching: dict[str, set[str]]) -> bool:
    """Between both pads of a hand (or, taken with both hands, touched by each): whoever moved
    the hand, the simulator's skills or the robot's own software on the hardware."""
    if world.robot_name not in touching.get(obj, set()):
        return False
    if both_hands(skills, obj):    # between both hands: each presses on it with its pads
        return touching_hands(skills, obj) == 2
    side = skills.holding(obj)
    for hand in (side,) if side is not None else ("r", "l"):
        pads = [world.model.geom(f"{hand}_pad_{f}").id for f in ("a", "b")]
        if len(world.touching_geoms(obj, pads)) == 2:
            return True
    return False


def _container_of(world: PhysicsWorld, skills: Skills, obj: str) -> Optional[str]:
    """The innermost container (smallest inner floor) whose inner volume holds ``obj``'s centre;
    a carryable one only if ``obj`` fits into it (a fork lying under a spoon's bowl is not in the
    spoon, as the planner's ``fits`` has it)."""
    best, area = None, float("inf")
    props = world.things[obj].props
    for name, thing in world.things.items():
        if name == obj or thing.kind not in (ThingKind.FURNITURE, ThingKind.OBJECT):
            continue
        if thing.kind == ThingKind.OBJECT and props is not None and not props.fits_into(thing.props):
            continue
        if not world.has_site(thing.inner_site) or not skills.inside(obj, name):
            continue
        _, _, size = world.site(thing.inner_site)
        if size[0] * size[1] < area:
            best, area = name, float(size[0] * size[1])
    return best


def resting_place(world: PhysicsWorld, skills: Skills, obj: str) -> Optional[tuple[str, str]]:
    """("in", container) or ("on", support) for what holds ``obj`` now, as ``read_relations``
    finds it (a container first); None when it is held or rests on nothing the world knows."""
    container = _container_of(world, skills, obj)
    if container is not None:
        return "in", container
    support = _support_of(world, obj, _touching(world))
    return ("on", support) if support is not None else None


def _support_of(world: PhysicsWorld, obj: str, touching: dict[str, set[str]]) -> Optional[str]:
    """What ``obj`` rests on: something it touches whose top surface is at its bottom, under it."""
    pos, rot = world.position(obj), world.rotation(obj)
    bottom = pos[2] - vertical_half(world.things[obj].props, rot)
    for other in sorted(touching.get(obj, set())):
        thing = world.things.get(other)
        if thing is None or thing.kind not in (ThingKind.FURNITURE, ThingKind.OBJECT):
            continue
        if not world.has_site(thing.top_site):
            continue
        centre, srot, size = world.site(thing.top_site)
        local = srot.T @ (pos - centre)
        if abs(bottom - centre[2]) <= ON_TOLERANCE and abs(local[0]) <= size[0] + 0.02 \
                and abs(local[1]) <= size[1] + 0.02:
            return other
    return None


def robot_locations(world: PhysicsWorld, anchors: Anchors, people: dict[str, str]) -> list[str]:
    """Where the base stands: the nearest location within ``AT_DISTANCE`` of its footprint, and
    every person within ``NEAR_PERSON``."""
    pose = world.base_pose()
    best, dist = None, AT_DISTANCE
    for loc, anchor in anchors.by_location.items():
        thing = world.things.get(anchor)
        if thing is None or thing.placement is None or thing.kind == ThingKind.AGENT:
            continue
        lx, ly = thing.placement.to_local(pose.x, pose.y)
        d = hypot(max(abs(lx) - thing.placement.width / 2, 0.0), max(abs(ly) - thing.placement.depth / 2, 0.0))
        if d <= dist:
            best, dist = loc, d
    out = [best] if best else []
    for person in people:
        place = world.things[person].placement
        if place is not None and hypot(pose.x - place.x, pose.y - place.y) <= NEAR_PERSON:
            out.append(person)
    return out


def read_relations(world: PhysicsWorld, skills: Skills, scene: Scene, anchors: Anchors) -> set[Atom]:
    """Every relation of the domain the physics state supports now, in scene names."""
    touching = _touching(world)
    atoms: set[Atom] = set()
    holder: dict[str, str] = {}        # object -> what it is on or in (for located)
    robot = world.robot_name
    for name, thing in world.things.items():
        if thing.kind != ThingKind.OBJECT:
            continue
        if _held(world, skills, name, touching):
            atoms.add(("inhand", name, robot))
            atoms.add(("hand_occupied", robot))
            continue
        person = world.grips.get(name)
        if person is not None and np.linalg.norm(
                world.position(name) - world.person_hand(person, world.grip_hands[name])) < PERSON_HOLD:
            atoms.add(("inhand", name, person))
            continue
        container = _container_of(world, skills, name)
        if container is not None:
            atoms.add(("in", name, container))
            holder[name] = container
            continue
        support = _support_of(world, name, touching)
        if support is not None:
            atoms.add(("on", name, support))
            holder[name] = support
    for name, thing in world.things.items():
        if thing.kind == ThingKind.FURNITURE and thing.joint:
            q = world.qpos(thing.joint)
            if q >= OPENED_FRACTION * thing.joint_open:
                atoms.add(("opened", name))
            elif world.is_closed(name):
                atoms.add(("closed", name))
        elif thing.kind == ThingKind.OBJECT and thing.props.articulation == "lid":
            # Not a body yet: the lid's state is the world's flag (see the module docstring).
            atoms.add(("closed", name) if name in world.closed_lids else ("opened", name))
    for predicate, names in (("chopped", world.chopped), ("clean", world.cleaned), ("wet", world.wet)):
        atoms.update((predicate, name) for name in names)
    for container, liquids in world.liquids.items():
        for liquid, litres in liquids.items():
            if litres > 0:
                atoms.add(("liquid_in", liquid, container))
                holder[liquid] = container
                if world.temperature(liquid) >= WARM_C:
                    atoms.add(("liquid_warm", liquid))
    people = {n: loc for n, t in world.things.items() if t.kind == ThingKind.AGENT
              for loc in [scene.location_of(n)] if loc}
    for person, loc in people.items():
        atoms.add(("at", person, loc))
    for loc in robot_locations(world, anchors, people):
        atoms.add(("at", robot, loc))
    # located: follow supports down to a location's anchor (the anchor itself is located there).
    for loc, anchor in anchors.by_location.items():
        atoms.add(("located", anchor, loc))
    for name in holder:
        seen, cur = set(), name
        while cur in holder and cur not in seen:
            seen.add(cur)
            cur = holder[cur]
        loc = anchors.location_of_anchor(cur)
        if loc is not None and cur != name:
            atoms.add(("located", name, loc))
    return atoms
