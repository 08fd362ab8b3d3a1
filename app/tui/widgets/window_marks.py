"""Where the model's window lies in the draft on screen, and the spans drawn dimmed outside it.

The window is fitted to the continued text: the draft before the suggestion's anchor,
then the suggestion. Its start is an offset there, which is the draft's own only before
the anchor; a suggestion from the cursor sees nothing of the draft after the cursor, but
on a model with fill-in-the-middle tokens the text after it its prompt carries (window.Fim)."""

from __future__ import annotations

from typing import Iterable, Iterator

from textual.widgets.text_area import DocumentBase

from scriptorium.app.tui.branches import Ghost


def window_in_draft(document: DocumentBase, ghost: Ghost | None, start: int, after: int = 0) -> tuple[int, int | None]:
    """(start, end) in the draft of a window starting at `start` of the continued text
    (end None: to the end of the draft), with `after` characters of the draft after a
    suggestion from the cursor (fill in the middle). One that starts inside the suggestion
    sees none of the draft before it."""
    if ghost is None:
        return start, None
    anchor = document.get_index_from_location(ghost.anchor)
    return min(start, anchor), anchor + after if ghost.from_cursor else None


def dimmed_spans(document: DocumentBase, ranges: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int, int | None]]:
    """(row, start byte, end byte or None: to the line's end) of each line's part in the
    character ranges, as TextArea's highlights count them."""
    for start, end in ranges:
        if start >= end:
            continue
        (first_row, first_column) = document.get_location_from_index(start)
        (last_row, last_column) = document.get_location_from_index(end)
        for row in range(first_row, last_row + 1):
            line = document.get_line(row)
            since = len(line[:first_column].encode("utf-8")) if row == first_row else 0
            until = len(line[:last_column].encode("utf-8")) if row == last_row and last_column < len(line) else None
            if until is None or until > since:
                yield row, since, until
