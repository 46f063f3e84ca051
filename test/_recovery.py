"""Helpers for the recovery tests: the shipped scenarios, the scripted answers, a runner on the
real fake chat-completions server (through the real openai client) and Fast Downward."""
from __future__ import annotations

from pathlib import Path

import yaml

from affplan_ros.core.recovery.feedback import FeedbackLevel
from affplan_ros.core.recovery.knowledge import KnowledgeStore
from affplan_ros.core.recovery.runner import RecoveryConfig, RecoveryRunner
from affplan_ros.llm.recovery_prompting import (
    LaspPromptBuilder,
    LogprobSampler,
    ReplanGoalPromptBuilder,
    StepPromptBuilder,
)
from affplan_ros.sim.recovery_world import ScenarioExecutor
from affplan_ros.sim.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "config" / "scenarios" / "recovery"
ANSWERS = SCENARIOS / "answers.yaml"


def scenario(name: str):
    return load_scenario(SCENARIOS / f"{name}.yaml")


def answers(name: str) -> dict:
    return yaml.safe_load(ANSWERS.read_text())["cases"][name]


def client_for(server, timeout_s: float = 10.0):
    from affplan_ros.llm import ChatClient, LLMConfig

    return ChatClient(LLMConfig(base_url=server.base_url, model="fake", api_key_env="", timeout_s=timeout_s,
                                max_retries=0))


def run_scenario(sc, client, *, knowledge=None, feedback="how", repair=True, learn=None, grounding=False,
                 mode="plan", semantic=None, **cfg):
    """Run ``sc`` with the LLM ``client``; (result, executor, knowledge store)."""
    ex = ScenarioExecutor(sc)
    store = knowledge if isinstance(knowledge, KnowledgeStore) else KnowledgeStore.open(knowledge)
    runner = RecoveryRunner(
        client, ReplanGoalPromptBuilder(), ex, sc.robot_domain(), store, lasp_prompter=LaspPromptBuilder(),
        environment=ex, grounding=ex, semantic=semantic, step_model=LogprobSampler(client),
        step_prompter=StepPromptBuilder(),
        config=RecoveryConfig(feedback=FeedbackLevel.parse(feedback), repair=repair,
                              learn=(sc.set == "lasp") if learn is None else learn, grounding=grounding,
                              mode=mode, plan_time_limit=20, max_seconds=120, **cfg))
    res = runner.run(sc.task, sc.belief_scene())
    return res, ex, store


class Scripted:
    """The scripted recovery endpoint (bench/recovery.py) for one test module."""

    def __init__(self):
        from affplan_ros.bench.recovery import ScriptedRecoveryEndpoint

        self.endpoint = ScriptedRecoveryEndpoint()
        self.client = self.endpoint.client

    def use(self, case: str, script: dict | None = None) -> "Scripted":
        self.endpoint.use(case, script if script is not None else answers(case))
        return self

    @property
    def requests(self):
        return self.endpoint.server.chat_requests

    def close(self) -> None:
        self.endpoint.close()
