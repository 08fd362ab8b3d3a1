"""The editor of one lorebook entry: its name, keys, secondary keys, priority, switches
and text, laid out one field a line so that it fits an 80×24 terminal with room for the text."""

from __future__ import annotations

import re

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static, TextArea

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.window.lore import LoreEntry, LoreError, compiled_keys

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_
from scriptorium.app.tui.keys import type_invisible

HELP = N_(
    "Keys: comma-separated words or phrases, matched on whole words in any case, or a /regular expression/. "
    "Secondary: one must be found too."
)
_KEY = re.compile(r"\s*(/(?:\\.|[^/\\])+/|[^,]+)\s*,?")
"""A key of a comma-separated list: a regular expression between slashes is taken whole,
commas and all (`/a{1,3}/`)."""


def split_keys(text: str) -> tuple[str, ...]:
    return tuple(key.strip() for key in _KEY.findall(text) if key.strip())


def joined_keys(keys: tuple[str, ...]) -> str:
    return ", ".join(keys)


class LoreEntryScreen(ModalScreen[LoreEntry | None]):
    """Returns the entry as edited, or None when the author backs out."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Keep", id="lore_entry.save", tooltip="Keep the entry and close"),
        Binding("escape", "dismiss(None)", "Cancel", id="lore_entry.cancel", tooltip="Close without changing it"),
        # The app's own keys replace Textual's, tab among them: a dialog of fields moves through them itself.
        Binding("tab", "app.focus_next", "Next field", show=False, id="lore_entry.next", tooltip="The next field"),
        Binding(
            "shift+tab",
            "app.focus_previous",
            "Previous field",
            show=False,
            id="lore_entry.previous",
            tooltip="The field before",
        ),
    ]

    def __init__(self, entry: LoreEntry | None = None, language: Language = ENGLISH) -> None:
        super().__init__()
        self._language = language
        self._entry = entry or LoreEntry("", (), "")

    def compose(self) -> ComposeResult:
        entry = self._entry
        _ = self._language.gettext
        with Vertical(classes="dialog", id="lore-entry-dialog"):
            yield Static(_(HELP), classes="dialog-title", markup=False)
            with Horizontal(classes="lore-field", id="lore-name-row"):
                yield Label(_("name"))
                yield Input(entry.name, id="lore-name")
            with Horizontal(classes="lore-field"):
                yield Label(_("keys"))
                yield Input(joined_keys(entry.keys), id="lore-keys", placeholder="Lucia, la ragazza")
            with Horizontal(classes="lore-field"):
                yield Label(_("secondary"))
                yield Input(joined_keys(entry.secondary), id="lore-secondary")
            with Horizontal(classes="lore-field"):
                yield Label(_("priority"))
                yield Input(str(entry.priority), id="lore-priority", type="integer")
                yield Checkbox(self._language.pgettext("lore entry", "on"), entry.enabled, id="lore-enabled")
                yield Checkbox(_("always"), entry.always, id="lore-always")
                yield Checkbox(_("case"), entry.case_sensitive, id="lore-case")
            yield TextArea(entry.text, soft_wrap=True, id="lore-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Keep"), variant="primary", id="keep")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        self.query_one("#lore-name" if not self._entry.name else "#lore-text").focus()

    def on_key(self, event: events.Key) -> None:
        type_invisible(self.focused, event)  # a ZWNJ or ZWJ its fields dropped (keys.py)

    @on(Button.Pressed, "#keep")
    def action_save(self) -> None:
        try:
            self.dismiss(self.typed())
        except ScriptoriumError as error:
            self.notify(str(error), title=self._language.gettext("Lore entry"), severity="warning")

    def typed(self) -> LoreEntry:
        """The entry the fields describe; LoreError (one line) for one that cannot be used."""
        keys = split_keys(self.query_one("#lore-keys", Input).value)
        name = self.query_one("#lore-name", Input).value.strip() or (keys[0] if keys else "")
        always = self.query_one("#lore-always", Checkbox).value
        _ = self._language.gettext
        if not name:
            raise LoreError(_("give the entry a name or a key"))
        if not keys and not always:
            raise LoreError(_("give the entry a key (a word that makes it enter the prompt), or make it always enter"))
        raw = self.query_one("#lore-priority", Input).value.strip() or "0"
        if not raw.lstrip("-").isdigit():
            raise LoreError(_("the priority must be a whole number, not {value}").format(value=repr(raw)))
        entry = LoreEntry(
            name=name,
            keys=keys,
            text=self.query_one("#lore-text", TextArea).text,
            secondary=split_keys(self.query_one("#lore-secondary", Input).value),
            priority=int(raw),
            enabled=self.query_one("#lore-enabled", Checkbox).value,
            always=always,
            case_sensitive=self.query_one("#lore-case", Checkbox).value,
        )
        compiled_keys(entry)  # a regular expression that does not compile: said here, not at the next prompt
        return entry

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
