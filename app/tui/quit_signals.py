"""Closing the terminal window (SIGHUP) or a polite kill (SIGTERM: `kill PID`, a logout,
a shutdown) quits the app the way ctrl+q does, instead of Python's default of dying on
the spot: that lost what was typed since the last autosave (up to half a second of it)
and left the terminal in the app's screen mode. Nobody is there to answer a question,
so what can be saved is saved and the app exits."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

SIGNAL_NAMES = ("SIGTERM", "SIGHUP")
"""SIGHUP does not exist on Windows, nor does the event loop's signal handling."""


class QuitOnSignals:
    def __init__(self, quit_now: Callable[[], None]) -> None:
        self._quit_now = quit_now
        self._installed: list[signal.Signals] = []

    @classmethod
    def started(cls, quit_now: Callable[[], None]) -> "QuitOnSignals":
        """Handlers on the app's event loop (the main thread's when the app runs for real)
        calling `quit_now`, until `stop`."""
        handlers = cls(quit_now)
        handlers._start()
        return handlers

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        for name in SIGNAL_NAMES:
            number = getattr(signal, name, None)
            # Not on Windows, nor off the main thread (an app some test runs in a thread).
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                if number is not None:
                    loop.add_signal_handler(number, self._quit_now)
                    self._installed.append(number)

    def stop(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop already closed
            loop = asyncio.get_running_loop()
            for number in self._installed:
                loop.remove_signal_handler(number)
        self._installed.clear()
