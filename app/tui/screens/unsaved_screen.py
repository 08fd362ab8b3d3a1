"""Quitting with unsaved changes asks first: the author's text is never lost silently."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class UnsavedScreen(ModalScreen[str | None]):
    """Returns 'save', 'save-as', 'discard', or None to keep working."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Keep writing", id="unsaved.cancel",
                        tooltip="Go back to the draft")]

    def __init__(self, name: str, *, has_path: bool) -> None:
        super().__init__()
        self._name = name
        self._has_path = has_path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog"):
            yield Static(f"{self._name} has changes that are not saved.", classes="dialog-title", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save and quit", variant="primary", id="save" if self._has_path else "save-as")
                yield Button("Quit without saving", variant="error", id="discard")
                yield Button("Keep writing", id="cancel")

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "cancel" else event.button.id)
