"""Soft wrapping that costs a keystroke the same in any paragraph.

Textual's WrappedDocument re-wraps the whole document line an edit touches, and a line of
the draft is a paragraph: typing in a 100,000-character one re-wrapped all of it, word by
word in Python, at every key. Here an edit within one line re-wraps from the last screen
row whose start the edit cannot move, and stops at the first row start that the new text
and the old share after the edit: greedy wrapping decides each row from where the row
starts on, so from a shared row start on every break is the old one, shifted. Its rows
are looked up by slicing the line at the row's breaks, not by dividing the whole line.

Whatever the fast path cannot prove (a tab, whose width depends on where it lies in the
line; an edit over several lines; an undo's range, which spans a batch of edits) goes to
Textual's own re-wrap, as before.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from textual._cells import cell_len, cell_width_to_column_index
from textual._wrap import compute_wrap_offsets
from textual.document._document import Location
from textual.document._wrapped_document import WrappedDocument
from textual.expand_tabs import expand_tabs_inline, get_tab_widths
from textual.geometry import Offset

_CHUNK = re.compile(r"\S+\s*|\s+")
"""A word and the spaces after it: what Textual's wrapping places whole (textual._wrap)."""
_WORD_AFTER_SPACE = re.compile(r"(?<=\s)\S")


class ParagraphWrap(WrappedDocument):
    """A WrappedDocument whose edits within one line re-wrap only the rows they reach."""

    def wrap(self, width: int, tab_width: int | None = None) -> None:
        super().wrap(width, tab_width)
        self._wrapped_lines = list(self.document.lines)
        """Each line as last wrapped: a one-line edit is checked against it before the fast path."""

    def wrap_range(self, start: Location, old_end: Location, new_end: Location) -> None:
        if not (start[0] == old_end[0] == new_end[0] and self._rewrap_within_line(start, old_end, new_end)):
            super().wrap_range(start, old_end, new_end)
            self._wrapped_lines = list(self.document.lines)

    # ---- the fast path ---------------------------------------------------------------
    def _rewrap_within_line(self, start: Location, old_end: Location, new_end: Location) -> bool:
        """Re-wrap line `start[0]` after an edit of columns start..old_end (now ..new_end);
        False where the edit is not exactly that (Textual's re-wrap then runs)."""
        row = start[0]
        width = self._width
        if not width or row >= len(self._wrapped_lines) or row >= self.document.line_count:
            return False
        old_line, line = self._wrapped_lines[row], self.document[row]
        first, old_stop, new_stop = start[1], old_end[1], new_end[1]
        if (
            "\t" in line
            or "\t" in old_line
            or not first <= min(old_stop, new_stop)
            or line[:first] != old_line[:first]
            or line[new_stop:] != old_line[old_stop:]
        ):
            return False
        old_breaks = self._wrap_offsets[row]
        breaks = rewrapped(line, old_breaks, first, new_stop, len(line) - len(old_line), width, self._tab_width)
        self._wrapped_lines[row] = line
        self._tab_width_cache[row] = [tab for _, tab in get_tab_widths(line, self._tab_width)]
        self._replace_breaks(row, breaks)
        return True

    def _replace_breaks(self, row: int, breaks: list[int]) -> None:
        """Put the line's new breaks in place, moving the rows below when its height changed."""
        old_height = len(self._wrap_offsets[row]) + 1
        self._wrap_offsets[row] = breaks
        height = len(breaks) + 1
        if height == old_height:
            return
        first_y = self._line_index_to_offsets[row][0]
        self._offset_to_line_info[first_y : first_y + old_height] = [(row, section) for section in range(height)]
        self._line_index_to_offsets[row] = list(range(first_y, first_y + height))
        shift = height - old_height
        below = self._line_index_to_offsets
        for index in range(row + 1, len(below)):
            below[index] = [y + shift for y in below[index]]

    # ---- rows looked up by slicing -----------------------------------------------------
    def section_bounds(self, line_index: int, section: int) -> tuple[int, int]:
        """(start, end) columns of one screen row of a line (`section` may count from the end)."""
        breaks = self._wrap_offsets[line_index]
        if section < 0:
            section += len(breaks) + 1
        start = breaks[section - 1] if section > 0 else 0
        end = breaks[section] if section < len(breaks) else len(self.document[line_index])
        return start, end

    def get_sections(self, line_index: int) -> list[str]:
        line = self.document[line_index]
        bounds = [0, *self._wrap_offsets[line_index], len(line)]
        return [line[since:until] for since, until in zip(bounds, bounds[1:])]

    def location_to_offset(self, location: Location) -> Offset:
        line_index, column = location
        line_index = max(0, min(line_index, len(self._line_index_to_offsets) - 1))
        breaks = self.get_offsets(line_index)
        section = bisect_right(breaks, column)
        since = breaks[section - 1] if section else 0
        x = cell_len(expand_tabs_inline(self.document[line_index][since:column], self._tab_width))
        return Offset(x, self._line_index_to_offsets[line_index][section])

    def get_target_document_column(self, line_index: int, x_offset: int, y_offset: int) -> int:
        sections = len(self._wrap_offsets[line_index]) + 1
        since, until = self.section_bounds(line_index, y_offset)
        section_text = self.document[line_index][since:until]
        column = since + cell_width_to_column_index(section_text, x_offset, self._tab_width)
        if y_offset not in (sections - 1, -1):
            # Only the last row's cursor may rest one cell past its end.
            column = min(column, since + len(section_text) - 1)
        return column


def rewrapped(
    line: str, old_breaks: list[int], first: int, new_stop: int, shift: int, width: int, tab_width: int
) -> list[int]:
    """The breaks of `line`, edited at columns first..new_stop (its length changed by
    `shift`), given its breaks before the edit: re-wrapped from the last row start the edit
    cannot move, until a row start the old and new text share."""
    starts = [0, *old_breaks]
    index = bisect_right(starts, max(first - 1, 0)) - 1
    # A row start stays where it is when the word at it (and its spaces) ends before the edit:
    # the rows above decided it from unchanged text. At a folded word's middle it may not: go back.
    while index > 0:
        since = starts[index]
        match = _CHUNK.match(line, since)
        if line[since - 1].isspace() and not line[since].isspace() and match is not None and match.end() < first:
            break
        index -= 1
    since = starts[index]
    kept = old_breaks[:index]  # the breaks before `since`, and `since` itself (starts[index])
    old_after = set(old_breaks)
    reach = max(width * 3, 256)
    while True:
        until = _word_start_after(line, new_stop + reach)
        found = [since + at for at in compute_wrap_offsets(line[since:until], width, tab_width)]
        for position, at in enumerate(found):
            if at >= new_stop and at - shift in old_after:
                return kept + found[: position + 1] + [old + shift for old in old_breaks if old > at - shift]
        if until >= len(line):
            return kept + found
        reach *= 4


def _word_start_after(line: str, at: int) -> int:
    """The first word start from `at` on (the line's end if none): wrapping the text up to
    it places every word whole, as the whole line's wrapping does."""
    if at >= len(line):
        return len(line)
    match = _WORD_AFTER_SPACE.search(line, at)
    return match.start() if match is not None else len(line)
