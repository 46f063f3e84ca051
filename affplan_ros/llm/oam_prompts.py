"""Prompts of the LLM-generated object-affordance mapping (implements core.oam_generation.OamPrompter).

The wording lives in ``prompts/oam_*.txt``; this only fills in the class and the affordances.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from affplan_ros.core.goals.loop import Message
from affplan_ros.core.knowledge.affordance_questions import AffordanceQuestions
from affplan_ros.llm.prompting import render_template

_THE_CLASS = re.compile(r"\b(?:an?|the)\s+(?:typical\s+)?\{\}|\{\}")
_PLURAL = re.compile(r"\{\}s\b")


def about_it(template: str) -> str:
    """A question template about "a typical {}" as a question about "it" (the class is named once
    for all the questions of a prompt): ``Can a typical {} be cut?`` -> ``Can it be cut?``,
    ``Can most {}s be rolled?`` -> ``Can most such objects be rolled?``."""
    text = _THE_CLASS.sub("it", _PLURAL.sub("such objects", template.strip()))
    return text[:1].upper() + text[1:]


@dataclass
class OamPromptBuilder:
    """The OAM prompts. Lean, and a stable prefix: the system message of the list strategy is
    the affordance definitions (the same for every class), of the yes/no strategies one line;
    the user message names the classes of a group once and carries the questions, about "it"."""

    directory: Path | None = None

    def list_messages(self, class_displays: Sequence[str] | str, affordances: Sequence[AffordanceQuestions]
                      ) -> list[Message]:
        classes = [class_displays] if isinstance(class_displays, str) else list(class_displays)
        listing = "\n".join(f"{a.name}: {a.description}" if a.description else a.name for a in affordances)
        system = render_template("oam_list_system", {"affordances": listing}, self.directory).strip()
        if len(classes) == 1:
            user = render_template("oam_list", {"object": classes[0]}, self.directory).strip()
        else:
            user = render_template("oam_list_many", {"objects": "; ".join(classes)}, self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def yes_no_messages(self, class_displays: Sequence[str] | str, questions: Sequence[str]) -> list[Message]:
        classes = [class_displays] if isinstance(class_displays, str) else list(class_displays)
        system = render_template("oam_yesno_system", {}, self.directory).strip()
        if len(classes) == 1 and len(questions) == 1:
            user = questions[0].replace("{}", classes[0]).strip()
        else:
            numbered = "\n".join(f"{i}. {about_it(q)}" for i, q in enumerate(questions, 1))
            user = render_template("oam_yesno_many", {"objects": "; ".join(classes), "questions": numbered},
                                   self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def retry_message(self) -> str:
        return render_template("oam_retry", {}, self.directory).strip()


def make_oam_generator(config, affordances_file=None, questions_file=None, max_format_retries: int = 2,
                       max_seconds_per_class: float = 600.0):
    """(OamGenerator, ChatClient) for an endpoint configuration; close the client when done."""
    from affplan_ros.core.knowledge.affordance_questions import load_affordance_questions
    from affplan_ros.core.knowledge.oam_generation import OamGenerator
    from affplan_ros.llm.client import ChatClient

    definitions = load_affordance_questions(affordances_file or None, questions_file or None)
    client = ChatClient(config)
    generator = OamGenerator(client, OamPromptBuilder(), definitions, model_name=config.model,
                             max_format_retries=max_format_retries, max_seconds_per_class=max_seconds_per_class)
    return generator, client
