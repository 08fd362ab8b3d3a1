"""Session files written on a thread of their own, so that the interface's thread only
encodes them.

A long session's file is tens of megabytes: written, fsynced and fingerprinted on the
interface's thread it held every key for 50-100 ms, and while a model streams it took
that CPU from llama.cpp's threads too. Here the writes run one at a time, in the order
they were asked for. A write still waiting its turn is replaced by a newer one of the
same file (it would be overwritten at once). `run` waits for its write and for every one
asked before it, so a save that must be on disk (an explicit save, the way out) is.

One thread writes for the whole process (SHARED), every store's files in one order, so
that whatever reads a session file, through any store, can first wait for the writes in
flight. The thread is not a daemon and ends when nothing is left to write: a process on
its way out finishes the write it has started and those waiting, as the interpreter
joins it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

After = Callable[[BaseException | None], None]


class _Write:
    __slots__ = ("call", "after", "done", "result", "error")

    def __init__(self, call: Callable[[], Any], after: After | None) -> None:
        self.call = call
        self.after = after
        """Told how a write nobody waits for went, on the writing thread."""
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


THREAD_NAME = "scriptorium-session-writes"


class BackgroundWrites:
    """Writes run in order on one thread of their own; see the module's docstring."""

    def __init__(self) -> None:
        self._waiting: dict[object, _Write] = {}
        self._busy = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(self, key: str, call: Callable[[], Any], after: After | None = None) -> None:
        """Run `call` soon; `after(its error or None)` is called on the writing thread once it has run."""
        with self._changed:
            # Replaced in place: the file keeps its turn, with the newer content.
            self._waiting[key] = _Write(call, after)
            self._start()

    def run(self, key: str, call: Callable[[], Any]) -> Any:
        """Run `call` after the writes asked before it, and wait for it: its result, or its error raised here."""
        write = _Write(call, None)
        with self._changed:
            self._waiting.pop(key, None)  # a waiting write of the same file: this newer one replaces it
            self._waiting[write] = write
            self._start()
        write.done.wait()
        if write.error is not None:
            raise write.error
        return write.result

    def flush(self) -> None:
        """Wait until every write asked for so far has run."""
        with self._changed:
            while self._waiting or self._busy:
                self._changed.wait()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name=THREAD_NAME, daemon=False)
            self._thread.start()

    def _work(self) -> None:
        while True:
            with self._changed:
                if not self._waiting:
                    self._thread = None
                    return
                write = self._waiting.pop(next(iter(self._waiting)))
                self._busy = True
            try:
                write.result = write.call()
            except BaseException as error:  # noqa: BLE001 - raised where it is waited for, or handed to `after`
                write.error = error
            try:
                if write.after is not None:
                    write.after(write.error)
            except Exception:  # noqa: BLE001 - a failing listener must not stop the writes queued after it
                pass
            write.done.set()
            with self._changed:
                self._busy = False
                self._changed.notify_all()


SHARED = BackgroundWrites()
"""The process's session writes (no thread until there is something to write)."""
