"""`affplan oam generate` and `affplan oam show` against the local chat-completions server."""
from __future__ import annotations

import pytest
import yaml

from affplan_ros.cli import main
from affplan_ros.llm.fake_server import FakeChatServer


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "questions.yaml"
    path.write_text(yaml.safe_dump({"affordances": [
        {"name": "grasp", "question": "Can a {} be held in one hand?", "formula": "(Can a {} be held in one hand?)"},
        {"name": "stir", "question": "Can a {} stir food?", "formula": "(Can a {} stir food?)"}]}))
    return path


def test_generate_then_show_with_provenance(tmp_path, questions, monkeypatch, capsys):
    cache = tmp_path / "cache.yaml"
    asked = "Objects: ladle\n1. Can it be held in one hand?\n2. Can it stir food?"
    with FakeChatServer(lambda m, _b: "ladle: Yes, yes." if m[-1]["content"].endswith(asked) else "no") as server:
        monkeypatch.setenv("AFFPLAN_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("AFFPLAN_LLM_MODEL", "fake-gpt")
        monkeypatch.setenv("AFFPLAN_LLM_API_KEY_ENV", "")
        monkeypatch.setenv("AFFPLAN_OAM_CACHE", str(cache))
        assert main(["oam", "generate", "--classes", "ladle", "--strategy", "yesno",
                     "--affordances", str(questions)]) == 0
        assert len(server.chat_requests) == 1                  # the class's questions in one prompt
        out = capsys.readouterr().out
        assert "ladle: grasp, stir    [yesno by fake-gpt; 1 LLM call," in out and str(cache) in out
        assert main(["oam", "generate", "--classes", "ladle", "--strategy", "yesno",
                     "--affordances", str(questions)]) == 0
        assert len(server.chat_requests) == 1 and "cached" in capsys.readouterr().out
    assert main(["oam", "show", "ladle", "cup"]) == 0
    out = capsys.readouterr().out
    assert "ladle: grasp, stir    [yesno by fake-gpt on 20" in out
    assert "cup: carry, contain, drink" in out and "[file sim_kitchen]" in out


def test_generate_without_an_endpoint_and_show_of_an_unknown_class(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("AFFPLAN_LLM_BASE_URL", "")
    monkeypatch.setenv("AFFPLAN_OAM_CACHE", str(tmp_path / "none.yaml"))
    assert main(["oam", "generate", "--classes", "ladle"]) == 2
    assert "no LLM endpoint is configured" in capsys.readouterr().err
    assert main(["oam", "show", "spork"]) == 1
    assert "not in the OAM: spork" in capsys.readouterr().err
