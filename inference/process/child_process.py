"""The engine's child process as the parent sees it: started with pipes of its own, its
stderr kept (never the terminal's), and its death explained in one line.

The child is `python -m scriptorium.inference.process.worker`, started with `subprocess` rather
than `multiprocessing`: a spawned multiprocessing child inherits the parent's stderr (the
TUI's terminal, where GGML_ASSERT text would land) and re-imports the parent's
`__main__`; a plain subprocess gets exactly the file descriptors it is given. Requests
and replies travel on two pipes passed by number (length-prefixed pickles, see wire.py);
the child's stdout and stderr share a third pipe that the parent reads into a short
tail, which is what llama.cpp last wrote before an abort.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from ..core.errors import EngineCrashed
from ..core.pipes import pipe_above_standard_streams
from .wire import decode, encode

WORKER_MODULE = "scriptorium.inference.process.worker"
STDERR_LINES = 40
"""Lines of the child's stderr kept: enough for a C++ exception's two lines and the log
lines before them."""
QUOTE_CHARS = 300
EXIT_WAIT_S = 5.0
"""How long a closing child may take to free the model before it is killed."""
CHILD_ENVIRONMENT = {
    # ggml prints a backtrace on abort by attaching gdb: seconds of work, and lines that
    # would push llama.cpp's own message out of the tail.
    "GGML_NO_BACKTRACE": "1",
}


class EngineProcess:
    """One running worker: send requests, receive replies, learn why it died."""

    def __init__(self, module: str = WORKER_MODULE) -> None:
        """Start `python -m module REQUEST_FD REPLY_FD` (the engine's worker, or compare's)."""
        request_read, request_write = pipe_above_standard_streams()
        reply_read, reply_write = pipe_above_standard_streams()
        environment = {**os.environ, **CHILD_ENVIRONMENT}
        # A Python traceback of the dying child would bury llama.cpp's line.
        environment.pop("PYTHONFAULTHANDLER", None)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", module, str(request_read), str(reply_write)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(request_read, reply_write),
                env=environment,
                # Its own session: ctrl+c in the terminal interrupts the parent, which ends the child.
                start_new_session=True,
            )
        except BaseException:
            for fd in (request_read, request_write, reply_read, reply_write):
                os.close(fd)
            raise
        os.close(request_read)
        os.close(reply_write)
        self._requests = Connection(request_write, readable=False)
        self._replies = Connection(reply_read, writable=False)
        self._send_lock = threading.Lock()
        self._tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._reader = threading.Thread(target=self._read_stderr, name="engine-stderr", daemon=True)
        self._reader.start()
        self.death: str | None = None
        """Why the child ended, once it has (one line for the author)."""
        self._killed_because: str | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read_stderr(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        for raw in iter(stream.readline, b""):
            self._tail.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        stream.close()

    # ---- messages ----------------------------------------------------------------------
    def send(self, message: tuple[Any, ...]) -> None:
        """Send a request; EngineCrashed if the child is gone."""
        if self.death is not None:
            raise EngineCrashed(self.death)
        try:
            with self._send_lock:
                self._requests.send_bytes(encode(message))
        except OSError:
            raise EngineCrashed(self._died()) from None

    def receive(self, timeout: float | None = None) -> tuple[Any, ...] | None:
        """The next reply, or None when none came within `timeout`; EngineCrashed if the
        child is gone."""
        if self.death is not None:
            raise EngineCrashed(self.death)
        try:
            if timeout is not None and not self._replies.poll(timeout):
                return None
            return decode(self._replies.recv_bytes())
        except (EOFError, OSError):
            raise EngineCrashed(self._died()) from None

    # ---- the end -----------------------------------------------------------------------
    def _died(self) -> str:
        try:
            code = self.process.wait(timeout=EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            # The pipe broke but the process lingers: it is no use any more.
            self.process.kill()
            code = self.process.wait()
        self._reader.join(timeout=EXIT_WAIT_S)  # the last lines it wrote
        self.death = self._killed_because or describe_death(code, list(self._tail))
        self._close_pipes()
        return self.death

    def kill(self, why: str) -> None:
        """End a child that no longer answers; the request reading its replies fails with `why`."""
        self._killed_because = why
        self.process.kill()

    def stop(self) -> None:
        """Ask the child to free the model and exit; kill it if it does not in time."""
        if self.death is None:
            try:
                with self._send_lock:
                    self._requests.send_bytes(encode(("close",)))
            except OSError:
                pass
            try:
                self.process.wait(timeout=EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.death = "the engine was closed"
        self._reader.join(timeout=EXIT_WAIT_S)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for connection in (self._requests, self._replies):
            try:
                connection.close()
            except OSError:
                pass


def describe_death(returncode: int, tail: list[str]) -> str:
    """One line: how the engine ended, quoting what llama.cpp last wrote."""
    if returncode < 0:
        try:
            how = signal.Signals(-returncode).name
        except ValueError:
            how = f"signal {-returncode}"
    else:
        how = f"exit status {returncode}"
    quote = last_words(tail)
    if quote:
        return f"the model's engine stopped ({how}): {quote}"
    if returncode == -signal.SIGKILL:
        return "the model's engine was killed (SIGKILL; the system may have run out of memory)"
    return f"the model's engine stopped ({how}) without a message"


def last_words(tail: list[str]) -> str:
    """The child's last non-blank stderr line, as llama.cpp wrote it. A C++ exception ends
    with two lines ("terminate called after throwing an instance of 'X'" and
    "  what():  ..."): both are kept, since the second alone does not say what broke."""
    lines = [line.strip() for line in tail if line.strip()]
    if not lines:
        return ""
    quote = lines[-1]
    if quote.startswith("what():") and len(lines) > 1 and lines[-2].startswith("terminate called"):
        quote = f"{lines[-2]}: {quote}"
    return quote if len(quote) <= QUOTE_CHARS else quote[: QUOTE_CHARS - 1] + "…"
