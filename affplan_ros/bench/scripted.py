"""``--llm scripted:FILE``: answers written in advance, served by a real chat-completions server.

The answers go through the same path an endpoint does: the real ``openai`` client talks
HTTP to :class:`~affplan_ros.llm.fake_server.FakeChatServer`, which answers from the
current case's script. A script file (YAML or JSON) maps case ids (``SET#INDEX``, as
``--case`` takes them) to answers, either

* a list: the answers in the order the questions come, whatever they ask, or
* a mapping from the kind of question to a list: ``tool`` (tool selection), ``goal``
  (goal writing and corrections), ``affordances`` and ``object`` (Suggest Alternative);
  each kind takes its answers in order, so the script need not know how often each kind
  is asked in between, or
* ``{"rounds": [{"tool": answer, "goal": [...], "affordances": [...], "object": [...]}, ...]}``:
  a recorded run (``--llm replay:paper``, ``bench/replay_loop.py``). Each tool question opens
  the next round; the other questions take that round's answers in order, the last one again
  when they run out (a recorded goal our checks reject stays rejected until the bound).

A case whose answers run out gets an HTTP 400 with a clear message (the LLM call fails
and the case says so), never a hang.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence, Union

import yaml

Answers = Union[Sequence[str], Mapping[str, Sequence[str]]]
ANY = "*"
ROUNDS = "rounds"
ROUND_KINDS = ("goal", "affordances", "object")   # what a round answers beside its tool answer


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


def normalize_answers(answers: Answers, where: str = "answers") -> dict:
    if isinstance(answers, Mapping) and ROUNDS in answers:
        rounds = answers[ROUNDS]
        if isinstance(rounds, str) or not isinstance(rounds, Sequence) or not all(
                isinstance(r, Mapping) and isinstance(r.get("tool"), str) for r in rounds):
            raise ScriptError(f"{where}: rounds must be a list of mappings with a tool answer")
        return {ROUNDS: [{"tool": r["tool"], **{k: [str(x) for x in r.get(k) or ()] for k in ROUND_KINDS}}
                         for r in rounds]}
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

    def use(self, case_id: str, answers: Optional[Mapping[str, Sequence]]) -> None:
        with self._lock:
            self._case = case_id
            answers = answers or {}
            self._rounds = [dict(r) for r in answers[ROUNDS]] if ROUNDS in answers else None
            self._round: Optional[dict] = None
            self._queues = {} if self._rounds is not None else {k: list(v) for k, v in answers.items()}
            self.asked = []

    def unused(self) -> dict[str, int]:
        with self._lock:
            if self._rounds is not None:
                return {"tool rounds": len(self._rounds)} if self._rounds else {}
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
            if self._rounds is not None:
                return self._replay(kind)
            queue = self._queues.get(kind) if kind in self._queues else self._queues.get(ANY)
            if not queue:
                return FakeReply(status=400, error_message=(
                    f"scripted answers for case {self._case!r} ran out (question kind {kind!r}, "
                    f"question {len(self.asked)})"))
            return queue.pop(0)

    def _replay(self, kind: str):
        from affplan_ros.llm.fake_server import FakeReply

        if kind == "tool":
            if not self._rounds:
                return FakeReply(status=400, error_message=(
                    f"the recorded run of case {self._case!r} has no further tool answer "
                    f"(tool question {self.asked.count('tool')})"))
            self._round = self._rounds.pop(0)
            return self._round["tool"]
        queue = (self._round or {}).get(kind) or []
        if not queue:
            return FakeReply(status=400, error_message=(
                f"the recorded run of case {self._case!r} has no {kind} answer in this tool round"))
        return queue.pop(0) if len(queue) > 1 else queue[0]


class WorkerLLM:
    """The LLM a benchmark worker uses for ``--llm scripted:FILE`` or ``--llm endpoint``."""

    def __init__(self, mode: dict, oam=None):
        self.script: dict[str, dict[str, list[str]]] = {}
        self.endpoint: Optional[ScriptedEndpoint] = None
        if mode["kind"] == "offline":
            from affplan_ros.llm.backends import make_backend

            self.client = make_backend(oam=oam, offline=True).model
        elif mode["kind"] == "scripted":
            self.script = (load_script(mode["file"]) if "file" in mode else
                           {str(c): normalize_answers(a, f"case {c}") for c, a in mode["script"].items()})
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


def parse_llm_mode(text: str, replay: Optional[Callable[[], dict]] = None) -> tuple[dict, str]:
    """``scripted:FILE``, ``offline``, ``endpoint`` or (where ``replay`` gives the paper's recorded
    answers as a script) ``replay:paper`` -> (mode for the workers, label); ValueError otherwise."""
    text = (text or "").strip()
    if text == "replay:paper" and replay is not None:
        script = replay()
        for case, answers in script.items():
            normalize_answers(answers, f"replay: case {case}")   # fail early, before any case runs
        return {"kind": "scripted", "script": script}, "replay of the paper's GPT-4 answers (logs), round by round"
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
    raise ValueError(f"--llm {text!r}: use scripted:FILE (a YAML/JSON file of answers per case), offline or endpoint"
                     + (" or replay:paper" if replay is not None else ""))


def add_common_options(parser, *, name: str, logs: str, jobs_help: str, replay: bool = False) -> None:
    """The options `bench autogptp` and `bench alternative` share."""
    from affplan_ros.bench.frame import jobs_option, output_option

    parser.add_argument("--data", help="the original autogpt_p data folder (default: "
                                       "../shared/datasets/autogpt_p/autogpt_p/data, or AFFPLAN_SHARED)")
    parser.add_argument("--llm", required=True, metavar="MODE",
                        help="scripted:FILE (YAML/JSON answers per case id SET#INDEX) | offline (the offline "
                             "instruction interpreter, no LLM) | endpoint "
                             "(AFFPLAN_LLM_BASE_URL, AFFPLAN_LLM_MODEL, AFFPLAN_LLM_API_KEY_ENV)"
                             + (" | replay:paper (GPT-4's answers from the paper's logs, round by round)"
                                if replay else ""))
    output_option(parser, name)
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")
    parser.add_argument("--case", action="append", metavar="SET#INDEX", help="run only this case (repeatable)")
    jobs_option(parser, jobs_help)
    parser.add_argument("--logs", help=f"the paper's {logs} folder (default: beside --data)")


def prepare_with_llm(args, prepare, replay: Optional[Callable[[dict], dict]] = None) -> dict:
    """``prepare(args)`` plus the LLM mode (``cfg["worker"]["llm"]``, ``cfg["llm_label"]``); bad
    options, missing data or no endpoint raise :class:`~affplan_ros.bench.frame.BenchSetupError`.
    ``replay(cfg)``: the script ``--llm replay:paper`` replays (where the benchmark has one)."""
    from affplan_ros.bench.frame import setup_errors

    with setup_errors(ValueError, FileNotFoundError, ScriptError, RuntimeError):
        cfg = prepare(args)
        cfg["worker"]["llm"], cfg["llm_label"] = parse_llm_mode(
            args.llm, (lambda: replay(cfg)) if replay is not None else None)
    return cfg
