"""From plan steps to skill goals and back: the PDDL action <-> ROS skill action mapping.

The mapping is data (``config/skills.yaml``): the executor uses :meth:`SkillMap.goal_for` to
fill a skill goal from a plan step; a skill server (simulated or real) uses
:meth:`SkillMap.candidates` to learn which PDDL actions a goal it received may stand for.
Kept ROS-free: goals are plain dicts of field -> value here; nodes copy them into messages.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import yaml

from affplan_ros.core.errors import ConfigError

GENERIC_SKILL = "Skill"
SKILL_TYPES = ("Grasp", "Place", "Pour", "Handover", "Wipe", "Navigate", "Open", "Close", GENERIC_SKILL)


class SkillMapError(ConfigError):
    pass


@dataclass(frozen=True)
class SkillBinding:
    pddl_action: str
    skill: str                                   # action type name, e.g. "Grasp"
    fields: Mapping[str, str]                    # goal field -> PDDL parameter ("actor" = agent)
    constants: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SkillCall:
    """One skill goal derived from a plan step."""
    skill: str
    server: str                                  # relative action name, e.g. "skills/grasp"
    goal: dict


class SkillMap:
    def __init__(self, bindings: Mapping[str, SkillBinding], server_prefix: str = "skills",
                 servers: Mapping[str, str] | None = None):
        for b in bindings.values():
            if b.skill not in SKILL_TYPES:
                raise SkillMapError(f"{b.pddl_action}: unknown skill type {b.skill!r}; "
                                    f"expected one of {', '.join(SKILL_TYPES)}")
        self.bindings = dict(bindings)
        self.server_prefix = server_prefix.strip("/")
        self.servers = dict(servers or {})

    @classmethod
    def from_file(cls, path: str | Path) -> "SkillMap":
        data = yaml.safe_load(Path(path).read_text()) or {}
        bindings = {}
        for action, spec in (data.get("bindings") or {}).items():
            if not isinstance(spec, Mapping) or "skill" not in spec:
                raise SkillMapError(f"{path}: binding {action!r} needs a `skill:` entry")
            bindings[action] = SkillBinding(action, spec["skill"], dict(spec.get("fields") or {}),
                                            {k: str(v) for k, v in (spec.get("constants") or {}).items()})
        return cls(bindings, data.get("server_prefix", "skills"), data.get("servers"))

    def server(self, skill: str) -> str:
        return self.servers.get(skill) or f"{self.server_prefix}/{skill.lower()}"

    def skill_types(self) -> list[str]:
        """Every skill type a plan may need, the generic one included."""
        return sorted({b.skill for b in self.bindings.values()} | {GENERIC_SKILL})

    def goal_for(self, action: str, agent: str, args: Sequence[str], parameter_names: Sequence[str]) -> SkillCall:
        """The skill goal for a plan step ``action(agent, *args)``."""
        if len(args) != len(parameter_names):
            raise SkillMapError(f"{action} takes {len(parameter_names)} arguments, got {len(args)}")
        values = {"actor": agent, **dict(zip(parameter_names, args))}
        binding = self.bindings.get(action)
        if binding is None:
            return SkillCall(GENERIC_SKILL, self.server(GENERIC_SKILL),
                             {"agent": agent, "action": action, "arguments": list(args)})
        goal = dict(binding.constants)
        for goal_field, parameter in binding.fields.items():
            if parameter not in values:
                raise SkillMapError(f"{action}: binding names parameter {parameter!r}, which the action does not have")
            goal[goal_field] = values[parameter]
        return SkillCall(binding.skill, self.server(binding.skill), goal)

    def candidates(self, skill: str, goal: Mapping[str, object],
                   parameter_names: Mapping[str, Sequence[str]]) -> list[tuple[str, str, tuple[str, ...]]]:
        """PDDL steps ``(action, agent, args)`` a received skill goal may stand for.

        ``parameter_names`` gives each PDDL action's parameters. A binding matches when its
        constants agree with the goal and every parameter is filled by some goal field.
        """
        if skill == GENERIC_SKILL:
            action = str(goal.get("action", ""))
            return [(action, str(goal.get("agent", "")), tuple(goal.get("arguments", ())))]
        found = []
        for binding in self.bindings.values():
            if binding.skill != skill or binding.pddl_action not in parameter_names:
                continue
            if any(str(goal.get(k, "")) != v for k, v in binding.constants.items()):
                continue
            by_parameter = {p: str(goal.get(f, "")) for f, p in binding.fields.items()}
            names = parameter_names[binding.pddl_action]
            if "actor" not in by_parameter or any(n not in by_parameter for n in names):
                continue
            found.append((binding.pddl_action, by_parameter["actor"], tuple(by_parameter[n] for n in names)))
        return found
