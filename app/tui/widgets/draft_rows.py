"""The draft editor's screen rows, drawn from the row's own text.

Textual's TextArea draws a screen row by building the whole document line it belongs to,
styling all of it, and dividing it at every soft-wrap break: a line of the draft is a
paragraph, so each of the forty rows on screen cost as much as the whole paragraph, at
every key (and its highlights, counted in UTF-8 bytes, each built a byte-to-character map
of the whole line). Here a row is built from its own characters, and the styles that fall
on it (the window marker's dimming, token colours) are found for that row alone, in
characters, when it is drawn.

Rows Textual draws differently (a line holding a tab, line numbers, TextArea's own
inline suggestion) are left to Textual: `row_strip` returns None for them.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Callable

from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widgets import TextArea

from scriptorium.app.tui.token_spans import GUESSED, SpanTracker, bucket
from scriptorium.app.tui.widgets.paragraph_wrap import ParagraphWrap

OUTSIDE = "outside"
"""The style name of text outside the model's window (drawn dimmed)."""

Paint = Callable[[Style | None, int, int | None], None]
"""Styles a row's part given in the line's columns (end None: through the row's end)."""
LineStyles = Callable[[int], list[tuple[int, int | None, str]]]
"""A line's styled stretches (RowStyles.for_line, as the editor asks it)."""


class RowStyles:
    """Which named styles fall on which columns of a line: the text outside the model's
    window, and known tokens coloured by probability (those speculative decoding guessed
    also marked). Nothing is computed per edit but forgetting the line starts; each line's
    styles are found when it is drawn."""

    def __init__(self) -> None:
        self._starts: list[int] | None = None
        self._lines: list[str] = []

    def forget(self) -> None:
        """The text changed: line starts are counted again when next needed."""
        self._starts = None

    def line_start(self, lines: list[str], newline: int, line_index: int) -> int:
        if self._starts is None or self._lines is not lines:
            starts, offset = [], 0
            for line in lines:
                starts.append(offset)
                offset += len(line) + newline
            self._starts, self._lines = starts, lines
        return self._starts[line_index]

    def for_line(
        self,
        lines: list[str],
        newline: int,
        line_index: int,
        window: tuple[int, int],
        spans: SpanTracker | None,
    ) -> list[tuple[int, int | None, str]]:
        """(start column, end column or None: through the line's end, name) of the line's
        styled stretches: dimmed first, so token colours drawn after them still show."""
        line_start = self.line_start(lines, newline, line_index)
        length = len(lines[line_index])
        line_end = line_start + length
        found: list[tuple[int, int | None, str]] = []
        window_start, window_end = window
        text_length = self.line_start(lines, newline, len(lines) - 1) + len(lines[-1])
        for since, until in ((0, min(window_start, text_length)), (min(window_end, text_length), text_length)):
            if since < until and since <= line_end and until > line_start:
                column = max(since, line_start) - line_start
                # A stretch that reaches the line's end styles its last cell too (where the cursor rests), as Textual does.
                stop = None if until >= line_end else until - line_start
                if stop is None or stop > column:
                    found.append((column, stop, OUTSIDE))
        if spans:
            found.extend(_token_stretches(spans, line_start, line_end))
        return found


def _token_stretches(spans: SpanTracker, line_start: int, line_end: int) -> list[tuple[int, int | None, str]]:
    found: list[tuple[int, int | None, str]] = []
    for span in spans.spans:
        if span.start >= line_end or span.end <= line_start:
            continue
        records = span.tokens
        first = max(bisect_right(records, line_start - span.start, key=lambda r: r.start) - 1, 0)
        for record in records[first:]:
            start = span.start + record.start
            if start >= line_end:
                break
            end = start + len(record.text)
            column, stop = max(start, line_start) - line_start, min(end, line_end) - line_start
            if stop > column:
                if (band := bucket(record.p)) is not None:
                    found.append((column, stop, band))
                if record.drafted:  # drawn after its band: the mark keeps the band's colour
                    found.append((column, stop, GUESSED))
    return found


def row_strip(editor: TextArea, y: int, line_styles: LineStyles) -> Strip | None:
    """Screen row `y` of the editor, or None where Textual's own drawing is needed."""
    wrapped = editor.wrapped_document
    if editor.show_line_numbers or editor.suggestion or not editor.soft_wrap or not isinstance(wrapped, ParagraphWrap):
        return None
    theme = editor._theme
    base_style = theme.base_style if theme and theme.base_style is not None else editor.rich_style
    scroll_y = editor.scroll_offset.y
    try:
        line_index, section = wrapped._offset_to_line_info[y + scroll_y]
    except IndexError:
        return Strip.blank(editor.size.width, base_style)
    line = editor.document[line_index]
    if "\t" in line:
        return None
    since, until = wrapped.section_bounds(line_index, section)
    text = Text(line[since:until], end="", no_wrap=True)
    if section == len(wrapped.get_offsets(line_index)):
        until = len(line) + 1  # the last row has a cell for the cursor after the text
        text.append(" ")
    cursor_row, cursor_column = editor.selection.end
    on_cursor_line = editor._has_cursor and editor.highlight_cursor_line and cursor_row == line_index
    cursor_line_style = theme.cursor_line_style if theme and on_cursor_line else None

    def paint(style: Style | None, start: int, end: int | None) -> None:
        start, end = max(start, since) - since, min(until if end is None else end, until) - since
        if style is not None and end > start:
            text.stylize(style, start, end)

    if cursor_line_style:
        paint(cursor_line_style, 0, None)
    _paint_selection(editor, text, line, line_index, paint)
    if theme:
        for start, end, name in line_styles(line_index):
            paint(theme.syntax_styles.get(name), start, end)
    _paint_cursor(editor, line_index, paint)
    target_width = editor.scrollable_content_region.size.width - editor.gutter_width
    strip = Strip(text.render(editor.app.console), cell_length=text.cell_len)
    if cursor_row == line_index and editor.highlight_cursor_line:
        line_style = cursor_line_style
    else:
        line_style = theme.base_style if theme else None
    return strip.extend_cell_length(target_width, line_style).apply_style(base_style)


def _paint_selection(editor: TextArea, text: Text, line: str, line_index: int, paint: Paint) -> None:
    start, end = editor.selection
    if start == end:
        return
    (top_row, top_column), (bottom_row, bottom_column) = sorted((start, end))
    theme = editor._theme
    style = theme.selection_style if theme else None
    if style is None or not top_row <= line_index <= bottom_row:
        return
    if not line and line_index != end[0]:
        # An empty line inside the selection shows a mark, as Textual's rows do.
        text.plain = "▌"
        text.stylize(Style(color=style.bgcolor))
        return
    since = top_column if line_index == top_row else 0
    until = bottom_column if line_index == bottom_row else len(line)
    paint(style, since, until)


def _paint_cursor(editor: TextArea, line_index: int, paint: Paint) -> None:
    theme = editor._theme
    start, end = editor.selection
    cursor_row, cursor_column = end
    bracket = editor._matching_bracket_location
    brackets = editor._has_cursor and editor.match_cursor_bracket and bracket is not None and start == end
    if cursor_row == line_index:
        if brackets and theme and theme.bracket_matching_style:
            paint(theme.bracket_matching_style, cursor_column, cursor_column + 1)
        if editor._draw_cursor and theme and theme.cursor_style:
            paint(theme.cursor_style, cursor_column, cursor_column + 1)
    if brackets and theme and bracket is not None and bracket[0] == line_index and theme.bracket_matching_style:
        paint(theme.bracket_matching_style, bracket[1], bracket[1] + 1)
