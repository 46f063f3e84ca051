"""Start node executables as child processes and wait until each says it is ready.

Used by ``affplan demo``/``affplan up`` (where ``ros2 launch`` is absent) and by the tests.
Nodes print ``READY`` on stdout when constructed (see ``nodes/base.py``). Every child learns
its parent's pid (``PARENT_PID_ENV``) and exits when that parent is gone, even if it was killed.
"""
from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Iterable, Sequence

from affplan_ros.core.errors import AffplanError

READY_LINE = "READY"  # printed by every node once it is up (nodes/base.py)
# The pid of the process that started a node; run_node watches it (nodes/base.py).
PARENT_PID_ENV = "AFFPLAN_PARENT_PID"


class NodeStartError(AffplanError, RuntimeError):
    pass


class StartCancelled(NodeStartError):
    """Waiting for READY was given up because the caller was asked to stop."""


class NodeProcess:
    """A child process that prints READY when it is up; stopped with SIGINT, killed if it lingers."""

    def __init__(self, argv: Sequence[str], *, ready_timeout: float = 30.0, env: dict | None = None,
                 on_line: Callable[[str], None] | None = None, name: str | None = None, wait: bool = True):
        """``wait=False`` returns at once (start several, then :meth:`wait_ready` each)."""
        self.argv = list(argv)
        self.name = name or os.path.basename(self.argv[-1])
        self.output: list[str] = []
        self._on_line = on_line
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, **(env or {}), PARENT_PID_ENV: str(os.getpid())}, start_new_session=True,
        )
        self._ready = threading.Event()
        self.ready_seconds: float | None = None   # from start to READY
        self._started = time.monotonic()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if wait:
            self.wait_ready(ready_timeout)

    def wait_ready(self, timeout: float = 30.0, cancel: Callable[[], bool] | None = None) -> float:
        """Seconds from start to READY; stops the process and raises NodeStartError if it is not.
        ``cancel()`` true: StartCancelled at once, the process left to the caller to stop."""
        deadline = self._started + timeout
        while not self._ready.wait(0.05):
            if cancel is not None and cancel():
                raise StartCancelled(f"{self.name}: stopped while starting")
            if self.proc.poll() is not None or time.monotonic() > deadline:
                break
        if not self._ready.is_set():
            exited = self.proc.poll()
            self.stop()
            why = f"exited with code {exited}" if exited is not None else f"did not become ready within {timeout:.0f} s"
            raise NodeStartError(f"{self.name} {why}:\n" + "".join(self.output[-30:]))
        return self.ready_seconds or 0.0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            if line.strip() == READY_LINE:
                self.ready_seconds = time.monotonic() - self._started
                self._ready.set()
            elif self._on_line is not None:
                try:
                    self._on_line(line)
                except Exception:  # noqa: BLE001 - e.g. our stdout is gone (SIGHUP): keep draining the pipe
                    self._on_line = None

    def read_to_end(self, timeout: float = 5.0) -> bool:
        """Wait until every line the process wrote is in :attr:`output` (its pipe's end: the
        process and whatever it started are gone); whether that happened within ``timeout``."""
        self._reader.join(timeout)
        return not self._reader.is_alive()

    def interrupt(self) -> None:
        """Ask the node to shut down (SIGINT, as Ctrl-C would) without waiting."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass

    def dump_stacks(self, wait_s: float = 1.0) -> None:
        """Ask a node that hangs for every thread's stack (SIGUSR1: nodes/base.py registers it
        with faulthandler); it arrives in :attr:`output` within ``wait_s``."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGUSR1)
            except ProcessLookupError:
                return
            time.sleep(wait_s)

    def kill(self) -> None:
        """SIGKILL the node and whatever it started (its own session: process group = its pid)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()

    def stop(self, timeout: float = 10.0) -> int:
        """SIGINT, then SIGKILL after ``timeout`` s; the exit code."""
        return stop_all([self], timeout)[self.name]


def stop_all(processes: Iterable[NodeProcess], timeout: float = 10.0) -> dict[str, int]:
    """Interrupt the processes one after the other, in the order given, each given at most
    ``timeout`` s before it is killed; exit codes by name (negative: the signal that ended it).

    One at a time, not all at once: a node tearing down its DDS participant while its peers
    vanished at the same moment crashed in native code now and then (SIGSEGV in rclpy's
    destroy_node; measured on this 2-core machine with both cores loaded, a 5-node suite
    started and stopped over and over: 1 crash in 50 node stops when all stopped together,
    none in 75 one at a time)."""
    processes = list(processes)
    for proc in processes:
        proc.interrupt()
        try:
            proc.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.dump_stacks()
            proc.output.append(f"[{proc.name} did not stop in time: killed]\n")
            proc.kill()
    for proc in processes:
        try:
            proc.proc.wait(5)
        except subprocess.TimeoutExpired:  # unkillable (e.g. stuck in the kernel): report, go on
            pass
        # Its last lines (a stack dump among them) are read before anyone looks at the output.
        proc.read_to_end()
    return {proc.name: proc.proc.returncode for proc in processes}


_params_dir: str | None = None
_params_lock = threading.Lock()


def params_dir() -> str:
    """This process's private folder for parameter files (mode 0700, created on first use,
    removed at exit): a shared folder would let another user plant a file a node then reads."""
    global _params_dir
    with _params_lock:
        if _params_dir is None or not os.path.isdir(_params_dir):
            import tempfile

            _params_dir = tempfile.mkdtemp(prefix="affplan_params_")
            atexit.register(_remove_dir, _params_dir, os.getpid())
        return _params_dir


def _remove_dir(folder: str, owner: int) -> None:
    import shutil

    if os.getpid() == owner:  # not from a forked child that inherited our atexit hooks
        shutil.rmtree(folder, ignore_errors=True)


def params_file_for(full_name: str, params: dict) -> str:
    """A parameter file giving ``params`` to the node ``full_name`` (/ns/name) alone.

    What ``ros2 launch`` does with ``<param name value>``: a node-specific section in a file
    passed after the others wins over every earlier file, while a ``-p`` override would lose to
    a ``/**/name`` section of a parameter file. String values are read as YAML (``"0.25"`` is
    a number), like ``-p``. Files live in :func:`params_dir`, named by content, so repeated
    starts from this process reuse them; each is written whole before it appears (atomic)."""
    import hashlib
    import tempfile

    import yaml

    values = {k: (yaml.safe_load(v) if isinstance(v, str) and v.strip() else v) for k, v in params.items()}
    text = yaml.safe_dump({full_name: {"ros__parameters": values}}, sort_keys=True)
    folder = params_dir()
    path = os.path.join(folder, hashlib.sha1(text.encode()).hexdigest()[:16] + ".yaml")
    if not os.path.exists(path):
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    return path


def node_argv(executable: str, namespace: str = "/affplan", params: dict | None = None,
              params_file: str | None = None) -> list[str]:
    """argv that runs ``affplan_ros.nodes.<executable>`` like ``ros2 run affplan_ros <executable>``;
    ``params`` win over ``params_file``."""
    argv = [sys.executable, "-m", f"affplan_ros.nodes.{executable}", "--ros-args", "-r", f"__ns:={namespace}"]
    if params_file:
        argv += ["--params-file", params_file]
    if params:
        full_name = f"{namespace.rstrip('/')}/{executable}"
        argv += ["--params-file", params_file_for(full_name, {k: str(v) for k, v in params.items()})]
    return argv
