"""The scripted fake chat-completions server itself (raw HTTP, no openai client)."""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from affplan_ros.llm.fake_server import FakeChatServer, FakeReply, count_tokens


def post(url: str, body: dict, timeout: float = 5) -> tuple[int, dict]:
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


MSG = {"model": "m", "messages": [{"role": "user", "content": "hello world"}]}


def test_binds_localhost_random_port_and_answers_in_order() -> None:
    with FakeChatServer(["a", "b"]) as s:
        assert s.base_url.startswith("http://127.0.0.1:") and s.port > 0
        assert post(s.base_url, MSG)[1]["choices"][0]["message"]["content"] == "a"
        status, body = post(s.base_url, MSG)
        assert status == 200 and body["choices"][0]["message"]["content"] == "b"
        assert body["object"] == "chat.completion" and body["usage"]["prompt_tokens"] == count_tokens("hello world") + 4
        assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        status, body = post(s.base_url, MSG)  # exhausted: loud, non-retryable error
        assert status == 400 and "exhausted" in body["error"]["message"]
        assert len(s.requests) == 3 and s.requests[0].messages == MSG["messages"]


def test_callable_script_sees_messages() -> None:
    def answer(messages, body):
        return "echo: " + messages[-1]["content"]

    with FakeChatServer(answer) as s:
        assert post(s.base_url, MSG)[1]["choices"][0]["message"]["content"] == "echo: hello world"


def test_callable_script_exception_becomes_500() -> None:
    def broken(messages, body):
        raise KeyError("oops")

    with FakeChatServer(broken) as s:
        status, body = post(s.base_url, MSG)
        assert status == 500 and "KeyError" in body["error"]["message"]


def test_scripted_status_and_repeat_last() -> None:
    with FakeChatServer([FakeReply(status=503, error_message="down"), "up"], repeat_last=True) as s:
        assert post(s.base_url, MSG) == (503, {"error": {"message": "down", "type": "server_error",
                                                        "param": None, "code": None}})
        assert post(s.base_url, MSG)[1]["choices"][0]["message"]["content"] == "up"
        assert post(s.base_url, MSG)[1]["choices"][0]["message"]["content"] == "up"


def test_push_and_models_endpoint() -> None:
    with FakeChatServer(model="my-model") as s:
        s.push("late answer")
        assert post(s.base_url, MSG)[1]["choices"][0]["message"]["content"] == "late answer"
        with urllib.request.urlopen(s.base_url + "/models", timeout=5) as resp:
            assert json.loads(resp.read())["data"][0]["id"] == "my-model"


def test_stop_does_not_wait_for_delayed_answer() -> None:
    import threading
    import time

    s = FakeChatServer([FakeReply(text="x", delay_s=60)]).start()
    url = s.base_url
    # the stopping server drops the connection: urllib raises RemoteDisconnected/URLError (both OSError)
    t = threading.Thread(target=lambda: pytest.raises(OSError, post, url, MSG, 30), daemon=True)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    s.stop()
    assert time.monotonic() - t0 < 3


def test_cli_serves_answers_file(tmp_path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["(:goal (and (on a b)))", {"status": 500}]))
    proc = subprocess.Popen([sys.executable, "-m", "affplan_ros.llm.fake_server", "--answers", str(answers)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = json.loads(line)["base_url"]
        assert post(url, MSG)[1]["choices"][0]["message"]["content"] == "(:goal (and (on a b)))"
        assert post(url, MSG)[0] == 500
    finally:
        proc.terminate()
        proc.wait(timeout=10)
