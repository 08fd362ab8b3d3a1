"""Shared by the TUI scoring tests: a draft scored with F9, and a scoring run held after its
first chunk."""

from __future__ import annotations

import asyncio
import threading
from contextlib import closing
from dataclasses import replace
from typing import Any, Callable, Iterator

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import Event, ScoreProgress

TEXT = "La casa era buia, e la notte più lunga. Il gatto dorme sul letto."


def flash_loader(n_batch: int = 512) -> Callable[..., Engine]:
    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        return Engine.load(replace(options, flash_attn=True, n_batch=n_batch), on_progress)

    return load


def scored_records(app: Any) -> list[Any]:
    return [
        (span.start, span.tokens[0])
        for span in app.main.draft.editor.spans.spans
        if span.tokens and span.tokens[0].source.kind == "scored"
    ]


async def scored(pilot: Any, text: str) -> list[Any]:
    """Put `text` in the draft, score it with F9 and wait for the end: its scored records."""
    pilot.app.main.draft.editor.load_text(text)
    await pilot.press("f9")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return scored_records(pilot.app)


class HeldScoring:
    """Holds a scoring run after its first chunk until released."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.open = threading.Event()

    def loader(self, options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = flash_loader(n_batch=32)(options, on_progress)
        original = engine.score

        def score(*args: Any, **kwargs: Any) -> Iterator[Event]:
            with closing(original(*args, **kwargs)) as events:
                for event in events:
                    yield event
                    if isinstance(event, ScoreProgress) and not self.reached.is_set():
                        self.reached.set()
                        self.open.wait(30)

        engine.score = score  # type: ignore[method-assign]
        return engine

    async def scoring(self, pilot: Any, text: str) -> None:
        """Put `text` in the draft and press F9: back once the run is held after its first chunk."""
        pilot.app.main.draft.editor.load_text(text)
        await pilot.press("f9")
        assert await asyncio.to_thread(self.reached.wait, 30)  # its progress is posted by then
        await pilot.pause()
