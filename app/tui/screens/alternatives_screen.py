"""Choose what the model should have written at one token: one of its alternatives, or
the author's own word. Returns the text to continue from, or None."""

from __future__ import annotations

from typing import Collection

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from scriptorium.inference.core.text import label_is_text

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.tui.keys import type_invisible
from scriptorium.app.tui.token_spans import TokenRecord
from scriptorium.app.tui.widgets.formatting import pad, visible_token


class AlternativesScreen(ModalScreen[str | None]):
    """The token's top candidates as a list (Enter takes one), and an input for a word.

    Some labels are not text: a byte token's (<0xE2>) is one byte of a character, and so is
    a byte-level piece's part of one (<0xE3><0x83>, SmolLM2's), a control token's (</s>) a
    name. Taking one would write the label itself into the draft. They stay in the list, as
    the model's alternatives, but cannot be chosen."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="alternatives.cancel", tooltip="Keep the text as it is"),
    ]

    def __init__(self, record: TokenRecord, not_text: Collection[int] = (), language: Language = ENGLISH) -> None:
        super().__init__()
        self._language = language
        self.record = record
        self.not_text = frozenset(not_text) | {c.id for c in record.top if not label_is_text(c.text)}

    def compose(self) -> ComposeResult:
        record = self.record
        _, number = self._language.gettext, self._language.number
        options = [
            Option(
                Text(
                    f"{pad(visible_token(c.text), 18)} {number(c.p * 100, '5.1f')}%"
                    + ("  " + _("(chosen)") if c.id == record.id else "")
                    + ("  " + _("(banned)") if c.banned else "")
                    + ("  " + _("(not text)") if c.id in self.not_text else "")
                ),
                id=str(index),
                disabled=c.id in self.not_text,
            )
            for index, c in enumerate(record.top)
        ]
        with Vertical(classes="dialog", id="alternatives-dialog"):
            title = _("Write something else instead of “{token}”, and continue from there")
            yield Label(Text(title.format(token=visible_token(record.text))), classes="dialog-title")
            yield OptionList(*options, id="alternatives-list")
            yield Label(_("…or your own word (Enter):"))
            yield Input(placeholder=_("your word"), id="alternatives-own")

    def on_key(self, event: events.Key) -> None:
        type_invisible(self.focused, event)  # a ZWNJ or ZWJ its fields dropped (keys.py)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected, "#alternatives-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        candidate = self.record.top[int(event.option.id or 0)]
        self.dismiss(candidate.text)

    @on(Input.Submitted, "#alternatives-own")
    def _typed(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.notify(self._language.gettext("Type a word, or press Esc to keep the text."), severity="warning")
            return
        word = event.value
        # A word replacing a word keeps the space the model's token had before it.
        if self.record.text[:1].isspace() and not word[:1].isspace():
            word = self.record.text[0] + word
        self.dismiss(word)

    def action_cancel(self) -> None:
        self.dismiss(None)
