"""Helpers shared by the core tests: where the AutoGPT+P data is, oracle-scenario runs."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_dir() -> Path | None:
    env = os.environ.get("AFFPLAN_SHARED")
    cand = Path(env) if env else (REPO / ".." / "shared").resolve()
    return cand if (cand / "datasets" / "autogpt_p").is_dir() else None


def autogpt_dir() -> Path:
    s = shared_dir()
    if s is None:
        pytest.skip("AutoGPT+P data not found: set AFFPLAN_SHARED or provide ../shared next to "
                    "the repository (datasets/autogpt_p/...)")
    return s / "datasets" / "autogpt_p"


def sim_oam_path() -> Path:
    # simulation_classes_2.json is the OAM that covers every class of the evaluation scenes.
    return autogpt_dir() / "object_affordance_mapping" / "data" / "oam" / "simulation_classes_2.json"


def run_oracle(csv_name: str, prune: bool, mode: str = "optimal", limit: int | None = None,
               time_limit: float = 60.0):
    """Plan every scenario of a CSV with its desired goal; (case, result) pairs."""
    from affplan_ros.core.goal import parse_goal, to_dnf
    from affplan_ros.core.oam import load_oam
    from affplan_ros.core.planner import plan_for_goal
    from affplan_ros.core.scene_io import load_scene, read_scenarios

    base = autogpt_dir() / "autogpt_p" / "data" / "evaluation"
    oam = load_oam(sim_oam_path())
    cases = read_scenarios(base / "scenarios" / csv_name).cases[:limit]
    out = []
    for case in cases:
        scene = load_scene(base / "scenes" / case.scene_file)
        goal = to_dnf(parse_goal(case.desired_goal))
        try:
            res = plan_for_goal(scene, goal, oam=oam, prune=prune, mode=mode,
                                time_limit=time_limit, unknown_classes="warn")
        except Exception as exc:  # report per case, keep going
            res = exc
        out.append((case, res))
    return out
