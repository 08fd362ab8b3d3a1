"""Quitting with unsaved changes asks first: the author's text is never lost silently, nor
another program's, when the draft file changed on disk behind scriptorium's back."""

from __future__ import annotations

from collections.abc import Mapping

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from scriptorium.app.sessions.draft_files import SET_ASIDE_MARK
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.i18n.language import ENGLISH, Language


class UnsavedScreen(ModalScreen[str | None]):
    """Returns 'save', 'save-as', 'discard', or None to keep working."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Keep writing", id="unsaved.cancel", tooltip="Go back to the draft")]

    def __init__(
        self, draft_file: DraftFile, unsaved: Mapping[str, str], conflict: bool = False, language: Language = ENGLISH
    ) -> None:
        """`unsaved`: what the save just tried could not write ('draft file', 'draft' (its session),
        'chat'), and why. `conflict`: another program changed the draft file, and saving would replace its text."""
        super().__init__()
        self._language = language
        # The failures were notified as they happened, and may have faded: the question says them again.
        self._reasons = "\n".join(dict.fromkeys(unsaved.values()))
        self._name = draft_file.shown_name(language.gettext)
        self._has_path = draft_file.path is not None
        self._conflict = conflict and self._has_path
        # Unnamed, the draft's text lives in its session only.
        self._text_unsaved = "draft file" in unsaved or ("draft" in unsaved and not self._has_path)
        self._record_unsaved = "draft" in unsaved and not self._text_unsaved
        self._chat_unsaved = "chat" in unsaved

    def _question(self) -> str:
        _ = self._language.gettext
        if self._conflict:
            # "Save and quit" alone read as saving the author's text, and silently replaced the other program's.
            # Not "has changes": quitting right after the other program wrote, there may be none here.
            return _(
                "Another program changed {name} since scriptorium saved it: saving replaces "
                "that program's text with the text on screen here, and keeps its text beside it as "
                "{aside}."
            ).format(name=self._name, aside=f"{self._name}{SET_ASIDE_MARK}<date-time>")
        lines = []
        if self._text_unsaved or not (self._record_unsaved or self._chat_unsaved):
            lines.append(_("{name} has changes that are not saved.").format(name=self._name))
        if self._record_unsaved:
            # Said as unsaved changes, it sent the author to save a file that was saved already.
            lines.append(
                _(
                    "{name} is saved, but its session could not be written: quitting loses what "
                    "the session recorded since its last save (which words the model wrote, with which "
                    "model and settings, the memory and the author's note)."
                ).format(name=self._name)
            )
        if self._chat_unsaved:
            lines.append(_("The chat could not be saved: quitting loses what was said since its last save."))
        return "\n".join(lines)

    def compose(self) -> ComposeResult:
        _ = self._language.gettext
        with Vertical(id="dialog", classes="dialog"):
            yield Static(self._question(), classes="dialog-title", markup=False)
            if self._reasons and not self._conflict:
                yield Static(self._reasons, classes="dialog-reason", markup=False)
            save = _("Save and quit") if self._text_unsaved or self._conflict else _("Try again and quit")
            save_button = Button(
                _("Replace the file and quit") if self._conflict else save,
                variant="error" if self._conflict else "primary",
                id="save" if self._has_path else "save-as",
            )
            others = (
                Button(_("Quit without saving"), variant="error", id="discard"),
                Button(_("Keep writing"), id="cancel"),
            )
            if self._has_path and self._text_unsaved and not self._conflict:
                # The file itself may refuse the text (read-only, its disk full): another place may not.
                # Four buttons in one row do not fit the dialog: the saves above, the rest below.
                yield Horizontal(save_button, Button(_("Save as… and quit"), id="save-as"), classes="dialog-buttons")
                yield Horizontal(*others, classes="dialog-buttons")
            else:
                yield Horizontal(save_button, *others, classes="dialog-buttons")

    def on_mount(self) -> None:
        if self._conflict:  # Enter alone never writes over another program's text
            self.query_one("#cancel", Button).focus()

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "cancel" else event.button.id)
