"""Physical properties of object classes (data/objects.yaml): size, mass, shape, inner space.

The planner uses them for ``(fits ?o ?c)``, so containment respects size (a box does not go
into a spoon, a plate not into a bowl), and for ``(too_wide ?o ?s)``, so nothing stands on an
object narrower than itself; the physics world builds its bodies from the same table.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Union

import yaml

from affplan_ros.core.errors import ConfigError

DEFAULT_OBJECTS = Path(__file__).resolve().parent / "data" / "objects.yaml"
SHAPES = ("box", "cylinder", "sphere")
ARTICULATIONS = ("door", "drawer", "lid")
# How a parallel gripper takes it from above: "" (the default) across its narrowest side, or by
# its wall when it is a container wider than the gripper; rim: by its raised rim (a plate); handle:
# across its handle (``handle`` gives the handle's length and width; the rest is the head).
# top_handle: across a handle bar over its top (``top_handle`` gives the bar's length and width;
# a watering can's, carried by it as a person carries one).
GRASPS = ("", "top", "rim", "handle", "top_handle")
# An object in a container may be at most this many times the container's depth long (see fits_into).
STICK_OUT = 3.0


@dataclass(frozen=True)
class ObjectProperties:
    size: tuple[float, float, float] = (0.1, 0.1, 0.1)   # outer box [x, y, z], metres
    mass: float = 0.3                                    # kg
    shape: str = "box"
    inner: Optional[tuple[float, float, float]] = None   # free space of a container
    liquid: bool = False
    fixed: bool = False
    articulation: str = ""                               # "" | door | drawer | lid
    grasp: str = ""                                      # "" | top | rim | handle (see GRASPS)
    handle: Optional[tuple[float, float]] = None         # grasp handle: [length along x, width]
    top_handle: Optional[tuple[float, float]] = None     # grasp top_handle: the bar's [length along x, width]
    # A liquid's closed bottle, for a scene that puts the liquid itself on a place (SayCan's
    # "water" is a water bottle on the table, not water in a container): what is carried then.
    bottled: Optional["ObjectProperties"] = None

    def fits_into(self, container: "ObjectProperties") -> bool:
        """Whether this object can go into ``container``: its two smallest dimensions pass the
        opening (the container's two horizontal inner dimensions), and what sticks out above is
        at most twice the container's depth, as a spoon in a cup or a knife in a glass (a fork
        does not go "into" a spoon). Liquids go by ``liquid_in``, not here."""
        if container.inner is None or self.liquid:
            return False
        small, longest = sorted(self.size)[:2], max(self.size)
        opening, depth = sorted(container.inner[:2]), container.inner[2]
        return small[0] <= opening[0] and small[1] <= opening[1] and longest <= STICK_OUT * depth

    def too_wide_for(self, support: "ObjectProperties") -> bool:
        """Whether this object is too wide to stand on ``support`` (an object, not furniture): its
        footprint, narrow side against narrow side, is larger than the support's, so it would rest
        on what else the support holds or tip off it (a 30 x 22 cm box on a 26 cm plate)."""
        if self.liquid or support.liquid:
            return False
        mine, theirs = sorted(self.size[:2]), sorted(support.size[:2])
        return mine[0] > theirs[0] or mine[1] > theirs[1]


class ObjectTable:
    """The properties of each class, with a declared default for classes it lacks."""

    def __init__(self, classes: Mapping[str, ObjectProperties], default: ObjectProperties, source: str = ""):
        self.classes = dict(classes)
        self.default = default
        self.source = source

    def __contains__(self, class_name: str) -> bool:
        return class_name in self.classes

    def get(self, class_name: str) -> ObjectProperties:
        return self.classes.get(class_name, self.default)


def _vector(value, what: str) -> tuple[float, float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ConfigError(f"{what} must be a list of 3 numbers (metres), not {value!r}")
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a list of 3 numbers (metres), not {value!r}") from None
    if any(v <= 0 or v > 10 for v in out):
        raise ConfigError(f"{what} must lie in (0, 10] metres, not {value!r}")
    return out  # type: ignore[return-value]


def _properties(entry, what: str) -> ObjectProperties:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{what} must be a mapping (size, mass, shape, ...), not {entry!r}")
    unknown = set(entry) - {"size", "mass", "shape", "inner", "liquid", "fixed", "articulation", "grasp", "handle",
                           "bottled", "top_handle"}
    if unknown:
        raise ConfigError(f"{what}: unknown field(s) {', '.join(sorted(unknown))}")
    if entry.get("liquid"):
        bottled = _properties(entry["bottled"], f"{what}: bottled") if "bottled" in entry else None
        if bottled is not None and (bottled.liquid or bottled.fixed):
            raise ConfigError(f"{what}: bottled must be a carryable thing, not a liquid or furniture")
        return ObjectProperties(liquid=True, bottled=bottled)
    if "bottled" in entry:
        raise ConfigError(f"{what}: bottled is only for liquids")
    shape = str(entry.get("shape", "box"))
    if shape not in SHAPES:
        raise ConfigError(f"{what}: shape must be one of {', '.join(SHAPES)}, not {shape!r}")
    articulation = str(entry.get("articulation", ""))
    if articulation and articulation not in ARTICULATIONS:
        raise ConfigError(f"{what}: articulation must be one of {', '.join(ARTICULATIONS)}, not {articulation!r}")
    try:
        mass = float(entry.get("mass", 0.3))
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: mass must be a number (kg), not {entry.get('mass')!r}") from None
    if not 0 < mass <= 1000:
        raise ConfigError(f"{what}: mass must lie in (0, 1000] kg, not {mass}")
    inner = _vector(entry["inner"], f"{what}: inner") if "inner" in entry else None
    size = _vector(entry.get("size", (0.1, 0.1, 0.1)), f"{what}: size")
    grasp = str(entry.get("grasp", ""))
    if grasp not in GRASPS:
        raise ConfigError(f"{what}: grasp must be one of {', '.join(g for g in GRASPS if g)}, not {grasp!r}")
    handle = None
    if grasp == "handle":
        value = entry.get("handle")
        if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(
                isinstance(v, (int, float)) and 0 < v for v in value) or value[0] > size[0] or value[1] > size[1]:
            raise ConfigError(f"{what}: grasp handle needs handle: [length, width] within the size, not {value!r}")
        handle = (float(value[0]), float(value[1]))
    elif "handle" in entry:
        raise ConfigError(f"{what}: handle is only for grasp: handle")
    top_handle = None
    if grasp == "top_handle":
        value = entry.get("top_handle")
        if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(
                isinstance(v, (int, float)) and 0 < v for v in value) or value[0] > size[0] or value[1] > size[1]:
            raise ConfigError(f"{what}: grasp top_handle needs top_handle: [length, width] within the size, "
                              f"not {value!r}")
        top_handle = (float(value[0]), float(value[1]))
    elif "top_handle" in entry:
        raise ConfigError(f"{what}: top_handle is only for grasp: top_handle")
    return ObjectProperties(size=size, mass=mass, shape=shape, inner=inner, fixed=bool(entry.get("fixed", False)),
                            articulation=articulation, grasp=grasp, handle=handle, top_handle=top_handle)


def load_object_table(path: Union[str, Path, None] = None) -> ObjectTable:
    """Read an object table; errors name the file and the entry."""
    path = Path(path) if path else DEFAULT_OBJECTS
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the object table {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("classes"), Mapping):
        raise ConfigError(f"{path}: expected a mapping with `classes:` (and optionally `default:`)")
    default = _properties(data.get("default", {}), f"{path}: default")
    classes = {str(name): _properties(entry, f"{path}: class {name}") for name, entry in data["classes"].items()}
    return ObjectTable(classes, default, str(path))


# A handled thing's shape, as the object table means it (the simulated world builds it so, the
# robot software takes it so): a handle and a head, or a body with a bar on two posts over it.
HANDLE_CLEARANCE = 0.04   # m under a top handle's bar, above the body: room for fingers (a hand's, a gripper's pads)
HANDLE_INSET = 0.02       # m from the body's back end (-x) to the handle's rear post
HANDLE_POST = 0.015       # m: the posts that hold the bar, along x
# (centre, half extents) of a part in the thing's frame: its middle, x along its length
Part = tuple[tuple[float, float, float], tuple[float, float, float]]


def handle_parts(props: ObjectProperties) -> list[Part]:
    """A ``grasp: handle`` object's handle and head: the handle runs along x from the -x end, the
    head fills the rest of x and all of y."""
    assert props.handle is not None
    sx, sy, sz = props.size
    length, width = props.handle
    return [((-sx / 2 + length / 2, 0.0, 0.0), (length / 2, width / 2, sz / 2)),
            ((length / 2, 0.0, 0.0), ((sx - length) / 2, sy / 2, sz / 2))]


def top_handle_parts(props: ObjectProperties) -> list[Part]:
    """A ``grasp: top_handle`` object's bar and the two posts it stands on: the bar runs along x
    from ``HANDLE_INSET`` inside the back end, its underside ``HANDLE_CLEARANCE`` above the top
    (above the size, which is the body's)."""
    assert props.top_handle is not None
    sx, _, sz = props.size
    length, width = props.top_handle
    x0 = -sx / 2 + HANDLE_INSET
    bar = ((x0 + length / 2, 0.0, sz / 2 + HANDLE_CLEARANCE + width / 2), (length / 2, width / 2, width / 2))
    posts = [((x, 0.0, sz / 2 + HANDLE_CLEARANCE / 2), (HANDLE_POST / 2, width / 2, HANDLE_CLEARANCE / 2))
             for x in (x0 + HANDLE_POST / 2, x0 + length - HANDLE_POST / 2)]
    return [bar, *posts]


def balance_x(props: ObjectProperties) -> float:
    """Where along its x a thing balances (its centre of mass): a handled one of uniform density
    between its handle's middle and its head; one with a top handle under the bar, which is made
    to sit over it so the thing hangs level (a watering can's spout in front is light); else 0."""
    if props.handle is not None:
        vols = [(c[0], h[0] * h[1] * h[2]) for c, h in handle_parts(props)]
        return sum(x * v for x, v in vols) / sum(v for _, v in vols)
    if props.top_handle is not None:
        return top_handle_parts(props)[0][0][0]
    return 0.0
