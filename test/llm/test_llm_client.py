"""The openai-based client against the real local fake server: retries, timeouts, errors, accounting."""
from __future__ import annotations

import logging
import time

import pytest

from affplan_ros.core.goals.loop import ChatModelError
from affplan_ros.core.ports import ChatModel
from affplan_ros.llm import (
    Accounting,
    ChatClient,
    Conversation,
    LLMConfig,
    LLMError,
    MissingAPIKeyError,
)
from affplan_ros.llm.fake_server import FakeChatServer, FakeChoice, FakeReply


def config(server: FakeChatServer, **kw) -> LLMConfig:
    base = dict(base_url=server.base_url, model="fake-model", api_key_env="", timeout_s=5.0,
                max_retries=2, backoff_initial_s=0.01, backoff_max_s=0.05)
    base.update(kw)
    return LLMConfig(**base)


def test_complete_returns_text_and_usage() -> None:
    with FakeChatServer(["(:goal (and (on cup0 table0)))"]) as server:
        client = ChatClient(config(server))
        assert isinstance(client, ChatModel)
        c = client.complete([{"role": "user", "content": "put the cup on the table"}])
        assert c.text == "(:goal (and (on cup0 table0)))"
        assert c.prompt_tokens > 0 and c.completion_tokens > 0 and c.seconds > 0
        req = server.chat_requests[0]
        assert req.body["model"] == "fake-model" and req.body["temperature"] == 0.0
        assert req.last_user_text == "put the cup on the table"


def test_api_key_sent_but_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    secret = "sk-test-SECRET-123"
    with FakeChatServer([FakeReply(status=503), "ok"]) as server:
        caplog.set_level(logging.DEBUG)
        client = ChatClient(config(server, api_key_env="AFFPLAN_TEST_KEY"), environ={"AFFPLAN_TEST_KEY": secret})
        client.complete([{"role": "user", "content": "hi"}])
        assert all(r.has_authorization for r in server.chat_requests)
        assert secret not in caplog.text
        assert secret not in repr(client) and secret not in repr(client.config)


def test_missing_api_key_env_var_is_a_clear_error() -> None:
    cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="AFFPLAN_NO_SUCH_KEY_VAR")
    with pytest.raises(MissingAPIKeyError) as e:
        ChatClient(cfg, environ={})
    msg = str(e.value)
    assert "AFFPLAN_NO_SUCH_KEY_VAR" in msg and "not set" in msg and "127.0.0.1:9" in msg


def test_500_is_retried_then_succeeds() -> None:
    sleeps: list[float] = []
    with FakeChatServer([FakeReply(status=500), FakeReply(status=502), "fine"]) as server:
        client = ChatClient(config(server, max_retries=2, backoff_initial_s=0.5, backoff_max_s=0.75),
                            sleep=sleeps.append)
        r = client.create([{"role": "user", "content": "x"}])
        assert r.text == "fine" and r.attempts == 3
        assert sleeps == [0.5, 0.75]  # exponential, capped
        assert len(server.chat_requests) == 3
        assert client.accounting.totals()["attempts"] == 3


def test_persistent_500_fails_after_bounded_retries() -> None:
    with FakeChatServer([FakeReply(status=500)] * 10) as server:
        client = ChatClient(config(server, max_retries=2))
        with pytest.raises(LLMError) as e:
            client.complete([{"role": "user", "content": "x"}])
        assert isinstance(e.value, ChatModelError)
        assert e.value.attempts == 3 and e.value.status == 500
        assert "after 3 attempts" in str(e.value) and "HTTP 500" in str(e.value)
        assert len(server.chat_requests) == 3
        assert client.accounting.failures == 1


def test_429_is_retried() -> None:
    with FakeChatServer([FakeReply(status=429, error_message="slow down"), "ok"]) as server:
        assert ChatClient(config(server)).complete([{"role": "user", "content": "x"}]).text == "ok"


def test_400_is_not_retried() -> None:
    with FakeChatServer([FakeReply(status=400, error_message="bad request"), "never"]) as server:
        client = ChatClient(config(server, max_retries=5))
        with pytest.raises(LLMError) as e:
            client.complete([{"role": "user", "content": "x"}])
        assert e.value.attempts == 1 and not e.value.retryable and "not retried" in str(e.value)
        assert len(server.chat_requests) == 1


def test_timeout_is_bounded_and_clear() -> None:
    with FakeChatServer([FakeReply(text="late", delay_s=30)] * 5) as server:
        client = ChatClient(config(server, timeout_s=0.3, max_retries=1))
        t0 = time.monotonic()
        with pytest.raises(LLMError) as e:
            client.complete([{"role": "user", "content": "x"}])
        elapsed = time.monotonic() - t0
        assert elapsed < 5, elapsed  # two attempts of 0.3 s, no hang
        assert "timed out" in str(e.value) and "after 2 attempts" in str(e.value)
        assert len(server.chat_requests) == 2


def test_unreachable_endpoint() -> None:
    with FakeChatServer() as server:
        url = server.base_url
    client = ChatClient(LLMConfig(base_url=url, model="m", api_key_env="", timeout_s=1, max_retries=1,
                                  backoff_initial_s=0.01))
    with pytest.raises(LLMError) as e:
        client.complete([{"role": "user", "content": "x"}])
    assert "connection failed" in str(e.value) or "timed out" in str(e.value)


def test_empty_and_null_content() -> None:
    with FakeChatServer(["", None]) as server:
        client = ChatClient(config(server))
        assert client.complete([{"role": "user", "content": "x"}]).text == ""
        assert client.complete([{"role": "user", "content": "x"}]).text == ""


def test_n_choices_and_logprobs() -> None:
    lp = [("yes", -0.1, {"yes": -0.1, "no": -2.5, "maybe": -4.0})]
    reply = FakeReply(choices=[FakeChoice("yes", lp), FakeChoice("no", [("no", -2.5)])])
    with FakeChatServer([reply]) as server:
        client = ChatClient(config(server))
        r = client.create([{"role": "user", "content": "x"}], n=2, logprobs=True, top_logprobs=2)
        assert [c.text for c in r.choices] == ["yes", "no"]
        first = r.choices[0].logprobs
        assert first is not None and first[0].token == "yes" and first[0].logprob == pytest.approx(-0.1)
        assert first[0].top == (("yes", -0.1), ("no", -2.5))  # top_logprobs=2 respected
        body = server.chat_requests[0].body
        assert body["n"] == 2 and body["logprobs"] is True and body["top_logprobs"] == 2


def test_text_repeated_for_n_without_logprobs() -> None:
    with FakeChatServer(["a"]) as server:
        r = ChatClient(config(server)).create([{"role": "user", "content": "x"}], n=3)
        assert [c.text for c in r.choices] == ["a", "a", "a"] and r.choices[0].logprobs is None


def test_accounting_totals() -> None:
    acc = Accounting()
    with FakeChatServer([FakeReply(text="one two", prompt_tokens=10, completion_tokens=2),
                         FakeReply(text="three", prompt_tokens=20, completion_tokens=1)]) as server:
        client = ChatClient(config(server), accounting=acc)
        client.create([{"role": "user", "content": "x"}], tag="goal")
        client.create([{"role": "user", "content": "y"}], tag="goal")
    t = acc.totals()
    assert t["calls"] == 2 and t["prompt_tokens"] == 30 and t["completion_tokens"] == 3
    assert acc.total_tokens == 33 and acc.seconds > 0
    assert [r.tag for r in acc.snapshot()] == ["goal", "goal"]


def test_conversation_history_per_task() -> None:
    with FakeChatServer(["first", FakeReply(status=400), "third"]) as server:
        client = ChatClient(config(server))
        conv = Conversation("task-1")
        conv.add_system("be brief")
        assert client.chat(conv, "q1").text == "first"
        with pytest.raises(LLMError):
            client.chat(conv, "q2")
        assert len(conv) == 3  # the failed user message was removed again
        client.chat(conv, "q3")
        sent = server.chat_requests[-1].messages
        assert [m["content"] for m in sent] == ["be brief", "q1", "first", "q3"]
        assert conv.messages[-1] == {"role": "assistant", "content": "third"}


def test_extra_body_is_sent() -> None:
    with FakeChatServer(["x"]) as server:
        ChatClient(config(server, extra_body={"grammar": "root ::= \"x\""}, seed=7)).complete(
            [{"role": "user", "content": "x"}])
        body = server.chat_requests[0].body
        assert body["grammar"] == 'root ::= "x"' and body["seed"] == 7


def test_config_validation_and_mapping() -> None:
    cfg = LLMConfig.from_mapping({"base_url": "http://h/v1", "model": "m", "timeout_s": 3})
    assert cfg.timeout_s == 3 and cfg.to_dict()["model"] == "m"
    with pytest.raises(ValueError, match="unknown LLM config keys"):
        LLMConfig.from_mapping({"base_url": "http://h/v1", "modle": "m"})
    with pytest.raises(ValueError):
        LLMConfig(timeout_s=0)
    assert LLMConfig(api_key_env="").api_key({}) == "not-needed"
