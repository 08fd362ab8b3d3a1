"""The memory and note dialogs count their tokens against the window as the author types,
and say one thing when they do not fit."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static, TextArea

from tui_helpers import ready, typed, until

from scriptorium.app.tui.screens.pinned_screen import PinnedScreen


def _count_line(app: object) -> str:
    return str(app.screen.query_one("#pinned-count", Static).render())  # type: ignore[attr-defined]


async def test_the_memory_dialog_counts_tokens_against_the_window_while_typing(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await pilot.press("alt+e")
        await pilot.pause()
        assert isinstance(app.screen, PinnedScreen)
        await until(pilot, lambda: "memory and note 0 tokens" in _count_line(app), "the empty memory counted")
        await typed(pilot, "Una casa sul fiume")
        await until(
            pilot,
            lambda: app.screen.pinned_size is not None and app.screen.pinned_size.tokens > 0,
            "the typing counted",
        )
        line = _count_line(app)
        size = app.screen.pinned_size
        assert f"the window {size.n_ctx:,}" in line and f"leaves {size.budget - size.tokens:,} for the draft" in line
        assert app.screen.query_one("#pinned-text", TextArea).text == "Una casa sul fiume"


async def test_a_memory_too_long_says_so_once_not_that_the_model_sees_it(short_context_model: Path) -> None:
    """'Memory kept: the model sees it in every prompt.' came straight before 'the memory ...
    takes 387 tokens, more than the 128': the kept message no longer claims it."""

    async with ready(short_context_model, size=(120, 40)) as (app, pilot):
        await pilot.press("alt+e")
        await pilot.pause()
        app.screen.query_one("#pinned-text", TextArea).text = "Una casa sul fiume. " * 200
        await until(
            pilot,
            lambda: app.screen.pinned_size is not None and not app.screen.pinned_size.fits,
            "too long counted",
        )
        assert "more than the" in _count_line(app)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not any("every prompt" in n.message for n in app.notices)
