"""Limits on what the suite accepts at its entry points (services, actions, topics, files).

One place for every bound, so the interface comments, the nodes' checks and the docs agree
(docs/reliability.md lists them). A request over a limit is answered with an error naming the
limit; nothing is truncated silently, except the task history, which keeps the newest entries.
"""
from __future__ import annotations

import re

MAX_TASK_CHARS = 2000            # ExecuteTask.task, Command.task, PlanTask.task
MAX_NAME_CHARS = 64              # an object, location, agent, class, predicate or affordance name
MAX_CLASSES = 50                 # GenerateOam.classes per request
MAX_JSON_BYTES = 4_000_000       # UpdateMemory.memory_json, the memory file
MAX_OBJECTS = 5000               # objects in a memory or an observation
MAX_RELATIONS = 20000            # relations in a memory or an observation
MAX_LOCATIONS = 1000
MAX_PLAN_STEPS = 500             # steps of a plan sent to the executor
MAX_STEP_ARGUMENTS = 16
MAX_QUESTION_CHARS = 4000        # AskHuman.question
MAX_TEXT_CHARS = 4000            # other free text fields (messages, results)
MAX_INSTRUCTIONS = 200           # task history kept in memory (newest first out of the window)
MAX_ROUNDS = 100                 # ExecuteTask.max_rounds
MAX_TIMEOUT_S = 24 * 3600.0      # any timeout given in a request
CLOCK_SKEW_S = 1.0               # an observation stamped later than now by more than this is refused

# PDDL object and predicate names as scenes, the OAM and the planner write them (cup0,
# kitchen_knife0, liquid_in, wet-swipe): ASCII letters first, then letters, digits, _ and -.
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")


def name_problem(value: object, what: str = "name") -> str:
    """Why ``value`` is not a valid name ("" when it is)."""
    if not isinstance(value, str):
        return f"{what} must be text, not {type(value).__name__}"
    if not value:
        return f"{what} is empty"
    if len(value) > MAX_NAME_CHARS:
        return f"{what} {value[:20]!r}... is {len(value)} characters long (limit {MAX_NAME_CHARS})"
    if not NAME_RE.fullmatch(value):
        return (f"{what} {value!r} is not a name: use ASCII letters, digits, '_' and '-', "
                f"starting with a letter (e.g. cup0)")
    return ""


def check_name(value: object, what: str = "name") -> str:
    """``value`` if it is a valid name, else ValueError saying why."""
    problem = name_problem(value, what)
    if problem:
        raise ValueError(problem)
    return value  # type: ignore[return-value]


def check_timeout(value: float, what: str) -> float:
    """A timeout from a request: finite, >= 0 (0 = the default) and at most a day."""
    import math

    if not isinstance(value, (int, float)) or isinstance(value, bool) or math.isnan(value) or value < 0:
        raise ValueError(f"{what} must be a number >= 0 (0 = the default), not {value!r}")
    if value > MAX_TIMEOUT_S:
        raise ValueError(f"{what} is {value:g} s; the limit is {MAX_TIMEOUT_S:g} s")
    return float(value)
