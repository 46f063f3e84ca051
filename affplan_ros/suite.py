"""``affplan up``: bring a robot's node suite up from its launch file, each node its own process.

What ``ros2 launch affplan_ros <robot>.launch.xml`` does on a ROS 2 install, for machines
without the launch package: the launch file is read (``launch_xml``), every node it describes
is started with the same executable, parameters and remappings, and the suite is ready when
every node has said so. Ctrl-C stops them all (SIGINT, then a kill after 10 s).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

ROBOTS = ("sim", "tiago", "armar")


def launch_file(robot: str) -> Path:
    from affplan_ros.env import share_dir

    return share_dir() / "launch" / f"{robot}.launch.xml"


def dds_defaults() -> None:
    """Suite and clients meet on this machine unless the user configured otherwise."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


@dataclass
class Suite:
    description: object                 # launch_xml.LaunchDescription
    processes: list = field(default_factory=list)
    seconds: float = 0.0                # from the first start to the last READY

    def stop(self) -> dict[str, int]:
        codes = {}
        for proc in reversed(self.processes):
            codes[proc.name] = proc.stop()
        return codes

    def dead(self) -> list:
        return [p for p in self.processes if p.proc.poll() is not None]

    def __enter__(self) -> "Suite":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_suite(robot: str = "sim", launch_args: Optional[Mapping[str, str]] = None, *,
                env: Optional[Mapping[str, str]] = None, on_line: Optional[Callable[[str, str], None]] = None,
                ready_timeout: float = 60.0, launch_path: Optional[Path] = None,
                single_process: bool = False, nodes: Optional[Sequence[str]] = None,
                shared_params: Optional[Mapping[str, str]] = None) -> Suite:
    """Start every node of the robot's launch file at once and wait until all are ready
    (``single_process``: all of them composed in one process; ``nodes``: only these;
    ``shared_params``: given to every node, over the parameter file)."""
    from affplan_ros.launch_xml import LaunchError, parse_launch, single_process_argv
    from affplan_ros.launcher import NodeProcess, NodeStartError

    description = parse_launch(launch_path or launch_file(robot), launch_args)
    if nodes is not None:
        unknown = set(nodes) - {n.name for n in description.nodes}
        if unknown:
            raise LaunchError(f"{description.path} launches no node(s) {', '.join(sorted(unknown))}")
        description.nodes = [n for n in description.nodes if n.name in nodes]
    for node in description.nodes:
        node.params.update(shared_params or {})
    suite = Suite(description)
    started = time.monotonic()
    try:
        if single_process:
            callback = (lambda line: on_line("suite", line)) if on_line else None
            suite.processes.append(NodeProcess(single_process_argv(description), env=dict(env or {}), name="suite",
                                               wait=False, on_line=callback))
        for node in [] if single_process else description.nodes:
            callback = (lambda line, name=node.name: on_line(name, line)) if on_line else None
            suite.processes.append(NodeProcess(node.argv(), env=dict(env or {}), name=node.name, wait=False,
                                               on_line=callback))
        for proc in suite.processes:
            proc.wait_ready(ready_timeout)
    except (NodeStartError, OSError):
        suite.stop()
        raise
    suite.seconds = time.monotonic() - started
    return suite


def backend_label() -> tuple[str, bool]:
    """(what answers the nodes' language questions, whether it is the offline interpreter): the
    nodes choose with the same factory (``llm/backends.py``) and the same environment."""
    from affplan_ros.llm.backends import make_backend
    from affplan_ros.llm.client import MissingAPIKeyError

    try:
        backend = make_backend()
    except MissingAPIKeyError as exc:
        return f"none usable: {exc}", False
    backend.close()
    return backend.label, backend.kind == "offline"


def scenario_params(scenario: Path) -> dict[str, str]:
    """Parameters a simulated scenario implies for every node: a recovery scenario is also the
    robot's model (its robot lacks the hidden preconditions, so the suite can fail and learn)."""
    from affplan_ros.sim.scenario import is_recovery_scenario

    return {"capabilities_file": str(scenario)} if is_recovery_scenario(scenario) else {}


def run_up(args: argparse.Namespace) -> int:
    from affplan_ros.launch_xml import LaunchError
    from affplan_ros.launcher import NodeStartError
    from affplan_ros.llm.config import CONFIGURE_HELP

    dds_defaults()
    launch_args, shared = {}, {}
    if args.scenario:
        scenario = Path(args.scenario).expanduser().resolve()
        if not scenario.is_file():
            print(f"affplan up: no scenario file {scenario}", file=sys.stderr)
            return 2
        launch_args["scenario"] = str(scenario)
        shared.update(scenario_params(scenario))
    for item in args.arg or []:
        key, sep, value = item.partition(":=")
        if not sep:
            print(f"affplan up: --arg {item!r}: write NAME:=VALUE", file=sys.stderr)
            return 2
        launch_args[key] = value
    label, offline = backend_label()
    print(f"language backend: {label}", flush=True)
    if offline:
        print(f"  {CONFIGURE_HELP} for requests it does not understand", flush=True)

    def echo(name: str, line: str) -> None:
        if not args.quiet:
            print(f"[{name}] {line.rstrip()}", flush=True)

    try:
        if shared:
            print("robot model: the scenario's robot, without its hidden preconditions (capabilities_file)", flush=True)
        suite = start_suite(args.robot, launch_args, on_line=echo, single_process=args.single_process,
                            shared_params=shared)
    except (LaunchError, NodeStartError) as exc:
        print(f"affplan up: {exc}", file=sys.stderr)
        return 1
    parts = ", ".join(f"{p.name} {p.ready_seconds:.1f} s" for p in suite.processes)
    namespace = suite.description.args.get("namespace", ("affplan", ""))[0]
    nodes = len(suite.description.nodes)
    how = "in one process" if args.single_process else f"separate processes: {parts}"
    print(f"suite ready in {suite.seconds:.1f} s ({nodes} nodes, {how})", flush=True)
    print(f"send a task: affplan ask \"...\"   (namespace /{namespace.strip('/')}, "
          f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}); Ctrl-C stops the suite", flush=True)
    reported: set[str] = set()
    try:
        while len(reported) < len(suite.processes):
            for proc in suite.dead():
                if proc.name not in reported:
                    reported.add(proc.name)
                    print(f"affplan up: node {proc.name} exited with code {proc.proc.returncode}", flush=True)
            time.sleep(0.3)
        return 1
    except KeyboardInterrupt:
        print("stopping the suite ...", flush=True)
        return 0
    finally:
        codes = suite.stop()
        bad = {n: c for n, c in codes.items() if c not in (0, None) and n not in reported}
        print("suite stopped" + (f" (exit codes: {bad})" if bad else ""), flush=True)
