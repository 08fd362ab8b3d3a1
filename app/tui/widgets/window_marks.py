"""Where the model's window lies in the draft on screen (draft_rows.py dims what is outside it).

The window is fitted to the continued text: the draft before the suggestion's anchor,
then the suggestion. Its start is an offset there, which is the draft's own only before
the anchor; a suggestion from the cursor sees nothing of the draft after the cursor, but
on a model with fill-in-the-middle tokens the text after it its prompt carries (window.Fim)."""

from __future__ import annotations

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
