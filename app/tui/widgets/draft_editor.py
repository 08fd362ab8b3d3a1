"""The draft editor: a TextArea that carries the model's suggestion beside the text.

The suggestion (the "ghost") is never part of the document until the author accepts
it, so rejecting it leaves no trace in the text or the undo history. It is pinned to an
anchor location; edits before the anchor move it, an edit across it drops a finished
ghost (one still being written stays and the model stops), and typing at the anchor (or
after the spaces it stands in for, draft_anchors) consumes it when the text matches it.
"""

from __future__ import annotations

import functools
from bisect import bisect_right

import re
import sys
from dataclasses import dataclass, replace
from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Spacing
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea
from textual.document._document_navigator import DocumentNavigator
from textual.widgets.text_area import Edit, EditResult, Location

from scriptorium.app.sessions.model import CJK_CHARACTERS, CJK_PUNCTUATION
from scriptorium.app.tui.branches import Ghost, KeptWord, cut_front
from scriptorium.app.tui.compared_colours import BANDS as COMPARED_BANDS
from scriptorium.app.tui.keys import type_invisible, typed_with_alt
from scriptorium.app.tui.widgets.draft_anchors import shifted_anchor
from scriptorium.app.tui.token_spans import BUCKETS, GUESSED, Span, SpanTracker, TokenRecord
from scriptorium.app.tui.widgets.draft_rows import OUTSIDE, RowStyles, row_strip
from scriptorium.app.tui.widgets.paragraph_wrap import ParagraphWrap
from scriptorium.app.tui.widgets.window_marks import window_in_draft

_NEXT_WORD = re.compile(r"\s*\S+")


@functools.cache
def _cjk_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Chinese and Japanese characters, and their punctuation: compiled when a word is first
    taken, since the characters' ranges make a large class to compile (some 3 ms of start-up)."""
    return re.compile(f"[{CJK_CHARACTERS}]"), re.compile(f"[{CJK_PUNCTUATION}]")


def inserted_length(text: str, newline: int) -> int:
    """How long `text` is once in the document, which splits it into lines at every
    str.splitlines break (a pasted "\r\n" is two characters, one line break) and joins
    them with its own newline, as Textual's Document.replace_range does."""
    lines = text.splitlines()
    if text.endswith(("\r\n", "\n", "\r")):
        lines.append("")
    return sum(map(len, lines)) + newline * max(len(lines) - 1, 0)


def next_word(text: str, tokens: list[TokenRecord] | None = None) -> str:
    """The next word of a suggestion with the whitespace before it (' casa' of ' casa era').
    Chinese and Japanese write no spaces, so there the run up to the next space is a whole
    sentence: their word is the model's token (東京, の), or one character without tokens."""
    match = _NEXT_WORD.match(text)
    word = match.group(0) if match else text
    cjk_characters, cjk_punctuation = _cjk_patterns()
    cjk = cjk_characters.search(word)
    if cjk is None:
        return word
    if cjk_punctuation.sub("", word[len(word) - len(word.lstrip()) : cjk.start()]):
        return word[: cjk.start()]  # a word in another script before it: that one first
    ends = [r.end for r in tokens or () if r.start <= cjk.start() < r.end]
    return word[: max(min(ends[0], len(word)) if ends else 0, cjk.end())]


def text_key(text: str) -> tuple[int, int]:
    """Tells one draft from another without a copy of it: words kept one by one through a
    long suggestion kept two copies of the whole draft each."""
    return len(text), hash(text)


class TakenWord(NamedTuple):
    """A word accepted, for an undo to put back into the suggestion."""

    before: tuple[int, int]
    """The draft before the word went in (text_key)."""
    after: tuple[int, int]
    """The draft with the word."""
    rest: Ghost
    """The suggestion left, which the model may still be writing into."""
    kept: KeptWord


class DraftEditor(TextArea):
    """The author's draft, with an optional ghost suggestion."""

    COMPONENT_CLASSES = (
        {f"draft-editor--{name}" for _, name, _ in BUCKETS}
        | {"draft-editor--outside", f"draft-editor--{GUESSED}"}
        | {f"draft-editor--{name}" for _, name, _ in COMPARED_BANDS if name}
    )

    @dataclass
    class GhostChanged(Message):
        """The ghost grew, shrank, moved or went away (`editor.ghost` is the new state)."""

        editor: "DraftEditor"
        reason: str
        """'typed' (consumed by matching typing), 'accepted', 'lost' (an edit invalidated
        it), 'interrupted' (an edit reached it while the model writes: it stays, the model is
        to stop), 'untaken' (an undo gave an accepted word back), 'cleared' or 'text' (new streamed text)."""
        lost: Ghost | None = None
        """The suggestion an edit (or undo) took away, when the reason is 'lost'."""
        taken_back: str = ""
        """The word an undo took back into the suggestion, when the reason is 'untaken'."""
        lost_from: str = ""
        """The draft `lost` fitted, when an undo or redo took it: with the draft so again, it can come back."""

        @property
        def control(self) -> "DraftEditor":
            return self.editor

    def __init__(self, text: str = "", **kwargs: object) -> None:
        # Before TextArea's own init, which builds the highlight map already.
        self.spans = SpanTracker()
        """Generated and scored stretches of the draft, with their tokens."""
        self.colour_tokens = False
        """Colour known tokens by probability (token_spans.BUCKETS)."""
        self.window_start = 0
        """Where the model's window starts in the text: what is before it is drawn dimmed."""
        self.window_end: int | None = None
        """Where it ends (None: at the end of the text): what is after it is drawn dimmed."""
        self.compared: list[tuple[int, int, str]] = []
        """Words coloured by how a second model finds them against the first (start, end,
        highlight name: compared_colours.highlights), drawn instead of the probabilities while set."""
        self._row_styles = RowStyles()
        super().__init__(text, soft_wrap=True, tab_behavior="focus", show_line_numbers=False, **kwargs)  # type: ignore[arg-type]
        self.ghost: Ghost | None = None
        self._inserting_ghost = False
        self._taken_words: list[TakenWord] = []
        """The words kept from the suggestion on screen, the last last: each undo gives one back."""

    def on_resize(self) -> None:
        # TextArea rewraps at the new width but repaints only when its height in lines
        # changes: the author's words painted at the old width stayed on screen, some
        # hidden, until the next key (a draft opened as the side panels took their room).
        self.refresh()
        if self.ghost is not None:
            # Shrunk to make room for the suggestion (or opened with one): the line it
            # continues stays in view, else a long draft showed its top lines and the
            # suggestion below them seemed to follow those.
            self.call_after_refresh(self._show_ghost_anchor)

    def _show_ghost_anchor(self) -> None:
        if self.ghost is None:
            return
        x, y = self.wrapped_document.location_to_offset(self.ghost.anchor)
        self.scroll_to_region(
            Region(x, y, width=1, height=1), spacing=Spacing(right=self.gutter_width), animate=False, force=True
        )

    async def _on_key(self, event: events.Key) -> None:
        if typed_with_alt(event):
            # Not typed: the key goes on up to the bindings (alt+e opens the memory).
            event.prevent_default()
        else:
            type_invisible(self, event)  # TextArea's own handler, which would drop it, then does not run

    # ---- the ghost -------------------------------------------------------------------
    def begin_ghost(self, anchor: Location, *, from_cursor: bool, spaces_left_out: int = 0) -> Ghost:
        """A suggestion at `anchor`, before `spaces_left_out` spaces the prompt left out: it
        stands in for them until its first text says whether it takes their place."""
        self.ghost = Ghost(
            anchor=anchor, from_cursor=from_cursor, replaces=spaces_left_out, spaces_left_out=spaces_left_out
        )
        self.post_message(self.GhostChanged(self, "text"))
        return self.ghost

    def restore_ghost(self, ghost: Ghost) -> None:
        """Show again a suggestion thrown away (the draft is as it was then)."""
        self.ghost = ghost
        self.post_message(self.GhostChanged(self, "text"))

    def clear_ghost(self, reason: str = "cleared", lost_from: str = "") -> None:
        self._taken_words.clear()  # no suggestion left to give them back to
        if self.ghost is not None:
            ghost, self.ghost = self.ghost, None
            self.post_message(self.GhostChanged(self, reason, ghost if reason == "lost" else None, lost_from=lost_from))

    def text_before(self, location: Location) -> str:
        return self.document.get_text_range((0, 0), location)

    def replaced_text(self) -> str:
        """The draft text the suggestion would replace ('' for a plain continuation)."""
        ghost = self.ghost
        if ghost is None or not ghost.replaces:
            return ""
        start = self.document.get_index_from_location(ghost.anchor)
        return self.text[start : start + ghost.replaces]

    def accept_ghost(self, *, word_only: bool = False) -> str:
        """Insert the suggestion (or its next word) at the anchor as one undoable edit,
        replacing what it replaces on the first acceptance; returns what was inserted."""
        ghost = self.ghost
        if ghost is None or not ghost.text:
            return ""
        chunk = next_word(ghost.text, ghost.tokens) if word_only else ghost.text
        before, suggestion = (
            self.text,
            replace(ghost, tokens=list(ghost.tokens), writers=list(ghost.writers), versions=list(ghost.versions)),
        )
        self.history.checkpoint()
        self._inserting_ghost = True
        start = self.document.get_index_from_location(ghost.anchor)
        try:
            end = self.document.get_location_from_index(start + ghost.replaces)
            result = self.replace(chunk, ghost.anchor, end, maintain_selection_offset=False)
            ghost.replaces = ghost.spaces_left_out = 0
        finally:
            self._inserting_ghost = False
        self.history.checkpoint()
        self.spans.add(Span(start, chunk, cut_front(ghost, len(chunk))))
        self._build_highlight_map()
        ghost.versions = []
        ghost.anchor = result.end_location
        self.move_cursor(result.end_location)
        if not ghost.text and not ghost.streaming:
            self.ghost = None
        if self.ghost is ghost:
            self._taken_words.append(
                TakenWord(
                    text_key(before),
                    text_key(self.text),
                    ghost,
                    KeptWord(suggestion, ghost.text, len(ghost.tokens), len(ghost.writers)),
                )
            )
        else:
            self._taken_words.clear()  # all of it kept: a plain undo takes it out of the draft
        self.post_message(self.GhostChanged(self, "accepted"))
        return chunk

    # ---- keeping the anchor right while the author edits -----------------------------
    def edit(self, edit: Edit) -> EditResult:
        if self.spans:
            index = self.document.get_index_from_location
            top, bottom = index(edit.top), index(edit.bottom)
            self.spans.edited(top, bottom, inserted_length(edit.text, len(self.document.newline)))
        return self._edit_with_ghost(edit)

    def _edit_with_ghost(self, edit: Edit) -> EditResult:
        ghost = self.ghost
        if ghost is None or self._inserting_ghost:
            return super().edit(edit)
        if ghost.replaces and self._after_spaces_replaced(ghost, edit):
            # Typed where the cursor was, after the spaces the suggestion stands in for: typed
            # over them if the suggestion writes it, and it goes on after (as at the anchor).
            typed, result = self.replaced_text() + edit.text, super().edit(edit)
            if not ghost.text.startswith(typed):
                self._reached(ghost, ghost.anchor)
                return result
            ghost.replaces = 0
            return self._typed_through(ghost, result, len(typed))
        if ghost.replaces and self._touches_replaced(ghost, edit):
            # The text the branch would replace is not what it was: the branch no longer fits.
            result = super().edit(edit)
            self.clear_ghost("lost")
            return result
        if ghost.spaces_left_out and self._touches_spaces_followed(ghost, edit):
            ghost.spaces_left_out = 0  # the author's to change: the suggestion stays after what they leave
        top, bottom = edit.top, edit.bottom
        typed_at_anchor = bool(edit.text) and top == bottom == ghost.anchor
        result = super().edit(edit)
        if typed_at_anchor and ghost.text.startswith(edit.text):
            return self._typed_through(ghost, result, len(edit.text))
        anchor = None if typed_at_anchor else shifted_anchor(ghost.anchor, top, bottom, result.end_location)
        if anchor is None:
            self._reached(ghost, top)
        elif anchor != ghost.anchor:
            ghost.anchor = anchor
            self.post_message(self.GhostChanged(self, "moved"))
        return result

    def _reached(self, ghost: Ghost, top: Location) -> None:
        """An edit reached the suggestion's place: the text it continues is not what it was.
        A finished one goes, as does one with nothing written yet. One the model is writing
        stays, before what the author typed (at the edit's start, as a suggestion from the
        cursor does), and the pane stops the model: typing threw away its text, unseen."""
        if not ghost.streaming or not ghost.text:
            self.clear_ghost("lost")
            return
        ghost.anchor = top
        self.post_message(self.GhostChanged(self, "interrupted"))

    def _typed_through(self, ghost: Ghost, result: EditResult, typed: int) -> EditResult:
        cut_front(ghost, typed)  # typed by the author: no longer the model's tokens
        ghost.spaces_left_out = 0  # where it goes is the author's doing now
        ghost.anchor = result.end_location
        if not ghost.text and not ghost.streaming:
            self.ghost = None
        self.post_message(self.GhostChanged(self, "typed"))
        return result

    def _after_spaces_replaced(self, ghost: Ghost, edit: Edit) -> bool:
        index = self.document.get_index_from_location
        end = index(ghost.anchor) + ghost.replaces
        return (
            bool(edit.text) and index(edit.top) == index(edit.bottom) == end and not self.replaced_text().strip(" \t")
        )

    def _touches_replaced(self, ghost: Ghost, edit: Edit) -> bool:
        start = self.document.get_index_from_location(ghost.anchor)
        return self._touches(start, start + ghost.replaces, edit)

    def _touches_spaces_followed(self, ghost: Ghost, edit: Edit) -> bool:
        """The edit changes the author's spaces a suggestion placed after them follows."""
        end = self.document.get_index_from_location(ghost.anchor)
        return not ghost.replaces and self._touches(end - ghost.spaces_left_out, end, edit)

    def _touches(self, start: int, end: int, edit: Edit) -> bool:
        index = self.document.get_index_from_location
        top, bottom = index(edit.top), index(edit.bottom)
        return (top < end and bottom > start) or start < top < end

    def undo(self) -> None:
        # Undo replays edits without going through edit(): the anchor cannot follow. The
        # one exception: undoing a word accepted (the last one first) gives it back to the front
        # of the suggestion, with what the model wrote after it meanwhile (and writes on, if it still is).
        taken = self._taken_words.pop() if self._taken_words else None
        ghost = self.ghost
        if taken is None or ghost is not taken.rest or not taken.kept.fits(ghost) or text_key(self.text) != taken.after:
            taken = None
            self.clear_ghost("lost", lost_from=self.text)
        self.spans.remember(self.text)
        super().undo()
        self.spans.validate(self.text)
        self._build_highlight_map()
        if taken is not None and ghost is not None and text_key(self.text) == taken.before:
            self.post_message(self.GhostChanged(self, "untaken", taken_back=taken.kept.give_back(ghost)))
        elif taken is not None:
            self.clear_ghost("lost")

    def redo(self) -> None:
        self.clear_ghost("lost", lost_from=self.text)
        self.spans.remember(self.text)
        super().redo()
        self.spans.validate(self.text)
        self._build_highlight_map()

    def load_text(self, text: str) -> None:
        self.clear_ghost("lost")
        self.spans = SpanTracker()
        super().load_text(text)

    def show_spans(self, spans: list[Span]) -> None:
        """Give stretches of the text their known tokens (a reopened session's generated text)."""
        for span in spans:
            self.spans.add(span)
        self._build_highlight_map()

    # ---- colouring tokens by probability ---------------------------------------------
    def token_at_cursor(self) -> tuple[Span, int] | None:
        """The known token under the cursor (or just before it, at the end of a span)."""
        offset = self.document.get_index_from_location(self.cursor_location)
        return self.spans.token_at(offset) or (self.spans.token_at(offset - 1) if offset else None)

    def set_colouring(self, on: bool) -> None:
        self.colour_tokens = on
        self._build_highlight_map()
        self.refresh()

    def show_window(self, start: int, end: int | None = None) -> None:
        """Mark what the model sees, text[start:end] (end None: to the end of the text); the
        rest is drawn dimmed."""
        if (start, end) != (self.window_start, self.window_end):
            self.window_start, self.window_end = start, end
            self._build_highlight_map()
            self.refresh()

    def window_in_text(self, start: int, after: int = 0) -> tuple[int, int | None]:
        """Where a window starting at `start` of the continued text lies in the draft, with
        `after` characters after a suggestion from the cursor (window_marks)."""
        return window_in_draft(self.document, self.ghost, start, after)

    def show_compared(self, marks: list[tuple[int, int, str]]) -> None:
        """Colour words as compared with a second model ([] goes back to the probabilities)."""
        self.compared = marks
        self._build_highlight_map()
        self.refresh()

    def _build_highlight_map(self) -> None:
        # Called after every edit. Textual's own highlights stay empty (the draft has no syntax): the
        # window's dimming and token colours are found per row as each is drawn (draft_rows.py).
        super()._build_highlight_map()
        self._row_styles.forget()
        if self.window_start > 0 or self.window_end is not None:
            self._install_outside_style()
        if self.compared:
            self._install_compared_styles()
        elif self.colour_tokens and self.spans:
            self._install_token_styles()

    def row_styles(self, line_index: int) -> list[tuple[int, int | None, str]]:
        """(start column, end column or None: through the line's end, style name) of what is
        drawn dimmed or coloured on a line of the draft."""
        window = (self.window_start, sys.maxsize if self.window_end is None else self.window_end)
        document = self.document
        if self.compared:  # drawn instead of the probabilities while set
            dimmed = self._row_styles.for_line(document.lines, len(document.newline), line_index, window, None)
            return dimmed + self._compared_on_line(line_index)
        spans = self.spans if self.colour_tokens else None
        return self._row_styles.for_line(document.lines, len(document.newline), line_index, window, spans)

    def _compared_on_line(self, line_index: int) -> list[tuple[int, int | None, str]]:
        """The compared words that fall on a line, in its columns (the marks are in text order)."""
        document = self.document
        line_start = self._row_styles.line_start(document.lines, len(document.newline), line_index)
        line_end = line_start + len(document.lines[line_index])
        first = bisect_right(self.compared, line_start, key=lambda mark: mark[1])
        found: list[tuple[int, int | None, str]] = []
        for start, end, name in self.compared[first:]:
            if start >= line_end:
                break
            found.append((max(start, line_start) - line_start, min(end, line_end) - line_start, name))
        return found

    def get_line(self, line_index: int) -> Text:
        # Only rows draft_rows leaves to Textual (a line holding a tab) are drawn from here.
        line = super().get_line(line_index)
        theme = self._theme
        if theme is not None:
            for start, end, name in self.row_styles(line_index):
                if (style := theme.syntax_styles.get(name)) is not None:
                    line.stylize(style, start, end)
        return line

    def _render_line(self, y: int) -> Strip:
        strip = row_strip(self, y, self.row_styles)
        return super()._render_line(y) if strip is None else strip

    def _set_document(self, text: str, language: str | None) -> None:
        super()._set_document(text, language)
        # The same document, wrapped by rows an edit reaches rather than by whole paragraphs.
        self.wrapped_document = ParagraphWrap(self.document, tab_width=self.indent_width)
        self.navigator = DocumentNavigator(self.wrapped_document)
        self._rewrap_and_refresh_virtual_size()

    def _install_outside_style(self) -> None:
        theme = self._theme
        if theme is not None and OUTSIDE not in theme.syntax_styles:
            # A copy: the theme object's dict is shared with the registered theme.
            theme.syntax_styles = {
                **theme.syntax_styles,
                OUTSIDE: self.get_component_rich_style("draft-editor--outside", partial=True),
            }

    def _install_compared_styles(self) -> None:
        theme = self._theme
        names = [name for _, name, _ in COMPARED_BANDS if name]
        if theme is not None and names[0] not in theme.syntax_styles:
            # A copy: the theme object's dict is shared with the registered theme.
            theme.syntax_styles = {
                **theme.syntax_styles,
                **{name: self.get_component_rich_style(f"draft-editor--{name}", partial=True) for name in names},
            }

    def _install_token_styles(self) -> None:
        theme = self._theme
        if theme is None or "p0" in theme.syntax_styles:
            return
        # A copy: the theme object's dict is shared with the registered theme.
        styles: dict[str, Style] = dict(theme.syntax_styles)
        for name in (*(name for _, name, _ in BUCKETS), GUESSED):
            styles[name] = self.get_component_rich_style(f"draft-editor--{name}", partial=True)
        theme.syntax_styles = styles

    def _watch_theme(self, theme: str) -> None:
        super()._watch_theme(theme)
        if self.colour_tokens:
            self._install_token_styles()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        theme = self._theme
        if theme is not None and "p0" in theme.syntax_styles:
            theme.syntax_styles = {
                k: v
                for k, v in theme.syntax_styles.items()
                if k not in {n for _, n, _ in (*BUCKETS, *COMPARED_BANDS)} | {OUTSIDE, GUESSED}
            }
            if self.colour_tokens:
                self._install_token_styles()
