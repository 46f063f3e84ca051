"""One factory for the language backend: what the demo, the nodes and the benchmarks plug in.

``make_backend()`` returns a :class:`Backend` whose ``model`` is a drop-in
``core.ports.ChatModel`` for the goal loop, the tool-selection loop and Suggest
Alternative (pass it to ``GoalLoop(...)`` and ``loop_factory.make_tool_loop(...)``):

* no endpoint configured (``AFFPLAN_LLM_BASE_URL`` unset): the offline instruction
  interpreter (``core.interpreter``) - no model, no network; it declines what it does not
  understand;
* an endpoint: the real client (``ChatClient``), optionally
  - with the fast path (default on, ``AFFPLAN_FAST_PATH=0`` turns it off): the offline
    interpreter answers first questions it understands with full confidence, and the
    endpoint is not called for them;
  - with grammars (``AFFPLAN_LLM_GRAMMAR=1``, or ``grammar=True``; llama.cpp servers): each
    goal / tool question is sent with the GBNF grammar of the current scene / memory.

Every answer carries its ``backend`` label, so transcripts and benchmarks say per task which
backend answered.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

from affplan_ros.core.agent.tool_loop import ToolPromptView
from affplan_ros.core.goals.loop import Completion, Declined, GoalRequest, ask
from affplan_ros.core.interpreter.backend import OfflineModel
from affplan_ros.core.ports import ChatModel
from affplan_ros.llm.config import LLMConfig, config_from_env

ENV_FAST_PATH = "AFFPLAN_FAST_PATH"
ENV_GRAMMAR = "AFFPLAN_LLM_GRAMMAR"
FAST_PATH_LABEL = "offline (fast path)"


@dataclass
class GrammarModel:
    """An endpoint client that sends the scene's grammar with goal and tool questions."""

    client: object          # ChatClient
    oam: object = None

    def complete(self, messages: Sequence[dict]) -> Completion:
        return self._label(self.client.complete(messages))

    def complete_in_context(self, messages: Sequence[dict], context: object) -> Completion:
        from affplan_ros.llm.grammars import grammar_for

        grammar = grammar_for(context, self.oam)
        if grammar is None:
            return self.complete(messages)
        return self._label(self.client.complete(messages, extra_body={"grammar": grammar},
                                                tag=type(context).__name__))

    def _label(self, c: Completion) -> Completion:
        return Completion(c.text, c.prompt_tokens, c.completion_tokens, c.seconds,
                          f"{self.client.config.model} (grammar)")


@dataclass
class LabelledModel:
    """Any chat model whose answers are labelled with its model name."""

    client: object
    label: str

    def complete(self, messages: Sequence[dict]) -> Completion:
        c = self.client.complete(messages)
        return Completion(c.text, c.prompt_tokens, c.completion_tokens, c.seconds, c.backend or self.label)

    def complete_in_context(self, messages: Sequence[dict], context: object) -> Completion:
        c = ask(self.client, messages, context)
        return Completion(c.text, c.prompt_tokens, c.completion_tokens, c.seconds, c.backend or self.label)


@dataclass
class FastPathModel:
    """The offline interpreter first, the language model when it is not fully sure.

    Only the first question of a conversation (no earlier answer) may be answered offline:
    a goal the interpreter understood completely, or the PLAN tool when every object the
    request names is known. Everything else - corrections, exploration choices, alternatives
    - goes to ``llm``. ``used`` / ``skipped`` count the calls saved and passed on."""

    offline: OfflineModel
    llm: ChatModel
    used: int = 0
    passed: int = 0

    def complete(self, messages: Sequence[dict]) -> Completion:
        self.passed += 1
        return self.llm.complete(messages)

    def complete_in_context(self, messages: Sequence[dict], context: object) -> Completion:
        first = not any(m.get("role") == "assistant" for m in messages)
        if first and isinstance(context, (GoalRequest, ToolPromptView)):
            try:
                if isinstance(context, GoalRequest):
                    text = self.offline.goal_answer(context, messages)
                else:
                    decision = self.offline.tool_decision(context, messages)
                    if not decision.confident:
                        raise Declined(decision.why)
                    text = decision.text
                self.used += 1
                return Completion(text, 0, 0, 0.0, FAST_PATH_LABEL)
            except Declined:
                pass
        self.passed += 1
        return ask(self.llm, messages, context)


@dataclass
class Backend:
    """The language backend of a run: ``model`` answers goal, tool and alternative questions."""

    model: ChatModel
    label: str
    kind: str                        # offline | endpoint | fast_path
    client: object = None            # the ChatClient, when there is an endpoint
    details: dict = field(default_factory=dict)

    @property
    def goal_model(self) -> ChatModel:
        return self.model

    @property
    def tool_model(self) -> ChatModel:
        return self.model

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def _flag(value: Optional[str], default: bool) -> bool:
    if value is None or not value.strip():
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def make_backend(config: Optional[LLMConfig] = None, *, oam=None, fast_path: Optional[bool] = None,
                 grammar: Optional[bool] = None, environ: Optional[Mapping[str, str]] = None,
                 offline: bool = False) -> Backend:
    """The backend for ``config`` (default: the endpoint in the environment; none: offline).

    ``oam``: the object-affordance mapping of the run (the offline interpreter knows the classes
    of the OAM, so it can tell "not in the scene" from "a word I do not know")."""
    env = os.environ if environ is None else environ
    if config is None and not offline:
        config = config_from_env(env)
    local = OfflineModel(oam=oam)
    if config is None:
        return Backend(local, "offline instruction interpreter (no LLM endpoint configured; it declines "
                              "what it does not understand)", "offline")
    from affplan_ros.llm.client import ChatClient

    client = ChatClient(config, environ=env)
    use_grammar = _flag(env.get(ENV_GRAMMAR), False) if grammar is None else grammar
    model: ChatModel = (GrammarModel(client, oam) if use_grammar
                        else LabelledModel(client, config.model))
    label = f"LLM endpoint {config.base_url}, model {config.model}" + (", grammar-constrained" if use_grammar else "")
    use_fast = _flag(env.get(ENV_FAST_PATH), True) if fast_path is None else fast_path
    if use_fast:
        return Backend(FastPathModel(local, model), label + "; offline interpreter as fast path", "fast_path",
                       client, {"grammar": use_grammar})
    return Backend(model, label, "endpoint", client, {"grammar": use_grammar})
