"""Capabilities (PDDL action schemas) and the agents that have them.

A capability is an action schema whose acting agent ``?actor`` is implicit; domain
generation adds it as the first parameter and charges the actor's cost. Agents are
humans or robots with a capability set and a per-action cost: the robot is cheap and the
human expensive, so an optimal plan only asks the human when the robot cannot do it.

An *environment* capability (``actor: none`` in the YAML) is something that happens by
itself once its precondition holds (a sponge put into a bottle of water gets wet): it has no
actor, costs nothing, and no skill carries it out; executors only expect its effect.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence, Union

import yaml

from affplan_ros.core.model.scene import Scene

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_CAPABILITIES = DATA_DIR / "capabilities.yaml"
DEFAULT_AGENTS = DATA_DIR / "agents.yaml"

# Parameter types that are not affordances.
BUILTIN_TYPES = ("object", "location", "actor")


@dataclass(frozen=True)
class Parameter:
    name: str
    type: str  # an affordance or one of BUILTIN_TYPES


@dataclass(frozen=True)
class Capability:
    name: str
    parameters: tuple[Parameter, ...]
    precondition: str  # PDDL condition over ?actor and the parameters
    effect: str        # PDDL effect
    description: str = ""
    environment: bool = False  # no actor: happens by itself, costs nothing (see module doc)
    # The capability that does the same with a support in place of the container or the other
    # agent this one takes (putin -> place, handover -> place where the recipient stands): what
    # planning/relaxation.py relies on when it merges a place or leaves an agent out.
    support_form: str = ""

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(f"capability {self.name} has no parameter ?{name}")


@dataclass(frozen=True)
class Agent:
    name: str          # PDDL object name, e.g. robot0
    class_name: str    # robot / human
    cost: int = 1
    capabilities: Optional[frozenset[str]] = None  # None: every capability

    def can(self, capability: str) -> bool:
        return self.capabilities is None or capability in self.capabilities


@dataclass(frozen=True)
class AgentProfile:
    cost: int
    capabilities: Optional[frozenset[str]]


def _capability_from_mapping(name: str, d: Mapping) -> Capability:
    params = []
    for p in d.get("parameters", []):
        if isinstance(p, Mapping):
            params.append(Parameter(str(p["name"]), str(p["type"])))
        else:
            params.append(Parameter(str(p[0]), str(p[1])))
    actor = str(d.get("actor", "agent")).strip().lower()
    if actor not in ("agent", "none"):
        raise ValueError(f"capability {name}: actor must be 'agent' or 'none', not {actor!r}")
    return Capability(name, tuple(params), str(d["precondition"]).strip(),
                      str(d["effect"]).strip(), str(d.get("description", "")), environment=actor == "none",
                      support_form=str(d.get("support_form", "")))


def load_capabilities(path: Union[str, Path, None] = None) -> dict[str, Capability]:
    """Our YAML format: ``capabilities: {name: {parameters, precondition, effect}}``."""
    path = Path(path) if path else DEFAULT_CAPABILITIES
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {n: _capability_from_mapping(n, d) for n, d in data.get("capabilities", {}).items()}


# -- AutoGPT+P's all_capabilities.json ------------------------------------------------
# Its conditions use the derived predicates `reachable` and `free`, which our domain does
# not have (UP's Fast Downward integration supports no axioms). They are rewritten:
# reachable becomes located + at (as in our capabilities.yaml); `free` (nothing stacked
# on the object) is dropped - the benchmark scenes never stack anything on a carried object.
_REACHABLE = re.compile(r"\(\s*reachable\s+(\?[\w-]+)\s+(\?[\w-]+)\s+(\?[\w-]+)\s*\)")
_FREE = re.compile(r"\(\s*free\s+\?[\w-]+\s*\)")


def _balanced(text: str) -> str:
    """Wrap ``and (...) (...)`` in parentheses and drop unmatched ')' (typos in the file)."""
    text = " ".join(text.split())
    if not text.startswith("("):
        text = f"({text})"
    out, depth = [], 0
    for ch in text:
        if ch == ")":
            if depth == 0:
                continue
            depth -= 1
        elif ch == "(":
            depth += 1
        out.append(ch)
    return "".join(out) + ")" * depth


def convert_original_condition(text: str) -> str:
    text = _balanced(text)
    text = _REACHABLE.sub(r"(located \1 \2) (at \3 \2)", text)
    text = _FREE.sub("", text)
    return " ".join(text.split())


def load_original_capabilities(path: Union[str, Path]) -> dict[str, Capability]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    caps = {}
    for entry in data:
        caps[entry["name"]] = Capability(
            entry["name"],
            tuple(Parameter(p["name"], p["type"]) for p in entry["parameters"]),
            convert_original_condition(entry["preconditions"]),
            convert_original_condition(entry["effects"]),
            f"AutoGPT+P capability {entry['name']}")
    return caps


# -- agents ---------------------------------------------------------------------------

def load_agent_profiles(path: Union[str, Path, None] = None) -> dict[str, AgentProfile]:
    path = Path(path) if path else DEFAULT_AGENTS
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    profiles = {}
    for cls, d in data.get("agents", {}).items():
        caps = d.get("capabilities", "all")
        profiles[cls] = AgentProfile(int(d.get("cost", 1)),
                                     None if caps == "all" else frozenset(caps))
    return profiles


def agents_for_scene(scene: Scene, profiles: Optional[Mapping[str, AgentProfile]] = None,
                     costs: Optional[Mapping[str, int]] = None) -> list[Agent]:
    """Agents of a scene; ``costs`` overrides the cost per agent name or class."""
    profiles = profiles if profiles is not None else load_agent_profiles()
    costs = costs or {}
    agents = []
    for name in scene.agents:
        cls = scene.objects[name].class_name
        prof = profiles.get(cls, AgentProfile(1, None))
        cost = costs.get(name, costs.get(cls, prof.cost))
        agents.append(Agent(name, cls, int(cost), prof.capabilities))
    return agents


def split_actor(cap: Capability, args: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """(actor, parameters) of a planner step ``(cap, *args)``; the actor is "" for an
    environment capability, which has none."""
    if cap.environment:
        return "", tuple(args)
    return (args[0] if args else ""), tuple(args[1:])


def parameter_names(caps: Mapping[str, Capability]) -> dict[str, list[str]]:
    """Each capability's parameter names in schema order (the actor left out)."""
    return {name: [p.name for p in cap.parameters] for name, cap in caps.items()}


def capabilities_affecting(caps: Iterable[Capability], predicate: str) -> list[Capability]:
    """Capabilities whose effect mentions ``predicate`` (added or deleted)."""
    pat = re.compile(r"\(\s*" + re.escape(predicate) + r"[\s)]")
    return [c for c in caps if pat.search(c.effect)]
