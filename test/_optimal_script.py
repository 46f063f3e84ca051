"""Optimal scripted answers for the AutoGPT+P benchmarks, derived from each scenario.

This is the *test's* knowledge, not the benchmark's: from the ground-truth scene and the
desired goal it works out what a perfect LLM would answer, so that a benchmark run with
these answers checks the loop, the memory and the simulation independently of any LLM:

* the locations to explore: where the objects of an optimal full-knowledge plan for the
  desired goal are (and the places it moves to) that the scenario has not explored;
* the alternatives to ask for: a class the request names that the scene lacks, whose
  allowed substitute that plan uses; Algorithm 2's questions are answered with the
  affordances both classes share, and with the substitute where the candidates are several;
* then PLAN with the desired goal (the partial set: PARTIAL_PLAN, then FAILURE).

Run as a script to write a script file for ``affplan bench autogptp|alternative --llm scripted:FILE``:
    python test/_optimal_script.py autogptp OUT.yaml [--data DIR]
    python test/_optimal_script.py alternative OUT.yaml [--data DIR]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml


def _oam(data: Path):
    from affplan_ros.bench.autogptp import load_oam_spec, oam_spec

    return load_oam_spec(oam_spec(None, data))  # the benchmarks' default OAM


def _words(task: str) -> set[str]:
    t = task.lower()
    return set(re.findall(r"[a-z_]+", t)) | {w.replace(" ", "_") for w in re.findall(r"[a-z]+ [a-z]+", t)}


def alternative_answers(missing: str, substitute: str, known_classes, oam) -> dict[str, list[str]]:
    """Answers to Algorithm 2's questions that lead to ``substitute`` ("affordances",
    "object"); known_classes: classes of the objects the robot knows then."""
    if missing not in oam:
        return {"object": [f"OBJECT: {substitute}"]}
    shared = sorted(oam.affordances_of(missing) & oam.affordances_of(substitute))
    candidates = {c for c in known_classes if c != missing and c in oam and set(shared) <= oam.affordances_of(c)}
    out = {"affordances": [f"The request needs {', '.join(shared) or 'none of them'}: {shared!r}"]}
    if len(candidates) != 1:
        out["object"] = [f"The best replacement is the {substitute}.\nOBJECT: {substitute}"]
    return out


def _plan_with(executor, known_locations, dnf, oam):
    """An optimal plan for ``dnf`` knowing only ``known_locations``, and that memory."""
    from affplan_ros.core.planning.planner import plan_for_goal

    memory = executor.initial_memory(sorted(known_locations))
    known = set(memory.objects) | set(memory.locations)
    # A perfect LLM names only objects it knows: drop disjuncts with unknown objects.
    usable = [c for c in dnf if all(a in known for l in c for a in l.args)]
    if not usable:
        return None, memory, dnf
    plan = plan_for_goal(memory.scene(), usable, oam=oam, unknown_classes="warn", time_limit=60)
    return (plan if plan.solved else None), memory, usable


def autogptp_case_answers(case, scene, oam, set_name: str) -> dict[str, list[str]]:
    from affplan_ros.bench.autogptp import allowed_substitutions, desired_dnf
    from affplan_ros.core.goals.formula import render_dnf
    from affplan_ros.sim.executor import SimulatedExecutor

    dnf, _ = desired_dnf(case.desired_goal, scene, oam)
    explored = set(scene.locations) if (case.explored or "all") == "all" else set(case.explored.split())
    executor = SimulatedExecutor(scene, oam=oam)
    located = {a[1]: a[2] for a in (f.strip("()").split() for f in executor.task.init if f.startswith("(located"))}
    # First try knowing only the explored places and those of the goal's objects; else everything.
    goal_places = {located.get(a, a) for c in dnf for l in c for a in l.args} & set(scene.locations)
    plan, memory, usable = _plan_with(executor, explored | goal_places, dnf, oam)
    if plan is None:
        plan, memory, usable = _plan_with(executor, set(scene.locations), dnf, oam)
    if plan is None:  # no plan even with full knowledge (a domain gap): plan and let it fail
        tool = "PARTIAL_PLAN" if set_name == "partial" else "PLAN"
        return {"tool": [f"SELECTED TOOL: {tool}"], "goal": [f"(:goal {render_dnf(usable)})"]}
    need, used, first_use = [], set(), {}
    for k, step in enumerate(plan.plan):
        for arg in step.args:
            if arg in scene.agents:
                continue
            used.add(arg)
            loc = arg if arg in scene.locations else located.get(arg)
            if loc and loc not in explored and loc not in need:
                need.append(loc)
            if loc:
                first_use.setdefault(loc, k)
    # Exploring moves the robot: end where the plan acts first, so the plan starts there.
    need.sort(key=lambda l: -first_use[l])
    final = executor.initial_memory(sorted(explored | set(need)))
    known = final.classes()
    names = set(final.objects) | set(final.locations)
    goal_text = f"(:goal {render_dnf([c for c in usable if all(a in names for l in c for a in l.args)])})"
    used_classes = {scene.objects[o].class_name for o in used if o in scene.objects}
    answers: dict[str, list[str]] = {"tool": [f"SELECTED TOOL: EXPLORE {l}" for l in need]}
    words = _words(case.task)
    present = {o.class_name for o in scene.objects.values()}
    for missing, sub in sorted(allowed_substitutions(str(case.subs_path)) if case.subs_path else ()):
        if missing in words and missing not in present and sub in used_classes and \
                f"SELECTED TOOL: SUGGEST_ALTERNATIVE {missing}" not in answers["tool"]:
            answers["tool"].append(f"SELECTED TOOL: SUGGEST_ALTERNATIVE {missing}")
            for kind, items in alternative_answers(missing, sub, known, oam).items():
                answers.setdefault(kind, []).extend(items)
    if set_name == "partial":
        answers["tool"] += ["SELECTED TOOL: PARTIAL_PLAN", "Nothing more can be done.\nFAILURE"]
    else:
        answers["tool"].append("SELECTED TOOL: PLAN")
    answers["goal"] = [goal_text]
    return answers


def autogptp_script(data: Path, sets=("plan", "partial", "exploration", "alternative", "complex"),
                    only: set[str] | None = None) -> dict:
    from affplan_ros.core.files.scene_io import load_scene, read_scenarios

    oam = _oam(data)
    ev = data / "evaluation"
    out = {}
    for name in sets:
        for i, case in enumerate(read_scenarios(ev / "scenarios" / f"autogptp_{name}.csv").cases):
            cid = f"{name}#{i}"
            if only is not None and cid not in only:
                continue
            case.subs_path = ev / "allowed_substitutions" / case.substitutions_file if case.substitutions_file else None
            out[cid] = autogptp_case_answers(case, load_scene(ev / "scenes" / case.scene_file), oam, name)
    return out


def alternative_script(data: Path, method: str = "affordance", sets=("simple", "medium", "complex")) -> dict:
    """Answers for `bench alternative`: the first allowed alternative present in the scene."""
    import csv

    from affplan_ros.core.files.scene_io import load_scene

    oam = _oam(data)
    ev = data / "evaluation"
    out = {}
    for name in sets:
        with open(ev / "scenarios" / f"substitution_{name}.csv", newline="") as fh:
            for i, row in enumerate(csv.DictReader(fh)):
                scene = load_scene(ev / "scenes" / row["scene_file"])
                classes = {o.class_name for o in scene.objects.values() if not o.is_agent}
                # simple#5 offers none of its allowed alternatives (a data error): answer anyway.
                sub = next((a for a in row["alternatives"].split() if a in classes and a != row["missing_object"]),
                           sorted(classes)[0])
                if method == "naive":
                    out[f"{name}#{i}"] = {"object": [f"OBJECT: {sub}"]}
                else:
                    out[f"{name}#{i}"] = alternative_answers(row["missing_object"], sub, classes, oam)
    return out


def main(argv=None) -> int:
    from affplan_ros.bench.datasets import resolve_data_dir

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("benchmark", choices=["autogptp", "alternative"])
    p.add_argument("out")
    p.add_argument("--data")
    p.add_argument("--method", default="affordance", choices=["affordance", "naive"])
    a = p.parse_args(argv)
    data = resolve_data_dir(a.data)
    script = autogptp_script(data) if a.benchmark == "autogptp" else alternative_script(data, a.method)
    Path(a.out).write_text(yaml.safe_dump(script, sort_keys=False, allow_unicode=True))
    print(f"wrote {len(script)} cases to {a.out}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
