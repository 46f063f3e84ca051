"""`affplan bench oam` with a scripted LLM: its precision/recall/F1 equal an independent computation,
and the logic strategy's predictions equal the formulas evaluated over the recorded answers."""
from __future__ import annotations

import csv
import json
import re

import pytest
import yaml

from affplan_ros.cli import main

TRUTH = {"mug": {"grasp", "carry", "contain", "drink"}, "table": {"support", "push"},
         "knife": {"grasp", "carry", "cut"}, "sponge": {"grasp", "wet-swipe"}}
# The "LLM" believes: a mug cannot be carried, a table can be carried, sponges fly.
SCRIPTED = {"mug": ["grasp", "contain", "drink"], "table": ["support", "push", "carry"],
            "knife": ["grasp", "carry", "cut"], "sponge": ["grasp", "wet-swipe", "fly"]}


def independent_prf(pred: dict, truth: dict) -> tuple[float, float, float]:
    tp = sum(len(set(pred.get(c, ())) & t) for c, t in truth.items())
    npred = sum(len(set(pred.get(c, ()))) for c in truth)
    ntrue = sum(len(t) for t in truth.values())
    p, r = tp / npred, tp / ntrue
    return p, r, 2 * p * r / (p + r)


def eval_formula(text: str, answers: dict[str, bool]) -> bool:
    """A second evaluator: atoms -> looked-up answers, & | ! -> Python's and/or/not (same precedence)."""
    atoms = re.findall(r"\(([^()]*)\)", text)
    expr = re.sub(r"\(([^()]*)\)", lambda m: f" A[{atoms.index(m.group(1))}] ", text)
    expr = expr.replace("&", " and ").replace("|", " or ").replace("!", " not ")
    return eval(expr, {"A": [answers.get(a) for a in atoms]})  # noqa: S307 - our own test strings


@pytest.fixture
def files(tmp_path):
    gt = tmp_path / "truth.csv"
    with gt.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["object", "affordances"])
        for c, affs in TRUTH.items():
            w.writerows([c.capitalize(), a] for a in sorted(affs))  # "Mug": names are normalised
    scripted = tmp_path / "scripted.yaml"
    scripted.write_text(yaml.safe_dump({"classes": SCRIPTED}))
    return gt, scripted


def run_bench(gt, scripted, out, strategy, *extra):
    return main(["bench", "oam", "--ground-truth", str(gt), "--strategy", strategy, "--llm", f"scripted:{scripted}",
                 "--affordances", "ours", "--out", str(out), *extra])


def test_scripted_bench_scores_equal_an_independent_computation(files, tmp_path, capsys):
    gt, scripted = files
    assert run_bench(gt, scripted, tmp_path / "out", "all") == 0
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    vocabulary = set(report["affordances_asked"])
    expected = independent_prf({c: set(a) & vocabulary for c, a in SCRIPTED.items()}, TRUTH)
    for strategy in ("list", "yesno"):
        o = report["strategies"][strategy]["overall"]
        assert (o["precision"], o["recall"], o["f1"]) == pytest.approx(expected)
        per = {c: set(v["predicted"]) for c, v in report["strategies"][strategy]["per_class"].items()}
        assert per == {c: set(a) & vocabulary for c, a in SCRIPTED.items()}
    # Per affordance: "carry" has one false positive (table) and one false negative (mug).
    carry = report["strategies"]["yesno"]["per_affordance"]["carry"]
    assert (carry["tp"], carry["fp"], carry["fn"]) == (1, 1, 1)
    # ten classes and ten questions to a prompt
    assert report["strategies"]["yesno"]["llm_calls"] == -(-len(TRUTH) // 10) * -(-len(vocabulary) // 10)
    assert report["strategies"]["list"]["llm_calls"] == -(-len(TRUTH) // 10)
    assert all(report["strategies"][s]["prompt_tokens"] > 0 for s in ("list", "yesno", "logic"))
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| yes/no + logic |" in summary and "| carry | 2 |" in summary
    assert (tmp_path / "out" / "oam_bench.png").stat().st_size > 10_000


def test_one_class_and_one_question_to_a_call_the_papers_way(files, tmp_path, capsys):
    gt, scripted = files
    assert run_bench(gt, scripted, tmp_path / "out", "list,yesno", "--classes-per-call", "1",
                     "--questions-per-call", "1") == 0
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    vocabulary = set(report["affordances_asked"])
    assert report["classes_per_call"] == report["questions_per_call"] == 1
    # a call per class, and per class and question: the same predictions as batched
    assert report["strategies"]["list"]["llm_calls"] == len(TRUTH)
    assert report["strategies"]["yesno"]["llm_calls"] == len(TRUTH) * len(vocabulary)
    for strategy in ("list", "yesno"):
        per = {c: set(v["predicted"]) for c, v in report["strategies"][strategy]["per_class"].items()}
        assert per == {c: set(a) & vocabulary for c, a in SCRIPTED.items()}
    assert run_bench(gt, scripted, tmp_path / "bad", "list", "--classes-per-call", "0") == 2
    assert "--classes-per-call 0: at least 1" in capsys.readouterr().err


def test_logic_predictions_are_the_formulas_over_the_recorded_answers(files, tmp_path):
    from affplan_ros.core.knowledge.affordance_questions import DEFAULT_QUESTIONS

    gt, scripted = files
    assert run_bench(gt, scripted, tmp_path / "out", "logic") == 0
    report = json.loads((tmp_path / "out" / "results.json").read_text())["strategies"]["logic"]
    formulas = {a["name"]: a["formula"] for a in yaml.safe_load(DEFAULT_QUESTIONS.read_text())["affordances"]}
    predicted = {}
    for cls, entry in report["per_class"].items():
        mine = {name for name, text in formulas.items() if eval_formula(text, entry["answers"])}
        assert mine == set(entry["predicted"]), cls
        predicted[cls] = mine
    o = report["overall"]
    assert (o["precision"], o["recall"], o["f1"]) == pytest.approx(independent_prf(predicted, TRUTH))
    # The scripted answers let the formulas reproduce the mapping where the formulas allow it.
    assert predicted["knife"] >= {"grasp", "cut"}


def test_bad_options_are_clear_errors(files, tmp_path, capsys):
    gt, scripted = files
    assert main(["bench", "oam", "--ground-truth", str(gt), "--out", str(tmp_path)]) == 2
    assert "--llm is required" in capsys.readouterr().err
    assert run_bench(gt, scripted, tmp_path, "guess") == 2
    assert "use list, yesno, logic or all" in capsys.readouterr().err
    assert main(["bench", "oam", "--ground-truth", str(tmp_path / "none.csv"), "--llm", f"scripted:{scripted}",
                 "--out", str(tmp_path)]) == 2
    assert "none.csv" in capsys.readouterr().err


@pytest.mark.shared
def test_original_ground_truth_against_the_papers_gpt4_mapping(shared_datasets, tmp_path):
    """The AutoGPT+P ground truth CSV and GPT-4's mapping from the paper's data, read unmodified."""
    root = shared_datasets / "autogpt_p"
    gt = root / "chat_gpt_oam" / "ground_truth" / "simulation_classes_ground_truth.csv"
    gpt4 = root / "object_affordance_mapping" / "data" / "oam" / "gpt-4_.json"
    assert main(["bench", "oam", "--ground-truth", str(gt), "--strategy", "yesno", "--llm", f"scripted:{gpt4}",
                 "--limit", "12", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["classes"] == 12 and "proposed_affordances_alternative.csv" in report["definitions"]
    truth, mapping = {}, {}
    with gt.open() as fh:
        for row in list(csv.reader(fh))[1:]:
            truth.setdefault(row[0].lower().replace(" ", "_"), set()).add(row[1])
    truth = dict(list(truth.items())[:12])
    for entry in json.loads(gpt4.read_text())["oams"]:
        mapping[entry["object"]] = {a["name"] for a in entry["affordances"]} & set(report["affordances_asked"])
    o = report["strategies"]["yesno"]["overall"]
    assert (o["precision"], o["recall"], o["f1"]) == pytest.approx(independent_prf(mapping, truth))
    assert report["truth_affordances_not_asked"] == ["wrap-grasp"]
