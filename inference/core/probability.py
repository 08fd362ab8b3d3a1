"""A token's probability, or the mark that the backend gave none.

Apart from the events that carry it (events.py), so that what only reads a probability
(the session's token records, the panels) does not build every event class to do so."""

from __future__ import annotations

import math

NO_PROBABILITY = math.nan
"""A token's `p` where the backend gave none: a speculating llama-server streams the tokens of
its verifying passes (the guesses it accepted and the token it sampled after them) with no
probabilities (its source sets `prob = 1.0f` for them, with a TODO, and sends no candidates),
and such a token is never shown as 100%. NaN, so that no sum or comparison reads it as a
number by accident."""


def has_probability(p: float) -> bool:
    """Whether `p` is a probability the backend gave (not NO_PROBABILITY)."""
    return not math.isnan(p)
