"""``--llm scripted:FILE``: answers written in advance, served by a real chat-completions server.

The answers go through the same path an endpoint does: the real ``openai`` client talks
HTTP to :class:`~affplan_ros.llm.fake_server.FakeChatServer`, which answers from the
current case's script. A script file (YAML or JSON) maps case ids (``SET#INDEX``, as
``--case`` takes them) to answers, either

* a list: the answers in the order the questions come, whatever they ask, or
* a mapping from the kind of question to a list: ``tool`` (tool selection), ``goal``
  (goal writing and corrections), ``affordances`` and ``object`` (Suggest Alternative);
  each kind takes its answers in order, so the script need not know how often each kind
  is asked in between.

A case whose answers run out gets an HTTP 400 with a clear message (the LLM call fails
and the case says so), never a hang.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

import yaml

Answers = Union[Sequence[str], Mapping[str, Sequence[str]]]
ANY = "*"


class ScriptError(ValueError):
    """The script file is missing or malformed."""


def load_script(path: Union[str, Path]) -> dict[str, dict[str, list[str]]]:
    """case id -> kind -> answers (a plain list becomes kind ``*``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read the script {path}: {exc}") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScriptError(f"{path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from exc
    if isinstance(data, Mapping) and isinstance(data.get("cases"), Mapping):
        data = data["cases"]
    if not isinstance(data, Mapping):
        raise ScriptError(f"{path}: expected a mapping from case ids (SET#INDEX) to answers")
    return {str(case): normalize_answers(ans, f"{path}: case {case}") for case, ans in data.items()}


def normalize_answers(answers: Answers, where: str = "answers") -> dict[str, list[str]]:
    if isinstance(answers, Mapping):
        out = {}
        for kind, items in answers.items():
            if isinstance(items, str) or not isinstance(items, Sequence):
                raise ScriptError(f"{where}: answers for {kind!r} must be a list of strings")
            out[str(kind)] = [str(x) for x in items]
        return out
    if isinstance(answers, str) or not isinstance(answers, Sequence):
        raise ScriptError(f"{where}: answers must be a list of strings or a mapping kind -> list")
    return {ANY: [str(x) for x in answers]}


class ScriptedEndpoint:
    """A local chat-completions server that answers from the current case's script.

    ``client`` is a real :class:`~affplan_ros.llm.client.ChatClient` pointed at it; call
    :meth:`use` before each case. Not for concurrent cases (one per worker process)."""

    def __init__(self, timeout_s: float = 30.0):
        from affplan_ros.llm.client import ChatClient
        from affplan_ros.llm.config import LLMConfig
        from affplan_ros.llm.fake_server import FakeChatServer

        self._lock = threading.Lock()
        self._queues: dict[str, list[str]] = {}
        self._case = ""
        self.asked: list[str] = []          # kinds asked in the current case
        self.server = FakeChatServer(self._answer, model="scripted").start()
        self.client = ChatClient(LLMConfig(base_url=self.server.base_url, model="scripted", api_key_env="",
                                           timeout_s=timeout_s, max_retries=0))

    def use(self, case_id: str, answers: Optional[Mapping[str, Sequence[str]]]) -> None:
        with self._lock:
            self._case = case_id
            self._queues = {k: list(v) for k, v in (answers or {}).items()}
            self.asked = []

    def unused(self) -> dict[str, int]:
        with self._lock:
            return {k: len(v) for k, v in self._queues.items() if v}

    def close(self) -> None:
        self.client.close()
        self.server.stop()

    def _answer(self, messages: list[dict], body: dict):
        from affplan_ros.llm.fake_server import FakeReply
        from affplan_ros.llm.tool_prompting import prompt_kind

        last = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        kind = prompt_kind(last if isinstance(last, str) else "") or "unknown"
        with self._lock:
            self.asked.append(kind)
            queue = self._queues.get(kind) if kind in self._queues else self._queues.get(ANY)
            if not queue:
                return FakeReply(status=400, error_message=(
                    f"scripted answers for case {self._case!r} ran out (question kind {kind!r}, "
                    f"question {len(self.asked)})"))
            return queue.pop(0)


class WorkerLLM:
    """The LLM a benchmark worker uses for ``--llm scripted:FILE`` or ``--llm endpoint``."""

    def __init__(self, mode: dict, oam=None):
        self.script: dict[str, dict[str, list[str]]] = {}
        self.endpoint: Optional[ScriptedEndpoint] = None
        if mode["kind"] == "offline":
            from affplan_ros.llm.backends import make_backend

            self.client = make_backend(oam=oam, offline=True).model
        elif mode["kind"] == "scripted":
            self.script = load_script(mode["file"])
            self.endpoint = ScriptedEndpoint()
            self.client = self.endpoint.client
        else:
            from affplan_ros.llm.client import ChatClient
            from affplan_ros.llm.config import LLMConfig

            self.client = ChatClient(LLMConfig.from_mapping(mode["endpoint"]))

    def start_case(self, case_id: str) -> Optional[str]:
        """Point the scripted server at ``case_id``; a message when the script lacks it."""
        if self.endpoint is None:
            return None
        answers = self.script.get(case_id)
        self.endpoint.use(case_id, answers)
        return None if answers is not None else f"the script has no answers for case {case_id}"

    def unused(self) -> dict[str, int]:
        return self.endpoint.unused() if self.endpoint is not None else {}


def parse_llm_mode(text: str) -> tuple[dict, str]:
    """``scripted:FILE`` or ``endpoint`` -> (mode for the workers, label); ValueError otherwise."""
    text = (text or "").strip()
    if text.startswith("scripted:"):
        path = Path(text[len("scripted:"):].strip()).expanduser()
        load_script(path)  # fail early, before any case runs
        return {"kind": "scripted", "file": str(path.resolve())}, f"scripted answers from {path}"
    if text == "offline":
        return {"kind": "offline"}, "offline instruction interpreter (no LLM; declines what it does not understand)"
    if text == "endpoint":
        from affplan_ros.llm.config import config_from_env

        conf = config_from_env()
        if conf is None:
            raise ValueError("--llm endpoint: no LLM endpoint is configured; set AFFPLAN_LLM_BASE_URL "
                             "(and AFFPLAN_LLM_MODEL, AFFPLAN_LLM_API_KEY_ENV)")
        conf.api_key()  # MissingAPIKeyError (a RuntimeError) names the variable, never a value
        return {"kind": "endpoint", "endpoint": conf.to_dict()}, f"endpoint {conf.base_url} model {conf.model}"
    raise ValueError(f"--llm {text!r}: use scripted:FILE (a YAML/JSON file of answers per case), offline or endpoint")


def add_common_options(parser, *, name: str, logs: str, jobs_help: str) -> None:
    """The options `bench autogptp` and `bench alternative` share."""
    from affplan_ros.bench.frame import jobs_option, output_option

    parser.add_argument("--data", help="the original autogpt_p data folder (default: "
                                       "../shared/datasets/autogpt_p/autogpt_p/data, or AFFPLAN_SHARED)")
    parser.add_argument("--llm", required=True, metavar="MODE",
                        help="scripted:FILE (YAML/JSON answers per case id SET#INDEX) | offline (the offline "
                             "instruction interpreter, no LLM) | endpoint "
                             "(AFFPLAN_LLM_BASE_URL, AFFPLAN_LLM_MODEL, AFFPLAN_LLM_API_KEY_ENV)")
    output_option(parser, name)
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")
    parser.add_argument("--case", action="append", metavar="SET#INDEX", help="run only this case (repeatable)")
    jobs_option(parser, jobs_help)
    parser.add_argument("--logs", help=f"the paper's {logs} folder (default: beside --data)")


def prepare_with_llm(args, prepare) -> dict:
    """``prepare(args)`` plus the LLM mode (``cfg["worker"]["llm"]``, ``cfg["llm_label"]``); bad
    options, missing data or no endpoint raise :class:`~affplan_ros.bench.frame.BenchSetupError`."""
    from affplan_ros.bench.frame import setup_errors

    with setup_errors(ValueError, FileNotFoundError, ScriptError, RuntimeError):
        cfg = prepare(args)
        cfg["worker"]["llm"], cfg["llm_label"] = parse_llm_mode(args.llm)
    return cfg
