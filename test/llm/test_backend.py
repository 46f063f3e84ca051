"""Backend selection in one place; the scripted backend answers only its tasks and says so."""
from __future__ import annotations

import pytest

from affplan_ros.llm.backend import NoBackendError, ScriptedTasks, node_llm_config, select_backend
from affplan_ros.llm.client import ChatClient, LLMError
from affplan_ros.llm.tool_prompting import ToolPromptBuilder
from affplan_ros.core.tool_selection import ToolPromptView

SCRIPT = {"Bring me the apple!": {"tool": ["SELECTED TOOL: PLAN", "FAILURE"], "goal": ["(and (inhand apple0 human0))"]}}


def first_question(task: str) -> list[dict]:
    return ToolPromptBuilder().initial_messages(ToolPromptView(task, "Objects: apple0"))


def test_endpoint_from_parameters_or_environment():
    env = {"AFFPLAN_LLM_BASE_URL": "http://env/v1", "AFFPLAN_LLM_MODEL": "m-env", "AFFPLAN_LLM_API_KEY_ENV": "MY_KEY"}
    conf = node_llm_config(environ=env)
    assert (conf.base_url, conf.model, conf.api_key_env) == ("http://env/v1", "m-env", "MY_KEY")
    conf = node_llm_config("http://param/v1", "m-param", "none", 5.0, environ=env)
    assert (conf.base_url, conf.model, conf.api_key_env, conf.timeout_s) == ("http://param/v1", "m-param", "", 5.0)
    assert node_llm_config(environ={}) is None
    with pytest.raises(NoBackendError, match="AFFPLAN_LLM_BASE_URL"):
        select_backend(None, environ={})
    assert select_backend(SCRIPT, environ=env).kind == "endpoint"   # a configured endpoint always wins


def test_scripted_backend_answers_per_task_and_kind_and_declines_others():
    backend = select_backend(SCRIPT, "demo.yaml", environ={})
    try:
        assert backend.kind == "scripted" and backend.label.startswith("SCRIPTED language backend")
        assert backend.child_env()["AFFPLAN_LLM_BASE_URL"] == backend.config.base_url
        with ChatClient(backend.config) as client:
            for _ in range(2):  # a task's answers start again each time it is asked
                messages = first_question("bring me the apple")
                assert client.complete(messages).text == "SELECTED TOOL: PLAN"
                goal = [{"role": "user", "content": "The predicates of the domain are (each with a description and "
                                                    'the types of its parameters):\n... The user asks: "bring me the apple"'}]
                assert client.complete(goal).text == "(and (inhand apple0 human0))"
            with pytest.raises(LLMError, match="has answers only for: bring me the apple.*AFFPLAN_LLM_BASE_URL"):
                client.complete(first_question("make me a sandwich"))
            # a goal asked for on its own (plan only) finds its task too
            assert client.complete(goal).text == "(and (inhand apple0 human0))"
    finally:
        backend.close()


def test_script_must_map_kinds_to_answers():
    with pytest.raises(ValueError, match="must map a question kind"):
        ScriptedTasks.from_mapping({"task": ["an answer"]}, "x.yaml")
