"""Two small questions: yes or no (before overwriting or deleting), and a line of text (a new title)."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from scriptorium.app.tui.keys import type_invisible
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_


class ConfirmScreen(ModalScreen[bool]):
    """Returns True only when the author presses the confirming button (or y)."""

    BINDINGS = [
        Binding("escape,n", "dismiss(False)", "No", id="confirm.no", tooltip="Leave things as they are"),
        Binding("y", "dismiss(True)", "Yes", id="confirm.yes", tooltip="Go ahead"),
    ]

    def __init__(self, question: str, confirm: str = N_("Overwrite"), language: Language = ENGLISH) -> None:
        """`question` in the interface's language already; `confirm`, the button, in English (marked)."""
        super().__init__()
        self._question = question
        self._confirm = language.gettext(confirm)
        self._language = language

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self._question, classes="dialog-title", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(self._confirm, variant="error", id="yes")
                yield Button(self._language.gettext("Cancel"), variant="primary", id="no")

    def on_mount(self) -> None:
        # The safe answer has the focus: Enter alone never overwrites or deletes.
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class TextPromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; None when the author backs out."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="prompt.cancel", tooltip="Leave it as it is")]

    def __init__(self, title: str, value: str = "", allow_empty: bool = False, language: Language = ENGLISH) -> None:
        super().__init__()
        self._language = language
        self._title = title
        self._value = value
        self._allow_empty = allow_empty
        """An empty line is an answer (none of something), not a slip."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self._title, classes="dialog-title", markup=False)
            yield Input(self._value, id="prompt-input")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self._language.gettext("OK"), variant="primary", id="ok")
                yield Button(self._language.gettext("Cancel"), id="cancel")

    def on_key(self, event: events.Key) -> None:
        type_invisible(self.focused, event)  # a ZWNJ or ZWJ its field dropped (keys.py)

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        value = self.query_one(Input).value.strip()
        if not value and not self._allow_empty:
            self.notify(self._language.gettext("Type something, or press Esc."), severity="warning")
            return
        self.dismiss(value)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
