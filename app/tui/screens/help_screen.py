"""F1: every key, what it does, and the id a keymap uses to move it."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from scriptorium.app.i18n.language import Language


class HelpScreen(ModalScreen[None]):
    """Every binding, built from the same registry as the command palette, under the part
    of the screen where its keys answer. A table of five columns scrolled sideways even at
    160 columns, hiding what the longer keys do; here each key's description wraps under
    its name and id, so the list fits any terminal from 60 columns up."""

    BINDINGS = [
        Binding("escape,f1,q", "dismiss", "Close", id="help.close", tooltip="Close the key list"),
    ]

    def __init__(self, rows: list[tuple[str, str, str, str, str]], language: Language) -> None:
        """`rows`: KeyMap.rows(), already in the interface's language."""
        super().__init__()
        self._rows = rows
        self._language = language

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            title = self._language.gettext("Every key · remap one by its id in the keymap · Esc closes")
            yield Static(title, id="help-title")
            yield OptionList(*self._options(), id="help-table")

    def _options(self) -> list[Option]:
        keys_width = max((Text(keys).cell_len for _, keys, _, _, _ in self._rows), default=0)
        options, section = [], None
        for where, keys, action, what, binding_id in self._rows:
            if where != section:
                section = where
                options.append(Option(Text(where, style="bold underline"), disabled=True))
            line = Table.grid(padding=(0, 2))
            line.add_column(width=keys_width, no_wrap=True)
            line.add_column(ratio=1)
            line.add_row(keys, Text.assemble((action, "bold"), "  ", (binding_id, "dim"), "\n", what))
            options.append(Option(line, id=binding_id))
        return options

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
