"""The paper's GPT-4 answers from its tool-selection logs, round by round, for `bench autogptp
--llm replay:paper`.

The logs (``logs/autogpt_p/autogptp_gpt_4_<set>.log``) hold every exchange of a case: the tool
prompt and GPT-4's answer (ending ``SELECTED TOOL: ...``); for Plan and Partial Plan the goal
prompt, GPT-4's goals and the corrections between them; for Suggest Alternative the affordance
question and the object question with their answers (each echoed after it as ``Q:``/``A:``).
Some logs have re-runs appended: only the first N cases (N = the scenario file's rows) are the
paper's.

A case becomes a list of rounds, one per tool answer: ``{"tool": answer, "goal": [...],
"affordances": [...], "object": [...]}``. The scripted endpoint (``bench/scripted.py``) serves
them per round, so one tool call's goal answers never spill into the next call: a goal our checks
reject where the paper's accepted it is asked again and gets the same answer (as a stubborn model
would) until the correction bound ends that call.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from affplan_ros.bench.replay import _CORRECTION, CASE_MARK, RESULTS_MARK

# Where the paper's prompts begin: a line starting with one of these ends the answer before it.
_TOOL_PROMPT = ("You are an robotic assistant", "New Scene Memory:", "Waiting for memory server",
                "Resolved memory server")
_GOAL_PROMPT = ("You are the humanoid service robot",)
_AFFORDANCE_PROMPT = ("Out of the following affordances",)
_OBJECT_PROMPT = ("Which of these objects can replace",)
_ECHO = ("Q:",)
# The last line of each prompt: the answer follows it.
_PROMPT_END = {"tool": "End your answer with FAILURE if no tool is valid.",
               "goal": "Explain step by step how you concluded",   # Plan and Partial Plan prompts
               "affordances": "End your answer with listing the affordances",
               "object": "Finish your answer by naming exactly one object"}


def parse_tool_log(text: str, limit: Optional[int] = None) -> list[list[dict]]:
    """The rounds of each case of a tool-selection log (the first ``limit`` cases)."""
    blocks = text.split(CASE_MARK)[1:]
    return [_rounds(block) for block in blocks[:limit]]


def read_tool_log(path: Path, limit: Optional[int] = None) -> list[list[dict]]:
    return parse_tool_log(path.read_text(encoding="utf-8", errors="replace"), limit)


def _rounds(block: str) -> list[dict]:
    rounds: list[dict] = []
    state: Optional[str] = None      # the prompt being read, or "<kind>_answer", or None
    answer: list[str] = []

    def close() -> None:
        """The answer read so far goes to the current round (a tool answer opens one)."""
        nonlocal answer
        text = "\n".join(answer).strip()
        answer = []
        if not state or not state.endswith("_answer"):
            return
        kind = state[:-len("_answer")]
        if kind == "tool":
            rounds.append({"tool": text, "goal": [], "affordances": [], "object": []})
        elif rounds and text:
            rounds[-1][kind].append(text)

    for line in block.splitlines():
        head = line.lstrip()
        starts = next((k for k, marks in (("tool", _TOOL_PROMPT), ("goal", _GOAL_PROMPT),
                                           ("affordances", _AFFORDANCE_PROMPT), ("object", _OBJECT_PROMPT),
                                           ("echo", _ECHO))
                       if head.startswith(marks)), None)
        if RESULTS_MARK in line:
            close()
            break
        if starts is not None:
            if state == f"{starts}_prompt" or (starts == "tool" and state == "tool_prompt"):
                continue                 # still the same prompt (its later lines)
            close()
            state = f"{starts}_prompt" if starts != "echo" else None
            continue
        if state and state.endswith("_prompt"):
            kind = state[:-len("_prompt")]
            if _PROMPT_END[kind] in line:
                state, answer = f"{kind}_answer", []
            continue
        if state == "goal_answer" and not answer and head.startswith("Example: Bring me"):
            continue                     # the Plan prompt's last line, after the one above
        if state == "goal_answer" and _CORRECTION.match(head):
            close()                      # a correction: GPT-4's next goal follows it
            state = "goal_answer"
            continue
        if state and state.endswith("_answer"):
            answer.append(line)
    else:
        close()
    return rounds


def paper_scripts(logs: Path, sets: dict[str, int]) -> dict[str, dict]:
    """Case id (``SET#INDEX``) -> ``{"rounds": [...]}`` for the sets given as name -> number of
    cases; a set whose log is missing gives none (the case then says the script lacks it)."""
    out: dict[str, dict] = {}
    for name, n in sets.items():
        path = logs / f"autogptp_gpt_4_{name}.log"
        if not path.is_file():
            continue
        for i, rounds in enumerate(read_tool_log(path, n)):
            out[f"{name}#{i}"] = {"rounds": rounds}
    return out


def selected_tools(rounds: list[dict]) -> list[str]:
    """The tools the rounds select (``PLAN``, ``EXPLORE``, ...), as the answers name them."""
    out = []
    for r in rounds:
        m = re.search(r"SELECTED TOOL:\s*([A-Z_]+)", r["tool"])
        out.append(m.group(1) if m else ("FAILURE" if "FAILURE" in r["tool"] else "?"))
    return out
