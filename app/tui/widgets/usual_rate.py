"""A decode rate far below what this model usually does in this run: the machine is busy.

On a laptop that is never idle, a decode can fall to a tenth of its speed while a
compile or a browser takes the cores (issue 33: 0.9 tok/s in the Speed panel, where the
same model wrote 35). The figure alone leaves the author to guess whether the model, the
draft or the app got slower; said beside it, the cause is plain. The engine also moves
to fewer threads by itself then (inference/local/thread_choice.py): what remains is the share
of the machine the other work leaves.
"""

from __future__ import annotations

from collections import deque

COLLAPSE = 0.5
"""A rate below this share of the usual one is a collapse, not the noise between runs
(one run's median moves by a few points from the next, docs/benchmarks.md "Run to run")."""
MIN_TOKENS = 16
"""Rates over fewer decode steps are too short to judge (the first steps warm the caches)."""
REMEMBERED = 8
"""The last finished generations whose rates make the usual one."""


class UsualRate:
    """This model's decode rates in this run, and the collapse of one below them."""

    def __init__(self) -> None:
        self._rates: deque[float] = deque(maxlen=REMEMBERED)

    def forget(self) -> None:
        """Another model is loaded: its rates are not this one's."""
        self._rates.clear()

    def add(self, rate: float, tokens: int) -> None:
        """A generation finished, decoding `tokens` at `rate` tok/s."""
        if tokens >= MIN_TOKENS and rate > 0:
            self._rates.append(rate)

    @property
    def usual(self) -> float | None:
        """What this model usually does here: the upper quartile of its recent rates, so
        that runs slowed by load do not lower the measure of a slowdown."""
        if not self._rates:
            return None
        ordered = sorted(self._rates)
        return ordered[len(ordered) * 3 // 4]

    def collapsed(self, rate: float | None, tokens: int) -> float | None:
        """The usual rate when `rate` (over `tokens` decode steps) fell far below it, else None."""
        usual = self.usual
        if usual is None or rate is None or tokens < MIN_TOKENS or rate >= COLLAPSE * usual:
            return None
        return usual
