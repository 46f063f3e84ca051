"""`affplan bench oam`: LLM-generated object-affordance mappings against a ground truth (paper Table II).

For every class of the ground truth the LLM is asked with one strategy (``list``, ``yesno``,
``logic``; ``all`` runs the three), through the real client and prompts, and the predicted
(class, affordance) pairs are scored against the ground truth: precision, recall and F1 over all
pairs and per affordance, with the LLM calls, tokens and seconds each strategy cost.

LLM modes:
  scripted:FILE  a local chat-completions server that answers from the mapping in FILE (CSV
                 ``object,affordances`` rows as in the AutoGPT+P ground truth, AutoGPT+P OAM JSON,
                 or our OAM YAML): list -> the class's affordances; yes/no -> yes iff the class
                 has the affordance; logic -> each atomic question answered so that the formulas
                 reproduce the mapping as closely as they can (exact search per group of formulas
                 sharing questions). Measures the pipeline, not a language model.
  endpoint       the LLM configured in the environment (AFFPLAN_LLM_BASE_URL, AFFPLAN_LLM_MODEL,
                 AFFPLAN_LLM_API_KEY_ENV)

Affordance definitions: by default the original AutoGPT+P files when ../shared is present
(``proposed_affordances_alternative.csv`` for the formulas, ``proposed_affordances.csv`` for the
single yes/no questions, as in the paper), else the project's own
(``core/knowledge/data/affordance_questions.yaml``); ``--affordances ours`` or a file path chooses.

Writes results.json, summary.md and oam_bench.png to --out. Module-level imports stay light.
"""
from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path
from typing import Sequence

from affplan_ros.bench.frame import (
    BenchSetupError,
    command,
    jobs_option,
    output_option,
    save,
)

GT_RELATIVE = Path("autogpt_p") / "chat_gpt_oam" / "ground_truth" / "simulation_classes_ground_truth.csv"
DEFS_RELATIVE = Path("autogpt_p") / "object_affordance_mapping" / "data" / "affordances"
# F1 of GPT-4 in the AutoGPT+P paper (Table II, 70 classes), for the summary's reference column.
PAPER_F1_GPT4 = {"list": 0.62, "yesno": 0.86, "logic": 0.89}
MAX_BRUTE_FORCE_ATOMS = 16


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ground-truth", metavar="FILE",
                        help="ground-truth mapping: CSV object,affordances (default: the AutoGPT+P "
                             "simulation_classes_ground_truth.csv in ../shared), OAM JSON or YAML")
    parser.add_argument("--strategy", default="all",
                        help="list | yesno | logic | all, or a comma-separated choice (default: %(default)s)")
    parser.add_argument("--llm", default=None, metavar="MODE",
                        help="scripted:FILE (answers from the mapping in FILE) | endpoint (AFFPLAN_LLM_BASE_URL ...)")
    output_option(parser, "oam")
    parser.add_argument("--affordances", default="auto", metavar="FILE|ours|auto",
                        help="affordance definitions with formulas (default auto: the original "
                             "proposed_affordances_alternative.csv when ../shared exists, else ours)")
    parser.add_argument("--questions", metavar="FILE",
                        help="single yes/no questions for the yesno strategy (default with the original "
                             "definitions: proposed_affordances.csv)")
    parser.add_argument("--limit", type=int, help="only the first N classes of the ground truth")
    jobs_option(parser, "classes asked in parallel (threads; default 1)", default=1)
    parser.add_argument("--max-retries", type=int, default=2,
                        help="re-asks when a yes/no answer is neither yes nor no (default: %(default)s)")
    parser.add_argument("--max-seconds-per-class", type=float, default=600.0, help="time bound per class")
    parser.add_argument("--classes-per-call", type=int, default=10, metavar="N",
                        help="classes asked in one prompt (default: %(default)s; 1: the paper's way)")
    parser.add_argument("--questions-per-call", type=int, default=10, metavar="N",
                        help="yes/no and logic questions in one prompt (default: %(default)s; 1: the paper's way, "
                             "one question per call)")


# -- scoring ----------------------------------------------------------------------------------

def prf(tp: int, fp: int, fn: int) -> dict:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r, "f1": f}


def score(predicted: dict[str, set[str]], truth: dict[str, set[str]]) -> dict:
    """Micro P/R/F1 over (class, affordance) pairs of the ground truth's classes, and per affordance."""
    pred_pairs = {(c, a) for c in truth for a in predicted.get(c, set())}
    true_pairs = {(c, a) for c, affs in truth.items() for a in affs}
    overall = prf(len(pred_pairs & true_pairs), len(pred_pairs - true_pairs), len(true_pairs - pred_pairs))
    per = {}
    for aff in sorted({a for _, a in pred_pairs | true_pairs}):
        p = {c for c, a in pred_pairs if a == aff}
        t = {c for c, a in true_pairs if a == aff}
        per[aff] = {**prf(len(p & t), len(p - t), len(t - p)), "support": len(t)}
    return {"overall": overall, "per_affordance": per}


# -- the scripted LLM ------------------------------------------------------------------------

def scripted_answers(mapping: dict[str, set[str]], classes: Sequence[str], defs, strategy: str,
                     classes_per_call: int = 10, questions_per_call: int = 10) -> dict[str, str]:
    """user message -> answer, for every question the generator can ask about ``classes``
    (grouped as the generator groups them: classes per list prompt, questions per yes/no prompt)."""
    from affplan_ros.core.knowledge.oam_generation import OamGenerator
    from affplan_ros.core.perception.detection import display_name
    from affplan_ros.llm.oam_prompts import OamPromptBuilder

    prompts = OamPromptBuilder()
    gen = OamGenerator(None, prompts, defs,  # type: ignore[arg-type] - only its grouping is used
                       classes_per_call=classes_per_call, questions_per_call=questions_per_call)
    out: dict[str, str] = {}

    def listed(cls: str) -> str:
        return ", ".join(d.name for d in defs if d.name in mapping.get(cls, set())) or "none"

    if strategy == "list":
        groups = [list(classes[i:i + gen.classes_per_call]) for i in range(0, len(classes), gen.classes_per_call)]
        for group in groups + [[c] for c in classes if groups and len(groups[0]) > 1]:   # and each alone (a retry)
            text = prompts.list_messages([display_name(c) for c in group], defs)[-1]["content"]
            out[text] = listed(group[0]) if len(group) == 1 else \
                "\n".join(f"{display_name(c)}: {listed(c)}" for c in group)
        return out
    templates = gen.questions(strategy)
    values = {c: {d.question: d.name in mapping.get(c, set()) for d in defs} if strategy == "yesno" else
              atom_assignment({d.name for d in defs} & mapping.get(c, set()), defs) for c in classes}
    yes = lambda c, t: "yes" if values[c].get(t) else "no"  # noqa: E731
    for g in range(0, len(classes), gen.classes_per_call):
        group = list(classes[g:g + gen.classes_per_call])
        for i in range(0, len(templates), gen.questions_per_call):
            chunk = templates[i:i + gen.questions_per_call]
            text = prompts.yes_no_messages([display_name(c) for c in group], chunk)[-1]["content"]
            out[text] = yes(group[0], chunk[0]) if len(group) == len(chunk) == 1 else \
                "\n".join(f"{display_name(c)}: " + ", ".join(yes(c, t) for t in chunk) for c in group)
    return out


def atom_assignment(has: set[str], defs) -> dict[str, bool]:
    """Answers to the atomic questions that make as many formulas as possible agree with ``has``
    (exhaustive per group of formulas sharing questions; ties: fewer yes answers)."""
    groups: list[tuple[list[str], list]] = []  # (atoms, defs) per connected group
    for d in defs:
        atoms = list(dict.fromkeys(a.question for a in d.formula.atoms()))
        touching = [g for g in groups if set(g[0]) & set(atoms)]
        merged_atoms = list(dict.fromkeys(atoms + [a for g in touching for a in g[0]]))
        merged_defs = [d] + [x for g in touching for x in g[1]]
        groups = [g for g in groups if g not in touching] + [(merged_atoms, merged_defs)]
    answer: dict[str, bool] = {}
    for atoms, group_defs in groups:
        def agreement(values: dict[str, bool], group_defs: list = group_defs) -> int:
            return sum(d.formula.evaluate(values.__getitem__) == (d.name in has) for d in group_defs)

        if len(atoms) <= MAX_BRUTE_FORCE_ATOMS:
            best = max((dict(zip(atoms, bits)) for bits in itertools.product((False, True), repeat=len(atoms))),
                       key=lambda v: (agreement(v), -sum(v.values())))
        else:  # greedy flips from all-no (not reached with the shipped or the original files)
            best = {a: False for a in atoms}
            improved = True
            while improved:
                improved = False
                for a in atoms:
                    trial = {**best, a: not best[a]}
                    if agreement(trial) > agreement(best):
                        best, improved = trial, True
        answer.update(best)
    return answer


def _scripted_server(table: dict[str, str], retry_text: str):
    from affplan_ros.llm.fake_server import FakeChatServer

    def respond(messages: list[dict], _body: dict) -> str:
        users = [m.get("content", "") for m in messages if m.get("role") == "user"]
        for text in reversed(users):  # after a retry request, the original question counts
            if text.strip() in table:
                return table[text.strip()]
            if text.strip() != retry_text:
                break
        return "I cannot tell."  # not scripted: a non-answer, which the generator must reject

    return FakeChatServer(respond, model="scripted").start()


# -- running ------------------------------------------------------------------------------------

def _resolve_defs(args) -> tuple[list, str]:
    from affplan_ros.core.knowledge.affordance_questions import OamGenerationError, load_affordance_questions
    from affplan_ros.env import shared_data_dir

    shared = shared_data_dir()
    original = shared / DEFS_RELATIVE if shared else None
    choice = args.affordances
    questions = args.questions
    if choice == "auto":
        choice = str(original / "proposed_affordances_alternative.csv") if original and original.is_dir() else "ours"
    if choice == "ours":
        path = None
    else:
        path = Path(choice)
        if questions is None and original and path.name.startswith("proposed_affordances_alternative"):
            questions = str(original / "proposed_affordances.csv")
    try:
        defs = load_affordance_questions(path, questions)
    except OamGenerationError as exc:
        raise BenchSetupError(str(exc)) from exc
    label = "project definitions (core/knowledge/data/affordance_questions.yaml)" if path is None else \
        f"{path}" + (f" + questions {questions}" if questions else "")
    return defs, label


def _endpoint_config():
    """The endpoint of ``--llm endpoint``, checked before any class is asked."""
    from affplan_ros.llm.config import (
        MissingAPIKeyError,
        NoEndpointError,
        require_endpoint,
    )

    try:
        return require_endpoint()
    except (NoEndpointError, MissingAPIKeyError) as exc:
        raise BenchSetupError(f"--llm endpoint: {exc}") from exc


def run_strategy(strategy: str, classes: list[str], defs, client, model: str, args) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    from affplan_ros.core.goals.loop import ChatModelError
    from affplan_ros.core.knowledge.affordance_questions import OamGenerationError
    from affplan_ros.core.knowledge.oam_generation import OamGenerator
    from affplan_ros.llm.oam_prompts import OamPromptBuilder

    gen = OamGenerator(client, OamPromptBuilder(), defs, model_name=model, max_format_retries=args.max_retries,
                       max_seconds_per_class=args.max_seconds_per_class, classes_per_call=args.classes_per_call,
                       questions_per_call=args.questions_per_call)

    def group(names: list[str]) -> list:
        try:
            return gen.generate_many(names, strategy)
        except (OamGenerationError, ChatModelError) as exc:
            return getattr(exc, "results", None) or [_failed(c, strategy, model, str(exc)) for c in names]

    step = gen.classes_per_call
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = [r for rs in pool.map(group, [classes[i:i + step] for i in range(0, len(classes), step)])
                   for r in rs]
    wall = time.monotonic() - t0
    return {"results": results, "wall_s": wall}


def _failed(cls, strategy, model, error):
    from affplan_ros.core.knowledge.oam_generation import ClassResult

    return ClassResult(cls, strategy, model, error=error)


@command
def run(args: argparse.Namespace) -> int:
    report = _run(args)
    print(_table(report))
    write_outputs(report, Path(args.out))
    return 0


def _run(args) -> dict:
    from affplan_ros.core.knowledge.affordance_questions import OamGenerationError
    from affplan_ros.core.knowledge.oam_generation import read_mapping
    from affplan_ros.env import shared_data_dir
    from affplan_ros.llm.oam_prompts import OamPromptBuilder

    if not args.llm:
        raise BenchSetupError("--llm is required: scripted:FILE or endpoint")
    strategies = ["list", "yesno", "logic"] if args.strategy == "all" else \
        [s.strip() for s in args.strategy.split(",") if s.strip()]
    bad = [s for s in strategies if s not in ("list", "yesno", "logic")]
    if bad or not strategies:
        raise BenchSetupError(f"--strategy {args.strategy!r}: use list, yesno, logic or all")
    for opt in ("classes_per_call", "questions_per_call"):
        if getattr(args, opt) < 1:
            raise BenchSetupError(f"--{opt.replace('_', '-')} {getattr(args, opt)}: at least 1")
    gt_path = Path(args.ground_truth) if args.ground_truth else None
    if gt_path is None:
        shared = shared_data_dir()
        if shared is None:
            raise BenchSetupError("no --ground-truth given and ../shared/datasets (the AutoGPT+P ground truth) "
                                  "is absent")
        gt_path = shared / GT_RELATIVE
    try:
        truth = read_mapping(gt_path)
        defs, defs_label = _resolve_defs(args)
        mapping = read_mapping(args.llm[len("scripted:"):]) if args.llm.startswith("scripted:") else None
    except OamGenerationError as exc:
        raise BenchSetupError(str(exc)) from exc
    if not truth:
        raise BenchSetupError(f"the ground truth {gt_path} holds no (class, affordance) pairs")
    classes = list(truth)[: args.limit] if args.limit else list(truth)
    truth = {c: truth[c] for c in classes}
    if mapping is not None:
        endpoint, model, llm_label = None, "scripted", f"scripted from {args.llm[len('scripted:'):]}"
    elif args.llm == "endpoint":
        endpoint = _endpoint_config()
        model, llm_label = endpoint.model, f"endpoint {endpoint.base_url}"
    else:
        raise BenchSetupError(f"--llm {args.llm!r}: use scripted:FILE or endpoint")
    asked = {d.name for d in defs}
    report = {"benchmark": "oam", "ground_truth": str(gt_path), "classes": len(classes), "llm": llm_label,
              "classes_per_call": args.classes_per_call, "questions_per_call": args.questions_per_call,
              "model": model, "definitions": defs_label, "affordances_asked": sorted(asked),
              "truth_affordances_not_asked": sorted({a for affs in truth.values() for a in affs} - asked),
              "strategies": {}}
    retry_text = OamPromptBuilder().retry_message()
    from affplan_ros.llm.client import ChatClient
    from affplan_ros.llm.config import LLMConfig

    for strategy in strategies:
        server = None
        if mapping is not None:
            server = _scripted_server(scripted_answers(mapping, classes, defs, strategy, args.classes_per_call,
                                                       args.questions_per_call), retry_text)
            client = ChatClient(LLMConfig(base_url=server.base_url, model="scripted", api_key_env="", max_retries=0))
        else:
            client = ChatClient(endpoint)
        try:
            print(f"bench oam: {strategy} on {len(classes)} classes ({llm_label}) ...", flush=True)
            run_ = run_strategy(strategy, classes, defs, client, model, args)
        finally:
            client.close()
            if server is not None:
                server.stop()
        results = run_["results"]
        predicted = {r.class_name: set(r.affordances) for r in results}
        scores = score(predicted, truth)
        totals = client.accounting.totals()
        report["strategies"][strategy] = {
            **scores,
            "llm_calls": sum(r.questions for r in results),
            "prompt_tokens": sum(r.prompt_tokens for r in results),
            "completion_tokens": sum(r.completion_tokens for r in results),
            "llm_seconds": totals["seconds"],
            "wall_s": run_["wall_s"],
            "failed_classes": {r.class_name: r.error for r in results if r.error},
            "per_class": {r.class_name: {"predicted": sorted(r.affordances), "truth": sorted(truth[r.class_name]),
                                         "answers": r.answers, "ignored_terms": r.ignored_terms,
                                         "calls": r.questions, "error": r.error} for r in results},
        }
    return report


# -- outputs --------------------------------------------------------------------------------------

def _table(report: dict) -> str:
    lines = ["| strategy | precision | recall | F1 | paper GPT-4 F1 | LLM calls | prompt tokens | completion tokens "
             "| LLM seconds | failed classes |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    names = {"list": "list affordances", "yesno": "yes/no per affordance", "logic": "yes/no + logic"}
    for s, r in report["strategies"].items():
        o = r["overall"]
        lines.append(f"| {names[s]} | {o['precision']:.3f} | {o['recall']:.3f} | {o['f1']:.3f} | "
                     f"{PAPER_F1_GPT4[s]:.2f} | {r['llm_calls']} | {r['prompt_tokens']} | {r['completion_tokens']} | "
                     f"{r['llm_seconds']:.1f} | {len(r['failed_classes'])} |")
    return "\n".join(lines)


def summary_md(report: dict) -> str:
    lines = ["# LLM object-affordance mapping against ground truth (AutoGPT+P Table II layout)", "",
             f"* ground truth: `{report['ground_truth']}` ({report['classes']} classes)",
             f"* LLM: {report['llm']} (model `{report['model']}`)",
             f"* affordance definitions: {report['definitions']}",
             "* scores: micro precision/recall/F1 over (class, affordance) pairs of the ground-truth classes",
             ]
    if report["truth_affordances_not_asked"]:
        lines.append(f"* ground-truth affordances no strategy asks about (always missed): "
                     f"{', '.join(report['truth_affordances_not_asked'])}")
    lines += ["", _table(report), ""]
    for s, r in report["strategies"].items():
        lines += [f"## {s}: per affordance", "", "| affordance | support | precision | recall | F1 | TP | FP | FN |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for aff, m in r["per_affordance"].items():
            lines.append(f"| {aff} | {m['support']} | {m['precision']:.2f} | {m['recall']:.2f} | {m['f1']:.2f} "
                         f"| {m['tp']} | {m['fp']} | {m['fn']} |")
        if r["failed_classes"]:
            lines += ["", "Failed classes (counted with no affordances):", ""]
            lines += [f"* {c}: {e}" for c, e in r["failed_classes"].items()]
        lines.append("")
    return "\n".join(lines)


def write_outputs(report: dict, out: Path) -> None:
    save(out, report, summary_md(report), plot=("oam_bench.png", lambda path: _plot(report, path)))


def _plot(report: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    strategies = list(report["strategies"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 3]})
    width = 0.8 / 3
    for i, metric in enumerate(("precision", "recall", "f1")):
        vals = [report["strategies"][s]["overall"][metric] for s in strategies]
        ax1.bar([k + (i - 1) * width for k in range(len(strategies))], vals, width, label=metric)
    ax1.set_xticks(range(len(strategies)), strategies)
    ax1.set_ylim(0, 1)
    ax1.set_title("overall")
    ax1.legend(fontsize=8, loc="lower right")
    affs = sorted({a for s in strategies for a in report["strategies"][s]["per_affordance"]})
    w2 = 0.8 / max(1, len(strategies))
    for i, s in enumerate(strategies):
        per = report["strategies"][s]["per_affordance"]
        ax2.bar([k + (i - (len(strategies) - 1) / 2) * w2 for k in range(len(affs))],
                [per.get(a, {}).get("f1", 0.0) for a in affs], w2, label=s)
    ax2.set_xticks(range(len(affs)), affs, rotation=75, fontsize=7)
    ax2.set_ylim(0, 1)
    ax2.set_title("F1 per affordance")
    ax2.legend(fontsize=8)
    fig.suptitle(f"OAM generation vs ground truth ({report['classes']} classes, {report['llm']})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
