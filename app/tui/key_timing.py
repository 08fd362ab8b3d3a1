"""The clock a generation's wait is measured on, from the key that asked for it to its first
token on screen: what the author waits for, where the engine's own time to first token
starts only once the prompt is made and the engine's process has the request."""

from __future__ import annotations

import time


def now() -> float:
    """Seconds, as time.monotonic counts them. Read through this module, so that a
    screenshot test can give the figure a fixed clock as it gives the engine's."""
    return time.monotonic()


def asked_now() -> float:
    """When a request is made: the moment its key was pressed (GenerationRequest.asked_at)."""
    return now()
