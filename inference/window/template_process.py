"""Chat templates rendered in a process of their own, with a bound on time and on output.

A chat template is a program: a GGUF's `tokenizer.chat_template` (or the author's
`chat_fallback.jinja`) with nested `range(99999)` loops ran in the app's own process at
100% CPU; Esc could not stop it, and after ctrl+q the process lived on. Why a process,
not a bound inside this one:

- a thread cannot be stopped in Python, and a render runs in a generation's worker thread;
  signals (an alarm) reach only the main thread;
- Jinja's sandbox guards attributes, not work: a loop whose body writes nothing calls no
  hook an operation counter could count, and `s ~ s` doubles the memory per step;
- a process can be ended at once whatever the template does (a loop, memory growing,
  recursion), and its end frees everything it took.

So one renderer process is started at the first render and kept (a render is then a
round trip on a pipe, well under a millisecond of overhead). It renders in Jinja's
immutable sandbox and stops writing past RENDERED_CHARS_LIMIT; a render that has not
answered within RENDER_WAIT_S is ended with the process (the next render starts another).
The process also ends a render on its own after RENDER_WAIT_S (an alarm), and leaves when
the app's side of its pipe closes, so an app that dies leaves nothing spinning.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from ..core.errors import ScriptoriumError
from ..core.pipes import pipe_above_standard_streams  # as the engine's: never on 0-2

RENDER_WAIT_S = 5.0
"""The longest a render may take: a real template renders in milliseconds."""
KILL_GRACE_S = 1.0
"""How much longer than RENDER_WAIT_S the app waits before it ends the renderer itself: the
renderer stops a Python loop on its own, but not one inside a C function (a join of a
huge list), which never checks for its alarm."""
START_WAIT_S = 60.0
"""The longest the renderer may take to start (Python and Jinja imported, on a busy machine)."""
RENDERED_CHARS_LIMIT = 32_000_000
"""The longest prompt a template may write: far more than any context holds (a 128k-token
context is under a million characters), so only a runaway template reaches it."""
RENDERER_MEMORY_BYTES = 1_000_000_000
"""The address space the renderer may take (where the system lets a process limit its own):
`'x' * 10**10` is refused with a MemoryError at once instead of pushing the machine into swap."""
RENDERER_MODULE = "scriptorium.inference.window.template_process"


class TemplateRenderer:
    """The renderer process, started at the first render; renders take turns."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._requests: Connection | None = None
        self._replies: Connection | None = None

    def render(self, template: str, variables: dict[str, Any]) -> str:
        """`template` rendered with `variables` (plain data); ScriptoriumError in one line when
        it fails, writes past RENDERED_CHARS_LIMIT or takes longer than RENDER_WAIT_S."""
        with self._lock:
            requests, replies = self._started()
            try:
                requests.send_bytes(_encode(("render", template, variables, RENDERED_CHARS_LIMIT, RENDER_WAIT_S)))
                if not replies.poll(RENDER_WAIT_S + KILL_GRACE_S):
                    self._end()
                    raise ScriptoriumError(_too_slow(RENDER_WAIT_S))
                kind, text = _decode(replies.recv_bytes())
            except (EOFError, OSError):
                self._end()
                raise ScriptoriumError("the chat template's renderer stopped before it finished") from None
            if kind != "text":
                raise ScriptoriumError(text)
            return text

    def close(self) -> None:
        with self._lock:
            self._end()

    def _started(self) -> tuple[Connection, Connection]:
        if self._process is not None and self._process.poll() is None:
            assert self._requests is not None and self._replies is not None
            return self._requests, self._replies
        self._end()
        request_read, request_write = pipe_above_standard_streams()
        reply_read, reply_write = pipe_above_standard_streams()
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", RENDERER_MODULE, str(request_read), str(reply_write)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(request_read, reply_write),
                start_new_session=True,
            )
        finally:
            os.close(request_read)
            os.close(reply_write)
        self._requests = Connection(request_write, readable=False)
        self._replies = Connection(reply_read, writable=False)
        if not self._replies.poll(START_WAIT_S):
            self._end()
            raise ScriptoriumError("the chat template's renderer did not start")
        try:
            self._replies.recv_bytes()  # ("ready",)
        except (EOFError, OSError):
            self._end()
            raise ScriptoriumError("the chat template's renderer could not start") from None
        return self._requests, self._replies

    def _end(self) -> None:
        for connection in (self._requests, self._replies):
            if connection is not None:
                connection.close()
        self._requests = self._replies = None
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


_renderers: list[TemplateRenderer] = []
_renderers_lock = threading.Lock()


def render_template(template: str, variables: dict[str, Any]) -> str:
    """`template` rendered in this process's renderer (see TemplateRenderer.render), started
    at the first render and ended when this process exits."""
    with _renderers_lock:
        if not _renderers:
            _renderers.append(TemplateRenderer())
            atexit.register(_renderers[0].close)
    return _renderers[0].render(template, variables)


def _too_slow(seconds: float) -> str:
    return f"the chat template did not finish within {seconds:g} s (a loop that never ends?), so it was stopped"


def _encode(message: tuple[Any, ...]) -> bytes:
    return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(data: bytes) -> tuple[Any, ...]:
    return pickle.loads(data)


# ---- the renderer process ------------------------------------------------------------------
class _Overrun(BaseException):
    """The render's alarm: a BaseException, so no `except Exception` on the way swallows it."""


class _Refused(Exception):
    """The template's own raise_exception(): its message is the author's to read."""


def _render(template: str, variables: dict[str, Any], limit: int) -> tuple[str, str]:
    """("text", the prompt) or ("error", one line); _Overrun escapes when the alarm rings."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)

    def raise_exception(message: str) -> None:
        raise _Refused(f"the chat template refused the conversation: {message}")

    pieces, written = [], 0
    try:
        for piece in environment.from_string(template).generate(**variables, raise_exception=raise_exception):
            written += len(piece)
            if written > limit:
                return "error", (
                    f"the chat template wrote more than {limit:,} characters "
                    "(a loop that never ends?), so it was stopped"
                )
            pieces.append(piece)
    except _Refused as refusal:
        return "error", str(refusal)
    except jinja2.TemplateError as error:
        return "error", f"the chat template could not be rendered: {error}"
    except (RecursionError, MemoryError) as error:
        return "error", f"the chat template could not be rendered: {type(error).__name__}"
    except Exception as error:  # noqa: BLE001 - a template's own bug (1/0, a wrong type) is its message
        return "error", f"the chat template could not be rendered: {type(error).__name__}: {error}"
    return "text", "".join(pieces)


def _serve(requests: Connection, replies: Connection) -> None:
    import signal

    import jinja2  # noqa: F401 - imported before "ready", so a render's time is its own

    def overrun(*_: object) -> None:
        raise _Overrun

    signal.signal(signal.SIGALRM, overrun)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (RENDERER_MEMORY_BYTES, resource.getrlimit(resource.RLIMIT_AS)[1]))
    except (ImportError, ValueError, OSError):
        pass  # not on this system: the time bound and the app's kill still hold
    replies.send_bytes(_encode(("ready",)))
    while True:
        try:
            message = _decode(requests.recv_bytes())
        except (EOFError, OSError):
            return  # the app closed its side (or died): nothing is left to render for
        _, template, variables, limit, seconds = message
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            reply = _render(template, variables, limit)
        except _Overrun:
            reply = ("error", _too_slow(seconds))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        replies.send_bytes(_encode(reply))


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False))
