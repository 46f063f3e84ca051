"""``affplan demo``: the suite up on the simulated kitchen, one sample task, a readable transcript.

What ``make demo`` runs: ``affplan up --robot sim`` (every node its own process, talking over
DDS; ``make demo-physics`` adds ``--physics``: the robot is the MuJoCo world) and ``affplan
ask`` with the sample task of ``config/demo.yaml``: the language backend picks tools round by
round (Explore, then Plan), the goal is checked (syntax, Prolog) and corrected, Fast Downward
plans, the executor runs every step on the simulated robot.
"""
from __future__ import annotations

import argparse
import os
import random

import yaml

from affplan_ros.env import config_file


def run_demo(args: argparse.Namespace) -> int:
    # Heavy imports here, not at module level: `affplan --help` stays instant.
    from affplan_ros.action import ExecuteTask
    from affplan_ros.launch_xml import LaunchError
    from affplan_ros.launcher import NodeStartError
    from affplan_ros.llm.config import CONFIGURE_HELP
    from affplan_ros.suite import backend_label, start_suite
    from affplan_ros.task_client import Person, SuiteClient, Transcript, print_result

    path = config_file("demo.yaml")
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    task = args.task or config["task"]
    # The demo's nodes get a DDS domain of their own so they never meet a running suite.
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(102, 199)))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    say = Transcript()
    label, offline = backend_label()
    say("llm", label)
    if offline:
        say.more(CONFIGURE_HELP + " for requests it does not understand")
    launch_args = {"time_scale": str(config.get("time_scale", 0.25)),
                   "scenario": str(path.parent / config.get("scenario", "scenarios/kitchen.yaml")),
                   "physics": "true" if args.physics else "false"}
    try:
        # The sample task runs the same way on every machine: nothing learned earlier changes it.
        suite = start_suite("sim", launch_args, shared_params={"knowledge_file": ""})
    except (LaunchError, NodeStartError) as exc:
        say("error", f"the suite did not start: {exc}")
        return 1
    with suite:
        say("suite", f"{len(suite.processes)} nodes up in {suite.seconds:.1f} s, each its own process "
                     f"({', '.join(p.name for p in suite.processes)}; ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']})")
        say.more(f"simulated world: {config.get('scenario')}"
                 + (" as MuJoCo physics (every step a motion)" if args.physics else " (symbolic)"))
        with SuiteClient("/affplan", "affplan_demo") as client:
            outcome = client.run_task(task, say, person=Person(say, "yes"), timeout=300.0)
            if outcome is None:
                return 1
            print_result(say, outcome)
            if outcome.result.stop_reason == ExecuteTask.Result.STOP_REJECTED:
                say.more("nothing was planned or executed; " + CONFIGURE_HELP)
                return 2
            show_memory(client, say)
            return 0 if outcome.result.success else 1


def show_memory(client, say) -> None:
    """What the memory node knows after the task (as `affplan memory` prints it, in short)."""
    import json

    from affplan_ros.core.model.memory import Memory
    from affplan_ros.srv import GetMemory

    got, error = client.call(GetMemory, "get_memory", GetMemory.Request())
    if got is None:
        say("memory", f"not readable: {error}")
        return
    memory = Memory.from_dict(json.loads(got.json))
    held = [f"{r.args[0]} in the hand of {r.args[1]}" for r in memory.relations if r.predicate == "inhand"]
    say("memory", f"explored: {', '.join(memory.explored())}; {'; '.join(held) or 'nothing held'}; "
                  f"robot0 at {memory.agent_location('robot0')}; {len(memory.instructions)} request(s) remembered")
