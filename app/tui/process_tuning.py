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
"""

from __future__ import annotations

import gc
import sys

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
