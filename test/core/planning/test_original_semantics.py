"""Our oracle plans judged by AutoGPT+P's original semantics (test/original_semantics.py, which
shares no code with the planner): every plan must reach its scenario's desired goal, and every
step the original capabilities would not allow must be one of the differences listed here, each
with its reason. A new difference, or a listed one that is gone, fails the test: the list is
updated on purpose (a fixed domain shrinks it).

Measured November 2026: 254 cases, 246 with steps (the others' goals hold at the start), every
goal reached; 18 differences in 8 plans, all deliberate, all in the simulation sets, none in
SayCan (26 in 15 plans before the domain kept `free` and sizes).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from original_semantics import World, goal_holds, load_capabilities, load_oam, load_scene, replay

pytestmark = [pytest.mark.shared, pytest.mark.slow]

# Our parameter names per action (config: affplan_ros/core/knowledge/data/capabilities.yaml). Written
# here again on purpose: the judge must not read our domain.
OUR_PARAMETERS = {
    "grasp": ["object", "from", "at"], "place": ["object", "on", "at"], "take_out": ["object", "from", "at"],
    "putin": ["object", "in", "at"], "handover": ["recipient", "object"], "receive_object": ["giver", "object"],
    "move": ["start", "end"], "pour": ["source", "poured_object", "target", "at"],
    "fill": ["source", "poured_liquid", "target", "at"], "open": ["object", "at"], "close": ["object", "at"],
    "chop": ["tool", "target", "on", "at"], "heat_liquid": ["liquid", "container", "heater", "at"],
    "wet_swipe": ["tool", "target", "at"], "wetten": ["object", "container", "liquid"],
    "stack": ["top", "bottom", "at"],
}

WETTEN = "no original capability (our environment action)"
SURFACE = "type: {} is not carry"
NAIL = "type: {} is not carry"
ASSUMED_ON = "precondition: (on {} {})"
# (case, step index) -> what the judge says. Reasons, by kind:
# * WETTEN (deliberate): the original wets a swipe through an actor-less environment action that
#   is not in all_capabilities.json (its log plans `wetten tissue0 bottle0 bottle0 water0`); ours
#   is that action, `wetten`.
# * SURFACE (deliberate): our wet_swipe wipes surfaces too (a counter, a table); the original
#   lets it wipe only carryables, although its own scenarios ask to wipe the counter.
# * NAIL (deliberate, bench data): `affplan bench plan` gives nail `carry` (bench/data/
#   oam_corrections.yaml, with the evidence); the original OAM does not, its run carries nails.
# * ASSUMED_ON (deliberate): the scene lists cloth0 at counter0 with no relation holding it; our
#   task assumes it stands on the counter (planning/task.py, with a warning), the original can
#   never pick it up.
# Fixed in issue 15 (the list shrank from 26 differences in 15 plans): our grasp dropped the
# original's `(free ?object)` (5 plates and cloths taken from under what stood on them), and
# "Clear the counter" put box0 into spoon0 and then spoon0 onto box0 (a containment cycle); the
# compiled `free` (planning/derived.py), `fits` (knowledge/data/objects.yaml) and the one-level
# no-cycle preconditions make those plans impossible.
EXPECTED = {
    ("simple_task#27", 9): WETTEN, ("simple_task#27", 11): SURFACE.format("counter0"),
    ("simple_goal#27", 9): WETTEN, ("simple_goal#27", 11): SURFACE.format("counter0"),
    ("complex_goal#6", 0): ASSUMED_ON.format("cloth0", "counter0"),
    ("complex_goal#6", 3): WETTEN, ("complex_goal#6", 5): SURFACE.format("table0"),
    ("knowledge#17", 3): WETTEN,
    ("implicit#20", 9): WETTEN, ("implicit#20", 11): SURFACE.format("counter0"),
    ("complex_goal#17", 0): NAIL.format("nail1"), ("complex_goal#17", 1): NAIL.format("nail1"),
    ("complex_goal#17", 9): NAIL.format("nail0"), ("complex_goal#17", 10): NAIL.format("nail0"),
    ("complex_goal#18", 0): NAIL.format("nail1"), ("complex_goal#18", 2): NAIL.format("nail1"),
    ("knowledge#7", 5): NAIL.format("nail0"), ("knowledge#7", 7): NAIL.format("nail0"),
}


def _steps(plan: list[str]):
    for text in plan:
        action, *words = text.split()
        actor, args = ("", words) if action == "wetten" else (words[0], words[1:])
        yield action, actor, OUR_PARAMETERS[action], args


def test_oracle_plans_under_the_original_semantics(shared_datasets: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan"
    run = subprocess.run([sys.executable, "-m", "affplan_ros.cli", "bench", "plan", "--set", "all", "--llm", "oracle",
                          "--jobs", "2", "--out", str(out)], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    cases = json.loads((out / "results.json").read_text())["cases"]
    assert len(cases) == 254

    data = shared_datasets / "autogpt_p"
    caps = load_capabilities(data / "planning_memory/data/capabilities/all_capabilities.json")
    oams = {family: load_oam(data / "object_affordance_mapping/data/oam" / name)
            for family, name in (("simulation", "simulation_classes_2.json"), ("saycan", "saycan_oam.json"))}
    found, unreached, planned = {}, [], 0
    for case in cases:
        if not case["plan"]:
            continue
        planned += 1
        key = f"{case['set']}#{case['index']}"
        family = "saycan" if case["set"].startswith("saycan") else "simulation"
        scenes = data / "autogpt_p/data/evaluation" / ("saycan/scenes" if family == "saycan" else "scenes")
        world = World(load_scene(scenes / case["scene_file"]), oams[family])
        for diff in replay(world, caps, _steps(case["plan"])):
            found[(key, diff.step)] = diff.what
        if not goal_holds(world, case["desired_goal"]):
            unreached.append(key)
    assert planned == 246
    assert unreached == [], f"plans that do not reach the desired goal under the original semantics: {unreached}"
    new = {k: v for k, v in found.items() if EXPECTED.get(k) != v}
    gone = {k: v for k, v in EXPECTED.items() if found.get(k) != v}
    assert not new and not gone, f"differences not explained: {new}; explained ones no longer found: {gone}"
