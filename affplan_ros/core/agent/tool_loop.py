"""The AutoGPT+P loop (Algorithm 1): an LLM picks one tool per round until the task is done.

Each round the LLM sees the request and the memory and ends its answer with
``SELECTED TOOL: <TOOL> <PARAMETER>``:

* ``PLAN`` - the whole request: goal (self-corrected) -> plan -> execution. A successful
  execution ends the loop;
* ``PARTIAL_PLAN`` (AutoGPT+P's ``INCOMPLETE_PLAN``) - the achievable part of the request;
  executed, then the loop goes on;
* ``EXPLORE <location>`` - the robot goes there and what it sees enters memory;
* ``SUGGEST_ALTERNATIVE <missing class>`` - Algorithm 2 proposes a present object; the user
  accepts (the request is rewritten with it) or rejects it;
* ``FAILURE`` - no tool can help (further).

Answers are parsed strictly and validated against the memory (unknown tool, unknown or
already explored location, "missing" object that is present ...); an invalid answer is fed
back and counts toward the bound. The LLM never names actions: plans come from the planner
and only they reach the executor. Every round is recorded; the result says why it stopped.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Optional, Protocol

from affplan_ros.core.agent.alternatives import AlternativeSuggester
from affplan_ros.core.agent.execution import call_bounded
from affplan_ros.core.errors import AffplanError
from affplan_ros.core.goals.loop import ChatModelError, Declined, Message, ask
from affplan_ros.core.model.memory import Memory
from affplan_ros.core.model.records import PlanRecord
from affplan_ros.core.model.scene import class_of
from affplan_ros.core.ports import ChatModel, Executor, Planner
from affplan_ros.core.recovery.belief import observe_memory


class Tool(str, Enum):
    PLAN = "PLAN"
    PARTIAL_PLAN = "PARTIAL_PLAN"
    EXPLORE = "EXPLORE"
    SUGGEST_ALTERNATIVE = "SUGGEST_ALTERNATIVE"
    ANSWER = "ANSWER"        # the request is a question: the reply, from memory (nothing moves)
    FAILURE = "FAILURE"


# Keywords the answer may use (AutoGPT+P's own names included).
TOOL_KEYWORDS = {
    "PLAN": Tool.PLAN, "PARTIAL_PLAN": Tool.PARTIAL_PLAN, "INCOMPLETE_PLAN": Tool.PARTIAL_PLAN,
    "EXPLORE": Tool.EXPLORE, "SUGGEST_ALTERNATIVE": Tool.SUGGEST_ALTERNATIVE, "ANSWER": Tool.ANSWER,
    "FAILURE": Tool.FAILURE,
}
_NEEDS_ARGUMENT = {Tool.EXPLORE: "a location, e.g. EXPLORE counter0",
                   Tool.SUGGEST_ALTERNATIVE: "the missing object's class, e.g. SUGGEST_ALTERNATIVE spoon"}


class TaskStop(str, Enum):
    COMPLETED = "completed"            # a full plan was executed successfully
    NO_TOOL = "no_tool"                # the LLM answered FAILURE: no tool can help (further)
    BOUND_REACHED = "bound_reached"    # max_rounds LLM answers without completing
    TIME_LIMIT = "time_limit"
    LLM_ERROR = "llm_error"
    INVALID_TASK = "invalid_task"      # rejected before any LLM call
    DECLINED = "declined"              # the backend said it is not sure (offline interpreter)
    CANCELED = "canceled"              # ``should_stop`` said so (e.g. the user canceled the task)
    ANSWERED = "answered"              # the request was a question; the message is the answer
    LLM_CALL_LIMIT = "llm_call_limit"  # the task's LLM calls (all of them, learning included) reached max_llm_calls


@dataclass(frozen=True)
class ToolCall:
    tool: Tool
    argument: Optional[str] = None
    line: str = ""


class ToolAnswerError(AffplanError, ValueError):
    """The answer selects no valid tool; ``message`` is fed back to the LLM."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


_SELECTED_RE = re.compile(r"SELECTED[ _]TOOL\s*:?", re.IGNORECASE)
_STRIP = re.compile(r"[*`\"'<>\[\]]")
_ANSWER_FORMAT = "End your answer with SELECTED TOOL: <TOOL> <PARAMETER>, or with FAILURE if no tool is valid."


def parse_tool_answer(text: str) -> ToolCall:
    """The tool selected by the LAST ``SELECTED TOOL:`` of the answer (or a final ``FAILURE``)."""
    text = text or ""
    if not text.strip():
        raise ToolAnswerError("empty", f"Your answer was empty. {_ANSWER_FORMAT}")
    hits = list(_SELECTED_RE.finditer(text))
    if hits:
        rest = text[hits[-1].end():]
        lines = [l for l in rest.splitlines() if _STRIP.sub("", l).strip()]
        line = _STRIP.sub("", lines[0]).strip() if lines else ""
    else:
        lines = [l for l in text.splitlines() if _STRIP.sub("", l).strip()]
        last = _STRIP.sub("", lines[-1]).split() if lines else []
        # "End your answer with FAILURE": the last word, in capitals as asked.
        if not last or last[-1].rstrip(".!") != "FAILURE":
            raise ToolAnswerError("no_selection", f"Your answer selects no tool. {_ANSWER_FORMAT}")
        line = "FAILURE"
    words = line.split()
    if not words:
        raise ToolAnswerError("no_selection", f"No tool follows 'SELECTED TOOL:'. {_ANSWER_FORMAT}")
    keyword = words[0].rstrip(".,:;!").upper()
    tool = TOOL_KEYWORDS.get(keyword)
    if tool is None:
        raise ToolAnswerError("unknown_tool", f"'{words[0]}' is not a tool. The tools are PLAN, PARTIAL_PLAN, "
                                              f"EXPLORE <location>, SUGGEST_ALTERNATIVE <missing object>, "
                                              f"ANSWER <reply> (to a question); "
                                              f"answer FAILURE if none is valid.")
    if tool is Tool.ANSWER:
        # The reply is free text, as written: all that follows the keyword.
        after = text[hits[-1].end():] if hits else ""
        reply = " ".join(after[after.upper().find("ANSWER") + len("ANSWER"):].split()).strip(" :") if after else ""
        if not reply:
            raise ToolAnswerError("missing_parameter", "ANSWER needs the reply, e.g. ANSWER cup0 is on table0.")
        return ToolCall(tool, reply, line)
    if tool not in _NEEDS_ARGUMENT:
        return ToolCall(tool, None, line)  # PLAN may be followed by a restatement of the request
    args = [w.strip(".,:;!()") for w in words[1:]]
    args = [a for a in args if a]
    if not args:
        raise ToolAnswerError("missing_parameter", f"{tool.value} needs {_NEEDS_ARGUMENT[tool]}.")
    if len(args) > 1:
        raise ToolAnswerError("too_many_parameters", f"{tool.value} takes exactly one parameter, "
                                                     f"{_NEEDS_ARGUMENT[tool]}; you wrote '{' '.join(args)}'.")
    return ToolCall(tool, args[0], line)


def validate_tool_call(call: ToolCall, memory: Memory) -> ToolCall:
    """Reject a call the memory shows to be pointless; returns the call with a canonical argument."""
    if call.tool is Tool.EXPLORE:
        loc = call.argument or ""
        unexplored = ", ".join(memory.unexplored()) or "none"
        if loc not in memory.locations:
            raise ToolAnswerError("unknown_location", f"'{loc}' is not a known location. Unexplored locations: "
                                                      f"{unexplored}.")
        if memory.locations[loc].explored:
            raise ToolAnswerError("already_explored", f"{loc} is already explored; what is there is in the memory. "
                                                      f"Unexplored locations: {unexplored}.")
    elif call.tool is Tool.SUGGEST_ALTERNATIVE:
        name = (call.argument or "").lower()
        cls = name if name in memory.classes() else class_of(name)
        if cls in memory.classes():
            raise ToolAnswerError("object_present",
                                  f"A {cls} is in the scene ({', '.join(memory.objects_of_class(cls))}); "
                                  f"no alternative is needed, plan with it.")
        if cls in memory.substitutions:
            raise ToolAnswerError("already_substituted", f"{cls} was already replaced by {memory.substitutions[cls]}.")
        return ToolCall(call.tool, cls, call.line)
    return call


@dataclass(frozen=True)
class ToolPromptView:
    """What one tool-selection prompt shows."""

    request: str                 # the request with accepted alternatives applied
    memory_text: str
    previous_requests: tuple[str, ...] = ()
    last_result: str = ""
    memory: object = None        # the Memory itself, for backends that read it (offline, grammars)


class ToolPrompter(Protocol):
    def initial_messages(self, view: ToolPromptView) -> list[Message]: ...

    def update_message(self, view: ToolPromptView) -> str: ...

    def invalid_message(self, error: str, view: ToolPromptView) -> str: ...


ConfirmAlternative = Callable[[str, str], bool]  # (missing class, proposed class) -> accepted?
# Told about each round as it goes: ("selected", record) once the tool is known, before it
# runs; ("done", record) after it ran. Lets a ROS node publish feedback per round.
RoundObserver = Callable[[str, "RoundRecord"], None]


@dataclass
class RoundRecord:
    round: int
    answer: str = ""
    tool: Optional[str] = None
    argument: Optional[str] = None
    valid: bool = False
    error: Optional[str] = None
    error_kind: Optional[str] = None
    result: str = ""
    goal: Optional[str] = None
    plan: list[str] = field(default_factory=list)
    plan_cost: Optional[float] = None
    executed: Optional[bool] = None
    alternative: Optional[dict] = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    seconds: float = 0.0
    answered_by: list[str] = field(default_factory=list)  # backend of each answer in this round
    fallback: bool = False      # the model answered FAILURE; the loop ran a Partial Plan instead
    # (or it answered PLAN again although no plan reached the goal and nothing had changed since:
    # the loop explored a place instead)
    unreachable: bool = False   # a plan round: well-formed goals, but no plan reaches them from memory

    def add_llm(self, calls: int, prompt: int, completion: int, seconds: float) -> None:
        self.llm_calls += calls
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.llm_seconds += seconds


@dataclass
class ToolLoopResult:
    stop_reason: TaskStop
    message: str = ""
    rounds: list[RoundRecord] = field(default_factory=list)
    final_plan: list[str] = field(default_factory=list)
    plan_cost: float = 0.0            # cost of all executed plan steps (partial plans included)
    seconds: float = 0.0
    error: Optional[str] = None

    answer: str = ""                  # the reply, when the request was a question (ANSWERED)

    @property
    def success(self) -> bool:
        return self.stop_reason in (TaskStop.COMPLETED, TaskStop.ANSWERED)

    @property
    def tools(self) -> list[str]:
        """The tools that ran, in order (invalid answers and FAILURE excluded)."""
        return [r.tool for r in self.rounds if r.valid and r.tool != Tool.FAILURE.value]

    @property
    def tool_calls(self) -> int:
        return len(self.tools)

    def totals(self) -> dict:
        return {"llm_calls": sum(r.llm_calls for r in self.rounds),
                "prompt_tokens": sum(r.prompt_tokens for r in self.rounds),
                "completion_tokens": sum(r.completion_tokens for r in self.rounds),
                "llm_seconds": round(sum(r.llm_seconds for r in self.rounds), 4)}

    def to_dict(self) -> dict:
        from dataclasses import asdict
        return {"stop_reason": self.stop_reason.value, "success": self.success, "message": self.message,
                "tools": self.tools, "tool_calls": self.tool_calls, "final_plan": self.final_plan,
                "plan_cost": self.plan_cost, "seconds": round(self.seconds, 4), "error": self.error,
                **self.totals(), "rounds": [asdict(r) for r in self.rounds]}


@dataclass
class ToolSelectionLoop:
    """Algorithm 1 with injected LLM, prompts, planning, alternatives, user and executor.

    ``max_rounds`` bounds the tool-selection answers (valid or not); ``max_seconds`` the
    wall time (checked between rounds, and handed down to the goal loop).
    """

    llm: ChatModel
    prompter: ToolPrompter
    planner: Planner
    executor: Executor
    alternatives: Optional[AlternativeSuggester] = None
    confirm: Optional[ConfirmAlternative] = None   # None: every proposal is accepted
    confirm_timeout_s: float = 120.0               # no answer from the user in time: rejected
    oam: object = None                             # for applying executed steps to memory
    capabilities: Optional[dict] = None            # the robot's model, for the same (None: the built-in set)
    max_rounds: int = 10
    max_seconds: Optional[float] = None
    max_task_chars: int = 2000
    clock: Callable[[], float] = time.monotonic
    should_stop: Optional[Callable[[], bool]] = None   # checked between rounds and tools (cancel)
    observer: Optional[RoundObserver] = None
    # AutoGPT+P's own loop: when the model answers FAILURE and no Partial Plan has run for this
    # request yet, run one (for the request as it stands) before giving up, "as GPT-4 is not good
    # at determining when this is needed" (the paper's code). Off: FAILURE ends the task.
    partial_plan_on_failure: bool = False
    # When a Plan found that no plan reaches the goal from what memory holds (the goal needs an
    # object the robot has not seen) and the model answers PLAN again with nothing changed since,
    # which would fail the same way, the loop explores a place instead: an unexplored one first,
    # then the robot's own place, then the others, each at most once per task (memory may be
    # incomplete: a place explored before may hold what the robot has not noticed). Each look is
    # a round with its result. With no place left, the repeated PLAN is refused once with the
    # reason, and the task stops if the model insists. Off: the paper's loop (plan again).
    explore_when_unreachable: bool = False
    # At most this many LLM calls per task: tool choices, goals (the planner's rounds), alternatives
    # and whatever ``llm_calls_elsewhere`` reports (e.g. learning runs inside the executor).
    # Checked before each round; the task stops with LLM_CALL_LIMIT. None: no limit.
    max_llm_calls: Optional[int] = None
    llm_calls_elsewhere: Optional[Callable[[], int]] = None

    def llm_calls_used(self) -> int:
        """LLM calls of the task running (or last run) so far, those reported from elsewhere included."""
        progress = getattr(self, "_progress", None)
        own = sum(r.llm_calls for r in progress.rounds) if progress is not None else 0
        return own + (self.llm_calls_elsewhere() if self.llm_calls_elsewhere is not None else 0)

    def run(self, task: str, memory: Memory) -> ToolLoopResult:
        start = self.clock()
        result = ToolLoopResult(TaskStop.BOUND_REACHED)
        self._progress = result
        looked: list[str] = []               # places explored in this task
        stuck: Optional[tuple] = None        # memory's signature when a plan last found no plan reaches the goal
        refused_plan = False                 # a repeated PLAN was refused (no place left to look at)

        def finish(reason: TaskStop, message: str) -> ToolLoopResult:
            result.stop_reason, result.message = reason, message
            result.seconds = self.clock() - start
            return result

        task, problem = clean_task(task, self.max_task_chars)
        if problem:
            return finish(TaskStop.INVALID_TASK, problem)
        previous = tuple(memory.instructions)
        memory.record_instruction(task)
        view = lambda last="": ToolPromptView(memory.substitute(task), memory.render(), previous, last,  # noqa: E731
                                              memory)
        messages: list[Message] = list(self.prompter.initial_messages(view()))
        stopped = lambda: self.should_stop is not None and self.should_stop()  # noqa: E731
        for rnd in range(1, self.max_rounds + 1):
            if stopped():
                return finish(TaskStop.CANCELED, f"canceled before round {rnd}")
            left = None if self.max_seconds is None else self.max_seconds - (self.clock() - start)
            if left is not None and left <= 0:
                return finish(TaskStop.TIME_LIMIT, f"no result within {self.max_seconds:g} s")
            spent = self._calls_spent()
            if spent:
                return finish(TaskStop.LLM_CALL_LIMIT, f"{spent} without completing it"
                              + (f"; the last round: {result.rounds[-1].result}"
                                 if result.rounds and result.rounds[-1].result else ""))
            t0 = self.clock()
            rec = RoundRecord(rnd)
            result.rounds.append(rec)
            try:
                c = ask(self.llm, messages, view(result.rounds[-2].result if len(result.rounds) > 1 else ""))
            except Declined as exc:
                result.error = str(exc)
                rec.seconds = self.clock() - t0
                return finish(TaskStop.DECLINED, f"the language backend declined: {exc}")
            except ChatModelError as exc:
                result.error = str(exc)
                rec.seconds = self.clock() - t0
                return finish(TaskStop.LLM_ERROR, f"the LLM failed: {exc}")
            rec.add_llm(1, c.prompt_tokens, c.completion_tokens, c.seconds)
            rec.answered_by.append(c.backend)
            rec.answer = c.text or ""
            messages.append({"role": "assistant", "content": rec.answer})
            try:
                call = validate_tool_call(parse_tool_answer(rec.answer), memory)
            except ToolAnswerError as exc:
                rec.error, rec.error_kind = exc.message, exc.kind
                rec.seconds = self.clock() - t0
                messages.append({"role": "user", "content": self.prompter.invalid_message(exc.message, view())})
                continue
            rec.valid, rec.tool, rec.argument = True, call.tool.value, call.argument
            if (self.explore_when_unreachable and call.tool is Tool.PLAN and stuck is not None
                    and stuck == _signature(memory, task)):
                place = next_place(memory, looked, self._robot(memory))
                if place is None and refused_plan:
                    rec.seconds = self.clock() - t0
                    return finish(TaskStop.NO_TOOL, "no plan reaches the goal with what the robot knows, and every "
                                                    f"place was looked at in this task ({', '.join(looked)}); "
                                                    "nothing has changed since, so planning again would fail the "
                                                    f"same way; the last plan: {_last_plan_result(result)}")
                if place is None:
                    refused_plan = True
                    rec.valid, rec.tool, rec.argument = False, None, None
                    rec.error, rec.error_kind = _REPEATED_PLAN + " Every place was looked at in this task.", \
                        "plan_unchanged"
                    rec.seconds = self.clock() - t0
                    messages.append({"role": "user", "content": self.prompter.invalid_message(rec.error, view())})
                    continue
                call = ToolCall(Tool.EXPLORE, place, f"EXPLORE {place}")
                rec.tool, rec.argument, rec.fallback = call.tool.value, place, True
            if call.tool is Tool.FAILURE and self.partial_plan_on_failure and not any(
                    r.tool == Tool.PARTIAL_PLAN.value for r in result.rounds):
                call = ToolCall(Tool.PARTIAL_PLAN, None, "PARTIAL_PLAN")
                rec.tool, rec.fallback = call.tool.value, True
            if call.tool is Tool.FAILURE:
                rec.seconds = self.clock() - t0
                # Say what went wrong last (a failed execution, a tool error) rather than only the last round.
                earlier = list(reversed(result.rounds[:-1]))
                failed = next((r.result for r in earlier if r.result and (r.executed is False or r.error)), "")
                last = failed or next((r.result for r in earlier if r.result), "")
                # The answer's own words before FAILURE say why (a model's reasoning, the interpreter's reason).
                answer = rec.answer.strip()
                why = " ".join(answer[:-len("FAILURE")].split()) if answer.endswith("FAILURE") else ""
                return finish(TaskStop.NO_TOOL, "the LLM found no tool that helps further"
                              + (f" ({why[:300]})" if why else "")
                              + (f"; {'what failed' if failed else 'the last round'}: {last}" if last else ""))
            if call.tool is Tool.ANSWER:
                rec.seconds = self.clock() - t0
                result.answer = call.argument or ""
                rec.result = "answered from memory (nothing moved)"
                self._notify("done", rec)
                return finish(TaskStop.ANSWERED, result.answer)
            if stopped():
                return finish(TaskStop.CANCELED, f"canceled before running {call.tool.value}")
            spent = self._calls_spent() if call.tool in (Tool.PLAN, Tool.PARTIAL_PLAN,
                                                         Tool.SUGGEST_ALTERNATIVE) else ""   # they ask the LLM
            if spent:
                rec.seconds = self.clock() - t0
                return finish(TaskStop.LLM_CALL_LIMIT, f"{spent} before {call.tool.value} could run")
            self._notify("selected", rec)
            if call.tool is Tool.EXPLORE:
                looked.append(call.argument or "")
            try:
                done = self._run_tool(call, task, memory, rec, result, left)
            except Exception as exc:  # noqa: BLE001 - an executor or planner bug: said, bounded, not fatal
                done, rec.error = False, f"{type(exc).__name__}: {exc}"
                rec.result = f"The tool {call.tool.value} failed: {rec.error}"
            if rec.fallback and call.tool is Tool.EXPLORE:
                rec.result = (f"No plan reached the goal with what memory holds and nothing had changed, so "
                              f"planning again would fail the same way: looked at {call.argument} instead. "
                              + rec.result)
            if call.tool is Tool.PLAN:
                stuck = _signature(memory, task) if rec.unreachable else None
                refused_plan = False
            rec.seconds = self.clock() - t0
            self._notify("done", rec)
            if stopped() and not done:
                return finish(TaskStop.CANCELED, f"canceled during {call.tool.value}: {rec.result}")
            if done:
                return finish(TaskStop.COMPLETED, f"the request was fulfilled: {rec.result}")
            messages.append({"role": "user", "content": self.prompter.update_message(view(rec.result))})
        return finish(TaskStop.BOUND_REACHED, f"no final plan after {self.max_rounds} rounds")

    def _calls_spent(self) -> str:
        """Why no more LLM calls may be made for this task ("" while they may)."""
        used = self.llm_calls_used()
        if self.max_llm_calls is None or used < self.max_llm_calls:
            return ""
        return f"the task's LLM call limit is used up ({used} calls, max_llm_calls {self.max_llm_calls})"

    def _robot(self, memory: Memory) -> Optional[str]:
        robots = [n for n, o in memory.objects.items() if o.is_agent and o.class_name == "robot"]
        return robots[0] if robots else None

    def _notify(self, event: str, rec: RoundRecord) -> None:
        if self.observer is not None:
            try:
                self.observer(event, rec)
            except Exception:  # noqa: BLE001 - reporting progress must never stop the task
                pass

    # -- tools ---------------------------------------------------------------------------
    def _run_tool(self, call: ToolCall, task: str, memory: Memory, rec: RoundRecord,
                  result: ToolLoopResult, left: Optional[float]) -> bool:
        """Run one valid tool; True when the request is fulfilled."""
        if call.tool is Tool.EXPLORE:
            got = self.executor.explore(call.argument)
            if not got.success:
                rec.result = f"Exploring {call.argument} failed: {got.failure.feedback() if got.failure else ''}"
                return False
            if got.steps:  # what the robot did to look, then what it saw
                # Stamped just before the view: its facts about the place must not look older
                # than what the steps say (a view taken before they were applied is not stale).
                seen_at = got.observation.stamp
                memory.apply_steps(list(got.steps), oam=self.oam, capabilities=self.capabilities,
                                   at=None if seen_at is None else seen_at - 1e-3)
            memory.merge(got.observation)
            found = [o.name for o in got.observation.objects if not o.is_agent and o.name != call.argument]
            rec.result = (f"Explored {call.argument}: found {', '.join(found) if found else 'nothing new'}"
                          + (f"; {got.note}" if got.note else ""))
            return False
        if call.tool is Tool.SUGGEST_ALTERNATIVE:
            self._suggest(call.argument, task, memory, rec)
            return False
        return self._plan(call.tool is Tool.PARTIAL_PLAN, task, memory, rec, result, left)

    def _suggest(self, missing: str, task: str, memory: Memory, rec: RoundRecord) -> None:
        if self.alternatives is None:
            rec.result = "Suggest Alternative is not available here"
            return
        scene_classes = [o.class_name for o in memory.objects.values() if not o.is_agent]
        alt = self.alternatives.suggest(missing, memory.substitute(task), scene_classes,
                                        exclude=memory.rejected_for(missing))
        rec.add_llm(alt.llm_calls, alt.prompt_tokens, alt.completion_tokens, alt.llm_seconds)
        rec.alternative = {"alternative": alt.alternative, "branches": alt.branches, "required": alt.required,
                           "candidates": alt.candidates, "rarest": alt.rarest, "error": alt.error}
        if alt.alternative is None:
            rec.result = f"No alternative for {missing} was found ({alt.message})"
            return
        accepted, why = self._ask_user(missing, alt.alternative)
        rec.alternative["accepted"] = accepted
        if accepted:
            memory.accept_substitution(missing, alt.alternative)
            rec.result = (f"New alternative: {missing} -> {alt.alternative} (accepted by the user). "
                          f"The request is now: \"{memory.substitute(task)}\"")
        else:
            memory.reject_substitution(missing, alt.alternative)
            rec.result = f"The user rejected {alt.alternative} as an alternative for {missing}{why}"

    def _ask_user(self, missing: str, alternative: str) -> tuple[bool, str]:
        """(accepted, reason when not): the user's answer, within ``confirm_timeout_s``."""
        if self.confirm is None:
            return True, ""
        finished, answer, error = call_bounded(lambda: self.confirm(missing, alternative), self.confirm_timeout_s)
        if not finished:
            return False, f" (no answer within {self.confirm_timeout_s:g} s)"
        if error:
            return False, f" (asking the user failed: {error})"
        return bool(answer), ""

    def _plan(self, partial: bool, task: str, memory: Memory, rec: RoundRecord, result: ToolLoopResult,
              left: Optional[float]) -> bool:
        kind = "partial plan" if partial else "plan"
        request = memory.substitute(task)
        context = alternatives_context(memory)
        attempt = self.planner.plan(request, memory.scene(), partial=partial, context=context, max_seconds=left)
        if attempt.goal is not None:
            g = attempt.goal
            rec.add_llm(g.rounds, g.prompt_tokens, g.completion_tokens, g.llm_seconds)
            rec.answered_by.extend(g.answered_by)
        rec.goal = attempt.goal_text
        if not attempt.ok:
            rec.unreachable = bool(getattr(attempt, "unreachable", False))
            rec.result = f"Planning failed: {attempt.message}"
            return False
        steps = list(attempt.plan.plan)
        rec.plan, rec.plan_cost = [str(s) for s in steps], attempt.plan.cost
        record = PlanRecord(kind, request, attempt.goal_text, rec.plan, attempt.plan.cost)
        memory.last_plan = record
        run = self.executor.execute(steps)
        # A recovering executor (core/recovery/executive.py) may have repaired the plan at mid
        # level: it reports the steps that ran, and the facts its failure observed.
        done = getattr(run, "executed_steps", None)
        done = list(done) if done is not None else steps[:run.steps_done]
        memory.apply_steps(done, oam=self.oam, capabilities=self.capabilities)
        if getattr(run, "observed", ()):

            observe_memory(memory, run.observed)
        result.plan_cost += attempt.cost_of(done)
        record.executed, record.success, record.message = True, run.success, run.message
        rec.executed = run.success
        if not run.success:
            rec.result = f"Execution of the {kind} failed: {run.message}"
            return False
        result.final_plan = rec.plan
        if partial:
            rec.result = (f"The partial plan for {attempt.goal_text} was executed: "
                          f"{'; '.join(rec.plan) or 'nothing to do'}")
            return False
        rec.result = f"the plan for {attempt.goal_text} was executed: {'; '.join(rec.plan) or 'nothing to do'}"
        return True


_REPEATED_PLAN = ("PLAN would fail again: no plan reached the goal with what memory holds, and nothing has changed "
                  "since. Choose SUGGEST_ALTERNATIVE <missing object> if the request needs something that is not "
                  "here, or FAILURE.")


def _signature(memory: Memory, task: str) -> tuple:
    """What a plan depends on beyond the state of known objects: which objects memory holds and
    the request as it reads now (accepted alternatives applied)."""
    return frozenset(memory.objects), memory.substitute(task)


def _last_plan_result(result: ToolLoopResult) -> str:
    return next((r.result for r in reversed(result.rounds) if r.tool == Tool.PLAN.value and r.result), "")


def next_place(memory: Memory, looked, robot: Optional[str] = None) -> Optional[str]:
    """The place to look at next when no plan reaches the goal: an unexplored one first, then
    where the robot stands, then the others in memory's order; none looked at in this task."""
    here = memory.agent_location(robot) if robot else None
    order = list(memory.unexplored()) + ([here] if here else []) + list(memory.locations)
    return next((p for p in dict.fromkeys(order) if p in memory.locations and p not in looked), None)


class BudgetedChatModel:
    """``inner`` whose ``complete*`` calls are refused (ChatModelError) once ``used()`` reaches
    ``limit``: a task's LLM calls made outside the loop (learning runs) stay within its bound.
    Counts the calls it let through in ``calls``; everything else is ``inner``'s."""

    def __init__(self, inner, limit: Optional[int], used: Callable[[], int]):
        self.inner, self.limit, self.used, self.calls = inner, limit, used, 0

    def _guard(self, fn):
        def call(*args, **kwargs):
            if self.limit is not None and self.used() >= self.limit:
                raise ChatModelError(f"the task's LLM call limit is used up ({self.used()} calls, "
                                     f"max_llm_calls {self.limit})")
            self.calls += 1
            return fn(*args, **kwargs)
        return call

    def complete(self, messages):
        return self._guard(self.inner.complete)(messages)

    def __getattr__(self, name: str):
        attr = getattr(self.inner, name)
        return self._guard(attr) if name.startswith("complete") and callable(attr) else attr


def alternatives_context(memory: Memory) -> str:
    """The accepted alternatives as the goal prompt shows them ("" when there are none)."""
    if not memory.substitutions:
        return ""
    return "Accepted alternatives: " + ", ".join(f"{m} -> {a}" for m, a in memory.substitutions.items())


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_task(task: object, max_chars: int) -> tuple[str, Optional[str]]:
    """(the task with control characters removed and whitespace collapsed, problem or None)."""
    if not isinstance(task, str):
        return "", f"the task must be text, not {type(task).__name__}"
    text = " ".join(_CONTROL.sub(" ", task).split())
    if not text:
        return "", "the task is empty: say what the robot should do, e.g. 'bring me an apple'"
    if len(text) > max_chars:
        return "", (f"the task is {len(text)} characters long; the limit is {max_chars}. "
                    f"Say in a sentence or two what the robot should do")
    return text, None
