"""Prompt templates kept as text files under ``prompts/`` (``string.Template`` syntax).

Keeping the wording in data files lets it be tuned (or translated to another
domain's examples) without touching code; the builder only fills in the domain
summary, the objects, the task and the error to correct.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.goals.loop import GoalMode, GoalRequest, Message
from affplan_ros.core.model.signature import Signature
from affplan_ros.llm.focus import Focus, request_focus

PROMPT_DIR = Path(__file__).with_name("prompts")


class PromptTemplateError(AffplanError, RuntimeError):
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
    """``(on carry support) (in carry contain) ...``: name and parameter types. Lean on purpose
    (the descriptions doubled the prompt): names and affordance types say what each means, and
    the checks explain any misuse in their feedback."""
    return " ".join("(" + " ".join([name, *params]) + ")" for name, params in signature.predicates.items()
                    if name not in exclude)


def objects_text(signature: Signature, exclude: tuple[str, ...] = (), relevant: set[str] | None = None,
                 shown: set[str] | None = None, summary: str = "") -> str:
    """The objects grouped by the types the predicates take (``carry: apple0 cup0``).

    Why not every affordance of every object (the first prompts did that): a goal can only use
    an object where a predicate's parameter type fits, so the other affordances are noise that
    costs tokens. Every object is an ``object``; that line is left out. ``relevant``: only these
    get their types; the others are listed by name. ``shown``: only these appear at all (a large
    home's :class:`~affplan_ros.llm.focus.Focus`), the rest is ``summary`` (counts per class)."""
    wanted = [t for p, ts in signature.predicates.items() if p not in exclude for t in ts]
    objects = {o: ts for o, ts in signature.objects.items() if shown is None or o in shown}
    lines = []
    for t in dict.fromkeys(wanted):
        if t == "object":
            continue
        objs = sorted(o for o, ts in objects.items() if t in ts and (relevant is None or o in relevant))
        if objs:
            lines.append(f"{t}: {' '.join(objs)}")
    rest = sorted(o for o, ts in objects.items()
                  if not (set(ts) & set(wanted) - {"object"}) or (relevant is not None and o not in relevant))
    if rest:
        lines.append(f"other objects: {' '.join(rest)}")
    if summary:
        lines.append(summary)
    return "\n".join(lines)


def named_classes(text: str, classes: Iterable[str]) -> set[str]:
    """The classes among ``classes`` that ``text`` names: by class name, plural, the synonyms
    and head nouns of the offline interpreter's vocabulary ("fridge" -> refrigerator, "the
    knife" -> kitchen_knife, "cups" -> plastic_cup). One piece for the goal and tool prompts."""
    from affplan_ros.core.interpreter.lexicon import (
        MAX_PHRASE,
        default_vocabulary,
        words_of,
    )

    classes = set(classes)
    table = default_vocabulary().noun_table(classes)
    words = words_of(text)
    found: set[str] = set()
    for n in range(1, MAX_PHRASE + 1):
        for i in range(len(words) - n + 1):
            for noun in table.get(" ".join(words[i:i + n]), ()):
                found |= set(noun.classes) & classes
    return found


def goal_focus(request: GoalRequest) -> Focus:
    """What of the scene the goal prompt lists (:mod:`affplan_ros.llm.focus`); all of it for a
    home within the prompt's budget or a request without a scene."""
    scene = request.scene
    if scene is None:
        return Focus()
    names = request.names or {}
    types = request.signature.objects
    return request_focus(request.task, {n: o.class_name for n, o in scene.objects.items()}, scene.relations,
                         lambda n: types.get(names.get(n, n), ()), scene.agents, scene.locations)


def focus_summary(request: GoalRequest, focus: Focus) -> str:
    """The counts of what the goal prompt leaves out, by name only for the classes it shows
    (a goal needs the named kinds; the others' names would only cost tokens)."""
    scene = request.scene
    shown = {scene.objects[n].class_name for n in (focus.selected or ()) if n in scene.objects} if scene else None
    return focus.summary(shown)


def _pddl(names, mapping) -> set[str] | None:
    return None if names is None else {(mapping or {}).get(n, n) for n in names}


def scene_state_text(request: GoalRequest, focus: Focus | None = None) -> str:
    """The state lines of the prompt: the request's relevant relations (all when it names no
    object) among the objects the focus lists, in the domain's names."""
    if request.scene is None:
        return request.scene_text.strip()
    focus = focus or goal_focus(request)
    keep = focus.selected
    names = request.names or {}
    rels = [r for r in request.scene.relations
            if (keep is None or r.args[:1] and r.args[0] in keep) and all(focus.shows(a) for a in r.args)]
    return "\n".join("(" + " ".join([r.predicate, *(names.get(a, a) for a in r.args)]) + ")" for r in rels)


@dataclass
class GoalPromptBuilder:
    """Implements :class:`affplan_ros.core.goals.loop.GoalPrompter` from the template files.

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
        """System message: role, predicates, rules, examples - the same for every request of a
        domain, so endpoints can cache the prefix. User message: objects, state, request."""
        forbidden = tuple(request.forbidden_predicates)
        focus = goal_focus(request)
        state = scene_state_text(request, focus)
        extra = request.scene_text.strip() if request.scene is not None else ""
        extra = "\n".join(l for l in extra.splitlines() if not l.startswith("(")) if extra else ""
        state = "\n".join(x for x in (state, extra) if x)
        values: dict[str, object] = {
            "predicates": predicates_text(request.signature, forbidden),
            "objects": objects_text(request.signature, forbidden, _pddl(focus.selected, request.names),
                                    _pddl(focus.listed, request.names), focus_summary(request, focus)),
            "scene": f"State:\n{state}" if state else "",
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
        system = render_template("goal_system", values, self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def correction_message(self, request: GoalRequest, feedback: str) -> str:
        return render_template("goal_correction", {"error": feedback.strip()}, self.directory).strip()
