"""F1: every key, what it does, and the id a keymap uses to move it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


class HelpScreen(ModalScreen[None]):
    """A table of all bindings, built from the same registry as the command palette."""

    BINDINGS = [
        Binding("escape,f1,q", "dismiss", "Close", id="help.close", tooltip="Close the key list"),
    ]

    def __init__(self, rows: list[tuple[str, str, str, str, str]]) -> None:
        super().__init__()
        self._rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("Every key · remap one by its id in the keymap · Esc closes", id="help-title")
            table: DataTable[str] = DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            # The id before the long description, so it shows without scrolling sideways.
            table.add_columns("where", "keys", "action", "id", "what it does")
            for where, keys, action, what, binding_id in self._rows:
                table.add_row(where, keys, action, binding_id, what)
            yield table

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
