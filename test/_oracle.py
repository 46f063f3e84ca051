"""Helpers shared by the core tests: where the AutoGPT+P data is, oracle-scenario runs."""
from __future__ import annotations

from pathlib import Path

import pytest

from affplan_ros.bench.datasets import autogpt_root
from affplan_ros.bench.datasets import sim_oam_path as _sim_oam_path

REPO = Path(__file__).resolve().parents[1]


def shared_dir() -> Path | None:
    root = autogpt_root()  # AFFPLAN_SHARED or ../shared next to the checkout
    return root.parents[1] if root is not None else None


def autogpt_dir() -> Path:
    root = autogpt_root()
    if root is None:
        pytest.skip("AutoGPT+P data not found: set AFFPLAN_SHARED or provide ../shared next to "
                    "the repository (datasets/autogpt_p/...)")
    return root


def sim_oam_path() -> Path:
    # simulation_classes_2.json is the OAM that covers every class of the evaluation scenes
    # (the lookup lives in affplan_ros.bench.datasets, shared with `affplan bench plan`).
    autogpt_dir()
    return _sim_oam_path()


def run_oracle(csv_name: str, prune: bool, mode: str = "optimal", limit: int | None = None,
               time_limit: float = 60.0):
    """Plan every scenario of a CSV with its desired goal; (case, result) pairs."""
    from affplan_ros.core.files.scene_io import load_scene, read_scenarios
    from affplan_ros.core.goals.extraction import parse_goal
    from affplan_ros.core.goals.formula import to_dnf
    from affplan_ros.core.knowledge.oam import load_oam
    from affplan_ros.core.planning.planner import plan_for_goal

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
