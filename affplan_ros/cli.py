"""``affplan``: the person-facing command line of affplan_ros.

Every subcommand imports what it needs only when it runs, so ``affplan --help`` is instant.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Sequence

from affplan_ros import oam_commands
from affplan_ros.bench.frame import BENCHMARKS
from affplan_ros.env import load_env

EPILOG = """\
examples:
  affplan demo                              plan and run a sample kitchen task in simulation
  affplan up --robot sim                    bring the suite up on this machine
  affplan ask "bring me an apple"           send a task to a running suite and watch it
  affplan memory                            print what the robot knows
  affplan interfaces                        list the suite's ROS 2 messages, services, actions
  affplan bench plan --set all --llm oracle run the AutoGPT+P Plan Tool benchmark
"""


def _lazy(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A subcommand implemented in affplan_ros.<module>, imported only when it runs."""
    def run(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(f"affplan_ros.{module}"), function)(args)
    return run


def _cmd_interfaces(args: argparse.Namespace) -> int:
    from affplan_ros.interfaces import interface_types

    kinds = [args.kind] if args.kind else ["msg", "srv", "action"]
    for kind in kinds:
        for name, cls in interface_types(kind).items():
            print(f"affplan_ros/{kind}/{name}")
            if args.verbose:
                print("    " + cls.__doc__.strip().splitlines()[0] if cls.__doc__ else "")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from affplan_ros.demo import run_demo

    return run_demo(args)


def _cmd_up(args: argparse.Namespace) -> int:
    from affplan_ros.suite import run_up

    return run_up(args)


def _cmd_ask(args: argparse.Namespace) -> int:
    from affplan_ros.task_client import run_ask

    return run_ask(args)


def _cmd_memory(args: argparse.Namespace) -> int:
    from affplan_ros.task_client import run_memory

    return run_memory(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="affplan",
        description=(
            "Command a robot in natural language: affordance-based perception, "
            "LLM-written PDDL goals checked in Prolog, Fast Downward plans, and "
            "execution through ROS 2 skill action servers."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--namespace", default="/affplan",
                        help="ROS 2 namespace of the suite's topics, services and actions (default: %(default)s)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("demo", help="plan and execute a sample kitchen task in simulation",
                       description="Run the main job end to end on the built-in simulated robot and print a "
                                   "transcript.")
    p.add_argument("--task", default=None, help="task to run instead of the sample one")
    p.add_argument("--robot", choices=("sim", "tiago"), default="sim",
                   help="sim: the built-in simulated robot (default); tiago: the real Tiago++'s nodes "
                        "(tiago.launch.xml sim:=true) driving the simulated Tiago++ (MuJoCo), as `affplan up "
                        "--robot tiago --sim` starts them")
    p.add_argument("--physics", action="store_true",
                   help="the simulated robot is the MuJoCo physics world: every step a motion judged by physics")
    p.add_argument("--perception", action="store_true",
                   help="(with --physics) Explore sees through the perception node: YOLO on the rendered head camera")
    p.add_argument("--video", metavar="FILE.mp4",
                   help="(with --physics) record the run: a view from above beside the annotated head camera, the "
                        "step as a caption (MP4), and a contact sheet of the steps beside it (.png)")
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("up", help="bring the node suite up on this machine",
                       description="Start every node of a robot's launch file (launch/<robot>.launch.xml) as a "
                                   "separate process, with the same executables, parameters and remappings `ros2 "
                                   "launch` would use, and print the measured time until all are ready. Ctrl-C, "
                                   "SIGTERM or SIGHUP stops them all (SIGINT to each node, SIGKILL after 10 s; exit "
                                   "status 0), and a node whose "
                                   "`affplan up` was killed exits by itself. Without an "
                                   "LLM endpoint (AFFPLAN_LLM_BASE_URL) the nodes' language backend is the offline "
                                   "instruction interpreter, which declines what it does not understand.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  affplan up\n  affplan up --scenario config/scenarios/kitchen.txt\n"
                              "  affplan up --physics\n  affplan up --robot tiago --sim\n"
                              "  affplan up --robot tiago --arg namespace:=robot1")
    p.add_argument("--robot", default="sim", choices=["sim", "tiago", "armar"],
                   help="robot configuration (default: %(default)s)")
    p.add_argument("--scenario", help="scenario file for the simulated world (AutoGPT+P scene file or YAML)")
    p.add_argument("--physics", action="store_true",
                   help="(robot sim) the simulated robot is the MuJoCo physics world (launch argument physics:=true)")
    p.add_argument("--sim", action="store_true",
                   help="(robot tiago) the real robot's nodes with the simulated Tiago++ (MuJoCo, its ROS 2 "
                        "interfaces) in place of the robot (launch argument sim:=true)")
    p.add_argument("--perception", action="store_true",
                   help="(with --physics) Explore sees through the perception node on the rendered head camera "
                        "(launch argument perception:=true)")
    p.add_argument("--arg", action="append", metavar="NAME:=VALUE",
                   help="a launch argument, as `ros2 launch` takes it")
    p.add_argument("--quiet", action="store_true", help="do not echo the nodes' log lines")
    p.add_argument("--single-process", action="store_true", help="compose every node into one process instead")
    p.set_defaults(func=_cmd_up)

    p = sub.add_parser("ask", help="send a task to a running suite and watch it",
                       description="Send a task through the ExecuteTask action and show each round, the plan and "
                                   "every step live. When the plan needs the person, an alternative object needs your "
                                   "consent, or the suite asks you to approve a plan before the robot moves (parameter "
                                   "approval), the question appears here: type the answer (or use --yes / --no). "
                                   "Ctrl-C cancels the task.")
    p.add_argument("task", help='the task in your words, e.g. "bring me an apple"')
    p.add_argument("--plan-only", action="store_true", help="plan and report without moving the robot")
    p.add_argument("--yes", action="store_true", help="answer every question of the robot with yes (plans included)")
    p.add_argument("--no", action="store_true", help="answer every question of the robot with no")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="give up waiting after this many seconds (default: %(default)s)")
    p.set_defaults(func=_cmd_ask)

    p = sub.add_parser("memory", help="print the robot's memory",
                       description="Print the memory node's scene, relations, locations, agents and task history.")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--reset", action="store_true", help="forget what was learned and go back to the initial memory")
    p.set_defaults(func=_cmd_memory)

    p = sub.add_parser("oam", help="object-affordance mappings: show or generate with an LLM",
                       description="Inspect the object-affordance mapping (OAM) or generate entries for new classes.")
    oam = p.add_subparsers(dest="oam_command", metavar="OAM_COMMAND")
    q = oam.add_parser("generate", help="map new object classes to affordances with the LLM")
    q.add_argument("--classes", nargs="+", required=True, help="object classes, e.g. mug spatula")
    q.add_argument("--strategy", choices=["list", "yesno", "logic"], default="logic",
                   help="how to ask the LLM (AutoGPT+P Table II; default: %(default)s)")
    oam_commands.configure_generate(q)
    q.set_defaults(func=_lazy("oam_commands", "generate"))
    q = oam.add_parser("show", help="print the affordances of object classes")
    q.add_argument("classes", nargs="*", help="classes to show (default: all)")
    oam_commands.configure_show(q)
    q.set_defaults(func=_lazy("oam_commands", "show"))

    p = sub.add_parser("bench", help="run a benchmark and write results.json, summary.md and a plot",
                       description="Benchmarks write their results to --out; they are commands, not tests.")
    bench = p.add_subparsers(dest="bench_command", metavar="BENCHMARK")
    for benchmark in BENCHMARKS:   # configure() imports nothing heavy; run() does, when it runs
        q = bench.add_parser(benchmark.name, help=benchmark.help, description=benchmark.help)
        module = importlib.import_module(benchmark.module)
        module.configure(q)
        q.set_defaults(func=module.run)

    p = sub.add_parser("interfaces", help="list the suite's ROS 2 messages, services and actions",
                       description="List the custom interface types built from msg/, srv/ and action/.")
    p.add_argument("kind", nargs="?", choices=["msg", "srv", "action"], help="only this kind")
    p.add_argument("-v", "--verbose", action="store_true", help="also print each type's first comment line")
    p.set_defaults(func=_cmd_interfaces)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    load_env()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        # A group without its subcommand (e.g. `affplan bench`): show that group's help.
        target = {"oam": "oam", "bench": "bench"}.get(args.command or "")
        if target:
            parser.parse_args([target, "--help"])
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("affplan: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
