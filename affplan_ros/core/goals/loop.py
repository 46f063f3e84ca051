"""The goal self-correction loop (AutoGPT+P, Algorithm 3).

Ask the LLM for a goal, extract and parse it, check syntax/typing, then semantics;
on any error feed a precise message back into the same conversation and ask again,
up to a bound.  Plan mode asks for the whole task; Partial Plan mode asks for the
part achievable with the objects in the scene, with at most K predicates.

This module is in ``core`` and must not import ``affplan_ros.llm`` (imports point
downward), so the LLM and the prompt texts are injected through two small
protocols: ``core.ports.ChatModel`` (implemented by ``affplan_ros.llm.client.ChatClient``)
and :class:`GoalPrompter` (implemented by ``affplan_ros.llm.prompting.GoalPromptBuilder``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from affplan_ros.core.errors import AffplanError
from affplan_ros.core.goals.formula import DNF, Goal, render_dnf
from affplan_ros.core.goals.syntax import GoalIssue, check_goal_text
from affplan_ros.core.model.signature import Signature
from affplan_ros.core.ports import ChatModel

Message = dict  # {"role": "system"|"user"|"assistant", "content": str} — the OpenAI shape


@dataclass(frozen=True)
class Completion:
    """One LLM answer with its cost; what the loop needs from any backend."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    backend: str = ""  # which backend answered ("offline", an endpoint's model, ...); reported per task


class ChatModelError(AffplanError, RuntimeError):
    """The LLM could not be reached or answered with an error (after its own retries)."""


class Declined(ChatModelError):
    """The backend will not answer this question and says why (the offline interpreter when it
    is not sure): the loop stops with ``declined`` instead of acting on a guess. ``backend``
    names who declined, for the user."""

    def __init__(self, message: str, backend: str = ""):
        super().__init__(message)
        self.backend = backend


def ask(llm: ChatModel, messages: Sequence[Message], context: object = None) -> Completion:
    """One answer from ``llm``. Why the context: backends that do not read prose (the offline
    interpreter, a grammar-constrained endpoint) need the structured question behind the
    prompt - a :class:`GoalRequest`, a tool-selection view, an alternative question. They
    implement ``complete_in_context(messages, context)``; plain chat models get the messages."""
    hook = getattr(llm, "complete_in_context", None)
    if hook is not None and context is not None:
        return hook(list(messages), context)
    return llm.complete(list(messages))


class GoalMode(str, Enum):
    PLAN = "plan"
    PARTIAL_PLAN = "partial_plan"


@dataclass(frozen=True)
class GoalRequest:
    """What to ask for.  ``max_predicates`` bounds the goal size in Partial Plan mode."""

    task: str
    signature: Signature
    mode: GoalMode = GoalMode.PLAN
    max_predicates: int | None = None
    scene_text: str = ""  # optional extra context (initial state, locations) for the prompt
    forbidden_predicates: tuple[str, ...] = ()
    # The scene behind ``signature`` and its scene -> PDDL names, for backends that read the
    # request itself (the offline interpreter, goal grammars) and for lean prompts.
    scene: object = None
    names: Mapping[str, str] = field(default_factory=dict)


class GoalPrompter(Protocol):
    def initial_messages(self, request: GoalRequest) -> list[Message]: ...

    def correction_message(self, request: GoalRequest, feedback: str) -> str: ...


class SemanticCheck(Protocol):
    def check(self, goal: Goal | DNF): ...  # -> goals.semantics.SemanticResult


class GoalStop(str, Enum):
    ACCEPTED = "accepted"
    BOUND_REACHED = "bound_reached"
    TIME_LIMIT = "time_limit"
    LLM_ERROR = "llm_error"
    EMPTY_ANSWERS = "empty_answers"
    DECLINED = "declined"  # the backend said it is not sure (offline interpreter), with its reason
    # The model gave again a goal that no plan reaches after it was told so: asking again will not
    # make it reachable (what the goal needs is missing from the scene; exploring may find it).
    REPEATED_UNREACHABLE = "repeated_unreachable"


@dataclass(frozen=True)
class RoundFeedback:
    """An error found in one round and the message fed back for it."""

    round: int
    stage: str  # "empty" | "syntax" | "semantic" | "planning" (well formed, but no plan reaches it)
    kinds: tuple[str, ...]
    message: str
    answer: str


@dataclass
class GoalLoopResult:
    stop_reason: GoalStop
    goal: Goal | None = None
    dnf: DNF | None = None  # accepted disjuncts only (semantically inconsistent ones dropped)
    goal_text: str | None = None  # PDDL of ``dnf``
    raw_goal_text: str | None = None  # as extracted from the accepted answer
    rounds: int = 0
    feedback: list[RoundFeedback] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    messages: list[Message] = field(default_factory=list)
    answered_by: list[str] = field(default_factory=list)  # backend of each round's answer

    @property
    def accepted(self) -> bool:
        return self.stop_reason is GoalStop.ACCEPTED

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


EMPTY_ANSWER_FEEDBACK = (
    "Your previous answer was empty. Answer with the goal in PDDL, e.g. (:goal (and (on cup0 table0)))."
)


@dataclass
class GoalLoop:
    """Bounded self-correction loop; one instance can serve many requests.

    ``max_rounds`` counts LLM calls (the paper's bound, default 10).  ``max_empty``
    stops early after that many consecutive empty answers (a dead backend will not
    recover by being asked again); a well-formed goal that no plan reaches, given again
    after the model was told so, stops it too (``REPEATED_UNREACHABLE``: the scene lacks
    what the goal needs, and more rounds would only repeat it).  ``max_seconds`` bounds wall time, checked
    between rounds (no signals: this runs inside ROS executors).
    """

    llm: ChatModel
    prompter: GoalPrompter
    semantic: SemanticCheck | None = None
    max_rounds: int = 10
    max_empty: int = 3
    max_seconds: float | None = None
    clock: Callable[[], float] = time.monotonic

    def run(self, request: GoalRequest, solve: Callable[[DNF], str | None] | None = None) -> GoalLoopResult:
        """``solve``: Algorithm 3's last check - the planner on a goal the checks accepted; it
        returns why no plan reaches the goal (fed back like any error, within the same bound) or
        None to accept the goal."""
        start = self.clock()
        messages: list[Message] = list(self.prompter.initial_messages(request))
        result = GoalLoopResult(stop_reason=GoalStop.BOUND_REACHED, messages=messages)
        max_predicates = request.max_predicates if request.mode is GoalMode.PARTIAL_PLAN else None
        empty_in_a_row = 0
        unreachable: set[str] = set()   # checked goals no plan reaches, as rendered

        def finish(reason: GoalStop) -> GoalLoopResult:
            result.stop_reason = reason
            result.seconds = self.clock() - start
            return result

        for rnd in range(1, self.max_rounds + 1):
            if self.max_seconds is not None and self.clock() - start > self.max_seconds:
                return finish(GoalStop.TIME_LIMIT)
            try:
                completion = ask(self.llm, messages, request)
            except Declined as exc:
                result.error = str(exc)
                if exc.backend:
                    result.answered_by.append(exc.backend)
                return finish(GoalStop.DECLINED)
            except ChatModelError as exc:
                result.error = str(exc)
                return finish(GoalStop.LLM_ERROR)
            result.answered_by.append(completion.backend)
            result.rounds = rnd
            result.prompt_tokens += completion.prompt_tokens
            result.completion_tokens += completion.completion_tokens
            result.llm_seconds += completion.seconds
            answer = completion.text or ""
            messages.append({"role": "assistant", "content": answer})

            if not answer.strip():
                empty_in_a_row += 1
                fb = RoundFeedback(rnd, "empty", ("empty_answer",), EMPTY_ANSWER_FEEDBACK, answer)
                result.feedback.append(fb)
                if empty_in_a_row >= self.max_empty:
                    return finish(GoalStop.EMPTY_ANSWERS)
                messages.append({"role": "user", "content": self.prompter.correction_message(request, fb.message)})
                continue
            empty_in_a_row = 0

            syntax = check_goal_text(answer, request.signature,
                                     forbidden_predicates=request.forbidden_predicates,
                                     max_predicates=max_predicates)
            if not syntax.ok:
                fb = RoundFeedback(rnd, "syntax", _kinds(syntax.issues), syntax.feedback(), answer)
            else:
                dnf = syntax.dnf or []
                sem = self.semantic.check(dnf) if self.semantic is not None else None
                if sem is not None and not sem.ok:
                    fb = RoundFeedback(rnd, "semantic", tuple(v.kind for v in sem.violations),
                                       sem.feedback(), answer)
                else:
                    checked = sem.consistent_dnf if sem is not None else dnf
                    key = render_dnf(checked)
                    if key in unreachable:  # told it is unreachable, the model gives it again
                        result.feedback.append(RoundFeedback(
                            rnd, "planning", ("unsolvable", "repeated"),
                            f"the goal {key} was given again although no plan reaches it from the current "
                            "state; asking again will not change that: the scene lacks what it needs", answer))
                        return finish(GoalStop.REPEATED_UNREACHABLE)
                    unsolvable = solve(checked) if solve is not None else None
                    if unsolvable is None:
                        return self._accept(result, syntax.goal, checked, syntax.goal_text, finish)
                    unreachable.add(key)
                    fb = RoundFeedback(rnd, "planning", ("unsolvable",), unsolvable, answer)
            result.feedback.append(fb)
            if rnd < self.max_rounds:  # the last error is recorded, but not sent anywhere
                messages.append({"role": "user", "content": self.prompter.correction_message(request, fb.message)})
        return finish(GoalStop.BOUND_REACHED)

    @staticmethod
    def _accept(result: GoalLoopResult, goal: Goal | None, dnf: DNF, raw: str | None,
                finish: Callable[[GoalStop], GoalLoopResult]) -> GoalLoopResult:
        result.goal = goal
        result.dnf = dnf
        result.goal_text = render_dnf(dnf)
        result.raw_goal_text = raw
        return finish(GoalStop.ACCEPTED)


def _kinds(issues: Iterable[GoalIssue]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i.kind for i in issues))


def generate_goal(request: GoalRequest, llm: ChatModel, prompter: GoalPrompter,
                  semantic: SemanticCheck | None = None, *, max_rounds: int = 10,
                  max_seconds: float | None = None) -> GoalLoopResult:
    """Convenience wrapper: one request through a fresh :class:`GoalLoop`."""
    return GoalLoop(llm, prompter, semantic, max_rounds=max_rounds, max_seconds=max_seconds).run(request)
