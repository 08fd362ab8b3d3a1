"""What the draft pane tells the app about its suggestions: kept or thrown away (the
session records each generation's outcome from them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from textual.widgets.text_area import Location


@dataclass
class SuggestionAccepted(Message):
    """Suggested text became ordinary draft text (all of it, or its next word)."""

    text: str
    at: Location
    """Where it was inserted."""
    at_index: int
    """The same place as an offset into `draft_text`."""
    request_ids: tuple[int, ...]
    """The generations whose suggestion it is (GenerationRequest.id)."""
    parts: tuple[tuple[int | None, int, int], ...]
    """(request id, or None for the author's own word, start, end) of `text`: who wrote what."""
    draft_text: str
    """The draft with it."""
    rejected_ids: tuple[int, ...] = ()
    """The generations of the versions not kept, rejected by keeping this one: in the same
    save as the acceptance, so a crash cannot leave them undecided."""


@dataclass
class SuggestionRejected(Message):
    """A suggestion was thrown away (rejected, or replaced by a re-roll)."""

    text: str
    request_ids: tuple[int, ...]
    restorable: bool = False  # the author may bring it back (DraftPane.SuggestionRestored)
