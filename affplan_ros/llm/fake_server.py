"""A real local HTTP server that speaks the chat-completions protocol, scripted.

Tests (and end-to-end runs) point the real ``openai`` client at it, so everything
between our code and the socket is exercised: JSON shapes, usage counts, ``n``,
``logprobs``/``top_logprobs``, HTTP errors, slow answers (timeouts), empty answers.

Usage::

    with FakeChatServer(["(:goal (and (on cup0 table0)))"]) as server:
        cfg = LLMConfig(base_url=server.base_url, model="fake", api_key_env="")
        ...
        server.requests[0].messages  # what the client sent

A script is a list (one item per HTTP request, in order; retries consume items too)
or a callable ``(messages, request_body) -> item``.  An item is a string (the answer),
a :class:`FakeReply` (status, delay, several choices, logprobs, ...) or ``None``
(``content: null``).  When a list runs out the server answers HTTP 400 (not retried by
clients) so a test that asks more than scripted fails loudly, unless ``repeat_last``.

Run standalone for processes that cannot share a Python object::

    python -m affplan_ros.llm.fake_server --answers answers.json [--port 0] [--repeat-last]

prints one JSON line ``{"base_url": ...}`` and serves until interrupted.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Sequence, Union

LogprobEntry = Union[tuple[str, float], tuple[str, float, Mapping[str, float]]]


@dataclass(frozen=True)
class FakeChoice:
    text: str | None
    logprobs: Sequence[LogprobEntry] | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class FakeReply:
    """One scripted HTTP answer.

    ``status`` != 200 answers an OpenAI-style error body.  ``delay_s`` sleeps before
    answering (interrupted when the server stops).  ``choices`` gives each of ``n``
    choices; otherwise ``text`` is repeated ``n`` times.  ``logprobs`` (entries
    ``(token, logprob)`` or ``(token, logprob, {alternative: logprob})``) is returned for
    ``text`` only when the request asked for logprobs.
    """

    text: str | None = ""
    status: int = 200
    error_message: str = "scripted failure"
    delay_s: float = 0.0
    choices: Sequence[Union[str, FakeChoice]] | None = None
    logprobs: Sequence[LogprobEntry] | None = None
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


ScriptItem = Union[str, None, FakeReply]
Script = Union[Sequence[ScriptItem], Callable[[list[dict], dict], ScriptItem]]


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server saw it (the Authorization value is never kept)."""

    method: str
    path: str
    body: dict
    has_authorization: bool
    time: float

    @property
    def messages(self) -> list[dict]:
        return list(self.body.get("messages", []))

    @property
    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return _content_text(m.get("content"))
        return ""

    def text(self) -> str:
        """All message contents joined (handy for ``assert "..." in req.text()``)."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str | None) -> int:
    """Deterministic stand-in for a tokenizer: words and punctuation marks."""
    return len(_TOKEN_RE.findall(text or ""))


def _logprob_content(entries: Sequence[LogprobEntry], top_n: int) -> list[dict]:
    out = []
    for entry in entries:
        token, lp = entry[0], float(entry[1])
        alts: Mapping[str, float] = entry[2] if len(entry) > 2 else {token: lp}  # type: ignore[misc]
        top = sorted(alts.items(), key=lambda kv: -kv[1])[:top_n]
        out.append({
            "token": token, "logprob": lp, "bytes": list(token.encode()),
            "top_logprobs": [{"token": t, "logprob": float(v), "bytes": list(t.encode())} for t, v in top],
        })
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a delayed handler must not hold up stop()
    fake: "FakeChatServer"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; with Nagle's algorithm and the client's delayed ACK
    # every answer waited ~40 ms (measured: 52 ms -> 9 ms per call with TCP_NODELAY).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output clean
        pass

    def _send_json(self, status: int, payload: dict, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout fired); nothing to do

    def do_GET(self) -> None:  # noqa: N802
        fake = self.server.fake
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": fake.model, "object": "model",
                                                               "created": 0, "owned_by": "fake"}]})
        else:
            self._send_json(404, _error_body(f"no route {self.path}", "not_found"))

    def do_POST(self) -> None:  # noqa: N802
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, _error_body("request body is not JSON", "invalid_request_error"))
            return
        fake._record(RecordedRequest("POST", self.path, body, bool(self.headers.get("Authorization")), time.time()))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, _error_body(f"no route {self.path}", "not_found"))
            return
        if body.get("stream"):
            self._send_json(400, _error_body("the fake server does not stream", "invalid_request_error"))
            return
        try:
            reply = fake._next_reply(body)
        except _Exhausted as exc:
            self._send_json(400, _error_body(str(exc), "fake_script_exhausted"))
            return
        except Exception as exc:  # a scripted callable raised: surface it as a 500
            self._send_json(500, _error_body(f"fake script raised {type(exc).__name__}: {exc}", "server_error"))
            return
        if reply.delay_s > 0 and fake._stopping.wait(reply.delay_s):
            return  # server stopping: drop the connection
        if reply.status != 200:
            self._send_json(reply.status, _error_body(reply.error_message, "server_error"), reply.headers)
            return
        self._send_json(200, fake._completion_body(body, reply), reply.headers)


def _error_body(message: str, kind: str) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class _Exhausted(RuntimeError):
    pass


class FakeChatServer:
    """Scripted chat-completions server on 127.0.0.1 (port 0: the OS picks a free one)."""

    def __init__(self, script: Script = (), *, model: str = "fake-model", repeat_last: bool = False,
                 host: str = "127.0.0.1", port: int = 0):
        self.model = model
        self.repeat_last = repeat_last
        self._script_fn: Callable[[list[dict], dict], ScriptItem] | None = script if callable(script) else None
        self._queue: list[ScriptItem] = [] if callable(script) else list(script)
        self._last: ScriptItem = None
        self._served = 0
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._host, self._port = host, port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "FakeChatServer":
        if self._httpd is not None:
            return self
        self._httpd = _Server((self._host, self._port), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self) -> "FakeChatServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeChatServer is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    # -- script and records ----------------------------------------------
    def push(self, *items: ScriptItem) -> None:
        """Append answers to a list script."""
        with self._lock:
            self._queue.extend(items)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _next_reply(self, body: dict) -> FakeReply:
        if self._script_fn is not None:
            item = self._script_fn(list(body.get("messages", [])), body)
        else:
            with self._lock:
                if self._queue:
                    item = self._queue.pop(0)
                    self._last = item
                elif self.repeat_last and self._served:
                    item = self._last
                else:
                    raise _Exhausted(f"fake server script exhausted after {self._served} answers")
                self._served += 1
        if isinstance(item, FakeReply):
            return item
        if item is None or isinstance(item, str):
            return FakeReply(text=item)
        raise TypeError(f"script item must be str, None or FakeReply, got {type(item).__name__}")

    def _completion_body(self, body: dict, reply: FakeReply) -> dict:
        n = int(body.get("n") or 1)
        want_lp = bool(body.get("logprobs"))
        top_n = int(body.get("top_logprobs") or 0)
        if reply.choices is not None:
            choices = [c if isinstance(c, FakeChoice) else FakeChoice(c) for c in reply.choices]
        else:
            choices = [FakeChoice(reply.text, reply.logprobs, reply.finish_reason)] * n
        out = []
        for i, ch in enumerate(choices):
            lp = None
            if want_lp and ch.logprobs is not None:
                lp = {"content": _logprob_content(ch.logprobs, top_n), "refusal": None}
            out.append({"index": i, "message": {"role": "assistant", "content": ch.text, "refusal": None},
                        "logprobs": lp, "finish_reason": ch.finish_reason})
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else sum(
            count_tokens(_content_text(m.get("content"))) + 4 for m in body.get("messages", []))
        completion = reply.completion_tokens if reply.completion_tokens is not None else sum(
            count_tokens(c.text) for c in choices)
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex[:12],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": out,
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


def _item_from_json(obj: Any) -> ScriptItem:
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, dict):
        data = dict(obj)
        if "choices" in data and data["choices"] is not None:
            data["choices"] = [c if isinstance(c, str) else FakeChoice(**c) for c in data["choices"]]
        return FakeReply(**data)
    raise ValueError(f"answer must be a string, null or an object, got {obj!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible chat-completions server")
    parser.add_argument("--answers", required=True, help="JSON (or YAML) file: a list of answers")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--repeat-last", action="store_true")
    args = parser.parse_args(argv)
    with open(args.answers, encoding="utf-8") as fh:
        text = fh.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        import yaml  # noqa: WPS433 - optional input format

        data = yaml.safe_load(text)
    if not isinstance(data, list):
        parser.error("the answers file must hold a list")
    server = FakeChatServer([_item_from_json(x) for x in data], model=args.model,
                            repeat_last=args.repeat_last, host=args.host, port=args.port).start()
    print(json.dumps({"base_url": server.base_url}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
