"""A chat reply on screen: Markdown, streamed in.

Its own module so that Textual's Markdown (markdown-it and Pygments, about 25 ms to
import) loads with the first reply, not before the first screen is drawn: chat_pane.py
imports it inside the functions that make or find replies."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AssistantMessage(Markdown):
    """A reply: streamed in through a MarkdownStream, set once in full at the end."""

    ending = ""
    """How it ended when not by itself: 'stopped' (Esc) or 'failed'; marked at its side."""

    def show_note(self, ending: str, versions: str = "") -> None:
        """Mark how it ended (`ending`, or '') and say it underneath, after `versions` (which
        version of the last reply it is, with the keys to the others), if any."""
        self.ending = ending
        self.set_class(bool(ending), "-stopped")
        note = " · ".join(part for part in (versions, ending) if part)
        self.border_subtitle = note
        self.set_class(bool(note), "-noted")

    def stream(self) -> MarkdownStream:
        """Text written to this stream is drawn into the reply, several writes a frame at most."""
        return self.get_stream(self)
