"""Spatial relations from one camera view: ``on``/``in`` between objects and supports/containers,
plus the relations a camera cannot see, taken from configuration and marked as assumptions.

2D rule (what an upright camera sees): an object stands on (or lies in) a parent when most of
its width is over the parent and its bottom edge is near the parent's top edge. A camera looking
down at a table sees the things on it anywhere inside the top's box: with a depth image, a
bottom edge further down the parent's box also counts when the depth shows the two touching. Whether that is
``on`` or ``in`` follows the parent's affordances (``support`` / ``contain``); a parent with both
decides by how much of the child's box lies inside the parent's box. Each object gets at most
one parent: the candidate with the highest confidence. With a depth image the rule also needs
the child's bottom to be at the depth of the parent's surface behind it: a cup held in front of
a table is not on it although it looks so in 2D.

Assumptions (``opened``/``closed``, ``liquid_in``, ...) cannot be observed by a camera; they
come from configuration per class or per affordance, with the confidence configured, and carry
``assumed=True`` so memory can tell them from observations.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from affplan_ros.core.files.settings import from_mapping
from affplan_ros.core.perception.oad import PerceivedObject, box_depth


@dataclass(frozen=True)
class EstimatedRelation:
    predicate: str
    args: tuple[str, ...]
    confidence: float
    assumed: bool = False
    basis: str = ""          # what it is based on, e.g. "2d", "2d+depth", "config: affordance open"

    def __str__(self) -> str:
        return "(" + " ".join((self.predicate, *self.args)) + ")"


@dataclass
class RelationConfig:
    min_confidence: float = 0.5
    min_overlap: float = 0.6          # fraction of the child's width that must be over the parent
    surface_band: float = 0.35        # how far below a support's top edge the child's bottom may be (x parent height)
    inside_band: float = 0.8          # the same for a container: things sink into it
    above_tolerance: float = 0.04     # how far above the parent's top edge (x parent height)
    inside_fraction: float = 0.25     # parent with support+contain: child box this much inside -> "in"
    depth_tolerance_m: float = 0.12   # child bottom vs. parent surface depth
    from_above_depth_factor: float = 0.75  # seen from above (bottom deep in the parent box): depth must agree
    child_affordance: str = "carry"   # only things that can be carried stand on/in something (PDDL types)
    support_affordance: str = "support"
    contain_affordance: str = "contain"

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "RelationConfig":
        return from_mapping(cls, values, "relation")


def _overlap_x(a, b) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0]))


def _overlap_y(a, b) -> float:
    return max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def box_area(b) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _depth_factor(child: PerceivedObject, parent: PerceivedObject, depth: np.ndarray, tol: float) -> Optional[float]:
    """1 when the child's bottom is at the depth of the parent's surface, falling to 0 at 2 x tol."""
    cx1, _, cx2, cy2 = child.box
    h = depth.shape[0]
    strip_h = max(2.0, 0.1 * (child.box[3] - child.box[1]))
    child_z = box_depth(depth, (cx1, cy2 - strip_h, cx2, cy2), shrink=0.2)
    # The parent's surface right under the child's bottom edge (beside it when the child hides it).
    below = (max(cx1, parent.box[0]), cy2, min(cx2, parent.box[2]), min(h, cy2 + strip_h + 2))
    parent_z = box_depth(depth, below, shrink=0.0) if below[2] > below[0] and below[3] > below[1] else None
    if child_z is None or parent_z is None:
        return None
    diff = abs(child_z - parent_z)
    return float(np.clip(2.0 - diff / tol, 0.0, 1.0))


def estimate_relations(objects: Sequence[PerceivedObject], config: RelationConfig | None = None,
                       depth_m: Optional[np.ndarray] = None) -> list[EstimatedRelation]:
    """``on``/``in`` relations among ``objects`` (one frame), at most one parent per object."""
    cfg = config or RelationConfig()
    out: list[EstimatedRelation] = []
    for child in objects:
        if cfg.child_affordance and cfg.child_affordance not in child.affordances:
            continue
        best: Optional[EstimatedRelation] = None
        for parent in objects:
            if parent is child or box_area(parent.box) <= box_area(child.box):
                continue
            supports = cfg.support_affordance in parent.affordances
            contains = cfg.contain_affordance in parent.affordances
            if not (supports or contains):
                continue
            width = child.box[2] - child.box[0]
            height = parent.box[3] - parent.box[1]
            if width <= 0 or height <= 0:
                continue
            overlap = _overlap_x(child.box, parent.box) / width
            if overlap < cfg.min_overlap:
                continue
            # Where the child's bottom is relative to the parent's top edge, in parent heights.
            offset = (child.box[3] - parent.box[1]) / height
            band = cfg.inside_band if contains else cfg.surface_band
            if offset < -cfg.above_tolerance or offset > 1.0:
                continue
            factor = _depth_factor(child, parent, depth_m, cfg.depth_tolerance_m) if depth_m is not None else None
            if offset > band:
                # A camera looking down at a table sees what stands on it anywhere in the top's
                # box, not at its top edge: then only depth can tell that the two touch.
                if factor is None or factor < cfg.from_above_depth_factor:
                    continue
                closeness = 1.0
            else:  # 1 near the top edge, 0.5 at the ends of the allowed band.
                closeness = 1.0 - max(0.0, offset - band / 2) / band if offset >= 0 \
                    else 1.0 + offset / cfg.above_tolerance * 0.5
            confidence = overlap * closeness
            inside = _overlap_y(child.box, parent.box) / max(1e-6, child.box[3] - child.box[1])
            predicate = "in" if contains and (not supports or inside >= cfg.inside_fraction) else "on"
            basis = "2d"
            if factor is not None:
                confidence *= factor
                basis = "2d+depth"
            rel = EstimatedRelation(predicate, (child.name, parent.name), round(float(confidence), 3), False, basis)
            if best is None or rel.confidence > best.confidence:
                best = rel
        if best is not None and best.confidence >= cfg.min_confidence:
            out.append(best)
    return out


# -- assumptions ------------------------------------------------------------------------------

@dataclass(frozen=True)
class AssumptionRule:
    """``predicate`` holds for objects of ``class_name`` (or offering ``affordance``), not observed.

    ``liquid`` names a liquid class: the rule then also adds an (assumed) object of that class
    and relates them, e.g. ``liquid_in water0 bottle0``.
    """

    predicate: str
    class_name: str = ""
    affordance: str = ""
    liquid: str = ""
    confidence: float = 0.5

    def applies(self, obj: PerceivedObject) -> bool:
        return (bool(self.class_name) and obj.class_name == self.class_name) or \
            (bool(self.affordance) and self.affordance in obj.affordances)


@dataclass
class Assumptions:
    """Applies :class:`AssumptionRule` s; a class rule wins over an affordance rule for the same
    predicate family (``opened``/``closed`` are one family: a class rule ``opened`` replaces an
    affordance rule ``closed``). Implied liquids keep their names across frames."""

    rules: list[AssumptionRule] = field(default_factory=list)
    families: Sequence[frozenset[str]] = (frozenset({"opened", "closed"}),)
    _liquids: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "Assumptions":
        rules = []
        for kind, key in (("by_class", "class_name"), ("by_affordance", "affordance")):
            for subject, entries in (values.get(kind) or {}).items():
                for entry in entries if isinstance(entries, list) else [entries]:
                    entry = {"predicate": entry} if isinstance(entry, str) else dict(entry)
                    unknown = set(entry) - {"predicate", "liquid", "confidence"}
                    if unknown or "predicate" not in entry:
                        raise ValueError(f"assumption {kind}.{subject}: expected predicate[, liquid, confidence], "
                                         f"got {sorted(entry)}")
                    rules.append(AssumptionRule(entry["predicate"], liquid=entry.get("liquid", ""),
                                                confidence=float(entry.get("confidence", 0.5)), **{key: subject}))
        unknown = set(values) - {"by_class", "by_affordance"}
        if unknown:
            raise ValueError(f"unknown assumption settings {sorted(unknown)} (known: by_class, by_affordance)")
        return cls(rules)

    def _family(self, predicate: str) -> frozenset[str]:
        return next((f for f in self.families if predicate in f), frozenset({predicate}))

    def apply(self, objects: Sequence[PerceivedObject]) -> tuple[list[EstimatedRelation], list[tuple[str, str]]]:
        """Assumed relations for ``objects`` and the implied liquid objects as (class, name)."""
        relations: list[EstimatedRelation] = []
        liquids: list[tuple[str, str]] = []
        for obj in objects:
            chosen: dict[frozenset[str], AssumptionRule] = {}
            for rule in self.rules:
                if not rule.applies(obj):
                    continue
                fam = self._family(rule.predicate) | ({rule.liquid} if rule.liquid else frozenset())
                current = chosen.get(fam)
                if current is None or (rule.class_name and not current.class_name):
                    chosen[fam] = rule
            for rule in chosen.values():
                basis = f"config: {'class ' + rule.class_name if rule.class_name else 'affordance ' + rule.affordance}"
                if rule.liquid:
                    key = (obj.name, rule.liquid)
                    if key not in self._liquids:
                        taken = {i for (_, c), i in self._liquids.items() if c == rule.liquid}
                        self._liquids[key] = next(i for i in range(len(taken) + 1) if i not in taken)
                    name = f"{rule.liquid}{self._liquids[key]}"
                    liquids.append((rule.liquid, name))
                    relations.append(EstimatedRelation(rule.predicate, (name, obj.name), rule.confidence, True, basis))
                else:
                    relations.append(EstimatedRelation(rule.predicate, (obj.name,), rule.confidence, True, basis))
        return relations, liquids


PLACEMENTS = ("on", "in", "liquid_in")


def placed_at(location: str, relations: Sequence[tuple[str, Sequence[str]]]) -> set[str]:
    """The names a view of ``location`` shows *there*: the location itself and whatever stands
    on or in it, directly or through other things (a banana in a bowl on the table). A camera
    pointed at one place also shows other furniture and what stands on it; those belong to
    their own places and must not be moved to this one."""
    parent = {args[0]: args[1] for predicate, args in relations if predicate in PLACEMENTS and len(args) == 2}
    kept = {location}
    for name in parent:
        seen, at = {name}, parent[name]
        while at not in kept and at in parent and at not in seen:  # bounded: a cycle stops it
            seen.add(at)
            at = parent[at]
        if at in kept:
            kept |= seen
    return kept
