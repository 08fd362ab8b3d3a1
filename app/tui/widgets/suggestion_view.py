"""Where the model's suggestion streams in, set apart from the author's text.

It shows the end of the line the suggestion continues (dim) and then the suggestion in
its own style, so it reads as a continuation without ever being in the draft.

While the model writes, the view keeps one size and shows the newest lines (a change
of size would lay out the whole screen again, a frame's work many times over); when
the model stops it fits its text, up to its largest size, and scrolls to the end: a
ScrollView, since a plain widget is never larger than its region and a suggestion taller
than the room left (a 24-row terminal has 7 lines for it) lost its end out of reach.

While it writes, the view also draws line by line (`render_line`): only the paragraph
being written is wrapped again, and only lines that changed are turned into cells. A
frame's drawing is CPU time llama.cpp's threads lose on a small machine (strips.py).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from scriptorium.app.tui.branches import version_label
from scriptorium.app.tui.token_spans import BUCKETS, GUESSED
from scriptorium.app.tui.branches import Ghost
from scriptorium.app.tui.widgets.formatting import border_text_room, leading_parts
from scriptorium.app.tui.widgets.strips import line_strip
from scriptorium.app.tui.widgets.token_text import token_text
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.language import ENGLISH, Language

CONTEXT_CHARS = 40
"""How much of the anchor's line is shown before the suggestion."""

_INSPECTED = "inspected_token"
"""Marks the inspected token's characters (a Rich style meta), so its line can be found once wrapped."""


def replaced_label(characters: int, language: Language = ENGLISH) -> str:
    """How much of the draft a branch replaces ("1 character": a full stop at a line's end)."""
    said = language.ngettext("{count} character", "{count} characters", characters)
    return said.format(count=language.number(characters, ","))


LINE_WORDS_ROOM = 16
"""Characters of the continued line's first words in the title: enough to recognise it,
short enough to leave the title's other parts room at 120 columns."""


def line_words(before: str, room: int = LINE_WORDS_ROOM, language: Language = ENGLISH) -> str:
    """Where a suggestion from the cursor starts, in the writer's words: the first words of
    its line ("‘Lucia scese…’"), not "line 1:43", a position no writer counts."""
    words = before.split()
    if not words:
        return language.gettext("the start of a line")
    shown = ""
    for word in words:
        if len(shown) + len(word) + (1 if shown else 0) > room:
            break
        shown = f"{shown} {word}" if shown else word
    shown = shown or words[0][: room - 1]
    cut = shown != " ".join(words)
    return f"‘{shown}{'…' if cut else ''}’"


class SuggestionView(ScrollView, can_focus=False):
    """Renders a Ghost; hidden while there is none."""

    COMPONENT_CLASSES = {
        "suggestion-view--context",
        "suggestion-view--text",
        "suggestion-view--cursor",
        "suggestion-view--inspected",
        "suggestion-view--unknown",
        f"suggestion-view--{GUESSED}",
        *(f"suggestion-view--{name}" for _, name, _ in BUCKETS),
    }

    def __init__(self, language: Language = ENGLISH, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._language = language
        self._firsts: list[str] = []
        """The title's first part, then shorter ways to say it, for a title that does not fit whole (_fit_borders)."""
        self._ghost: Ghost | None = None
        self._line_before = ""
        self._hints: list[str] = []
        self._title = ""
        """The whole title; `border_title` shows as many of its parts as fit."""
        self._lines = 0
        self._rich_component_styles: dict[str, Style] = {}
        self._wrap_cache: tuple[tuple[int, int, bool], list[Text]] | None = None
        self._settled: tuple[int, int, list[Text]] | None = None
        """While streaming: (width, characters, lines) of the finished paragraphs, wrapped once."""
        self._written: tuple[int, int, int, list[Text]] | None = None
        """While streaming: (width, where the paragraph being written starts, where its
        lines still to wrap start, the lines before) of the paragraph being written."""
        self._row_strips: dict[int, tuple[Text, Strip]] = {}
        """While streaming: each row's line and its cells, redrawn only when the line changed."""
        self._frame_style: Style | None = None
        """While streaming: the view's own style, read once per frame of text."""
        self._show_the_end = False
        self._at_the_end = True
        self.colour_tokens = False
        self.inspected: int | None = None
        """Index of the token under the inspection cursor (in ghost.tokens), or None."""
        self.unknown_ids: frozenset[int] = frozenset()
        """The model's <unk> token(s): drawn by name while the tokens show (token_text)."""

    def set_inspection(self, *, colour: bool, inspected: int | None) -> None:
        """Colour the tokens by probability, and/or mark the inspected one."""
        self.colour_tokens, self.inspected = colour, inspected
        self._forget_wrapping()
        self.refresh()
        if inspected is not None:
            self.call_after_refresh(self._show_the_inspected)

    def _show_the_inspected(self) -> None:
        """Scroll the inspected token into view: moved back through a suggestion taller than
        the view, it left the lines shown, and the author no longer saw which token it was."""
        ghost = self._ghost
        if ghost is None or ghost.streaming or self.inspected is None:
            return
        lines = self._wrapped(max(self.scrollable_content_region.width, 1))
        row = next(
            (
                row
                for row, line in enumerate(lines)
                if any(isinstance(span.style, Style) and span.style.meta.get(_INSPECTED) for span in line.spans)
            ),
            None,
        )
        height = self.scrollable_content_region.height
        if row is None or height < 1:
            return
        top = round(self.scroll_y)
        if not top <= row < top + height:
            self.scroll_to(y=row if row < top else row - height + 1, animate=False, force=True)

    def show(self, ghost: Ghost | None, context: str, hints: list[str], replaced: str = "") -> None:
        """Draw `ghost` after `context` (the text before its anchor on the same line), with
        as many of the `hints` (the keys that act on it) as fit under it. `replaced`: the
        draft's text it replaces, named in the title unless only the spaces it stands in for
        (draft_anchors.before_trailing_spaces), as after every continuation from a space."""
        self._ghost = ghost
        self._line_before = context[-CONTEXT_CHARS:]
        self._forget_wrapping()
        set_shown(self, ghost is not None)
        streaming = ghost is not None and ghost.streaming
        self.set_class(streaming, "-streaming")
        if ghost is None:
            return
        row, column = ghost.anchor
        language, _ = self._language, self._language.gettext
        # Shorter ways to say it, for a title that does not fit whole (_fit_borders): without
        # the word "suggestion", then with fewer of the line's words. "From the end" whole: a
        # language may join the two words ("dalla fine").
        if ghost.from_cursor:
            where = line_words(context, language=language)
            shorter = [line_words(context, room, language) for room in (8, 1)]
            self._firsts = [_("suggestion from {where}").format(where=where)] + [
                _("from {where}").format(where=place) for place in [where, *shorter]
            ]
        else:
            self._firsts = [_("suggestion from the end"), _("from the end")]
        version = version_label(ghost, language)
        replacing = (
            " · " + _("replaces {size}").format(size=replaced_label(ghost.replaces, language))
            if replaced.strip(" \t")
            else ""
        )
        writing = " · " + _("writing…") if streaming else ""
        self._title = f"{self._firsts[0]}{replacing}{writing}{' · ' + version if version else ''}"
        self._hints = hints
        self._fit_borders()
        self._lines = -1
        self.refresh(layout=True)
        self._show_the_end = not streaming
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The scrollable size: every line of a finished suggestion; while it streams,
        only what shows (the newest lines, never scrolled). A view showing its end keeps
        showing it when its width changes (a resized terminal, its scroll bar)."""
        ghost = self._ghost
        finished = ghost is not None and not ghost.streaming
        width = max(self.scrollable_content_region.width, 1)
        if finished:
            # Wrapped for the whole width when that fits the view: wrapped for the width a
            # scroll bar leaves, a text the view was made high enough for took a line more,
            # and kept its scroll bar, its first line scrolled out of sight.
            full = max(self.content_size.width, 1)
            fits = len(self._wrapped(full)) <= self.content_size.height
            width = full if fits else max(full - self.styles.scrollbar_size_vertical, 1)
        height = len(self._wrapped(width)) if finished else self.content_size.height
        self._show_the_end = self._show_the_end or self._at_the_end
        self.virtual_size = Size(width, height)
        # The layout that resized the view judged its scroll bar by the size before this one.
        self._refresh_scrollbars()
        if self._show_the_end or (ghost is not None and ghost.streaming):
            self.scroll_to(y=max(height - self.scrollable_content_region.height, 0), animate=False, force=True)
            self._show_the_end = False

    def _fit_borders(self) -> None:
        # Fitted again at each resize: a suggestion shown while the view was hidden (put
        # back on reopening a draft, or after an undo) had no width yet, and showed no keys.
        self.border_subtitle = leading_parts(self._hints, self.size.width - 6)
        # The title's parts whole, or Textual cut them at the edge: "version 2/2…",
        # "replaces 1,2…" (a number that reads as another). The word "suggestion" goes
        # before any of them: the box says what it is.
        parts = self._title.split(" · ")
        for first in self._firsts or parts[:1]:
            whole = [first, *parts[1:]]
            title = leading_parts(whole, border_text_room(self.outer_size.width), more=" · …")
            if title == " · ".join(whole):
                break
        self.border_title = title or parts[0]

    def on_resize(self) -> None:
        self._fit_borders()
        self._fit()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Read here, not at a resize: a view made shorter has further to scroll by then.
        self._at_the_end = new_value >= self.max_scroll_y

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._wrapped(max(width, 1))) if self._ghost is not None else 0

    def grow(self) -> None:
        """More text arrived: repaint the lines that changed, nothing else."""
        self._frame_style = None
        width = max(self.content_size.width, 1)
        lines = len(self._wrapped(width))
        if lines == self._lines:
            # Appending changes the last line, and the one before when a word moves down.
            last = min(lines, self.content_size.height) - 1
            self.refresh(Region(0, max(last - 1, 0), width, 2))
        else:
            self._lines = lines
            self.refresh()

    @property
    def text(self) -> str:
        return self._ghost.text if self._ghost else ""

    def notify_style_update(self) -> None:
        self._rich_component_styles.clear()
        self._forget_wrapping()
        super().notify_style_update()

    def _forget_wrapping(self) -> None:
        self._wrap_cache = None
        self._settled = None
        self._written = None
        self._row_strips.clear()
        self._frame_style = None

    def _base_style(self) -> Style:
        # rich_style walks every ancestor's styles: once per frame of text, not per row drawn.
        if self._frame_style is None:
            self._frame_style = self.rich_style
        return self._frame_style

    def _style(self, component: str) -> Style:
        style = self._rich_component_styles.get(component)
        if style is None:
            style = self._rich_component_styles[component] = self.get_component_rich_style(component)
        return style

    def _text(self) -> Text:
        ghost = self._ghost
        if ghost is None:
            return Text()
        context = self._line_before
        if len(context) == CONTEXT_CHARS:
            context = "…" + context[1:]
        rendered = Text(context, style=self._style("suggestion-view--context"))
        base = self._style("suggestion-view--text")
        if ghost.tokens and (self.colour_tokens or self.inspected is not None):
            style_of = (lambda name: self._style(f"suggestion-view--{name}")) if self.colour_tokens else None
            rendered.append_text(
                token_text(
                    ghost.text,
                    ghost.tokens,
                    base,
                    style_of,
                    self.inspected,
                    self._style("suggestion-view--inspected") + Style.from_meta({_INSPECTED: True}),
                    (self.unknown_ids, self._style("suggestion-view--unknown")),
                    # Partial: only the mark, over the band's colour.
                    self.get_component_rich_style(f"suggestion-view--{GUESSED}", partial=True),
                )
            )
        else:
            rendered.append(ghost.text, style=base)
        if ghost.streaming:
            rendered.append("▍", style=self._style("suggestion-view--cursor"))
        return rendered

    def _wrapped(self, width: int) -> list[Text]:
        """The text as lines of `width`; grow() and render() of one frame share the work."""
        ghost = self._ghost
        key = (len(ghost.text) if ghost else -1, width, bool(ghost and ghost.streaming))  # set_inspection resets
        if self._wrap_cache is None or self._wrap_cache[0] != key:
            if ghost is not None and ghost.streaming:
                lines = self._wrap_streaming(self._text(), width)
            else:
                lines = list(self._text().wrap(self.app.console, width))
            self._wrap_cache = (key, lines)
        return self._wrap_cache[1]

    def _wrap_streaming(self, text: Text, width: int) -> list[Text]:
        """Wrapped lines of a growing text: the paragraphs before the last line break
        no longer change, so they are wrapped once, and each frame wraps only the one
        being written (Rich wraps each paragraph on its own, so this is the same result)."""
        settled_end = text.plain.rfind("\n") + 1
        settled = self._settled
        if settled is None or settled[0] != width or settled[1] != settled_end:
            lines = list(text[:settled_end].wrap(self.app.console, width)) if settled_end else []
            if lines and settled_end:
                lines.pop()  # the empty paragraph after the final line break: written below
            settled = self._settled = (width, settled_end, lines)
        return settled[2] + self._wrap_written(text[settled_end:], settled_end, width)

    def _wrap_written(self, paragraph: Text, start: int, width: int) -> list[Text]:
        """The paragraph being written, wrapped. Rich breaks lines greedily, word by word:
        text appended at the end can move only the last words, so every line but the
        last two is kept from the frame before, and only the rest is wrapped again (each
        kept line ends where a new line starts, at a word or inside a folded word)."""
        plain = paragraph.plain
        if "\t" in plain:
            return list(paragraph.wrap(self.app.console, width))  # Rich expands tabs: its lines are not slices
        written = self._written
        if written is None or written[0] != width or written[1] != start:
            written = (width, start, 0, [])
        _, _, offset, before = written
        lines = list(paragraph[offset:].wrap(self.app.console, width))
        kept = list(before)
        for line, following in zip(lines[:-2], lines[1:-1]):
            offset += len(line.plain)
            # White space Rich dropped at the end of a full line; not white space the next
            # line starts with (a run of spaces longer than the width): skipped, that took
            # the next line's own characters out of every later frame.
            while offset < len(plain) and plain[offset].isspace() and not plain.startswith(following.plain, offset):
                offset += 1
            kept.append(line)
        self._written = (width, start, offset, kept)
        return before + lines

    def render_line(self, y: int) -> Strip:
        ghost = self._ghost
        width, height = max(self.scrollable_content_region.width, 1), max(self.content_size.height, 1)
        if ghost is None or not ghost.streaming:
            lines = self._wrapped(width)
            if len(lines) != self.virtual_size.height or width != self.virtual_size.width:
                self.call_later(self._fit)  # rewrapped to another width (a scroll bar came or went)
            row = y + round(self.scroll_offset.y)
            if row >= len(lines):
                return Strip.blank(width, self._base_style())
            line = lines[row].copy()
            line.rstrip()  # the space a line was broken at, drawn unstyled as Rich draws it
            return line_strip(line, width, self._base_style(), self.app.console)
        lines = self._wrapped(width)[-height:]
        if y >= len(lines):
            return Strip.blank(width, self._base_style())
        line = lines[y]
        drawn = self._row_strips.get(y)
        if drawn is None or drawn[0] != line or drawn[0].style != line.style or drawn[1].cell_length != width:
            drawn = self._row_strips[y] = (line, line_strip(line, width, self._base_style(), self.app.console))
        return drawn[1]
