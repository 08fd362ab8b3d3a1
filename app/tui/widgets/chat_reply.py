"""A chat reply on screen: Markdown, streamed in.

Its own module so that Textual's Markdown (markdown-it and Pygments, about 25 ms to
import) loads with the first reply, not before the first screen is drawn: chat_pane.py
imports it inside the functions that make or find replies."""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AssistantMessage(Markdown):
    """A reply: streamed in through a MarkdownStream, set once in full at the end."""

    def stream(self) -> MarkdownStream:
        """Text written to this stream is drawn into the reply, several writes a frame at most."""
        return self.get_stream(self)
