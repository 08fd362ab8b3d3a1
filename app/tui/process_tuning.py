"""What the app changes about its Python process while it runs, and gives back after.

- The GIL switch interval: after each llama.cpp call (or each batch of events from the
  engine's child) a generation's thread needs the GIL back; with Python's default 5 ms a
  redraw in progress makes it wait that long. 1 ms while the app runs.
- The cyclic garbage collector: by the time a model is ready the app holds tens of
  thousands of long-lived objects (widgets, styles, caches), and a full collection walks
  them all, 35-45 ms on a 2-core EPYC; during a generation that is a frame dropped and CPU
  time taken from llama.cpp's threads. They are collected once then frozen (gc.freeze),
  so later collections walk only what came after; unfrozen when the app ends, so an app
  that ends in a longer-lived process (the tests) leaves nothing uncollectable behind.
- While tokens stream the collector does not run at all (`collector_paused`): even over
  what is not frozen its passes came mid-stream, 20-25 ms of CPU in a 256-token
  generation of Gemma 3 270M, every millisecond of it taken from llama.cpp's threads when
  they use every core. Nearly all a stream allocates is freed by reference counting; the
  few cycles it leaves wait for the stream's end, one generation's worth at most.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

GIL_SWITCH_INTERVAL = 0.001
"""Seconds a thread may hold the GIL while another waits for it (Python's default: 0.005)."""


class ProcessTuning:
    def __init__(self) -> None:
        self._switch_interval: float | None = None

    def start(self) -> None:
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)

    def settle(self) -> None:
        """The app's long-lived objects are made (a model is ready): collect, then freeze."""
        gc.collect()
        gc.freeze()

    def stop(self) -> None:
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        gc.unfreeze()


_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic garbage collection inside the block (a generation's stream). Streams
    may overlap (the main screen's and the candidates screen's): the collector comes
    back, as it was before the first, when the last one ends."""
    global _pauses, _was_enabled
    with _pause_lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
