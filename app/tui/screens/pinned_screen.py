"""The editor of what the author pins into every prompt: the memory, or the author's note
(with how many paragraphs before the end it goes)."""

from __future__ import annotations

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Label, Static, TextArea

from scriptorium.app.tui.keys import type_invisible
from scriptorium.app.tui.pinned_count import PinnedCounter, PinnedSize
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.window.window import NOTE_DEPTH_RANGE, Pinned, WindowError, check_note_depth

HELP = {
    "memory": N_(
        "Memory: pinned at the top of every prompt (a synopsis, who the characters are, a style note). "
        "In chat it joins the system prompt."
    ),
    "note": N_("Author's note: put a few paragraphs before the end of what the model sees, where it steers most."),
}

COUNT_DELAY = 0.25
"""Seconds of no typing before the dialog counts the tokens again: typing stays instant."""


class PinnedScreen(ModalScreen[Pinned | None]):
    """Edit the memory (`which="memory"`) or the author's note; returns the session's new
    Pinned, or None when the author backs out."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Keep", id="pinned.save", tooltip="Keep the text and close"),
        Binding("escape", "dismiss(None)", "Cancel", id="pinned.cancel", tooltip="Close without changing it"),
        # Before the fields' own ctrl+a (line start): in a dialog of text to rewrite, authors
        # reach for select-all there, as F7 is in the app.
        Binding(
            "ctrl+a",
            "select_all_text",
            "Select all",
            priority=True,
            show=False,
            id="pinned.select_all",
            tooltip="Select all the text of the field",
        ),
    ]

    def __init__(
        self, which: str, pinned: Pinned, counter: PinnedCounter | None = None, language: Language = ENGLISH
    ) -> None:
        super().__init__()
        self._language = language
        self.which = which
        self._pinned = pinned
        self._counter = counter
        self._count_timer: Timer | None = None
        self.pinned_size: PinnedSize | None = None
        """Memory and note as last counted (None: no model to count with, or not yet)."""

    def compose(self) -> ComposeResult:
        _ = self._language.gettext
        text = self._pinned.memory if self.which == "memory" else self._pinned.note
        with Vertical(classes="dialog", id="pinned-dialog"):
            yield Static(_(HELP[self.which]), classes="dialog-title", markup=False)
            yield TextArea(text, soft_wrap=True, id="pinned-text")
            yield Static(
                _("no model loaded to count the tokens") if self._counter is None else _("counting…"),
                id="pinned-count",
                markup=False,
            )
            if self.which == "note":
                # A row of its own: beside the buttons, Cancel was past the right edge of an 80-column terminal.
                with Horizontal(classes="dialog-buttons", id="pinned-depth-row"):
                    yield Label(_("paragraphs before the end") + " ")
                    yield Input(str(self._pinned.note_depth), id="pinned-depth", type="integer")
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Keep"), variant="primary", id="keep")
                yield Button(_("Cancel"), id="cancel")

    def on_key(self, event: events.Key) -> None:
        type_invisible(self.focused, event)  # a ZWNJ or ZWJ its fields dropped (keys.py)

    def action_select_all_text(self) -> None:
        if isinstance(self.focused, (TextArea, Input)):
            self.focused.select_all()

    def on_mount(self) -> None:
        self.query_one("#pinned-text", TextArea).focus()
        self._count()

    @on(TextArea.Changed)
    def _count_soon(self) -> None:
        if self._counter is None:
            return
        if self._count_timer is not None:
            self._count_timer.stop()
        self._count_timer = self.set_timer(COUNT_DELAY, self._count)

    def _count(self) -> None:
        self._count_timer = None
        if self._counter is not None:
            self._measure(self._counter, self.typed(strict=False))

    @work(thread=True, exclusive=True, group="pinned-count", exit_on_error=False)
    def _measure(self, counter: PinnedCounter, pinned: Pinned) -> None:
        try:
            size = counter.size(pinned)
        except Exception as error:  # noqa: BLE001 - a count that failed is said on the line, never a traceback
            said = self._language.gettext("tokens not counted: {error}").format(error=error)
            self.app.call_from_thread(self._show_count, None, said)
            return
        self.app.call_from_thread(self._show_count, size, size.line(self._language))

    def _show_count(self, size: PinnedSize | None, line: str) -> None:
        if not self.is_attached:
            return
        self.pinned_size = size
        count = self.query_one("#pinned-count", Static)
        count.update(line)
        count.set_class(size is not None and not size.fits, "-too-long")

    @on(Button.Pressed, "#keep")
    def action_save(self) -> None:
        try:
            self.dismiss(self.typed())
        except ScriptoriumError as error:
            self.notify(str(error), severity="warning")

    def typed(self, *, strict: bool = True) -> Pinned:
        """The session's Pinned with what the fields hold now. ScriptoriumError names a bad
        depth; not `strict` (quitting, which keeps the text) the depth stays as it was."""
        text = self.query_one("#pinned-text", TextArea).text
        if self.which == "memory":
            return Pinned(text, self._pinned.note, self._pinned.note_depth)
        raw = self.query_one("#pinned-depth", Input).value.strip()
        typed: int | str = int(raw) if raw.lstrip("-").isdigit() else raw
        try:
            depth = check_note_depth(typed, "the note's depth")  # a word is refused there too
        except ScriptoriumError:
            if strict:
                # check_note_depth's rule, said in the interface's language (its own line is the command line's).
                low, high = NOTE_DEPTH_RANGE
                said = self._language.gettext(
                    "the note's depth must be a whole number from {low} to {high}, not {value}"
                )
                raise WindowError(said.format(low=low, high=high, value=repr(typed))) from None
            depth = self._pinned.note_depth
        return Pinned(self._pinned.memory, text, depth)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
