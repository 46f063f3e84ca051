"""Prompts of the LLM-generated object-affordance mapping (implements core.oam_generation.OamPrompter).

The wording lives in ``prompts/oam_*.txt``; this only fills in the class and the affordances.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..core.goal_loop import Message
from ..core.oam_generation import AffordanceQuestions
from .prompting import render_template


@dataclass
class OamPromptBuilder:
    directory: Path | None = None

    def list_messages(self, class_display: str, affordances: Sequence[AffordanceQuestions]) -> list[Message]:
        listing = "\n".join(f"{a.name}: {a.description}" if a.description else a.name for a in affordances)
        system = render_template("oam_list_system", {"affordances": listing}, self.directory).strip()
        user = render_template("oam_list", {"object": class_display}, self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def yes_no_messages(self, question: str) -> list[Message]:
        system = render_template("oam_yesno_system", {}, self.directory).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": question.strip()}]

    def retry_message(self) -> str:
        return render_template("oam_retry", {}, self.directory).strip()


def make_oam_generator(config, affordances_file=None, questions_file=None, max_format_retries: int = 2,
                       max_seconds_per_class: float = 600.0):
    """(OamGenerator, ChatClient) for an endpoint configuration; close the client when done."""
    from ..core.oam_generation import OamGenerator, load_affordance_questions
    from .client import ChatClient

    definitions = load_affordance_questions(affordances_file or None, questions_file or None)
    client = ChatClient(config)
    generator = OamGenerator(client, OamPromptBuilder(), definitions, model_name=config.model,
                             max_format_retries=max_format_retries, max_seconds_per_class=max_seconds_per_class)
    return generator, client
