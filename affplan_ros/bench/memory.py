"""`affplan bench memory`: the robot's memory built only from what its camera saw, against the
physics world's truth, and tasks planned on that memory executed in physics.

The robot is the MuJoCo world's (``PerceivingExecutor``): Explore turns the head to a place,
renders the RGB-D head camera and runs the perception pipeline (YOLO ``models/kitchen_physics.pt``,
OAD, on/in from boxes and depth, names by where things are in the map), opening a closed door as
a step first. Memory starts with the place names, the agents and where the person is; nothing of
the scene file's objects.

1. **Exploration**: on the demo kitchen and on random kitchens from the dataset's held-back seeds
   (``sim/physics/dataset.py``, seeds the detector was not trained on), the robot explores every
   place; memory is then compared with the physics state: objects (a remembered object counts when
   a real thing of its class is where the camera put it: precision; real things found: recall) and
   the on/in relations among them.
2. **Tasks**: the kitchen tasks of ``bench/data/physics_faults.yaml`` through the tool-selection
   loop as the suite runs them without an endpoint (offline interpreter, mid-level repair,
   learning), from that empty memory: completed when the physics shows the desired goal.

Writes results.json, summary.md and memory_bench.png.
"""
from __future__ import annotations

import argparse
import statistics
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

from affplan_ros.bench.frame import BenchSetupError, command, output_option, save, setup_errors
from affplan_ros.bench.report import rate

DEFAULT_MODEL = "models/kitchen_physics.pt"
DEFAULT_SCENES = 8
# The perception node's own minimum confidence (its `confidence` parameter, config/perception.yaml):
# memory is measured as the suite perceives.
NODE_CONFIDENCE = 0.35
PLACEMENTS = ("on", "in")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        help="detector weights; relative paths also looked up in config/ (default: %(default)s)")
    parser.add_argument("--confidence", type=float, default=NODE_CONFIDENCE,
                        help="minimum detection confidence (default: the perception node's, %(default)s)")
    parser.add_argument("--scenes", type=int, default=DEFAULT_SCENES,
                        help="random held-back kitchens explored besides the demo kitchen (default: %(default)s)")
    parser.add_argument("--tasks", help="tasks YAML (default: bench/data/physics_faults.yaml; their faults are not "
                                        "injected here)")
    parser.add_argument("--no-tasks", action="store_true", help="explore only")
    output_option(parser, "memory")


@command
def run(args: argparse.Namespace) -> int:
    from affplan_ros.bench.physics_faults import DEFAULT_TASKS, load_tasks

    if args.scenes < 0:
        raise BenchSetupError(f"--scenes {args.scenes}: must be 0 or more")
    if not 0.0 <= args.confidence <= 1.0:
        raise BenchSetupError(f"--confidence {args.confidence:g}: a detection confidence is between 0 and 1")
    tasks = [] if args.no_tasks else load_tasks(Path(args.tasks) if args.tasks else DEFAULT_TASKS)
    with setup_errors(OSError, ValueError):
        perceive = Perception(args.model, args.confidence)
    out = Path(args.out)
    scenes = scene_texts(args.scenes)
    print(f"bench memory: {len(scenes)} scenes explored, {len(tasks)} tasks, detector {args.model} -> {out}",
          flush=True)
    t0 = time.monotonic()
    explored = []
    for name, text in scenes:
        r = explore_scene(name, text, perceive)
        explored.append(r)
        print(f"  {name}: {_explore_line(r)}", flush=True)
    runs = []
    for task in tasks:
        r = run_task(task, perceive)
        runs.append(r)
        print(f"  {task['name']}: {'completed' if r['completed'] else 'NOT completed'} ({r['stop']}; "
              f"{' > '.join(r['tools'])})", flush=True)
    report = build_report(explored, runs, args.model, time.monotonic() - t0)
    report["confidence"] = args.confidence
    save(out, report, summary_markdown(report), plot=("memory_bench.png", lambda p: write_plot(report, p)))
    return 0


class Perception:
    """One detector for every scene; a fresh pipeline (its own names) per world."""

    def __init__(self, model: str, confidence: float = NODE_CONFIDENCE):
        from affplan_ros.core.knowledge.oam import load_oam
        from affplan_ros.core.perception.detection import DetectorError
        from affplan_ros.core.perception.pipeline import PerceptionPipeline, PerceptionSettings
        from affplan_ros.env import config_file, share_dir

        self.oam = load_oam()
        self.settings = PerceptionSettings.from_file(config_file("perception_settings.yaml"), {"model": model,
                                                                                         "confidence": confidence})
        first = PerceptionPipeline(self.settings, self.oam)
        try:
            self.detector = first.load_detector([share_dir() / "config", Path.cwd()])
        except DetectorError as exc:
            raise BenchSetupError(f"detector {model!r}: {exc}") from exc

    def executor(self, scene: Any) -> Any:
        """A physics world of ``scene`` seen through a pipeline of its own (names start afresh)."""
        from affplan_ros.core.perception.pipeline import PerceptionPipeline
        from affplan_ros.sim.physics.perceiving import PerceivingExecutor

        return PerceivingExecutor(scene, oam=self.oam, pipeline=PerceptionPipeline(self.settings, self.oam,
                                                                                 self.detector))


def scene_texts(count: int) -> list[tuple[str, str]]:
    """The demo kitchen and ``count`` random kitchens from held-back seeds."""
    import numpy as np

    from affplan_ros.env import config_file
    from affplan_ros.sim.physics.dataset import EVAL_SEED, random_scene_text

    # Above the views `bench perception --source physics` takes: other kitchens again.
    seeds = [EVAL_SEED + 5000 + i for i in range(count)]
    return ([("kitchen", config_file("scenarios/kitchen.txt").read_text())]
            + [(f"seed{s}", random_scene_text(np.random.default_rng(s))) for s in seeds])


def starting_memory(executor: Any) -> Any:
    """Place names, the agents and where each person is; nothing the camera has not seen."""
    memory = executor.initial_memory([])
    for rel in executor.scene.relations:
        if rel.predicate == "at" and rel.args[0] in executor.scene.agents and rel.args[0] != executor.robot:
            memory.set_agent_location(*rel.args)
    return memory


def explore_scene(name: str, text: str, perceive: Perception) -> dict:
    from affplan_ros.core.files.scene_io import parse_scene_text

    r: dict[str, Any] = {"scene": name, "error": None}
    with _case(r), closing(perceive.executor(parse_scene_text(text, source=name))) as executor:
        memory = starting_memory(executor)
        notes = []
        for location in executor.scene.locations:
            res = executor.explore(location)
            if res.success:
                memory.merge(res.observation)
            if res.note or not res.success:
                notes.append(f"{location}: {res.note or (res.failure.why if res.failure else 'failed')}")
        r.update(score_memory(memory, executor))
        r["notes"] = notes
        r["views"] = len(executor.frames)
    return r


@contextmanager
def _case(r: dict) -> Iterator[None]:
    """Times one case; an exception is recorded as its ``error`` and the benchmark goes on."""
    t0 = time.monotonic()
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - recorded; the benchmark goes on
        r["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        r["wall_seconds"] = round(time.monotonic() - t0, 2)


def score_memory(memory: Any, executor: Any) -> dict:
    """Memory against the physics: objects by grounding (a real thing of the class where the
    camera saw it), on/in relations with both ends grounded (places are named by the map)."""
    from affplan_ros.sim.physics.world import ThingKind

    world = executor.world
    truth_objects = {n for n, t in world.things.items() if t.kind == ThingKind.OBJECT}
    places = set(executor.scene.locations)
    remembered = [n for n, o in memory.objects.items() if not o.is_agent and n not in places]
    grounded = {n: executor.grounding[n] for n in remembered if n in executor.grounding}
    found = set(grounded.values())
    # Two names for one thing: the second is no new object.
    true_names = len({g for g in grounded.values()})
    truth_rel = {a for a in executor.relations() if a[0] in PLACEMENTS and len(a) == 3 and a[1] in truth_objects}
    believed = {(r.predicate, *r.args) for r in memory.relations if r.predicate in PLACEMENTS and len(r.args) == 2}

    def ground(name: str) -> Optional[str]:
        return name if name in places else grounded.get(name)

    mapped = {(p, ground(a), ground(b)) for p, a, b in believed}
    right = {m for m in mapped if None not in m} & truth_rel
    per_class: dict[str, dict[str, int]] = {}
    for n in truth_objects:
        c = per_class.setdefault(world.things[n].class_name, {"truth": 0, "found": 0})
        c["truth"] += 1
        c["found"] += n in found
    return {
        "objects_truth": len(truth_objects), "objects_remembered": len(remembered),
        "objects_right": true_names, "objects_found": len(found & truth_objects),
        "relations_truth": len(truth_rel), "relations_remembered": len(believed), "relations_right": len(right),
        "missed": sorted(truth_objects - found), "false": sorted(set(remembered) - set(grounded)),
        "wrong_relations": sorted(" ".join(b) for b in believed
                                  if (b[0], ground(b[1]), ground(b[2])) not in truth_rel),
        "per_class": per_class,
    }


def run_task(task: dict, perceive: Perception) -> dict:
    from affplan_ros.bench.physics_faults import run_tool_loop
    from affplan_ros.core.files.scene_io import load_scene
    from affplan_ros.env import config_file

    r: dict[str, Any] = {"task": task["name"], "instruction": task["task"], "goal": task["goal"], "completed": False,
                         "stop": None, "tools": [], "error": None}
    with _case(r), closing(perceive.executor(load_scene(config_file(f"scenarios/{task['scene']}")))) as executor:
        run_tool_loop(task, executor, executor, starting_memory(executor), perceive.oam, r)
        r["views"] = len(executor.frames)
    return r


def _explore_line(r: dict) -> str:
    if r["error"]:
        return f"error: {r['error']}"
    return (f"objects {r['objects_right']}/{r['objects_remembered']} right, {r['objects_found']}/"
            f"{r['objects_truth']} found; relations {r['relations_right']}/{r['relations_remembered']} right of "
            f"{r['relations_truth']}")


def _ratio(a: int, b: int) -> Optional[float]:
    return round(a / b, 3) if b else None


def build_report(explored: list[dict], runs: list[dict], model: str, seconds: float) -> dict:
    ok = [r for r in explored if not r["error"]]
    total = {k: sum(r[k] for r in ok) for k in ("objects_truth", "objects_remembered", "objects_right",
                                                 "objects_found", "relations_truth", "relations_remembered",
                                                 "relations_right")}
    per_class: dict[str, dict[str, int]] = {}
    for r in ok:
        for c, v in r["per_class"].items():
            acc = per_class.setdefault(c, {"truth": 0, "found": 0})
            acc["truth"] += v["truth"]
            acc["found"] += v["found"]
    return {
        "benchmark": "memory", "model": model, "seconds": round(seconds, 1),
        "exploration": {
            "scenes": len(explored), "errors": len(explored) - len(ok), **total,
            "object_precision": _ratio(total["objects_right"], total["objects_remembered"]),
            "object_recall": _ratio(total["objects_found"], total["objects_truth"]),
            "relation_precision": _ratio(total["relations_right"], total["relations_remembered"]),
            "relation_recall": _ratio(total["relations_right"], total["relations_truth"]),
            "median_scene_seconds": statistics.median(r["wall_seconds"] for r in explored) if explored else None,
            "recall_per_class": {c: _ratio(v["found"], v["truth"]) for c, v in sorted(per_class.items())},
        },
        "tasks": {"runs": len(runs), "completed": sum(r["completed"] for r in runs)},
        "scenes": explored, "runs": runs,
    }


def summary_markdown(report: dict) -> str:
    e, t = report["exploration"], report["tasks"]
    L = ["# Memory from the camera (`affplan bench memory`)\n",
         f"- detector `{report['model']}` on the physics world's rendered head camera (320x240 RGB-D); memory "
         "starts with the place names and the agents only",
         f"- {e['scenes']} scenes explored (the demo kitchen + random held-back kitchens), every place; "
         f"wall time {report['seconds']:.0f} s in all\n",
         "## What memory holds after exploring\n", "| Measure | Value |", "|---|---|",
         f"| objects remembered that are real (precision) | {rate(e['objects_right'], e['objects_remembered'])} |",
         f"| real objects remembered (recall) | {rate(e['objects_found'], e['objects_truth'])} |",
         f"| on/in relations right (precision) | {rate(e['relations_right'], e['relations_remembered'])} |",
         f"| true on/in relations remembered (recall) | {rate(e['relations_right'], e['relations_truth'])} |",
         f"| median seconds per scene | {e['median_scene_seconds']} |", "",
         "| Class | Recall |", "|---|---|"]
    L += [f"| {c} | {v} |" for c, v in e["recall_per_class"].items()]
    L += ["", f"## Tasks from that memory: {t['completed']}/{t['runs']} completed in physics\n",
          "| Task | Completed | Stop | Rounds | Wall s |", "|---|---|---|---|---|"]
    for r in report["runs"]:
        L.append(f"| {r['task']} | {'yes' if r['completed'] else 'no'} | {r['error'] or r['stop']} | "
                 f"{' > '.join(r['tools'])} | {r['wall_seconds']} |")
    L.append("\n## Scenes\n")
    for r in report["scenes"]:
        if r["error"]:
            L.append(f"- **{r['scene']}**: error {r['error']}")
            continue
        L.append(f"- **{r['scene']}**: {_explore_line(r)}; missed {', '.join(r['missed']) or '-'}; not real "
                 f"{', '.join(r['false']) or '-'}; wrong relations {', '.join(r['wrong_relations']) or '-'}")
    return "\n".join(L) + "\n"


def write_plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per_class = report["exploration"]["recall_per_class"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(per_class) + 2), 3.6))
    ax.bar(list(per_class), [100.0 * (v or 0.0) for v in per_class.values()], color="tab:green")
    ax.set_ylabel("% of the real objects in memory")
    ax.set_ylim(0, 105)
    ax.set_title("Objects remembered after exploring, per class")
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["build_report", "explore_scene", "run", "run_task", "score_memory", "summary_markdown"]
