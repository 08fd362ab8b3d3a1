"""A generation whose engine stops answering (a llama-server stopped with kill -STOP) showed
only "writing…" until the 120 s read timeout: the status line now says how long the engine
has been silent and that Esc stops, and goes back to "writing…" once tokens come again."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tui_helpers import loader_wrapping, ready, typed, until

from scriptorium.app.tui.screens import generating_screen
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import Event, TokenEvent
from scriptorium.inference.core.settings import preset


class TwoHolds:
    """Holds the engine's stream after its `stall`th token (the silence) and again after its
    `later`th (so the test sees the status while tokens have resumed, before the end)."""

    def __init__(self, stall: int = 3, later: int = 8) -> None:
        self.at = {stall: threading.Event(), later: threading.Event()}
        self.reached = {index: threading.Event() for index in self.at}

    def wrap(self, generate: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def held(*args: Any, **kwargs: Any) -> Iterator[Event]:
            for event in generate(*args, **kwargs):
                yield event
                if isinstance(event, TokenEvent) and event.index + 1 in self.at:
                    self.reached[event.index + 1].set()
                    self.at[event.index + 1].wait(30)

        return held


@pytest.mark.parametrize(
    ("origin", "who"), [("", "the model"), ("llama-server b1 at http://127.0.0.1:1", "the server")]
)
async def test_the_status_line_says_when_the_engine_is_silent_and_clears_when_it_answers(
    random_model: Path, monkeypatch: pytest.MonkeyPatch, origin: str, who: str
) -> None:
    monkeypatch.setattr(generating_screen, "SILENCE_NOTICE_AFTER", 0.2)
    monkeypatch.setattr(generating_screen, "SILENCE_CHECK_EVERY", 0.05)
    holds = TwoHolds()
    held_loader = loader_wrapping("generate", holds.wrap)

    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = held_loader(options, on_progress)
        engine.origin = origin  # an in-process engine standing in for a server's backend, or for a local one
        return engine

    async with ready(
        random_model,
        mode="chat",
        loader=load,
        sampler=preset("greedy").with_changes(max_tokens=200),
    ) as (app, pilot):
        await typed(pilot, "Ciao")
        await pilot.press("enter")
        status = app.main.status
        await until(pilot, lambda: "has not answered" in status.activity, "the silence shown")
        assert status.activity.startswith(f"{who} has not answered for ") and status.activity.endswith("Esc stops")
        assert "reading the prompt" not in status.activity  # tokens came: a stall, not a long prompt
        # Silence from here on is not long enough to be shown again: what is seen next is the answer.
        monkeypatch.setattr(generating_screen, "SILENCE_NOTICE_AFTER", 1000.0)
        holds.at[3].set()
        await until(pilot, lambda: holds.reached[8].is_set() and status.activity == "writing…", "writing again")
        assert app.main.is_generating
        holds.at[8].set()
        await pilot.press("escape")
        await app.main.wait_until_idle()
        assert status.activity == ""
