"""A chat reply on screen: Markdown, streamed in, its single line breaks kept.

Its own module so that Textual's Markdown (markdown-it and Pygments, about 25 ms to
import) loads with the first reply, not before the first screen is drawn: chat_pane.py
imports it inside the functions that make or find replies."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from scriptorium.app.sessions.export_breaks import kept_soft_breaks


def _reply_parser() -> MarkdownIt:
    """Textual's own parser ("gfm-like"), except in two ways.

    A single newline the model wrote inside a paragraph (a poem's lines, an address)
    stays a line break, as chat UIs keep it and as the export keeps it (export_breaks: one
    rule for both). Textual would draw a soft break as a space. Textual makes a parser for
    each write of a streaming reply and parses only the reply's last block: the rule walks
    that block's tokens, no more.

    HTML the model wrote is shown as text. Textual's Markdown draws no HTML: a tag vanished
    ("use <br> to break a line" lost its word), and a block opening with one (a `<div>`, a
    `<think>` alone on its line) hid every line up to the next blank one. The export escapes
    the same tags (export_html), so a viewer shows them too."""
    parser = MarkdownIt("gfm-like").disable(["html_block", "html_inline"])
    parser.core.ruler.push("keep_line_breaks", _keep_line_breaks)
    return parser


def _keep_line_breaks(state: StateCore) -> None:
    for token, _ in kept_soft_breaks(state.tokens):
        token.type, token.tag = "hardbreak", "br"


class AssistantMessage(Markdown):
    """A reply: streamed in through a MarkdownStream, set once in full at the end."""

    def __init__(self, markdown: str | None = None, **options: Any) -> None:
        super().__init__(markdown, parser_factory=_reply_parser, **options)

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
