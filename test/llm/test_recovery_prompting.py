"""The log-probability sampler of recovery against endpoints that do not honour ``n``."""
from __future__ import annotations

from dataclasses import dataclass, field

from affplan_ros.llm.client import ChatResponse, Choice, TokenLogprob
from affplan_ros.llm.recovery_prompting import LogprobSampler


def _choice(text: str, logprob: float | None = -0.5) -> Choice:
    return Choice(text, "stop", None if logprob is None else (TokenLogprob(text, logprob),))


@dataclass
class FakeClient:
    """Answers request i with ``replies[i]`` (the last one once they run out), whatever ``n`` asks."""

    replies: list[list[Choice]]
    requests: list[dict] = field(default_factory=list)

    def create(self, messages, **kw) -> ChatResponse:
        self.requests.append(kw)
        if len(self.requests) > 100:   # the unbounded loop: fail instead of hanging
            raise AssertionError("the sampler keeps asking")
        choices = self.replies[min(len(self.requests), len(self.replies)) - 1]
        return ChatResponse(tuple(choices), 10, 2, 0.01, 1, "fake")


MSG = [{"role": "user", "content": "next?"}]


def test_an_endpoint_that_ignores_n_and_then_returns_no_choices_ends_the_sampling() -> None:
    client = FakeClient([[_choice("done")], []])
    got = LogprobSampler(client).sample(MSG, 4)
    assert len(client.requests) == 2 and got.calls == 2
    assert [c.text for c in got.candidates] == ["done"]
    assert got.stopped == "request 2 returned no choices; 1 of 4 candidates"
    assert got.prompt_tokens == 20 and got.completion_tokens == 4


def test_an_endpoint_that_ignores_n_is_asked_at_most_k_times() -> None:
    client = FakeClient([[_choice(f"move {i}")] for i in range(10)])
    got = LogprobSampler(client).sample(MSG, 3)
    assert len(client.requests) == 3 and client.requests[0]["n"] == 3 and "n" not in client.requests[1]
    assert [c.text for c in got.candidates] == ["move 0", "move 1", "move 2"] and got.stopped == ""


def test_no_choices_at_all_and_no_log_probabilities_are_not_asked_again() -> None:
    client = FakeClient([[]])
    got = LogprobSampler(client).sample(MSG, 3)
    assert len(client.requests) == 1 and got.candidates == []
    assert got.stopped == "the endpoint returned 0 of 3 candidates"
    client = FakeClient([[_choice("done", None)]])
    got = LogprobSampler(client).sample(MSG, 3)
    assert len(client.requests) == 1 and got.stopped == "the endpoint returned 1 of 3 candidates"
