"""Prompts of recovery (issue 7) from the template files, and the log-probability sampler.

Implements the prompter protocols of ``core.recovery``: the goal prompter with execution
feedback for high-level replanning (:class:`ReplanGoalPromptBuilder`), LASP's five roles
(:class:`LaspPromptBuilder`), IALP's step planner (:class:`StepPromptBuilder`), and
:class:`LogprobSampler` - K candidate answers with their summed token log-probabilities from
any endpoint (``n`` choices; repeated calls where the endpoint ignores ``n``).
:func:`recovery_prompt_kind` tells which template a question comes from, so a scripted LLM
can answer each kind from its own list.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

from affplan_ros.core.goals.loop import Message
from affplan_ros.core.recovery.lasp import FailureContext
from affplan_ros.core.recovery.stepwise import Sampled, ScoredText
from affplan_ros.llm.prompting import (
    PROMPT_DIR,
    GoalPromptBuilder,
    render_template,
    template_openings,
)


@dataclass
class ReplanGoalPromptBuilder(GoalPromptBuilder):
    """The goal prompts, plus the section that hands execution feedback to the goal writer."""

    def replan_section(self, goal: str, feedback: str) -> str:
        return render_template("recovery_replan", {"goal": goal, "feedback": feedback.strip()}, self.directory).strip()


@dataclass
class LaspPromptBuilder:
    """Implements :class:`affplan_ros.core.recovery.lasp.LaspPrompter`."""

    directory: Optional[Path] = None

    def _r(self, name: str, **values) -> str:
        return render_template(name, values, self.directory).strip()

    def system(self) -> str:
        return self._r("lasp_system")

    def cause(self, ctx: FailureContext, max_causes: int) -> str:
        return self._r("lasp_cause", task=ctx.task, step=ctx.step, schema=ctx.schema, feedback=ctx.feedback,
                       state=ctx.state or "(nothing)", max_causes=max_causes)

    def precondition(self, ctx: FailureContext, cause: str) -> str:
        return self._r("lasp_precondition", step=ctx.step, cause=cause, schema=ctx.schema, action=ctx.action)

    def completeness(self, ctx: FailureContext, precondition: str, predicates: str) -> str:
        return self._r("lasp_completeness", action=ctx.action, precondition=precondition, predicates=predicates)

    def translate(self, ctx: FailureContext, precondition: str, predicates: str, new_property: bool) -> str:
        rule = self._r("lasp_property_allowed" if new_property else "lasp_property_forbidden")
        return self._r("lasp_translate", action=ctx.action, precondition=precondition, schema=ctx.schema,
                       predicates=predicates, property_rule=rule)

    def correction(self, problems: Sequence[str]) -> str:
        return self._r("lasp_correction", problems="; ".join(problems))

    def expand(self, task: str, goal: str, problem_objects: Sequence[str], candidates: Sequence[str],
               reason: str) -> str:
        return self._r("lasp_expand", task=task, goal=goal, reason=reason, objects=", ".join(problem_objects),
                       candidates=", ".join(candidates))


@dataclass
class StepPromptBuilder:
    """Implements :class:`affplan_ros.core.recovery.stepwise.StepPrompter`."""

    directory: Optional[Path] = None

    def system(self) -> str:
        return render_template("stepwise_system", {}, self.directory).strip()

    def step(self, task: str, goal: str, state: str, actions: str, objects: str, history: str) -> str:
        return render_template("stepwise_step", {"task": task, "goal": goal, "state": state or "(nothing)",
                                                 "actions": actions, "objects": objects, "history": history},
                               self.directory).strip()


@dataclass
class SampledAnswers(Sampled):
    """:class:`~affplan_ros.core.recovery.stepwise.Sampled`, and why fewer than ``k`` candidates
    came back ("" : all came)."""

    stopped: str = ""


@dataclass
class LogprobSampler:
    """Implements :class:`affplan_ros.core.recovery.stepwise.CandidateModel` over a
    :class:`~affplan_ros.llm.client.ChatClient`."""

    client: object
    temperature: float = 1.0
    max_tokens: int = 48

    def sample(self, messages: Sequence[Message], k: int) -> SampledAnswers:
        """Up to ``k`` candidates in at most ``k`` requests; fewer, with the reason in ``stopped``,
        when the endpoint gives fewer (the caller falls back on none)."""
        resp = self.client.create(messages, n=k, logprobs=True, temperature=self.temperature,
                                  max_tokens=self.max_tokens, tag="stepwise")
        out = SampledAnswers(_scored(resp), resp.prompt_tokens, resp.completion_tokens, resp.seconds, 1)
        # An endpoint that ignores n (llama.cpp's server) answers with one choice: ask again, at
        # most k requests in all, unless it gives no log-probabilities (then the caller falls back
        # anyway); stop at a request that brings no choice (asking on would never end).
        ignores_n = k > 1 and len(out.candidates) == 1
        for _ in range(k - 1 if ignores_n else 0):
            if len(out.candidates) >= k or all(c.logprob is None for c in out.candidates):
                break
            r = self.client.create(messages, logprobs=True, temperature=self.temperature,
                                   max_tokens=self.max_tokens, tag="stepwise")
            got = _scored(r)
            out.candidates += got
            out.prompt_tokens += r.prompt_tokens
            out.completion_tokens += r.completion_tokens
            out.seconds += r.seconds
            out.calls += 1
            if not got:
                out.stopped = f"request {out.calls} returned no choices; {len(out.candidates)} of {k} candidates"
                break
        if not out.stopped and len(out.candidates) < k:
            out.stopped = f"the endpoint returned {len(out.candidates)} of {k} candidates"
        return out


def _scored(resp) -> list[ScoredText]:
    return [ScoredText(c.text, sum(t.logprob for t in c.logprobs) if c.logprobs else None) for c in resp.choices]


# Which kind of question each recovery template asks (what a scripted answer list is keyed by).
RECOVERY_KINDS = {
    "lasp_cause": "cause", "lasp_precondition": "precondition", "lasp_completeness": "completeness",
    "lasp_translate": "translate", "lasp_correction": "translate", "lasp_expand": "expand",
    "stepwise_step": "step",
}


@lru_cache(maxsize=4)
def _openings(directory: Optional[Path] = None) -> tuple[tuple[str, str], ...]:
    return template_openings(RECOVERY_KINDS.items(), directory)


def recovery_prompt_kind(text: str, directory: Optional[Path] = None) -> Optional[str]:
    """``cause``, ``precondition``, ``completeness``, ``translate``, ``expand``, ``step``, or the
    kinds of :func:`~affplan_ros.llm.tool_prompting.prompt_kind` (``goal``, ``tool``, ...)."""
    from affplan_ros.llm.tool_prompting import prompt_kind

    stripped = (text or "").lstrip()
    for opening, kind in _openings(directory or PROMPT_DIR):
        if opening and stripped.startswith(opening):
            return kind
    return prompt_kind(text, directory)
