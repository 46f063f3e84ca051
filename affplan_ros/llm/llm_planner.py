"""The LLM as the planner: AutoGPT+P's first baseline, for `bench plan --method llm-planner`.

The same prompt and answer format serve the second baseline, `--method llm-action-list`, where the
answer is a list of actions the classical planner makes executable
(:mod:`affplan_ros.core.planning.action_list`).

The model is shown the domain's actions (PDDL), the objects and the state, and writes the plan
itself; nothing corrects it. The plan is then checked by the same validator as Fast Downward's
plans (every precondition, then the goal), so the baseline can only score what would really
have worked. One call per case.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from affplan_ros.core.goals.loop import ChatModelError
from affplan_ros.core.ports import ChatModel
from affplan_ros.llm.prompting import render_template

_STEP = re.compile(r"^\s*(?:\d+[.):]\s*)?\(\s*([A-Za-z][\w-]*)((?:\s+[^\s()]+)*)\s*\)\s*$")


@dataclass
class LlmPlan:
    steps: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)   # (action, (actor, *args))
    answer: str = ""
    error: Optional[str] = None
    llm_failed: bool = False            # the call itself failed (``error`` says how)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


def parse_plan_text(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The steps of an answer: every line that is one parenthesised action, in order (a leading
    "1." is allowed); the rest (reasoning, "PLAN END") is ignored."""
    steps = []
    for line in (text or "").splitlines():
        m = _STEP.match(line.strip().strip("`"))
        if m:
            steps.append((m.group(1).lower(), tuple(m.group(2).split())))
    return steps


def planner_prompt(task: str, full, scene_text: str) -> str:
    """The one prompt: the task's actions as PDDL, its objects by type, the state, the request."""
    actions = []
    for cap in full.capabilities.values():
        params = " ".join(f"?{p.name} - {p.type}" for p in cap.parameters)
        actor = "" if cap.environment else "?actor - actor "
        actions.append(f"(:action {cap.name} :parameters ({actor}{params}) "
                       f":precondition {' '.join(cap.precondition.split())} :effect {' '.join(cap.effect.split())})")
    # The objects each parameter type admits (an object has its class, its affordances, ...).
    wanted = dict.fromkeys(["actor", *(p.type for cap in full.capabilities.values() for p in cap.parameters)])
    sig = full.signature.objects
    objects = "\n".join(f"{t}: {' '.join(sorted(o for o, ts in sig.items() if t in ts))}"
                        for t in wanted if any(t in ts for ts in sig.values()))
    agents = ", ".join(a.name for a in full.agents)
    return render_template("llm_planner", {"actions": "\n".join(actions), "objects": objects,
                                           "scene": scene_text, "task": task, "agents": agents}).strip()


def llm_plan(llm: ChatModel, task: str, full, scene_text: str) -> LlmPlan:
    """Ask ``llm`` once for a plan of ``task`` on the planning task ``full``."""
    out = LlmPlan()
    try:
        c = llm.complete([{"role": "user", "content": planner_prompt(task, full, scene_text)}])
    except ChatModelError as exc:
        out.error, out.llm_failed = f"the LLM failed: {exc}", True
        return out
    out.answer = c.text or ""
    out.prompt_tokens, out.completion_tokens = c.prompt_tokens, c.completion_tokens
    out.seconds = c.seconds
    out.steps = parse_plan_text(out.answer)
    if not out.steps:
        out.error = "the answer holds no action (one per line, in parentheses)"
    return out


def steps_text(steps: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    return [" ".join((a, *args)) for a, args in steps]
