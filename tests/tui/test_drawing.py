"""The cheap drawing paths used while a model streams draw what Rich would draw.

Panels and the streaming suggestion turn Rich Text into cells themselves (strips.py) and
wrap only the paragraph being written (suggestion_view.py), to keep the interface's CPU
time, which a small machine takes from llama.cpp's threads, low. These properties hold
them to Rich's own rendering and wrapping, cell by cell and style by style.
"""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.strip import Strip

from scriptorium.app.tui.branches import Ghost
from scriptorium.app.tui.widgets.strips import line_strip
from scriptorium.app.tui.widgets.suggestion_view import SuggestionView

EXAMPLES = settings(max_examples=300, deadline=None, derandomize=True, database=None)
STYLES = st.sampled_from(
    [Style(), Style(bold=True), Style(dim=True, color="red"), Style(italic=True, bgcolor="blue"), "", "underline"]
)
CHARACTERS = st.sampled_from(list("ab █▏世é"))
"""Wide (世) and block characters: cell widths, not string lengths, decide a crop."""


def cells(strip: Strip) -> list[tuple[str, Style | None]]:
    """Each cell's character and style (segments split differently compare equal)."""
    return [(character, segment.style) for segment in strip for character in segment.text]


@EXAMPLES
@given(st.lists(st.tuples(st.text(alphabet=CHARACTERS, max_size=8), STYLES), max_size=5), STYLES, st.integers(1, 30))
def test_a_line_is_drawn_as_rich_draws_it(parts: list[tuple[str, Style | str]], own: Style | str, width: int) -> None:
    console = Console()
    line = Text(style=own)
    for text, style in parts:
        line.append(text, style=style)
    base = Style(color="green", bgcolor="black")
    # Rich applies a line's own style when it renders it as part of a text (join does).
    expected = Strip(list(Text("\n").join([line]).render(console))).crop_extend(0, width, base).apply_style(base)
    drawn = line_strip(line, width, base, console)
    assert drawn.cell_length == width
    assert cells(drawn) == cells(expected)


def test_overlapping_spans_are_stacked_as_rich_stacks_them() -> None:
    console = Console()
    line = Text("abcdef", style=Style(italic=True))
    line.stylize(Style(bold=True), 0, 4)
    line.stylize(Style(color="red"), 2, 6)
    base = Style(bgcolor="black")
    expected = Strip(list(line.render(console))).crop_extend(0, 8, base).apply_style(base)
    assert cells(line_strip(line, 8, base, console)) == cells(expected)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        view = SuggestionView(id="suggestion")
        view.styles.height = 6
        yield view


def grow_and_compare(chunks: list[str], width: int) -> None:
    """Chunk by chunk, the rows drawn (only the changed ones are redrawn) are the last
    rows of Rich's wrapping of the whole text so far, with the writing cursor."""

    async def scenario() -> None:
        app = Host()
        async with app.run_test(size=(width + 4, 12)) as pilot:
            view = app.query_one(SuggestionView)
            ghost = Ghost(anchor=(0, 3), from_cursor=False)
            view.show(ghost, "Era", "")
            await pilot.pause()
            for chunk in chunks:
                ghost.text += chunk
                view.grow()
                await pilot.pause(0)  # what the growth asked for, handled: no wait for an idle process
                content_width, height = view.content_size.width, view.content_size.height
                expected = Text("Era")
                expected.append(ghost.text)
                expected.append("▍")
                rows = [line.plain for line in expected.wrap(app.console, content_width)][-height:]
                drawn = [strip.text.rstrip() for strip in (view.render_line(y) for y in range(height))]
                assert drawn == [row.rstrip() for row in rows] + [""] * (height - len(rows))

    asyncio.run(scenario())


@settings(max_examples=40, deadline=None, derandomize=True, database=None)  # each example runs an app
@given(
    st.lists(st.text(alphabet=st.sampled_from(list("ab cd\n.")), min_size=1, max_size=15), min_size=1, max_size=25),
    st.integers(8, 30),
)
def test_a_growing_suggestion_shows_the_newest_lines_rich_would_wrap(chunks: list[str], width: int) -> None:
    grow_and_compare(chunks, width)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("ab  世é.\t\xa0")), min_size=1, max_size=12), min_size=1, max_size=40
    ),
    st.integers(8, 30),
)
def test_a_long_paragraph_wraps_as_rich_wraps_it_while_it_grows(chunks: list[str], width: int) -> None:
    """One paragraph many lines long (no line break): its finished lines are kept from
    frame to frame, with wide characters, folded long words and other white space."""
    grow_and_compare(chunks, width)


def test_white_space_longer_than_a_line_keeps_the_words_after_it() -> None:
    """Kept lines skipped every space after them, also the spaces Rich had put on the next
    line: a run of spaces wider than the view took the next word out of the view until the
    model stopped (here ' è' and the writing cursor, for a view 8 to 11 cells wide)."""
    for width in range(4, 8):
        grow_and_compare(["città", "世界", " " * 20, " è"], width)


def test_a_tab_in_a_suggestion_after_a_tab_indented_line_is_drawn() -> None:
    """A draft of blank and tab-indented lines: the model's tab after it, once wrapped and
    stripped, left two spans over the same characters with different styles, and sorting
    them compared the styles themselves (TypeError: the app quit with a traceback)."""
    console = Console()
    line = Text("\t  ", style=Style(italic=True))
    line.append("\tx", style=Style(bold=True))
    base = Style(bgcolor="black")
    for wrapped in line.wrap(console, 40):
        wrapped = wrapped.copy()
        wrapped.rstrip()
        expected = Strip(list(Text("\n").join([wrapped]).render(console))).crop_extend(0, 40, base).apply_style(base)
        assert cells(line_strip(wrapped, 40, base, console)) == cells(expected)
