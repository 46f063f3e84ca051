"""Start node executables as child processes and wait until each says it is ready.

Used by ``affplan demo``/``affplan up`` (where ``ros2 launch`` is absent) and by the tests.
Nodes print ``READY`` on stdout when constructed (see ``nodes/base.py``).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Sequence

READY_LINE = "READY"  # printed by every node once it is up (nodes/base.py)


class NodeStartError(RuntimeError):
    pass


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
            env={**os.environ, **(env or {})}, start_new_session=True,
        )
        self._ready = threading.Event()
        self.ready_seconds: float | None = None   # from start to READY
        self._started = time.monotonic()
        threading.Thread(target=self._read, daemon=True).start()
        if wait:
            self.wait_ready(ready_timeout)

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Seconds from start to READY; stops the process and raises NodeStartError if it is not."""
        deadline = self._started + timeout
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                break
        if not self._ready.is_set():
            exited = self.proc.poll()
            self.stop()
            time.sleep(0.1)  # let the reader collect the last lines
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
                self._on_line(line)

    def stop(self, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def params_file_for(full_name: str, params: dict) -> str:
    """A parameter file giving ``params`` to the node ``full_name`` (/ns/name) alone.

    What ``ros2 launch`` does with ``<param name value>``: a node-specific section in a file
    passed after the others wins over every earlier file, while a ``-p`` override would lose to
    a ``/**/name`` section of a parameter file. String values are read as YAML (``"0.25"`` is
    a number), like ``-p``. Files are named by content, so repeated starts reuse them."""
    import hashlib
    import tempfile

    import yaml

    values = {k: (yaml.safe_load(v) if isinstance(v, str) and v.strip() else v) for k, v in params.items()}
    text = yaml.safe_dump({full_name: {"ros__parameters": values}}, sort_keys=True)
    folder = os.path.join(tempfile.gettempdir(), "affplan_params")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha1(text.encode()).hexdigest()[:16] + ".yaml")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
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
