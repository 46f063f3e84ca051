"""Labelled views of random physics kitchens: training and evaluation data for a detector that
knows the simulated MuJoCo world (``scripts/train_detector.py --source physics``).

Each view is one world built, as every physics world is, from a scene text in the AutoGPT+P format
(``config/scenarios/kitchen.txt``) and the object class table: a table, a counter and a
refrigerator in a random order along the walls (so in random places), random objects of
``CLASSES`` on the table, on the counter, inside the refrigerator or on/in each other, in 7 of 10
a person, the refrigerator's door open or closed. Then the objects on the furniture tops are
moved to random free spots, the robot's base stands at a random pose near a random piece of
furniture (or the person) and its head looks at it with jitter; lights and colours are jittered
a little. The robot's own arms are in some views, as they are in the real head camera's.

Labels come from MuJoCo's segmentation rendering of the very frame (geom -> the world's thing ->
its class), so a box covers the visible pixels only, and what nothing shows (an apple behind a
closed fridge door) gets no box. Boxes with fewer than ``MIN_VISIBLE_PX`` pixels, or carryable
objects and people of which less than ``MIN_VISIBLE_FRACTION`` of their projected bounding box
shows (mostly hidden or cut off), are dropped.

Seeds: ``random_views(seed, count)`` is deterministic per seed; view ``i`` depends only on
``(seed, i)``. The detector is trained on ``TRAIN_SEED`` and validated on ``VAL_SEED`` during
training; held-back evaluation uses seeds from ``EVAL_SEED`` (10 000) on, which training never
uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import cos, hypot, pi, sin
from typing import Iterator, Optional

import mujoco
import numpy as np

from affplan_ros.core.files.scene_io import parse_scene_text
from affplan_ros.sim.physics.camera import CameraFrame, HeadCamera, aim_point, head_angles
from affplan_ros.sim.physics.robot import TORSO_JOINT
from affplan_ros.sim.physics.world import BasePose, PhysicsWorld, ThingKind, approach_pose, build_world

# The detector's labels: OAM class names, so the perception node needs no synonyms for them.
CLASSES: tuple[str, ...] = (
    "table", "counter", "refrigerator", "apple", "banana", "cup", "plate", "bowl", "sponge", "bucket",
    "kitchen_knife", "cutting_board", "human", "bottle", "pot",
)
FURNITURE = ("table", "counter", "refrigerator")
OBJECTS = tuple(c for c in CLASSES if c not in FURNITURE and c != "human")
# What may be kept inside the refrigerator (on its shelf; a bucket or a knife is not).
IN_FRIDGE = ("apple", "banana", "cup", "bowl", "bottle", "plate", "pot")
# Small things that may lie on a plate or cutting board, or in a bowl or pot, instead of on furniture.
STACKABLE = ("apple", "banana", "sponge")
HOLDERS = {"plate": "on", "cutting_board": "on", "bowl": "in", "pot": "in"}

# The refrigerator as often as a table: half of its views show a closed door, and what lies
# inside (lit by its lamp) is what Explore opens it for.
LOOK_WEIGHT = {"table": 0.35, "counter": 0.35, "refrigerator": 0.35, "human": 0.25}

EXPLORE_POSE_SHARE = 0.35   # views taken from Explore's own standing pose and head aim, no jitter

TRAIN_SEED = 0
VAL_SEED = 1
EVAL_SEED = 10_000
MIN_VISIBLE_PX = 30          # fewer visible pixels: too small to learn from at 320x240
MIN_SIDE_PX = 4              # a box thinner than this is no box
MIN_VISIBLE_FRACTION = 0.15  # of a carryable's (or person's) projected bounding box: less is "mostly hidden"


@dataclass(frozen=True)
class LabelledBox:
    label: str                         # one of CLASSES
    name: str                          # the world's thing (apple0)
    box: tuple[int, int, int, int]     # x1, y1 (first visible pixel), x2, y2 (one past the last): visible pixels only
    visible_px: int


@dataclass
class LabelledView:
    rgb: np.ndarray                    # (H, W, 3) uint8
    depth: np.ndarray                  # (H, W) float32 metres
    intrinsics: tuple[float, float, float, float]   # fx, fy, cx, cy
    boxes: list[LabelledBox]
    world: PhysicsWorld
    scene: str                         # "seed S view I": where it came from (random_views(S, ...)'s I-th)


# -- scenes ------------------------------------------------------------------------------------

def random_scene_text(rng: np.random.Generator) -> str:
    """A random kitchen in the AutoGPT+P scene format (what ``parse_scene_text`` reads)."""
    furniture = [f"{c}:0" for c in rng.permutation(FURNITURE)]
    count = int(rng.integers(5, 13))
    counters: dict[str, int] = {}
    objects: list[str] = []
    relations: list[str] = []
    where: dict[str, str] = {}          # object -> the furniture it ends up at (for LOCATIONS)
    holders: list[tuple[str, str]] = []  # (object, on|in) that others may go onto/into
    for cls in rng.choice(OBJECTS, size=count):
        cls = str(cls)
        obj = f"{cls}:{counters.setdefault(cls, 0)}"
        counters[cls] += 1
        objects.append(obj)
        if cls in STACKABLE and holders and rng.random() < 0.25:
            holder, rel = holders[int(rng.integers(len(holders)))]
            relations.append(f"{rel} {obj} {holder}")
            where[obj] = where[holder]
            continue
        choices = ["table:0", "counter:0"] + (["refrigerator:0"] if cls in IN_FRIDGE else [])
        support = choices[int(rng.choice(len(choices), p=_support_weights(len(choices))))]
        relations.append(f"{'in' if support.startswith('refrigerator') else 'on'} {obj} {support}")
        where[obj] = support
        if cls in HOLDERS:
            holders.append((obj, HOLDERS[cls]))
    relations.append(f"{'opened' if rng.random() < 0.5 else 'closed'} refrigerator:0")
    agents = ["robot:0"]
    relations.append(f"at robot:0 {furniture[int(rng.integers(3))]}")
    if rng.random() < 0.7:
        agents.append("human:0")
        relations.append(f"at human:0 {furniture[int(rng.integers(3))]}")
    locations = [f"{f.replace(':', '')} {f} " + " ".join(o for o in objects if where[o] == f) for f in furniture]
    return "\n".join(["SCENE-DESCRIPTION", "OBJECTS", *furniture, *objects, *agents, "END-OBJECTS",
                      "RELATIONS", *relations, "END-RELATIONS", "LOCATIONS", *(loc.rstrip() for loc in locations),
                      "END-LOCATIONS", ""])


def _support_weights(n: int) -> list[float]:
    # Table and counter alike; the refrigerator less often (half of its views show a closed door).
    return [0.4, 0.4, 0.2] if n == 3 else [0.5, 0.5]


# -- changing a built world ----------------------------------------------------------------------

def _forward(world: PhysicsWorld) -> None:
    # mj_forward with sleeping off (what refresh_contacts does): bodies at rest are asleep, and
    # their poses, set by hand here, must reach the renderer.
    world.refresh_contacts()


def _free_qpos(world: PhysicsWorld, name: str) -> int:
    return int(world.model.jnt_qposadr[world.model.body_jntadr[world.thing(name).body_id]])


def _radius(world: PhysicsWorld, name: str) -> float:
    sx, sy, _ = world.thing(name).props.size
    shape = world.thing(name).props.shape
    return 0.5 * (sx * 2 ** 0.5 if shape in ("sphere", "cylinder") else hypot(sx, sy))


def scatter_objects(world: PhysicsWorld, rng: np.random.Generator, gap: float = 0.03) -> None:
    """Move the objects standing directly on a furniture top (with nothing on or in them) to
    random free spots of that top, turned at random; the packing alone puts them front middle."""
    objects = [n for n, t in world.things.items() if t.kind == ThingKind.OBJECT]
    touching = {o: world.contacts(o) for o in objects}
    # What touches another object (a banana in a bowl, the bowl) stays: moving one would leave
    # the other in the air.
    stacked = {o for o in objects if any(s in touching for s in touching[o])}
    for furniture in (n for n, t in world.things.items() if t.kind == ThingKind.FURNITURE):
        if not world.has_site(world.thing(furniture).top_site):
            continue
        centre, rot, half = world.site(world.thing(furniture).top_site)
        on_top = [o for o in objects if furniture in touching[o]
                  and world.position(o)[2] > centre[2]]   # on the top, not on a shelf below it
        here = [o for o in on_top if o not in stacked]
        others = [o for o in on_top if o in stacked]
        taken = [(world.position(o)[:2], _radius(world, o)) for o in others]
        for obj in rng.permutation(here):
            r = _radius(world, str(obj))
            if r > min(half[0], half[1]) - 0.02:
                taken.append((world.position(str(obj))[:2], r))
                continue
            for _ in range(20):
                u = rng.uniform(-half[0] + r + 0.02, half[0] - r - 0.02)
                v = rng.uniform(-half[1] + r + 0.02, half[1] - r - 0.02)
                xy = centre[:2] + rot[:2, :2] @ np.array([u, v])
                if all(np.linalg.norm(xy - p) >= r + q + gap for p, q in taken):
                    break
            else:
                xy = world.position(str(obj))[:2]
            adr = _free_qpos(world, str(obj))
            world.data.qpos[adr:adr + 2] = xy
            a = rng.uniform(-pi, pi)
            turn = np.array([cos(a / 2), 0.0, 0.0, sin(a / 2)])
            quat = np.zeros(4)
            mujoco.mju_mulQuat(quat, turn, world.data.qpos[adr + 3:adr + 7].copy())
            world.data.qpos[adr + 3:adr + 7] = quat
            taken.append((xy, r))
    world.data.qvel[:] = 0.0
    _forward(world)


def jitter_appearance(world: PhysicsWorld, rng: np.random.Generator) -> None:
    """Lights brighter or dimmer, moved a little; each thing's colour (and the floor's and walls')
    shifted a little, the same for all geoms of one thing, so a class keeps its look."""
    m = world.model
    for i in range(m.nlight):
        if (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_LIGHT, i) or "").endswith("/lamp"):
            # A fridge's lamp stays under its roof, a little brighter or dimmer.
            m.light_diffuse[i] = np.clip(m.light_diffuse[i] * rng.uniform(0.7, 1.2), 0.0, 1.0)
            continue
        m.light_diffuse[i] = np.clip(rng.uniform(0.45, 1.0) + rng.normal(0.0, 0.04, 3), 0.0, 1.0)
        m.light_ambient[i] = rng.uniform(0.0, 0.25)
        m.light_pos[i, :2] += rng.uniform(-1.0, 1.0, 2)
    m.vis.headlight.ambient[:] = rng.uniform(0.05, 0.25)
    m.vis.headlight.diffuse[:] = rng.uniform(0.25, 0.55)
    groups: dict[str, list[int]] = {}
    for g in range(m.ngeom):
        groups.setdefault(world.owner(g), []).append(g)
    for owner, geoms in groups.items():
        if owner == world.robot_name:
            continue
        # The floor and the walls ('') may change more: they are background, not a class.
        spread = 0.15 if owner == "" else 0.06
        scale = np.clip(1.0 + rng.normal(0.0, spread, 3), 0.6, 1.4)
        for g in geoms:
            if m.geom_rgba[g, 3] > 0:
                m.geom_rgba[g, :3] = np.clip(m.geom_rgba[g, :3] * scale, 0.0, 1.0)
    _forward(world)


def stand_and_look(world: PhysicsWorld, target: str, rng: Optional[np.random.Generator] = None) -> BasePose:
    """Put the robot's base at a free pose in front of ``target`` (furniture or a person) and point
    its head at it: exactly in front and straight at it without ``rng``, else at a random spot
    along its front, up to 1.2 m further back, turned and aimed with jitter. Set, not driven: the
    view is what matters, not the motion."""
    thing = world.thing(target)
    pose, lateral = approach_pose(thing, world.spec), 0.0
    if rng is not None:
        for attempt in range(12):
            shift = rng.uniform(-0.5, 0.5) * (thing.placement.width if thing.placement else 0.5)
            back = rng.uniform(0.0, 1.2) * (1 - attempt / 12)
            p = approach_pose(thing, world.spec, shift, back)
            # A small turn only: the head pans by as much, and panned far the camera sees little
            # but the robot's own upper arm.
            candidate = BasePose(p.x, p.y, p.yaw + rng.uniform(-0.2, 0.2))
            if _base_free(world, candidate):
                pose, lateral = candidate, shift
                break
    m, d = world.model, world.data
    torso = rng.uniform(0.0, world.spec.torso_stroke) if rng is not None else 0.0
    for joint, value in (("base_x", pose.x), ("base_y", pose.y), ("base_yaw", pose.yaw), (TORSO_JOINT, torso)):
        d.qpos[m.joint(joint).qposadr[0]] = value
        world.set_ctrl(joint, value)
    _forward(world)
    point = aim_point(world, target)
    if thing.kind == ThingKind.AGENT:   # a person's body origin is on the floor: look at the chest
        point = point + np.array([0.0, 0.0, 1.1])
    if rng is not None:
        # At the part of the piece the base stands before (not back at its middle), with jitter.
        if thing.placement is not None and thing.kind == ThingKind.FURNITURE:
            point = point + lateral * np.array([cos(thing.placement.yaw), sin(thing.placement.yaw), 0.0])
        point = point + rng.normal(0.0, 0.12, 3)
    for joint, value in zip(("head_pan", "head_tilt"), head_angles(world, point)):
        d.qpos[m.joint(joint).qposadr[0]] = value
        world.set_ctrl(joint, value)
    d.qvel[:] = 0.0
    _forward(world)
    return pose


def _base_free(world: PhysicsWorld, pose: BasePose) -> bool:
    r = world.spec.base_radius + 0.02
    if max(abs(pose.x), abs(pose.y)) > world.room_side / 2 - r:
        return False
    return all(place.distance(pose.x, pose.y) >= r for _, place in world.obstacles())


# -- labels --------------------------------------------------------------------------------------

def _segmentation(camera: HeadCamera) -> np.ndarray:
    """(H, W) geom id per pixel (-1: no geom), from the camera's own renderer and pose."""
    renderer = camera._renderer   # the same renderer and camera as the frame: pixels line up exactly
    renderer.enable_segmentation_rendering()
    try:
        renderer.update_scene(camera.world.data, camera=camera._camera)
        seg = renderer.render()
    finally:
        renderer.disable_segmentation_rendering()
    return np.where(seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM), seg[..., 0], -1)


def _projected_area(world: PhysicsWorld, frame: CameraFrame, name: str) -> Optional[float]:
    """Pixels of the image covered by the 2-D box round ``name``'s projected bounding box (clipped
    to the image), or None if part of it lies behind the camera."""
    thing = world.thing(name)
    if thing.kind == ThingKind.AGENT:
        half = np.array([0.22, 0.22, 0.75])              # the person's capsule (bodies.human_xml)
        centre = world.position(name) + np.array([0.0, 0.0, 0.875])
        rot = np.eye(3)
    else:
        sx, sy, sz = thing.props.size
        if thing.props.shape == "sphere":
            sy = sz = sx
        elif thing.props.shape == "cylinder":
            sy = sx
        half, centre, rot = np.array([sx, sy, sz]) / 2, world.position(name), world.rotation(name)
    corners = [centre + rot @ (half * np.array(s)) for s in product((-1, 1), repeat=3)]
    pixels = [frame.pixel_of(c) for c in corners]
    if any(p is None for p in pixels):
        return None
    us = np.clip([p[0] for p in pixels], 0, frame.width)
    vs = np.clip([p[1] for p in pixels], 0, frame.height)
    return float((us.max() - us.min()) * (vs.max() - vs.min()))


def label_view(world: PhysicsWorld, camera: HeadCamera) -> tuple[CameraFrame, list[LabelledBox]]:
    """Render ``camera``'s frame and label every thing of ``CLASSES`` it shows (module docstring:
    which boxes are dropped)."""
    frame = camera.render()
    seg = _segmentation(camera)
    names = sorted(n for n, t in world.things.items() if t.class_name in CLASSES and t.geom_ids)
    # geom id -> index into names (-1: not a labelled thing), then per pixel.
    lut = np.full(world.model.ngeom + 1, -1, dtype=np.int32)
    for k, name in enumerate(names):
        lut[list(world.thing(name).geom_ids)] = k
    owners = lut[seg]                 # seg == -1 reads lut[-1], which is -1 too
    counts = np.bincount(owners[owners >= 0].ravel(), minlength=len(names))
    boxes = []
    for k in np.nonzero(counts >= MIN_VISIBLE_PX)[0]:
        name = names[int(k)]
        ys, xs = np.nonzero(owners == k)
        x1, y1, x2, y2 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
        if min(x2 - x1, y2 - y1) < MIN_SIDE_PX:
            continue
        if world.thing(name).kind != ThingKind.FURNITURE:
            area = _projected_area(world, frame, name)
            if area is not None and counts[k] < MIN_VISIBLE_FRACTION * area:
                continue
        boxes.append(LabelledBox(world.thing(name).class_name, name, (x1, y1, x2, y2), int(counts[k])))
    return frame, boxes


# -- views -------------------------------------------------------------------------------------

def random_view(seed: int, index: int, width: int = 320, height: int = 240) -> LabelledView:
    """View ``index`` of ``seed`` (what ``random_views(seed, n)`` yields as its ``index``-th)."""
    rng = np.random.default_rng([seed, index])
    world = build_world(parse_scene_text(random_scene_text(rng), f"dataset seed {seed} view {index}"))
    scatter_objects(world, rng)
    jitter_appearance(world, rng)
    targets = [n for n, t in world.things.items() if t.kind in (ThingKind.FURNITURE, ThingKind.AGENT)]
    # Where most objects are (table, counter) more often than the refrigerator or a person.
    weights = np.array([LOOK_WEIGHT.get(world.thing(n).class_name, 0.1) for n in targets])
    target = targets[int(rng.choice(len(targets), p=weights / weights.sum()))]
    # Some views from exactly where Explore stands and looks (close, things cut off by the frame):
    # the detector must know the robot's own views, not only views from further back.
    stand_and_look(world, target, None if rng.random() < EXPLORE_POSE_SHARE else rng)
    camera = HeadCamera(world, width, height)
    try:
        frame, boxes = label_view(world, camera)
    finally:
        camera.close()
    assert frame.depth is not None
    return LabelledView(frame.rgb, frame.depth, (frame.fx, frame.fy, frame.cx, frame.cy), boxes, world,
                        f"seed {seed} view {index}")


def random_views(seed: int, count: int, width: int = 320, height: int = 240) -> Iterator[LabelledView]:
    """``count`` labelled views of random kitchens, the same for the same seed (module docstring:
    which seeds are for training and which are held back)."""
    for index in range(count):
        yield random_view(seed, index, width, height)
