"""The lorebook screen: the draft session's entries, to add, edit, switch on or off and
delete, with what the last prompt held of them (which fired, from which key, what each
cost, which were dropped for room). Every change is kept at once, where the session keeps
its entries (the session, or a shared lorebook file), through the `LoreShelf` it is given."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Protocol

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.window.lore import Fired, LoreEntry, Lorebook, lore_summary

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen, TextPromptScreen
from scriptorium.app.tui.screens.lore_entry_screen import LoreEntryScreen, joined_keys


class LoreShelf(Protocol):
    """Where the screen keeps what the author changes; each method raises ScriptoriumError
    (one line) when it cannot."""

    path: str | None
    """The shared lorebook file in use (None: the session's own entries)."""

    def keep(self, lorebook: Lorebook) -> None: ...

    def use_file(self, path: str) -> Lorebook: ...

    def use_own_entries(self, lorebook: Lorebook) -> None: ...


class LoreScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close", id="lore.close", tooltip="Back to writing"),
        Binding("a", "add", "Add", id="lore.add", tooltip="Add an entry"),
        Binding("enter,e", "edit", "Edit", id="lore.edit", tooltip="Edit the highlighted entry"),
        Binding("space", "switch", "On/off", id="lore.switch", tooltip="Switch the highlighted entry on or off"),
        Binding("d,delete", "delete", "Delete", id="lore.delete", tooltip="Delete the highlighted entry (asks first)"),
        Binding(
            "s",
            "number('scan_depth')",
            "Scan depth",
            id="lore.scan_depth",
            tooltip="How many tokens at the end of the draft are searched for keys",
        ),
        Binding(
            "b",
            "number('budget')",
            "Budget",
            id="lore.budget",
            tooltip="How many tokens the entries may take in the prompt",
        ),
        Binding(
            "f",
            "file",
            "File",
            id="lore.file",
            tooltip="Keep the entries in a lorebook file shared by several drafts, or back in the session",
        ),
    ]

    def __init__(
        self, shelf: LoreShelf, lorebook: Lorebook, fired: tuple[Fired, ...], language: Language = ENGLISH
    ) -> None:
        """`fired`: the lore of the last prompt made for the draft."""
        super().__init__()
        self._language = language
        self._shelf = shelf
        self.lorebook = lorebook
        self._fired = {f.name: f for f in fired}
        _ = language.gettext
        self._fired_line = (
            lore_summary(fired, _, language.number) if fired else _("lore: none fired for the last prompt")
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="lore-box"):
            yield Static(
                self._language.gettext(
                    "Lorebook · a adds · Enter edits · Space on/off · d deletes · s scan depth · b budget · "
                    "f file · Esc closes"
                ),
                id="lore-title",
            )
            yield Static(self._where(), id="lore-where", markup=False)
            yield DataTable(id="lore-table", cursor_type="row", zebra_stripes=True)
            yield Static(self._fired_line, id="lore-fired", markup=False)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        _ = self._language.gettext
        table.add_columns(
            self._language.pgettext("lore entry", "on"), _("name"), _("keys"), _("prio"), _("last prompt")
        )
        self._fill()
        table.focus()

    def _where(self) -> str:
        path, book = self._shelf.path, self.lorebook
        _, number = self._language.gettext, self._language.number
        where = _("kept in {path}").format(path=path) if path else _("kept in this session (f: share a lorebook file)")
        return _("scans the last {depth} tokens · budget {budget} tokens · {where}").format(
            depth=number(book.scan_depth, ","), budget=number(book.budget, ","), where=where
        )

    def _fill(self) -> None:
        table: DataTable[str | Text] = self.query_one(DataTable)
        _ = self._language.gettext
        row = table.cursor_row
        table.clear()
        for entry in self.lorebook.entries:
            table.add_row(
                "✓" if entry.enabled else "·",
                Text(entry.name),
                Text(_("always") if entry.always else joined_keys(entry.keys)),
                str(entry.priority),
                self._last(entry),
            )
        if not self.lorebook.entries:
            table.add_row("", _("No entries yet: a adds one"), "", "", "")
        table.move_cursor(row=min(row, max(table.row_count - 1, 0)))
        self.query_one("#lore-where", Static).update(self._where())

    def _last(self, entry: LoreEntry) -> str:
        fired = self._fired.get(entry.name)
        if fired is None:
            return ""
        tokens = self._language.number(fired.tokens, ",")
        _ = self._language.gettext
        return (
            _("in, {tokens} tok").format(tokens=tokens)
            if fired.kept
            else _("dropped ({tokens} tok)").format(tokens=tokens)
        )

    def _highlighted(self) -> int | None:
        row = self.query_one(DataTable).cursor_row
        return row if 0 <= row < len(self.lorebook.entries) else None

    def _keep(self, lorebook: Lorebook) -> None:
        try:
            self._shelf.keep(lorebook)
        except ScriptoriumError as error:
            self.notify(str(error), title=self._language.gettext("Lorebook"), severity="error", timeout=10)
            return
        self.lorebook = lorebook
        self._fill()

    def _edited(self, index: int | None, entry: LoreEntry | None) -> None:
        if entry is None:
            return
        entries = list(self.lorebook.entries)
        if index is None:
            entries.append(entry)
        else:
            entries[index] = entry
        self._keep(replace(self.lorebook, entries=tuple(entries)))
        if index is None:
            self.query_one(DataTable).move_cursor(row=len(entries) - 1)

    def action_add(self) -> None:
        self.app.push_screen(LoreEntryScreen(language=self._language), lambda entry: self._edited(None, entry))

    @on(DataTable.RowSelected)
    def action_edit(self) -> None:
        index = self._highlighted()
        if index is None:
            return self.action_add()
        self.app.push_screen(
            LoreEntryScreen(self.lorebook.entries[index], self._language), lambda entry: self._edited(index, entry)
        )

    def action_switch(self) -> None:
        index = self._highlighted()
        if index is not None:
            entry = self.lorebook.entries[index]
            self._edited(index, replace(entry, enabled=not entry.enabled))

    def action_delete(self) -> None:
        index = self._highlighted()
        if index is None:
            return
        entry = self.lorebook.entries[index]

        def decided(yes: bool | None) -> None:
            if yes:
                entries = self.lorebook.entries
                self._keep(replace(self.lorebook, entries=entries[:index] + entries[index + 1 :]))

        question = self._language.gettext("Delete the lore entry “{name}”?").format(name=entry.name)
        self.app.push_screen(ConfirmScreen(question, N_("Delete"), self._language), decided)

    def action_number(self, field: str) -> None:
        """Set the scan depth or the budget (`field`), checked as a lorebook file's are."""
        _ = self._language.gettext
        what = {
            "scan_depth": _("Tokens at the end of the draft searched for keys"),
            "budget": _("Tokens the entries may take in the prompt (at most half of what memory and note leave)"),
        }

        def chosen(value: str | None) -> None:
            if value is None:
                return
            try:
                number: object = int(value) if value.strip().lstrip("-").isdigit() else value
                lorebook = replace(self.lorebook, **{field: number})
            except ScriptoriumError as error:
                self.notify(str(error), title=_("Lorebook"), severity="warning")
                return
            self._keep(lorebook)

        value = str(getattr(self.lorebook, field))
        self.app.push_screen(TextPromptScreen(what[field], value, language=self._language), chosen)

    def action_file(self) -> None:
        """With no file: ask for one (read if it exists, else written with the entries);
        with one: offer to keep a copy of its entries in the session instead."""

        def chosen(path: str | None) -> None:
            if path is not None:
                self._switch(lambda: self._shelf.use_file(path))

        def back(yes: bool | None) -> None:
            if yes:
                self._switch(lambda: self._shelf.use_own_entries(self.lorebook) or self.lorebook)

        _ = self._language.gettext
        if self._shelf.path:
            question = _(
                "Stop sharing {path}? This session keeps a copy of its entries; the file stays as it is."
            ).format(path=self._shelf.path)
            self.app.push_screen(ConfirmScreen(question, N_("Stop sharing"), self._language), back)
        else:
            self.app.push_screen(
                TextPromptScreen(
                    _(
                        "Lorebook file shared by several drafts (TOML): read if it exists, "
                        "else written with these entries"
                    ),
                    language=self._language,
                ),
                chosen,
            )

    def _switch(self, switch: Callable[[], Lorebook]) -> None:
        try:
            self.lorebook = switch()
        except ScriptoriumError as error:
            self.notify(str(error), title=self._language.gettext("Lorebook"), severity="error", timeout=10)
            return
        self._fill()
