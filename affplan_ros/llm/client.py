"""One chat client over the ``openai`` package for any OpenAI-compatible endpoint.

Retries are done here, not by the openai package (its ``max_retries`` is set to 0),
so the bound, the backoff and the accounting of attempts are ours and testable:
transport errors, timeouts, HTTP 429 and 5xx are retried with exponential backoff;
other HTTP errors (400, 401, 404, ...) fail at once.  Timeouts are httpx's per-request
timeouts — no signals, so the client is safe inside ROS executors.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from affplan_ros.core.goals.loop import ChatModelError, Completion
from affplan_ros.llm.accounting import Accounting, CallRecord
from affplan_ros.llm.config import LLMConfig, MissingAPIKeyError
from affplan_ros.llm.conversation import Conversation, compact_history

log = logging.getLogger(__name__)

__all__ = [
    "ChatClient",
    "ChatResponse",
    "Choice",
    "LLMError",
    "MissingAPIKeyError",
    "TokenLogprob",
]


class LLMError(ChatModelError):
    """A chat completion failed; ``retryable`` tells whether retries were attempted."""

    def __init__(self, message: str, *, attempts: int = 1, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.attempts = attempts
        self.status = status
        self.retryable = retryable


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Choice:
    text: str
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None


@dataclass(frozen=True)
class ChatResponse:
    choices: tuple[Choice, ...]
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    attempts: int
    model: str

    @property
    def text(self) -> str:
        return self.choices[0].text if self.choices else ""

    def as_completion(self) -> Completion:
        return Completion(self.text, self.prompt_tokens, self.completion_tokens, self.seconds)


def _openai() -> Any:
    try:
        import openai  # noqa: WPS433 - keep import-time cheap for modules that never call an LLM
    except ImportError as exc:  # pragma: no cover - openai is a hard dependency
        raise LLMError("the 'openai' package is not installed: pip install openai") from exc
    return openai


def _classify(exc: Exception) -> tuple[bool, int | None, str]:
    """(retryable, HTTP status, short description) of an exception from openai."""
    openai = _openai()
    if isinstance(exc, openai.APITimeoutError):
        return True, None, "request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return True, None, f"connection failed ({exc.__cause__ or exc})"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry = status == 429 or status >= 500
        return retry, status, f"HTTP {status}: {_short(exc)}"
    return False, None, f"{type(exc).__name__}: {_short(exc)}"


def _short(exc: Exception, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "..."


def _parse_logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    if raw is None or getattr(raw, "content", None) is None:
        return None
    out = []
    for t in raw.content:
        top = tuple((a.token, float(a.logprob)) for a in (t.top_logprobs or ()))
        out.append(TokenLogprob(t.token, float(t.logprob), top))
    return tuple(out)


class ChatClient:
    """Implements :class:`affplan_ros.core.goals.loop.ChatModel` for any compatible endpoint.

    The key is read from ``config.api_key_env`` when the client is built, so a missing
    key fails early with :class:`MissingAPIKeyError` instead of at the first request.
    """

    def __init__(self, config: LLMConfig, *, accounting: Accounting | None = None,
                 sleep: Callable[[float], None] = time.sleep, environ: Mapping[str, str] | None = None,
                 http_client: Any = None):
        self.config = config
        self.accounting = accounting if accounting is not None else Accounting()
        self._sleep = sleep
        openai = _openai()
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key(environ),
            timeout=config.timeout_s,
            max_retries=0,
            http_client=http_client,
        )
        self._closed = threading.Event()

    # -- context manager -------------------------------------------------
    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._closed.set()
        self._client.close()

    def __repr__(self) -> str:  # never include the key
        return f"ChatClient(base_url={self.config.base_url!r}, model={self.config.model!r})"

    # -- calls -------------------------------------------------------------
    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        return min(self.config.backoff_initial_s * (2 ** (attempt - 1)), self.config.backoff_max_s)

    def create(self, messages: Sequence[Mapping[str, str]], *, n: int = 1, logprobs: bool = False,
               top_logprobs: int | None = None, temperature: float | None = None,
               max_tokens: int | None = None, stop: Sequence[str] | None = None,
               extra_body: Mapping[str, Any] | None = None, tag: str = "") -> ChatResponse:
        """One chat completion (with bounded retries); raises :class:`LLMError`."""
        cfg = self.config
        kwargs: dict[str, Any] = {
            "model": cfg.model,
            "messages": [dict(m) for m in messages],
            "temperature": cfg.temperature if temperature is None else temperature,
        }
        if n != 1:
            kwargs["n"] = n
        if logprobs:
            kwargs["logprobs"] = True
            if top_logprobs is not None:
                kwargs["top_logprobs"] = top_logprobs
        mt = max_tokens if max_tokens is not None else cfg.max_tokens
        if mt is not None:
            kwargs["max_tokens"] = mt
        if stop:
            kwargs["stop"] = list(stop)
        if cfg.seed is not None:
            kwargs["seed"] = cfg.seed
        body = {**dict(cfg.extra_body), **dict(extra_body or {})}
        if body:
            kwargs["extra_body"] = body

        attempts_allowed = 1 + cfg.max_retries
        start = time.monotonic()
        last = ""
        status: int | None = None
        retryable = False
        for attempt in range(1, attempts_allowed + 1):
            if self._closed.is_set():
                raise LLMError("the LLM client was closed", attempts=attempt - 1)
            try:
                raw = self._client.chat.completions.create(**kwargs)
            except Exception as exc:  # classified below; anything unknown is not retried
                retryable, status, last = _classify(exc)
                log.warning("LLM call to %s (model %s) failed, attempt %d/%d: %s",
                            cfg.base_url, cfg.model, attempt, attempts_allowed, last)
                if not retryable or attempt == attempts_allowed:
                    break
                self._sleep(self.backoff(attempt))
                continue
            seconds = time.monotonic() - start
            usage = getattr(raw, "usage", None)
            pt = int(getattr(usage, "prompt_tokens", 0) or 0)
            ct = int(getattr(usage, "completion_tokens", 0) or 0)
            choices = tuple(
                Choice(
                    text=(c.message.content or "") if c.message is not None else "",
                    finish_reason=c.finish_reason,
                    logprobs=_parse_logprobs(getattr(c, "logprobs", None)),
                )
                for c in (raw.choices or ())
            )
            self.accounting.add(CallRecord(cfg.model, pt, ct, seconds, attempt, True, None, tag))
            return ChatResponse(choices, pt, ct, seconds, attempt, raw.model or cfg.model)
        seconds = time.monotonic() - start
        attempts = attempt
        self.accounting.add(CallRecord(cfg.model, 0, 0, seconds, attempts, False, last, tag))
        what = f"after {attempts} attempt{'s' if attempts != 1 else ''}" if retryable else "(not retried)"
        raise LLMError(
            f"Chat completion with model '{cfg.model}' at {cfg.base_url} failed {what}: {last}"
            + (f" (timeout {cfg.timeout_s:g} s per request)" if "timed out" in last else ""),
            attempts=attempts, status=status, retryable=retryable,
        )

    def complete(self, messages: Sequence[Mapping[str, str]], *, extra_body: Mapping[str, Any] | None = None,
                 tag: str = "complete") -> Completion:
        """The :class:`ChatModel` protocol of the loops: earlier answers compacted (see
        ``LLMConfig.compact_history``)."""
        sent = compact_history(messages) if self.config.compact_history else messages
        return self.create(sent, extra_body=extra_body, tag=tag).as_completion()

    def chat(self, conversation: Conversation, user_text: str, **kwargs: Any) -> Completion:
        """Append ``user_text`` and the answer to ``conversation`` (history per task).

        On failure the user message is removed again so the history stays consistent.
        """
        conversation.add_user(user_text)
        try:
            response = self.create(conversation.messages, **kwargs)
        except LLMError:
            conversation.pop()
            raise
        conversation.add_assistant(response.text)
        return response.as_completion()
