"""``affplan up``: bring a robot's node suite up from its launch file, each node its own process.

What ``ros2 launch affplan_ros <robot>.launch.xml`` does on a ROS 2 install, for machines
without the launch package: the launch file is read (``launch_xml``), every node it describes
is started with the same executable, parameters and remappings, and the suite is ready when
every node has said so. Ctrl-C, SIGTERM and SIGHUP stop them all (SIGINT to every node, then a
kill of what still runs 10 s later); a node whose ``affplan up`` was killed stops by itself
(``nodes/base.py`` watches its parent).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

ROBOTS = ("sim", "tiago", "armar")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOP_TIMEOUT_S = 10.0   # from the stop request to SIGKILL of the nodes still running


def launch_file(robot: str) -> Path:
    from affplan_ros.env import share_dir

    return share_dir() / "launch" / f"{robot}.launch.xml"


@dataclass
class Suite:
    description: object                 # launch_xml.LaunchDescription
    processes: list = field(default_factory=list)
    seconds: float = 0.0                # from the first start to the last READY

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> dict[str, int]:
        """Stop every node at once (last started first); exit codes by name."""
        from affplan_ros.launcher import stop_all

        return stop_all(reversed(self.processes), timeout)

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
                shared_params: Optional[Mapping[str, str]] = None,
                cancel: Optional[Callable[[], bool]] = None) -> Suite:
    """Start every node of the robot's launch file at once and wait until all are ready
    (``single_process``: all of them composed in one process; ``nodes``: only these;
    ``shared_params``: given to every node, over the parameter file). ``cancel()`` true:
    everything started is stopped and StartCancelled raised."""
    from affplan_ros.launch_xml import LaunchError, parse_launch, single_process_argv
    from affplan_ros.launcher import NodeProcess, StartCancelled

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
        if cancel is not None and cancel():
            raise StartCancelled("stopped before starting")
        if single_process:
            callback = (lambda line: on_line("suite", line)) if on_line else None
            suite.processes.append(NodeProcess(single_process_argv(description), env=dict(env or {}), name="suite",
                                               wait=False, on_line=callback))
        for node in [] if single_process else description.nodes:
            if cancel is not None and cancel():
                raise StartCancelled(f"stopped while starting {node.name}")
            callback = (lambda line, name=node.name: on_line(name, line)) if on_line else None
            suite.processes.append(NodeProcess(node.argv(), env=dict(env or {}), name=node.name, wait=False,
                                               on_line=callback))
        for proc in suite.processes:
            proc.wait_ready(ready_timeout, cancel)
    except BaseException:  # whatever went wrong, no node is left running
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


class StopSignal(BaseException):
    """A stop signal arrived before any node was started (nothing to clean up)."""


class StopRequest:
    """SIGINT, SIGTERM and SIGHUP as one request to stop, for ``affplan up`` (main thread only).

    The handler never interrupts the starting or stopping of nodes (an exception raised between
    two lines there could leave a node running): it only records the signal, which those loops
    poll (:meth:`requested`; no lock or Event: the handler runs in the thread it interrupts).
    Before anything is started (``raise_now``) it raises StopSignal to end at once. Later
    signals change nothing: the stop under way finishes."""

    def __init__(self) -> None:
        self.signum = 0
        self.raise_now = True
        self._previous: dict[int, object] = {}

    def __enter__(self) -> "StopRequest":
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        # After a requested stop the handlers stay, ignoring what comes: the process is ending,
        # and a second Ctrl-C during its exit (the suite can stop in well under a second) must
        # not turn exit status 0 into death by that signal.
        if self.signum:
            return
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def requested(self) -> bool:
        return self.signum != 0

    def _handle(self, signum: int, frame) -> None:
        if self.signum:
            return
        self.signum = signum
        if self.raise_now:
            raise StopSignal(signum)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else "stop"


def _say(text: str, *, err: bool = False) -> None:
    """Print, but never fail: after SIGHUP the terminal may be gone, and stopping must go on."""
    try:
        print(text, file=sys.stderr if err else sys.stdout, flush=True)
    except (OSError, ValueError):
        pass


def run_up(args: argparse.Namespace) -> int:
    """``affplan up``: start the suite, report, run until a node exits (1) or a stop is asked (0).

    SIGINT (Ctrl-C), SIGTERM and SIGHUP are a requested stop: every node gets SIGINT, what still
    runs ``STOP_TIMEOUT_S`` later is killed, and the exit status is 0. The handlers live only
    while this runs."""
    with StopRequest() as stop:
        try:
            return _run_up(args, stop)
        except StopSignal:
            _say(f"affplan up: {stop.name} received, nothing started")
            return 0


def _run_up(args: argparse.Namespace, stop: StopRequest) -> int:
    from affplan_ros.env import dds_defaults
    from affplan_ros.launch_xml import LaunchError
    from affplan_ros.launcher import NodeStartError, StartCancelled
    from affplan_ros.llm.config import CONFIGURE_HELP

    dds_defaults()
    launch_args, shared = {}, {}
    if getattr(args, "physics", False):
        if args.robot != "sim":
            print(f"affplan up: --physics is the simulated robot's world; --robot {args.robot} is a real robot",
                  file=sys.stderr)
            return 2
        launch_args["physics"] = "true"
    if getattr(args, "sim", False):
        if args.robot != "tiago":
            print(f"affplan up: --sim puts the simulated Tiago++ in place of the robot; {args.robot} has none"
                  + (" (it is simulated already)" if args.robot == "sim" else ""), file=sys.stderr)
            return 2
        launch_args["sim"] = "true"
    elif args.scenario and args.robot != "sim":
        print(f"affplan up: --scenario is the simulated world's; --robot {args.robot} is a real robot (add --sim)",
              file=sys.stderr)
        return 2
    if getattr(args, "perception", False):
        if not getattr(args, "physics", False):
            print("affplan up: --perception sees the physics world's rendered camera: add --physics", file=sys.stderr)
            return 2
        launch_args["perception"] = "true"
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

    if shared:
        print("robot model: the scenario's robot, without its hidden preconditions (capabilities_file)", flush=True)
    stop.raise_now = False  # from here on nodes run: a signal is polled, never raised
    try:
        suite = start_suite(args.robot, launch_args, on_line=echo, single_process=args.single_process,
                            shared_params=shared, cancel=stop.requested)
    except StartCancelled:
        _say(f"affplan up: {stop.name} received while starting; suite stopped")
        return 0
    except (LaunchError, NodeStartError) as exc:
        _say(f"affplan up: {exc}", err=True)
        return 1
    reported: set[str] = set()
    try:
        parts = ", ".join(f"{p.name} {p.ready_seconds:.1f} s" for p in suite.processes)
        namespace = suite.description.args.get("namespace", ("affplan", ""))[0]
        nodes = len(suite.description.nodes)
        how = "in one process" if args.single_process else f"separate processes: {parts}"
        _say(f"suite ready in {suite.seconds:.1f} s ({nodes} nodes, {how})")
        _say(f"send a task: affplan ask \"...\"   (namespace /{namespace.strip('/')}, "
             f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}); Ctrl-C stops the suite")
        while len(reported) < len(suite.processes) and not stop.requested():
            time.sleep(0.3)
            for proc in suite.dead():
                if proc.name not in reported:
                    reported.add(proc.name)
                    _say(f"affplan up: node {proc.name} exited with code {proc.proc.returncode}")
        if not stop.requested():
            return 1
        _say(f"stopping the suite ({stop.name}) ...")
        return 0
    finally:
        codes = suite.stop()
        bad = {n: c for n, c in codes.items() if c not in (0, None) and n not in reported}
        _say("suite stopped" + (f" (exit codes: {bad})" if bad else ""))
