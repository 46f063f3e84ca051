"""LLM endpoint configuration: backends are configuration, not code forks.

The API key itself is never stored here — only the NAME of the environment variable
holding it — so a config can be printed, logged or saved without leaking a secret.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from affplan_ros.core.errors import AffplanError


class MissingAPIKeyError(AffplanError, RuntimeError):
    """The configured environment variable with the API key is not set."""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o"
    # Name of the environment variable that holds the key; "" means "no key needed"
    # (local servers such as llama.cpp accept any key).
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout_s: float = 60.0  # per request (connect + read), enforced by httpx, no signals
    max_retries: int = 3  # retries after the first attempt, on transport errors/5xx/429
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 8.0
    seed: int | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"grammar": ...} for llama.cpp
    # Earlier answers go back to the endpoint as their final answer only (the goal, the tool
    # line): the loops' corrections and next rounds need the answer and the error, not the
    # model's reasoning again (conversation.compact_history). False sends them verbatim.
    compact_history: bool = True

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError("LLMConfig.base_url must not be empty")
        if not self.model:
            raise ValueError("LLMConfig.model must not be empty")
        if self.timeout_s <= 0:
            raise ValueError(f"LLMConfig.timeout_s must be > 0, got {self.timeout_s}")
        if self.max_retries < 0:
            raise ValueError(f"LLMConfig.max_retries must be >= 0, got {self.max_retries}")

    def api_key(self, environ: Mapping[str, str] | None = None) -> str:
        """Read the key from the environment; a clear error names the variable, never a value."""
        if not self.api_key_env:
            return "not-needed"
        env = os.environ if environ is None else environ
        key = env.get(self.api_key_env, "")
        if not key.strip():
            raise MissingAPIKeyError(
                f"No API key for the LLM endpoint {self.base_url}: the environment variable "
                f"'{self.api_key_env}' is not set. Export it (export {self.api_key_env}=...) or set "
                "api_key_env to '' for a local endpoint that needs no key."
            )
        return key

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "LLMConfig":
        """Build from a YAML/ROS-parameter dict; unknown keys are an error (typos matter)."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown LLM config keys: {sorted(unknown)} (known: {sorted(known)})")
        return cls(**dict(values))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


ENV_BASE_URL = "AFFPLAN_LLM_BASE_URL"
ENV_MODEL = "AFFPLAN_LLM_MODEL"
ENV_KEY_NAME = "AFFPLAN_LLM_API_KEY_ENV"


def config_from_env(environ: Mapping[str, str] | None = None) -> LLMConfig | None:
    """The endpoint configured in the environment, or None when none is.

    ``AFFPLAN_LLM_BASE_URL`` (required), ``AFFPLAN_LLM_MODEL`` and ``AFFPLAN_LLM_API_KEY_ENV``
    (the NAME of the variable holding the key; default OPENAI_API_KEY, "" for none).
    """
    env = os.environ if environ is None else environ
    base_url = env.get(ENV_BASE_URL, "").strip()
    if not base_url:
        return None
    return LLMConfig(base_url=base_url, model=env.get(ENV_MODEL, "").strip() or LLMConfig.model,
                     api_key_env=env.get(ENV_KEY_NAME, "OPENAI_API_KEY").strip())


class NoEndpointError(AffplanError, RuntimeError):
    """No LLM endpoint is configured in the environment."""


def require_endpoint(environ: Mapping[str, str] | None = None) -> LLMConfig:
    """The configured endpoint, its key present: checked before a command asks anything."""
    conf = config_from_env(environ)
    if conf is None:
        raise NoEndpointError(f"no LLM endpoint is configured; set {ENV_BASE_URL} (and {ENV_MODEL}, "
                              f"{ENV_KEY_NAME} naming the variable that holds the key)")
    conf.api_key(environ)  # MissingAPIKeyError names the variable, never a value
    return conf


CONFIGURE_HELP = (f"configure a real endpoint with {ENV_BASE_URL}, {ENV_MODEL} and {ENV_KEY_NAME} "
                  "(the NAME of the variable holding the API key)")


def config_from_settings(base_url: str = "", model: str = "", api_key_env: str = "", timeout_s: float = 60.0,
                         environ: Mapping[str, str] | None = None) -> LLMConfig | None:
    """A node's endpoint: each setting (ROS parameter) where given, else the environment; None
    when no base URL is configured anywhere. ``api_key_env`` "none" means the endpoint needs no key."""
    env = os.environ if environ is None else environ
    base = base_url.strip() or env.get(ENV_BASE_URL, "").strip()
    if not base:
        return None
    key_env = (api_key_env or env.get(ENV_KEY_NAME, "OPENAI_API_KEY")).strip()
    return LLMConfig(base_url=base, model=model.strip() or env.get(ENV_MODEL, "").strip() or LLMConfig.model,
                     api_key_env="" if key_env == "none" else key_env, timeout_s=float(timeout_s))
