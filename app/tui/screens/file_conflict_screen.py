"""Another program changed the draft file, and the author changed the text here too: a
save asks whose text the file keeps. Neither answer loses a word (the other text is kept,
and the dialog says where), and the author can look at both before choosing."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from scriptorium.app.sessions.draft_files import SET_ASIDE_MARK
from scriptorium.app.i18n.language import ENGLISH, Language


class FileConflictScreen(ModalScreen[str | None]):
    """Returns 'keep-mine' (the file gets the text here; its own is set aside beside it),
    'take-file' (the editor gets the file's text; the author's is kept in a session copy),
    or None to go on writing with nothing saved to the file."""

    BINDINGS = [
        Binding(
            "escape",
            "dismiss(None)",
            "Keep writing",
            id="conflict.cancel",
            tooltip="Go back to the draft; the file stays as the other program left it",
        )
    ]

    def __init__(
        self, name: str, on_disk: str | None, here: str, unreadable: str = "", language: Language = ENGLISH
    ) -> None:
        """`on_disk`: the file's text (None when it cannot be read: `unreadable` says why); `here`: the editor's."""
        super().__init__()
        self._language = language
        self._name, self._on_disk, self._here, self._unreadable = name, on_disk, here, unreadable

    def _question(self) -> str:
        return self._language.gettext(
            "Another program changed {name} since scriptorium saved it, and you changed the text here "
            "too. Nothing is lost whichever you choose:\n"
            "· Keep mine: {name} gets your text; its own is kept beside it as {aside}.\n"
            "· Take the file's: the editor shows {name}'s text; yours is kept in a copy of this "
            "session (the sessions list, F5)."
        ).format(name=self._name, aside=f"{self._name}{SET_ASIDE_MARK}<date-time>")

    def compose(self) -> ComposeResult:
        _ = self._language.gettext
        with Vertical(id="conflict-dialog", classes="dialog"):
            yield Static(self._question(), classes="dialog-title", markup=False)
            with Horizontal(id="conflict-both"):
                disk = TextArea(
                    self._on_disk if self._on_disk is not None else self._unreadable,
                    read_only=True,
                    soft_wrap=True,
                    id="conflict-disk",
                )
                disk.border_title = _("{name} on disk").format(name=self._name)
                here = TextArea(self._here, read_only=True, soft_wrap=True, id="conflict-here")
                here.border_title = _("yours, here")
                yield disk
                yield here
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Keep mine"), variant="primary", id="keep-mine")
                yield Button(_("Take the file's"), id="take-file", disabled=self._on_disk is None)
                yield Button(_("See both"), id="see-both")
                yield Button(_("Keep writing"), id="cancel")

    def on_mount(self) -> None:
        # Enter, the reflex after ctrl+s, saves the author's text and keeps the other program's: nothing is lost.
        self.query_one("#keep-mine", Button).focus()

    @property
    def showing_both(self) -> bool:
        return self.query_one("#conflict-both").has_class("-shown")

    @on(Button.Pressed, "#see-both")
    def _see_both(self, event: Button.Pressed) -> None:
        both = self.query_one("#conflict-both")
        both.toggle_class("-shown")
        self.query_one("#conflict-dialog").set_class(both.has_class("-shown"), "-both")
        _ = self._language.gettext
        event.button.label = _("Hide") if both.has_class("-shown") else _("See both")

    @on(Button.Pressed, "#keep-mine, #take-file, #cancel")
    def _chosen(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "cancel" else event.button.id)
