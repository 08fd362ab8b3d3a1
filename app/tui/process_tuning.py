"""What the app changes about its Python process while it runs, and gives back after.

- The cyclic garbage collector during start-up: the `scriptorium` command pauses it
  before the app's modules are imported (`pause_collector_for_start_up`), and the app
  resumes it once its first frame is drawn. What start-up makes lives as long as the app,
  so the collections it triggered only walked it: about 40 ms of a 550 ms first paint on
  a 2-core EPYC.
- The GIL switch interval: after each llama.cpp call (or each batch of events from the
  engine's child) a generation's thread needs the GIL back; with Python's default 5 ms a
  redraw in progress makes it wait that long. 1 ms while the app runs.
- The cyclic garbage collector: by the time a model is ready the app holds tens of
  thousands of long-lived objects (widgets, styles, caches), and a full collection walks
  them all, 35-45 ms on a 2-core EPYC; during a generation that is a frame dropped and CPU
  time taken from llama.cpp's threads. They are frozen then (gc.freeze), so that later
  collections walk only what came after; unfrozen when the app ends, so an app that ends
  in a longer-lived process (the tests) leaves nothing uncollectable behind.
  Only the young generations are collected before the freeze. A full collection would
  walk every object of the process, which is the 90,000 of the app's own (some 36 ms),
  but embedded in a longer-lived one all of its (a quarter of a second in a test worker,
  for every app that loads a model); it found some 2,000 objects of start-up garbage that
  had reached the old generation, a few hundred kilobytes, which stay frozen until the
  app ends instead.
- While tokens stream only the young generation is collected (`older_collections_deferred`):
  the passes over older objects came mid-stream, 20-25 ms of CPU in a 256-token
  generation of Gemma 3 270M, every millisecond of it taken from llama.cpp's threads when
  they use every core. Young passes stay: they walk a few hundred objects, and the
  interface leaves cycles behind with every frame (some 60 objects a token) that, never
  collected, would grow a long stream's memory without bound.
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

    def first_frame(self) -> None:
        """The first frame is drawn: the collector paused for start-up works again."""
        gc.enable()

    def settle(self) -> None:
        """The app's long-lived objects are made (a model is ready): collect the young
        generations, then freeze."""
        gc.collect(1)
        gc.freeze()

    def stop(self) -> None:
        gc.enable()  # a quit before the first frame
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        gc.unfreeze()


def pause_collector_for_start_up() -> None:
    """Pause the cyclic collector until the app's first frame (ProcessTuning.first_frame)."""
    gc.disable()


YOUNG_ONLY = 1 << 30
"""Young collections between two of the older generation (or, on Python 3.14's incremental
collector, how slowly the old generation is scanned): never, for a stream's length."""

_deferral_lock = threading.Lock()
_deferrals = 0
_thresholds: tuple[int, ...] = ()


@contextmanager
def older_collections_deferred() -> Iterator[None]:
    """Inside the block (a generation's stream) the collector collects only the young
    generation. Streams may overlap (the main screen's and the candidates screen's): the
    thresholds come back, as they were before the first, when the last one ends; the
    next collection then catches up with the older generations."""
    global _deferrals, _thresholds
    with _deferral_lock:
        if _deferrals == 0:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], YOUNG_ONLY)
        _deferrals += 1
    try:
        yield
    finally:
        with _deferral_lock:
            _deferrals -= 1
            if _deferrals == 0:
                gc.set_threshold(*_thresholds)
