"""A real llama-server for the remote backend's tests, started on 127.0.0.1 on a free port.

The binary is the one tools/build_llama_server.py builds (./install.sh --test runs it)
from the llama.cpp that the installed llama-cpp-python vendors, so the server and the
in-process engine are the same llama.cpp. Without it the remote tests skip, saying why.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 60.0
CONTEXT = 512


def _build_tool():
    spec = importlib.util.spec_from_file_location("build_llama_server", REPO / "tools" / "build_llama_server.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def server_binary() -> Path:
    """The cached llama-server, or skip the test with one line saying why."""
    tool = _build_tool()
    try:
        return tool.locate()
    except tool.BuildError as error:
        pytest.skip(f"no llama-server to test against: {error}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def closed_port() -> int:
    """A loopback port nothing listens on (bound and released: the kernel refuses connects)."""
    return free_port()


def connect_to(server: "LlamaServer", **kwargs) -> RemoteBackend:
    """The remote backend on `server`, as the app connects (the model path is the server's)."""
    return RemoteBackend.connect(server.url, LoadOptions(model_path=Path("unused.gguf")), **kwargs)


class LlamaServer:
    """`with LlamaServer(model, log_dir) as server:` a llama-server serving `model`, stopped
    on leaving the block whatever happened inside it."""

    def __init__(
        self, model: Path, log_dir: Path, *extra: str, context: int = CONTEXT, port: int | None = None
    ) -> None:
        """`port`: another server's, once it stopped (a restart, as the client sees it)."""
        self.model = model
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log_dir / f"llama-server-{model.stem}-{self.port}.log"
        self.command = [
            str(server_binary()),
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--ctx-size",
            str(context),
            "--parallel",
            "1",
            # One thread: the suite runs more workers than cores, and llama.cpp's threads spin
            # at each barrier, so a partner taken off its core stalls the other. With two, a
            # request of 2 s alone took 92 s beside the other workers.
            "--threads",
            "1",
            "--threads-batch",
            "1",
            "--no-warmup",
            "--no-ui",
            *extra,
        ]
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> "LlamaServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                pytest.fail(f"llama-server exited with {self.process.returncode}: {self._log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=1.0) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        pytest.fail(f"llama-server did not become healthy in {START_TIMEOUT_S:g} s: {self._log_tail()}")

    def kill(self) -> None:
        """Kill it at once (a crash or a restart, as the client sees it)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def _log_tail(self) -> str:
        try:
            lines = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(lines[-5:])
