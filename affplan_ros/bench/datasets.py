"""Where the original AutoGPT+P data lives and how to plan with it (shared by benchmarks and tests).

The evaluation scenes use object classes that the project's own kitchen OAM does not all
cover; the original ``object_affordance_mapping/data/oam/simulation_classes_2.json`` covers
every class of the evaluation scenes, so benchmarks and oracle tests load that one.

Layout of ``../shared/datasets/autogpt_p`` (see its SOURCE.md)::

    autogpt_p/data/evaluation/{scenarios,scenes,saycan/{scenarios,scenes}}   <- the "data" folder
    autogpt_p/logs/planning/planning_gpt_4_on_simulation_simple_task.log   <- the paper's runs
    object_affordance_mapping/data/oam/simulation_classes_2.json           <- the OAM
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

OAM_DIR_RELATIVE = Path("object_affordance_mapping") / "data" / "oam"
SIM_OAM_RELATIVE = OAM_DIR_RELATIVE / "simulation_classes_2.json"
# The SayCan scenes use their own classes (coke, 7up, trash_can, ...): saycan_oam.json covers them.
SAYCAN_OAM_NAME = "saycan_oam.json"

# set name -> scenario CSV under data/evaluation/scenarios
SIMULATION_SETS = {
    "simple_task": "evaluation_simple_task.csv",
    "simple_goal": "evaluation_simple_goal.csv",
    "complex_goal": "evaluation_complex_goal.csv",
    "knowledge": "evaluation_knowledge.csv",
    "implicit": "evaluation_implicit.csv",
}
# SayCan family -> scenario CSV under data/evaluation/saycan/scenarios (scenes under saycan/scenes)
SAYCAN_FAMILIES = {
    "nl_primitive": "saycan_a_nl_primitive.csv",
    "nl_verb": "saycan_b_nl_verb.csv",
    "nl_noun": "saycan_c_nl_noun.csv",
    "structured_language": "saycan_d_structured_language.csv",
    "embodiment": "saycan_e_embodiment.csv",
    "crowd_sourced": "saycan_f_crowd_sourced.csv",
    "long_horizon": "saycan_g_long_horizon.csv",
    "drawer": "saycan_x_drawer.csv",
}


class DataNotFoundError(FileNotFoundError):
    """The original AutoGPT+P data folder (or a file in it) is missing."""


@dataclass(frozen=True)
class ScenarioSet:
    """One benchmark set: a scenario CSV and the folder its scene files are relative to."""

    name: str            # "simple_task" or "saycan/nl_primitive"
    csv: Path
    scenes: Path
    log_name: str        # the part of the paper's log file name after planning_gpt_4_on_
    family: str = "simulation"   # or "saycan"


def autogpt_root() -> Optional[Path]:
    """``.../datasets/autogpt_p`` if this machine has ../shared (or AFFPLAN_SHARED), else None."""
    from affplan_ros.env import shared_data_dir

    datasets = shared_data_dir()
    if datasets is None or not (datasets / "autogpt_p").is_dir():
        return None
    return datasets / "autogpt_p"


def default_data_dir() -> Optional[Path]:
    """The original ``autogpt_p/data`` folder, or None when ../shared is absent."""
    root = autogpt_root()
    cand = root / "autogpt_p" / "data" if root else None
    return cand if cand is not None and cand.is_dir() else None


def resolve_data_dir(data: Optional[str | Path]) -> Path:
    """``--data`` or the default; a clear error when neither is there."""
    if data is None:
        found = default_data_dir()
        if found is None:
            raise DataNotFoundError(
                "the original AutoGPT+P data was not found: pass --data DIR (the autogpt_p/data folder "
                "with evaluation/scenarios and evaluation/scenes), set AFFPLAN_SHARED, or provide "
                "../shared/datasets/autogpt_p next to the checkout")
        return found
    path = Path(data).expanduser()
    if not (path / "evaluation").is_dir():
        raise DataNotFoundError(f"{path} is not an AutoGPT+P data folder: {path / 'evaluation'} is missing")
    return path


def sim_oam_path(data_dir: Optional[Path] = None) -> Path:
    """``simulation_classes_2.json`` next to the data folder (or in ../shared)."""
    candidates = []
    if data_dir is not None:
        # data_dir = <root>/autogpt_p/data  ->  <root>/object_affordance_mapping/...
        candidates.append(Path(data_dir).resolve().parents[1] / SIM_OAM_RELATIVE)
    root = autogpt_root()
    if root is not None:
        candidates.append(root / SIM_OAM_RELATIVE)
    for cand in candidates:
        if cand.is_file():
            return cand
    raise DataNotFoundError("the evaluation OAM simulation_classes_2.json was not found (looked at: "
                            + ", ".join(str(c) for c in candidates) + "); pass --oam PATH")


def default_oam_path(family: str, data_dir: Optional[Path] = None) -> Path:
    """The OAM that covers a family's scenes: simulation_classes_2.json or saycan_oam.json."""
    sim = sim_oam_path(data_dir)
    if family == "saycan":
        cand = sim.parent / SAYCAN_OAM_NAME
        if not cand.is_file():
            raise DataNotFoundError(f"the SayCan OAM {cand} was not found; pass --oam PATH")
        return cand
    return sim


def load_sim_oam(path: Optional[Path] = None, data_dir: Optional[Path] = None):
    from affplan_ros.core.knowledge.oam import load_oam

    return load_oam(path or sim_oam_path(data_dir))


def default_logs_dir(data_dir: Path) -> Path:
    """``<autogpt_p>/logs/planning`` beside the data folder."""
    return Path(data_dir).resolve().parent / "logs" / "planning"


def scenario_sets(data_dir: Path, name: str) -> list[ScenarioSet]:
    """The sets NAME stands for: one simulation set, ``saycan`` (every family), or ``all``."""
    ev = Path(data_dir) / "evaluation"
    sim = [ScenarioSet(n, ev / "scenarios" / f, ev / "scenes", f"simulation_{n}") for n, f in SIMULATION_SETS.items()]
    say = [ScenarioSet(f"saycan/{n}", ev / "saycan" / "scenarios" / f, ev / "saycan" / "scenes", f"saycan_saycan_{n}",
                       "saycan")
           for n, f in SAYCAN_FAMILIES.items()]
    if name == "all":
        chosen = sim + say
    elif name == "saycan":
        chosen = say
    elif name in SIMULATION_SETS:
        chosen = [s for s in sim if s.name == name]
    elif name.removeprefix("saycan/") in SAYCAN_FAMILIES:
        chosen = [s for s in say if s.name == f"saycan/{name.removeprefix('saycan/')}"]
    else:
        raise ValueError(f"unknown set {name!r}; choose one of {', '.join(set_names())}")
    missing = [str(s.csv) for s in chosen if not s.csv.is_file()]
    if missing:
        raise DataNotFoundError("scenario file(s) missing: " + ", ".join(missing))
    return chosen


def set_names() -> list[str]:
    return [*SIMULATION_SETS, "saycan", *(f"saycan/{n}" for n in SAYCAN_FAMILIES), "all"]
