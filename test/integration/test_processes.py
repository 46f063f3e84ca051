"""Process hygiene of `affplan up` (issue 13, item 5): stop signals reach every node, nodes do
not outlive a killed parent, and launch parameter files stay private."""
from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SUITE_NODES = 5   # launch/sim.launch.xml


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, start time) of a process, None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()   # the name in (...) may hold spaces
    return int(fields[1]), fields[0], int(fields[19])


def _children(pid: int) -> dict[int, int]:
    """The processes whose parent is ``pid``: pid -> start time (so a reused pid is not them)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = _stat(int(entry))
            if info is not None and info[0] == pid:
                found[int(entry)] = info[2]
    return found


def _running(processes: dict[int, int]) -> list[int]:
    """Those of ``processes`` still running (a zombie has exited; PID 1 may be slow to reap it)."""
    alive = []
    for pid, started in processes.items():
        info = _stat(pid)
        if info is not None and info[2] == started and info[1] not in ("Z", "X"):
            alive.append(pid)
    return alive


def _params_dirs(pids) -> set[str]:
    """The folders of the --params-file arguments these processes were started with, but for
    the package's own config."""
    folders = set()
    for pid in pids:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        folders |= {os.path.dirname(argv[i + 1]) for i, a in enumerate(argv[:-1])
                    if a == "--params-file" and "affplan_params" in argv[i + 1]}
    return folders


class Up:
    """`affplan up --quiet` in a session of its own (as a service manager would start it), in
    the module's ROS domain (conftest): one suite at a time, each stopped before the next."""

    def __init__(self):
        env = {**os.environ, "AFFPLAN_LLM_BASE_URL": ""}
        self.proc = subprocess.Popen([sys.executable, "-m", "affplan_ros.cli", "up", "--quiet"], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            if "suite ready in" in line:
                self.ready.set()
        self.ready.set()   # up exited: nothing to wait for

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_ready(self, timeout: float = 90.0) -> dict[int, int]:
        """The node processes, once `up` says the suite is ready."""
        assert self.ready.wait(timeout) and "suite ready in" in self.output, self.output
        nodes = _children(self.proc.pid)
        assert len(nodes) == SUITE_NODES, (nodes, self.output)
        return nodes

    def wait(self, timeout: float) -> float:
        """Seconds until `up` exited."""
        started = time.monotonic()
        self.proc.wait(timeout)
        self._reader.join(5)
        return time.monotonic() - started

    def kill_all(self, nodes: dict[int, int]) -> None:
        """After a failed test: no process of ours is left behind."""
        for pid in [self.proc.pid] * (self.proc.poll() is None) + _running(nodes):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(10)


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("signals", [(signal.SIGTERM,), (signal.SIGHUP, signal.SIGINT)],
                         ids=["sigterm", "sighup_then_sigint_while_stopping"])
def test_a_stop_signal_to_up_stops_every_node(signals):
    up = Up()
    nodes: dict[int, int] = {}
    try:
        nodes = up.wait_ready()
        folders = _params_dirs(nodes)
        assert folders, "the sim launch file gives nodes <param name value>: expected a parameter file"
        up.proc.send_signal(signals[0])
        for later in signals[1:]:      # a second signal while the nodes are stopping changes nothing
            time.sleep(0.3)
            up.proc.send_signal(later)
        took = up.wait(timeout=20)
        print(f"up exited {took:.1f} s after {signals[0].name}")
        assert up.proc.returncode == 0, up.output
        assert f"stopping the suite ({signals[0].name})" in up.output and "suite stopped" in up.output
        assert "exit codes" not in up.output, up.output   # every node stopped cleanly, none killed
        assert _running(nodes) == []
        assert not [f for f in folders if os.path.exists(f)], "up removes its parameter files at exit"
    finally:
        up.kill_all(nodes)


@pytest.mark.ros
@pytest.mark.slow
def test_nodes_stop_by_themselves_when_up_is_killed():
    up = Up()
    nodes: dict[int, int] = {}
    folders: set[str] = set()
    try:
        nodes = up.wait_ready()
        folders = _params_dirs(nodes)
        up.proc.kill()                 # SIGKILL: up cannot stop anything itself
        up.wait(timeout=10)
        started = time.monotonic()
        while _running(nodes) and time.monotonic() - started < 10:
            time.sleep(0.2)
        print(f"nodes gone {time.monotonic() - started:.1f} s after up was killed")
        assert _running(nodes) == [], "orphaned nodes kept running"
    finally:
        up.kill_all(nodes)
        for folder in folders:         # a killed up cannot clean up after itself
            shutil.rmtree(folder, ignore_errors=True)


def test_parameter_files_are_private_to_the_process():
    from affplan_ros.launch_xml import parse_launch
    from affplan_ros.launcher import params_dir, params_file_for

    path = params_file_for("/affplan/memory", {"scenario": "/x.yaml", "time_scale": "0.25"})
    folder = os.path.dirname(path)
    assert folder == params_dir() and folder != "/tmp/affplan_params"
    info = os.stat(folder)
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0
    assert Path(path).read_text() == ("/affplan/memory:\n  ros__parameters:\n"
                                      "    scenario: /x.yaml\n    time_scale: 0.25\n")
    assert params_file_for("/affplan/memory", {"time_scale": "0.25", "scenario": "/x.yaml"}) == path
    assert not [f for f in os.listdir(folder) if f.endswith(".tmp")]   # written whole, then renamed

    # The launch file reader writes its <param name value> files through the same helper.
    from affplan_ros.suite import launch_file
    sim = parse_launch(launch_file("sim")).node("sim_world")
    argv = sim.ros_args()
    files = [argv[i + 1] for i, a in enumerate(argv) if a == "--params-file"]
    assert os.path.dirname(files[-1]) == folder

    # Another process gets a folder of its own, removed when it exits.
    code = ("from affplan_ros.launcher import params_file_for; "
            "print(params_file_for('/affplan/memory', {'scenario': '/x.yaml', 'time_scale': '0.25'}))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    other_path = other.stdout.strip()
    assert os.path.dirname(other_path) != folder and other_path.endswith(os.path.basename(path))
    assert not os.path.exists(os.path.dirname(other_path))


def test_a_node_stops_even_when_a_callback_never_returns():
    """rclpy's executor.shutdown waits for a running callback for ever; the node's teardown is
    bounded: it ends by itself (exit 0) before the launcher would kill it, and its log names the
    stuck step and shows the stuck callback's stack."""
    from affplan_ros.launcher import NodeProcess
    from affplan_ros.nodes.base import _TEARDOWN_S

    node = NodeProcess([sys.executable, str(Path(__file__).with_name("stuck_callback_node.py"))], name="stuck")
    deadline = time.monotonic() + 20
    while not any(line.strip() == "STUCK" for line in node.output) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(line.strip() == "STUCK" for line in node.output), node.output
    started = time.monotonic()
    node.interrupt()
    try:
        code = node.proc.wait(_TEARDOWN_S + 5)   # the launcher would SIGKILL after 10 s
    finally:
        node.kill()
    took = time.monotonic() - started
    time.sleep(0.2)  # the reader collects the last lines
    log = "".join(node.output)
    assert code == 0, log
    assert _TEARDOWN_S - 0.5 < took < _TEARDOWN_S + 3, took
    assert "while stopping (executor shutdown): TimeoutError: still running after 8 s" in log, log
    assert "in _never_returns" in log, log
