"""A widget hidden or shown reaches the terminal even when a geometry query comes
between the change and the layout (showing.py): what the app sends to the terminal is
replayed on a grid of cells, and the grid must read as the screen does."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static


from scriptorium.app.tui.widgets.showing import set_shown


class _Terminal:
    """The cells a real terminal would show, from the updates Textual sends it."""

    def __init__(self, width: int, height: int) -> None:
        self.rows = [[" "] * width for _ in range(height)]

    def put(self, x: int, y: int, text: str, right: int) -> None:
        for offset, character in enumerate(text):
            if x + offset < min(right, len(self.rows[y])):
                self.rows[y][x + offset] = character

    def apply(self, update: Any) -> None:
        if hasattr(update, "chops"):  # a partial update: some spans of some lines
            for y, x1, x2 in update.spans:
                for x, strip in update.chops[y].items():
                    if strip is not None:
                        text = strip.text
                        start = max(x, x1)
                        self.put(start, y, text[start - x :], x2)
        elif hasattr(update, "strips"):  # the whole screen
            region = update.region
            for row, strips in enumerate(update.strips):
                x = region.x
                for strip in strips:
                    self.put(x, region.y + row, strip.text, region.right)
                    x += strip.cell_length

    def text(self) -> str:
        return "\n".join("".join(row) for row in self.rows)


class _Pair(App[None]):
    # Nothing grows into the note's place: only the note's own change can repaint it.
    CSS = "#scroller { height: 3; } #rest { height: 1; } #note { height: 2; }"

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll(id="scroller"):
                for n in range(20):
                    yield Static(f"line {n}", id=f"line-{n}")
            yield Static("the line above", id="rest")
            yield Static("NOTE NOTE", id="note")


@pytest.mark.parametrize("shown_again", [False, True])
async def test_a_change_of_display_reaches_the_terminal_past_a_geometry_query(shown_again: bool) -> None:
    await _change_display(shown_again)


async def _change_display(shown_again: bool) -> None:
    app = _Pair()
    terminal = _Terminal(40, 12)
    display = app._display

    def replayed(screen: Any, renderable: Any) -> None:
        if renderable is not None:
            terminal.apply(renderable)
        display(screen, renderable)

    app._display = replayed  # type: ignore[method-assign]
    async with app.run_test(size=(40, 12)) as pilot:
        note = app.query_one("#note", Static)
        if shown_again:
            set_shown(note, False)
            await pilot.pause()
        assert ("NOTE NOTE" in terminal.text()) is not shown_again
        # A scroll arranges only what shows, and leaves the whole arrangement to be made
        # again when something asks for it; the `region` asked for between the change
        # and the layout is what made Textual keep the new arrangement unpainted.
        app.query_one("#scroller", VerticalScroll).scroll_to(y=5, animate=False)
        await pilot.pause()
        set_shown(note, shown_again)
        assert app.query_one("#line-0", Static).region is not None  # scrolled out of sight
        await pilot.pause()
        await pilot.pause()
        assert ("NOTE NOTE" in terminal.text()) is shown_again, terminal.text()
