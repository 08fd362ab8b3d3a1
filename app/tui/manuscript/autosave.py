"""The next save the app makes by itself: once typing pauses, or at once (after a generation, so that
it never lands in the middle of the next one). Only the when: the saving is the manuscript's."""

from __future__ import annotations

import time
from typing import Callable, Protocol


class Timer(Protocol):
    def stop(self) -> None: ...


class Timers(Protocol):
    """What sets a timer: Textual's `set_timer`, the app's, calling back on the UI thread."""

    def __call__(self, delay: float, callback: Callable[[], object]) -> Timer: ...


class Autosave:
    """`delay(now)` says how long from `now` (a monotonic time) the next save waits (the session keeper's rule:
    a pause in the typing, never too long after the first unsaved change); `save` makes it."""

    def __init__(self, set_timer: Timers, delay: Callable[[float], float], save: Callable[[], object]) -> None:
        self._set_timer, self._delay, self._save = set_timer, delay, save
        self.timer: Timer | None = None

    @property
    def pending(self) -> bool:
        return self.timer is not None

    def schedule(self, *, at_once: bool = False) -> None:
        if self.timer is not None:
            self.timer.stop()
        if at_once:
            return self._due()
        # At least 1 ms: a save due at once would be a 0 s timer, and Textual's timer divides by its delay.
        self.timer = self._set_timer(max(self._delay(time.monotonic()), 0.001), self._due)

    def save_now_if_pending(self) -> None:
        """A save waiting for a pause is made now: due mid-stream, it would take llama.cpp's CPU."""
        if self.timer is not None:
            self.schedule(at_once=True)

    def _due(self) -> None:
        self.timer = None
        self._save()
