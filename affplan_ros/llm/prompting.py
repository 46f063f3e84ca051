"""Prompt templates kept as text files under ``prompts/`` (``string.Template`` syntax).

Keeping the wording in data files lets it be tuned (or translated to another
domain's examples) without touching code; the builder only fills in the domain
summary, the objects, the task and the error to correct.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..core.goal_loop import GoalMode, GoalRequest, Message
from ..core.signature import Signature

PROMPT_DIR = Path(__file__).with_name("prompts")


class PromptTemplateError(RuntimeError):
    """A template file is missing or refers to a placeholder nobody fills."""


def load_template(name: str, directory: Path | None = None) -> string.Template:
    path = (directory or PROMPT_DIR) / (name if name.endswith(".txt") else name + ".txt")
    try:
        return string.Template(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PromptTemplateError(f"prompt template not found: {path}") from exc


def render_template(name: str, values: Mapping[str, object], directory: Path | None = None) -> str:
    try:
        return load_template(name, directory).substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise PromptTemplateError(f"template {name!r} needs a value for ${exc.args[0]}") from exc
    except ValueError as exc:
        raise PromptTemplateError(f"template {name!r} is malformed: {exc}") from exc


def template_openings(kinds, directory: Path | None = None) -> tuple[tuple[str, str], ...]:
    """(fixed opening text, kind) per template of ``kinds`` (template name -> kind), longest
    first: the words before a template's first placeholder tell which template a message is."""
    out = []
    for name, kind in kinds:
        text = load_template(name, directory).template
        cut = text.find("$")
        out.append((text[: cut if cut >= 0 else len(text)].strip(), kind))
    return tuple(sorted(out, key=lambda x: -len(x[0])))


def predicates_text(signature: Signature, exclude: tuple[str, ...] = ()) -> str:
    """One block per predicate: ``; description`` then ``(on ?a1 - carry ?a2 - support)``."""
    lines = []
    for name, params in signature.predicates.items():
        if name in exclude:
            continue
        desc = signature.descriptions.get(name)
        if desc:
            lines.append(f"; {desc}")
        lines.append("(" + " ".join([name] + [f"?a{i} - {t}" for i, t in enumerate(params, 1)]) + ")")
    return "\n".join(lines)


def objects_text(signature: Signature) -> str:
    return "\n".join(f"{name}: {', '.join(sorted(types))}" for name, types in sorted(signature.objects.items()))


@dataclass
class GoalPromptBuilder:
    """Implements :class:`affplan_ros.core.goal_loop.GoalPrompter` from the template files.

    ``examples`` overrides ``goal_examples.txt`` (examples must use the domain's
    predicates to help, so a different domain should bring its own).
    """

    directory: Path | None = None
    examples: str | None = None
    extra_values: Mapping[str, str] = field(default_factory=dict)

    def _examples(self) -> str:
        if self.examples is not None:
            return self.examples
        return load_template("goal_examples", self.directory).template.strip()

    def initial_messages(self, request: GoalRequest) -> list[Message]:
        values: dict[str, object] = {
            "predicates": predicates_text(request.signature, tuple(request.forbidden_predicates)),
            "objects": objects_text(request.signature),
            "scene": f"\nThe current state of the scene:\n{request.scene_text.strip()}\n" if request.scene_text.strip() else "",
            "task": request.task.strip(),
            "examples": self._examples(),
            **self.extra_values,
        }
        if request.mode is GoalMode.PARTIAL_PLAN:
            if request.max_predicates is None:
                raise PromptTemplateError("Partial Plan mode needs max_predicates")
            values["max_predicates"] = request.max_predicates
            user = render_template("goal_partial_plan", values, self.directory)
        else:
            user = render_template("goal_plan", values, self.directory)
        system = render_template("goal_system", dict(self.extra_values), self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def correction_message(self, request: GoalRequest, feedback: str) -> str:
        return render_template("goal_correction", {"error": feedback.strip()}, self.directory).strip()
