"""``affplan bench scale --prompts``: prompt tokens and memory times against the size of the home.

For each scene size of ``bench scale`` (the same generated homes) and each request kind (ones
that name objects and ones that name none), the prompts the suite would send are rendered with
the project's templates and counted with GPT-4's tokenizer (``cl100k_base``, as ``bench
tokens``): the Plan Tool goal prompt, the Partial Plan goal prompt, the tool-selection prompt
and the alternative questions (the direct question over the kinds of things in the home, and
the choice among candidates), and recovery's after a failed grasp (the goal prompt with the
execution feedback, and LASP's question for the cause). The tool prompt is also counted after a year of requests (the
memory keeps its newest ``MAX_INSTRUCTIONS``; the prompt shows a few) to give what the history
adds. The memory node's work per size: merging one location's observation, and the snapshot it
publishes and serves (the JSON of ``GetMemory`` and, where the ROS messages are built, the
``MemorySnapshot`` message).

Each size is compared with the home of :data:`REFERENCE` objects (when measured): the issue's
bound is 1.3 x that size at 1,000 objects, and 300 tokens for 1,000 earlier requests.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import replace
from typing import Callable, Optional

REFERENCE = 35                  # the home size every other size is compared with
MAX_RATIO = 1.3
MAX_HISTORY_TOKENS = 300
YEAR_OF_REQUESTS = 1000

# Request kinds: (label, text, names objects?)
REQUESTS = (
    ("bring", "Bring me the apple", True),
    ("place", "Put the cup on the counter", True),
    ("clear", "Clear the table", True),
    ("thirsty", "I am thirsty", False),
    ("hungry", "I am hungry", False),
)
PROMPT_KINDS = ("goal", "partial_goal", "tool", "alternative_direct", "alternative_choose", "replan",
                "lasp_cause")
_MISSING = ("mug", "Bring me a mug of water")   # Suggest Alternative: a class no home here has
# Recovery after a failed grasp of the cup on the table (cup0 and table0 are in every home of bench scale).
_FAILED = ("grasp", ("robot0", "cup0", "table0", "table0"),
           "Error: grasp of cup0 failed. Reason: the gripper closed on nothing. Suggestion: look again.")


def measure_prompts(scene, count: Callable[[str], int], oam) -> dict:
    """Prompt tokens per request kind and prompt kind for ``scene``, history tokens, memory times."""
    from affplan_ros.bench.tokens import _goal_request, chat_tokens
    from affplan_ros.core.agent.alternatives import direct_choices
    from affplan_ros.core.agent.tool_loop import ToolPromptView
    from affplan_ros.core.goals.loop import GoalMode
    from affplan_ros.core.model.limits import MAX_INSTRUCTIONS
    from affplan_ros.llm.prompting import GoalPromptBuilder
    from affplan_ros.llm.tool_prompting import AlternativePromptBuilder, ToolPromptBuilder
    from affplan_ros.sim.executor import SimulatedExecutor

    memory = SimulatedExecutor(scene, oam=oam).initial_memory("all")
    goal, tool = GoalPromptBuilder(), ToolPromptBuilder()
    replan, lasp_cause = _recovery_prompts(scene, oam)
    rows = {}
    kept_history = tuple(_year_of_requests())[-MAX_INSTRUCTIONS:]   # what the memory keeps of a year
    home = _goal_request(scene, "", oam)    # the home's planning task, built once: requests differ in text
    for label, text, _named in REQUESTS:
        request = replace(home, task=text)
        row = {
            "goal": chat_tokens(count, goal.initial_messages(request)),
            "partial_goal": chat_tokens(count, goal.initial_messages(
                replace(request, mode=GoalMode.PARTIAL_PLAN, max_predicates=8))),
            "tool": chat_tokens(count, tool.initial_messages(ToolPromptView(text, "", (), "", memory))),
        }
        row["replan"] = chat_tokens(count, replan.initial_messages(request))
        row["lasp_cause"] = chat_tokens(count, lasp_cause(text))
        row["tool_after_year"] = chat_tokens(count, tool.initial_messages(
            ToolPromptView(text, "", kept_history, "", memory)))
        row["history_added"] = row["tool_after_year"] - row["tool"]
        rows[label] = row
    # Algorithm 2's questions for a class no home here has: the choice among the classes that
    # afford drinking, and the direct question over the kinds of things in the home.
    alt = AlternativePromptBuilder()
    system = {"role": "system", "content": alt.system()}
    classes = [o.class_name for o in scene.objects.values() if not o.is_agent]

    def affordances_of(c: str) -> set[str]:
        return set(oam.affordances_of(c)) if c in oam else set()

    candidates = list(dict.fromkeys(c for c in classes if "drink" in affordances_of(c)))
    direct = direct_choices(_MISSING[0], classes, affordances_of)
    alternatives = {
        "alternative_direct": chat_tokens(count, [system, {"role": "user", "content": alt.direct_question(
            _MISSING[0], _MISSING[1], direct)}]),
        "alternative_choose": chat_tokens(count, [system, {"role": "user", "content": alt.choose_question(
            _MISSING[0], "drink", candidates)}]),
    }
    for row in rows.values():
        row.update(alternatives)
    return {"requests": rows, "memory": memory_times(memory, scene)}


def _recovery_prompts(scene, oam):
    """The prompts recovery sends after a failed step: the goal prompt with the execution
    feedback (high-level replanning), and LASP's first question (the cause of the failure)."""
    from affplan_ros.core.recovery.belief import Domain
    from affplan_ros.core.recovery.lasp import FailureContext, failure_state, schema_text
    from affplan_ros.core.recovery.runner import FeedbackPrompter
    from affplan_ros.llm.recovery_prompting import LaspPromptBuilder, ReplanGoalPromptBuilder

    action, args, feedback = _FAILED
    builder = ReplanGoalPromptBuilder()
    replan = FeedbackPrompter(builder, builder.replan_section("(and (inhand cup0 human0))", feedback))
    lasp, schema = LaspPromptBuilder(), schema_text(Domain.default(oam), action)
    state = failure_state(scene, args)

    def cause(task: str) -> list[dict]:
        ctx = FailureContext(task, " ".join((action, *args)), action, schema, feedback, state)
        return [{"role": "system", "content": lasp.system()}, {"role": "user", "content": lasp.cause(ctx, 3)}]
    return replan, cause


def _year_of_requests():
    """1,000 requests of a household, varied (what a person says over a year)."""
    things = ("apple", "cup", "banana", "tomato", "spoon", "plate", "bowl", "glass", "milk", "sponge")
    forms = ("Bring me the {}", "Put the {} on the table", "Where is the {}?", "Put the {} away",
             "Give me a {} please")
    for i in range(YEAR_OF_REQUESTS):
        yield forms[i % len(forms)].format(things[(i // len(forms)) % len(things)])


def memory_times(memory, scene, repeats: int = 5) -> dict:
    """Median seconds of the memory node's work on this memory: merge one location's
    observation, the JSON snapshot (GetMemory, the memory file), the MemorySnapshot message."""
    import json

    from affplan_ros.core.model.memory import Memory
    from affplan_ros.sim.executor import SimulatedExecutor

    ex = SimulatedExecutor(scene)
    where = next(iter(scene.locations), None)
    out: dict[str, Optional[float]] = {"objects": len(memory.objects), "relations": len(memory.relations)}
    merge, snap, msg = [], [], []
    try:
        from affplan_ros.nodes.convert_memory import memory_to_msg
    except ImportError:   # ROS messages not built: the JSON snapshot only
        memory_to_msg = None
    for _ in range(repeats):
        copy = Memory.from_dict(memory.to_dict())
        if where is not None:
            obs = ex.observe(where, see_inside_closed=True)
            t0 = time.perf_counter()
            copy.merge(obs)
            merge.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        json.dumps(copy.to_dict())
        snap.append(time.perf_counter() - t0)
        if memory_to_msg is not None:
            t0 = time.perf_counter()
            memory_to_msg(copy, {})
            msg.append(time.perf_counter() - t0)
    out["merge_s"] = statistics.median(merge) if merge else None
    out["snapshot_json_s"] = statistics.median(snap)
    out["snapshot_msg_s"] = statistics.median(msg) if msg else None
    return out


def ratios(per_size: list[dict]) -> dict:
    """Each size's prompt tokens over the reference size's, per request and prompt kind; the
    largest, and whether the issue's bounds hold at the largest size."""
    ref = next((s for s in per_size if s["requested"] == REFERENCE), None)
    if ref is None:
        return {}
    out: dict = {"reference_objects": REFERENCE, "by_size": {}}
    for s in per_size:
        r = {}
        for label, row in s["prompts"]["requests"].items():
            base = ref["prompts"]["requests"][label]
            r[label] = {k: round(row[k] / base[k], 3) for k in PROMPT_KINDS if base.get(k)}
        out["by_size"][s["requested"]] = r
    largest = max(per_size, key=lambda s: s["requested"])
    worst = max(((v, lab, k) for lab, kinds in out["by_size"][largest["requested"]].items()
                 for k, v in kinds.items()), default=(None, None, None))
    history = max(row["history_added"] for row in largest["prompts"]["requests"].values())
    out["largest"] = {"objects": largest["requested"], "max_ratio": worst[0], "request": worst[1],
                      "prompt": worst[2], "history_added_max": history,
                      "ratio_ok": worst[0] is not None and worst[0] <= MAX_RATIO,
                      "history_ok": history <= MAX_HISTORY_TOKENS}
    return out


def summary_lines(per_size: list[dict], rat: dict) -> list[str]:
    lines = ["", "## Prompt tokens (cl100k) per request and prompt kind", "",
             "Request kinds: " + "; ".join(f"{lab}: \"{text}\" ({'names objects' if named else 'names none'})"
                                          for lab, text, named in REQUESTS) + ". `history +`: tokens "
             f"{YEAR_OF_REQUESTS} earlier requests add to the tool prompt.", "",
             "| objects | request | goal | partial goal | tool | history + | alt. direct | alt. choose "
             "| replan | LASP cause | ratio to 35 (max) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in per_size:
        for lab, row in s["prompts"]["requests"].items():
            r = rat.get("by_size", {}).get(s["requested"], {}).get(lab, {})
            lines.append(f"| {s['objects']} | {lab} | {row['goal']} | {row['partial_goal']} | {row['tool']} "
                         f"| {row['history_added']} | {row['alternative_direct']} | {row['alternative_choose']} "
                         f"| {row['replan']} | {row['lasp_cause']} | {max(r.values()) if r else '-'} |")
    lines += ["", "## The memory node per size (median seconds)", "",
              "| objects | relations | merge one location | JSON snapshot | MemorySnapshot message |",
              "|---:|---:|---:|---:|---:|"]
    for s in per_size:
        m = s["prompts"]["memory"]
        lines.append(f"| {m['objects']} | {m['relations']} | {_f(m['merge_s'])} | {_f(m['snapshot_json_s'])} "
                     f"| {_f(m['snapshot_msg_s'])} |")
    big = rat.get("largest")
    if big:
        lines += ["", f"At {big['objects']} objects the largest prompt is {big['max_ratio']}x its size at "
                      f"{REFERENCE} ({big['request']}, {big['prompt']}; bound {MAX_RATIO}x: "
                      f"**{'met' if big['ratio_ok'] else 'NOT met'}**); {YEAR_OF_REQUESTS} earlier requests add at "
                      f"most {big['history_added_max']} tokens (bound {MAX_HISTORY_TOKENS}: "
                      f"**{'met' if big['history_ok'] else 'NOT met'}**)."]
    return lines


def _f(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def plot(per_size: list[dict], path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = [s["objects"] for s in per_size]
    for lab, _text, named in REQUESTS:
        for kind, style in (("goal", "o-"), ("tool", "s--")):
            ys = [s["prompts"]["requests"][lab][kind] for s in per_size]
            axes[0].plot(xs, ys, style, label=f"{kind}: {lab}", alpha=0.9 if named else 0.6)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("objects in the home")
    axes[0].set_ylabel("prompt tokens (cl100k)")
    axes[0].set_ylim(bottom=0)
    axes[0].grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    axes[0].set_title("prompt size against the size of the home")
    for key, style, label in (("planner_s", "o-", "translate + search, median over goal kinds"),
                              ("max_planner_s", "^-", "translate + search, max over goal kinds"),
                              ("total_s", "o:", "whole call (task, pruning, validation), median"),
                              ("max_total_s", "^:", "whole call, max")):
        ys = [s.get("pruned", {}).get(key) for s in per_size]
        axes[1].plot(xs, [y if y is not None else float("nan") for y in ys], style, label=label)
    axes[1].set_xscale("log")
    axes[1].set_xlabel("objects in the home")
    axes[1].set_ylabel("seconds")
    axes[1].grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8)
    axes[1].set_title("planning time, pruned")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
