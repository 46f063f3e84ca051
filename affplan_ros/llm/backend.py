"""Which language backend the suite talks to. ONE place decides, for `affplan up`, `affplan demo`
and the nodes:

1. an endpoint configured by the node's parameters (``llm_base_url``, ``llm_model``,
   ``llm_api_key_env``) or the environment (``AFFPLAN_LLM_BASE_URL``, ``AFFPLAN_LLM_MODEL``,
   ``AFFPLAN_LLM_API_KEY_ENV``): any OpenAI-compatible server;
2. otherwise, where a script of answers is given (``config/demo.yaml``), the SCRIPTED backend:
   answers written in advance for known sample tasks, served by a local chat-completions server
   (:class:`~affplan_ros.llm.fake_server.FakeChatServer`) and reached through the real openai
   client. It is labelled as scripted wherever it is shown; it knows only its tasks and says
   how to configure a real endpoint for any other.

(The offline instruction interpreter of issue 8 becomes another kind here.)
The nodes only ever see an endpoint: the scripted server runs in the process that started them.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from .config import ENV_BASE_URL, ENV_KEY_NAME, ENV_MODEL, LLMConfig, config_from_env

# Shown to a person (child processes log it; never a secret).
ENV_LABEL = "AFFPLAN_LLM_LABEL"
CONFIGURE_HELP = (f"configure a real endpoint with {ENV_BASE_URL}, {ENV_MODEL} and {ENV_KEY_NAME} "
                  "(the NAME of the variable holding the API key)")


class NoBackendError(RuntimeError):
    """No endpoint is configured and no script was given."""


def node_llm_config(base_url: str = "", model: str = "", api_key_env: str = "", timeout_s: float = 60.0,
                    environ: Optional[Mapping[str, str]] = None) -> Optional[LLMConfig]:
    """A node's endpoint: each parameter where set, else the environment; None when no base URL
    is configured anywhere. ``api_key_env`` "none" means the endpoint needs no key."""
    env = os.environ if environ is None else environ
    base = base_url.strip() or env.get(ENV_BASE_URL, "").strip()
    if not base:
        return None
    key_env = (api_key_env or env.get(ENV_KEY_NAME, "OPENAI_API_KEY")).strip()
    return LLMConfig(base_url=base, model=model.strip() or env.get(ENV_MODEL, "").strip() or LLMConfig.model,
                     api_key_env="" if key_env == "none" else key_env, timeout_s=float(timeout_s))


def backend_label(conf: Optional[LLMConfig], environ: Optional[Mapping[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    if conf is None:
        return f"no language backend ({CONFIGURE_HELP})"
    return env.get(ENV_LABEL) or f"LLM endpoint {conf.base_url}, model {conf.model}"


# -- the scripted backend --------------------------------------------------------------------

_REQUEST = re.compile(r'The user\'s request: "(.*)"')
_GOAL_REQUEST = re.compile(r'The user asks: "(.*)"')


def task_key(text: str) -> str:
    """Tasks match case- and punctuation-insensitively ("Bring me the apple!" == "bring me the apple")."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


@dataclass
class ScriptedTasks:
    """Answers per task and per kind of question (``tool``, ``goal``, ``affordances``,
    ``object``); a task's queues restart when its first tool-selection question comes."""

    tasks: dict[str, dict[str, list[str]]]
    source: str = ""
    _current: Optional[str] = None
    _queues: dict[str, list[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_mapping(cls, data: Mapping, source: str = "") -> "ScriptedTasks":
        tasks = {}
        for task, answers in (data or {}).items():
            if not isinstance(answers, Mapping):
                raise ValueError(f"{source}: the scripted answers of {task!r} must map a question kind "
                                 "(tool, goal, affordances, object) to a list of answers")
            tasks[task_key(str(task))] = {str(k): [str(a) for a in v] for k, v in answers.items()}
        return cls(tasks, source)

    def known(self) -> list[str]:
        return sorted(self.tasks)

    def __call__(self, messages: list[dict], body: dict):
        from .fake_server import FakeReply
        from .tool_prompting import prompt_kind

        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        last = users[-1] if users else ""
        kind = prompt_kind(last if isinstance(last, str) else "") or "unknown"
        with self._lock:
            if kind == "tool" and len(users) == 1:  # the first question of a new task
                found = _REQUEST.search(last)
                key = task_key(found.group(1)) if found else ""
                self._current = key if key in self.tasks else None
                self._queues = {k: list(v) for k, v in self.tasks.get(key, {}).items()}
                if self._current is None:
                    return FakeReply(status=400, error_message=(
                        f"the SCRIPTED language backend ({self.source}) has answers only for: "
                        f"{'; '.join(self.known())}. For any other task, {CONFIGURE_HELP}"))
            elif kind == "goal" and len(users) == 1:
                # A goal asked for outside a tool loop (PlanTask alone, `affplan ask --plan-only`):
                # switch to that task if it is another known one.
                found = _GOAL_REQUEST.search(last)
                key = task_key(found.group(1)) if found else ""
                if key in self.tasks and key != self._current:
                    self._current = key
                    self._queues = {k: list(v) for k, v in self.tasks[key].items()}
            queue = self._queues.get(kind)
            if not queue:
                return FakeReply(status=400, error_message=(
                    f"the SCRIPTED language backend has no further {kind!r} answer for this task; {CONFIGURE_HELP}"))
            return queue.pop(0)


@dataclass
class Backend:
    kind: str                    # "endpoint" | "scripted"
    label: str                   # what the person is told
    config: LLMConfig
    server: object = None        # the local scripted server, when kind == "scripted"

    def child_env(self) -> dict[str, str]:
        """Environment for the node processes: they see an endpoint and its label."""
        env = {ENV_BASE_URL: self.config.base_url, ENV_MODEL: self.config.model,
               ENV_KEY_NAME: self.config.api_key_env, ENV_LABEL: self.label}
        return env

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


def select_backend(script: Optional[Mapping] = None, script_source: str = "",
                   environ: Optional[Mapping[str, str]] = None) -> Backend:
    """The configured endpoint, else the scripted backend for ``script`` (task -> kind ->
    answers), else :class:`NoBackendError` saying how to configure one."""
    conf = config_from_env(environ)
    if conf is not None:
        return Backend("endpoint", f"LLM endpoint {conf.base_url}, model {conf.model}", conf)
    if not script:
        raise NoBackendError(f"no language backend: {CONFIGURE_HELP}")
    from .fake_server import FakeChatServer

    tasks = ScriptedTasks.from_mapping(script, script_source)
    server = FakeChatServer(tasks, model="scripted").start()
    conf = LLMConfig(base_url=server.base_url, model="scripted", api_key_env="", max_retries=0)
    label = (f"SCRIPTED language backend (no LLM endpoint configured): answers from {Path(script_source).name or 'a script'} "
             f"for {len(tasks.tasks)} sample task(s), served by a local chat-completions server")
    return Backend("scripted", label, conf, server)


def scripted_tasks_file(path: Path) -> tuple[dict, str]:
    """(the ``scripted_tasks`` of a YAML file such as config/demo.yaml, its path)."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    return dict(data.get("scripted_tasks") or {}), str(path)

