"""Text drawn token by token: coloured by probability, with an inspection cursor.

Used by the suggestion view and by chat replies; the draft editor colours through
TextArea highlights instead (draft_editor.py). One Rich Text per draw, from records
already at hand: the cost is the text's length, never a model call.
"""

from __future__ import annotations

from typing import Callable

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from scriptorium.app.tui.token_spans import BUCKETS, GUESSED, TokenRecord, bucket
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_

UNKNOWN = "<unk>"
"""How a token of the unknown id is drawn: by name (the probabilities panel says it so too)."""


def token_text(
    text: str,
    records: list[TokenRecord],
    base: Style,
    style_of: Callable[[str], Style] | None,
    cursor: int | None = None,
    cursor_style: Style | None = None,
    unknown: tuple[frozenset[int], Style] = (frozenset(), Style()),
    guessed: Style = Style(),
) -> Text:
    """`text` in `base`; each record's characters also in its band's style (when
    `style_of` is given), a record speculative decoding guessed also in `guessed` (a
    mark that keeps its band's colour), and the record at `cursor` in `cursor_style`. A
    record of an `unknown` id (<unk>) is drawn as its name in that style, not as the
    characters it stands for: the model saw <unk>, not them."""
    unknown_ids, unknown_style = unknown
    rendered = Text()
    position = 0
    for index, record in enumerate(records):
        if record.start > position:
            rendered.append(text[position : record.start], style=base)
        style = base
        if style_of is not None:
            if (band := bucket(record.p)) is not None:
                style = style + style_of(band)
            if record.drafted:
                style = style + guessed
        if index == cursor and cursor_style is not None:
            style = style + cursor_style
        piece = text[record.start : record.end]
        if record.id in unknown_ids:
            piece, style = UNKNOWN, style + unknown_style
        rendered.append(piece, style=style)
        position = max(position, record.end)
    if position < len(text):
        rendered.append(text[position:], style=base)
    return rendered


GUESSED_LABEL = N_("guessed")
"""The legend's name for the mark on tokens speculative decoding guessed (token_spans.GUESSED);
the Speed panel counts them with the same word, and F4 says it of one."""


class TokenLegend(Widget, can_focus=False):
    """One line naming the probability bands, shown while tokens are coloured; and the mark
    on guessed tokens, while some of those coloured are (`guessed`)."""

    COMPONENT_CLASSES = {f"token-legend--{name}" for _, name, _ in BUCKETS} | {
        "token-legend--label",
        f"token-legend--{GUESSED}",
    }

    DEFAULT_CSS = "TokenLegend { height: 1; }"

    def __init__(self, language: Language = ENGLISH, *, guessed: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._language = language
        self.guessed = guessed
        """Some of the tokens coloured were guessed by speculative decoding: the legend names their mark."""

    def show_guessed(self, guessed: bool) -> None:
        if guessed != self.guessed:
            self.guessed = guessed
            self.refresh()

    def render(self) -> Text:
        # The word goes before a band: at 80 columns the whole line ran past the edge and
        # took "<1%", the band colouring is for.
        label_style = self.get_component_rich_style("token-legend--label")
        for word in (self._language.gettext("probability") + " ", "p ", ""):
            line = Text(word, style=label_style)
            for _, name, label in BUCKETS:
                line.append(f" {label} ", style=self.get_component_rich_style(f"token-legend--{name}"))
                line.append(" ")
            if self.guessed:  # the mark drawn on the word itself, as on the tokens it names
                guessed_style = label_style + self.get_component_rich_style(f"token-legend--{GUESSED}", partial=True)
                line.append(" ")
                line.append(self._language.gettext(GUESSED_LABEL), style=guessed_style)
                line.append(" ")
            if line.cell_len - 1 <= self.content_size.width:  # the space after the last band may go
                break
        return line


class ReplyTokens(Widget, can_focus=False):
    """A chat reply as its tokens (shown instead of its Markdown while colouring or inspecting)."""

    COMPONENT_CLASSES = {f"reply-tokens--{name}" for _, name, _ in BUCKETS} | {
        "reply-tokens--cursor",
        "reply-tokens--unknown",
        f"reply-tokens--{GUESSED}",
    }

    DEFAULT_CSS = "ReplyTokens { height: auto; }"

    def __init__(self, text: str, records: list[TokenRecord], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.text = text
        self.records = records
        self.cursor: int | None = None
        self.colour = True
        self.unknown_ids: frozenset[int] = frozenset()
        """The model's <unk> token(s): drawn by name (token_text)."""

    def show(self, *, colour: bool, cursor: int | None) -> None:
        self.colour, self.cursor = colour, cursor
        self.refresh(layout=True)

    def render(self) -> Text:
        style_of = (lambda name: self.get_component_rich_style(f"reply-tokens--{name}")) if self.colour else None
        return token_text(
            self.text,
            self.records,
            Style(),
            style_of,
            self.cursor,
            self.get_component_rich_style("reply-tokens--cursor"),
            (self.unknown_ids, self.get_component_rich_style("reply-tokens--unknown")),
            self.get_component_rich_style(f"reply-tokens--{GUESSED}", partial=True),
        )
