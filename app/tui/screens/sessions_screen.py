"""The sessions screen: every saved draft and chat, to open, rename or delete."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from scriptorium.app.sessions import AnySession, SessionError, SessionSummary
from scriptorium.app.units import format_bytes
from scriptorium.app.tui.widgets.formatting import clip
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen, TextPromptScreen

if TYPE_CHECKING:
    from scriptorium.app.sessions.keeper import SessionKeeper


COLUMNS = ("title", "kind", "updated", "model", "words", "size")
MIN_TITLE = 12
"""Cells a title keeps however narrow the table: enough to tell sessions apart."""


class SessionsScreen(ModalScreen[AnySession | None]):
    """Returns the session to open (read from its file), or None: closed, the session on
    screen chosen again, or a file that cannot be read (said in a notification)."""

    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close", id="sessions.close", tooltip="Back to writing"),
        Binding("enter", "open", "Open", id="sessions.open", tooltip="Open the highlighted session"),
        Binding("r", "rename", "Rename", id="sessions.rename", tooltip="Give the highlighted session a new title"),
        Binding("d,delete", "delete", "Delete", id="sessions.delete",
                tooltip="Delete the highlighted session file (asks first; the draft file stays)"),
    ]

    def __init__(self, keeper: "SessionKeeper", on_screen: set[str]) -> None:
        """`on_screen`: the ids of the sessions shown now (opening one again does nothing)."""
        super().__init__()
        self._keeper = keeper
        self._on_screen = on_screen
        self._summaries: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box"):
            yield Static("Sessions · Enter opens · r renames · d deletes · Esc closes", id="sessions-title")
            yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self._fill()
        table.focus()

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_rows)  # the table's new width is known once laid out

    def _fill(self) -> None:
        self._summaries = self._keeper.store.list()
        self._keeper.report_damaged()
        self._show_rows()
        self.call_after_refresh(self._show_rows)

    def _show_rows(self) -> None:
        table: DataTable[str | Text] = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)  # a column keeps the width of its widest cell, even one cleared
        table.add_columns(*COLUMNS)
        open_ids = self._keeper.open_ids()
        rows = [(summary.title, summary.kind,
                 summary.updated_at[:16].replace("T", " "), summary.model or "—", str(summary.words),
                 format_bytes(summary.file_size)) for summary in self._summaries]
        # The title takes what the other columns leave (each with its padding, and room for
        # a scroll bar): a long one pushed the date, model, words and size out of view.
        others = sum(max(len(header), *(cell_len(cells[n]) for cells in rows)) + 2 * table.cell_padding
                     for n, header in enumerate(COLUMNS) if n) if rows else 0
        room = max(table.size.width - others - 2 * table.cell_padding - 2, MIN_TITLE) if table.size.width else 10**6
        for summary, (title, kind, updated, model, words, size) in zip(self._summaries, rows):
            # As Text: a plain string cell is read as markup, and a title such as "[/i]" (the
            # draft's first words) stopped the app with a MarkupError.
            mark = "  (open)" if summary.id in open_ids else ""  # kept when the title is cut
            table.add_row(Text(clip(title, room - len(mark)) + mark), kind, updated, Text(model), words, size,
                          key=summary.id)
        if not self._summaries:
            table.add_row("No saved sessions yet", "", "", "", "", "")
        table.move_cursor(row=min(row, max(table.row_count - 1, 0)))

    def _highlighted(self) -> SessionSummary | None:
        row = self.query_one(DataTable).cursor_row
        return self._summaries[row] if 0 <= row < len(self._summaries) else None

    @on(DataTable.RowSelected)
    def action_open(self) -> None:
        summary = self._highlighted()
        if summary is None:
            return
        if summary.id in self._on_screen:
            self.dismiss(None)
            return
        if self._keeper.only_on_screen():
            # Opening another session puts it in the place of the text that could not be saved.
            self.notify("What you wrote could not be saved (the message before says why), so it is only on screen: "
                        "opening another session now would lose it.", title="Session not opened", severity="error",
                        timeout=15)
            return
        try:
            session = self._keeper.store.load(summary.id)
        except SessionError as error:
            self.notify(str(error), title="Session not opened", severity="error", timeout=10)
            return
        try:
            if note := self._keeper.store.take_draft_file(session):
                self.notify(note, title="Draft file", severity="warning", timeout=15)
        except SessionError as error:
            self.notify(f"{error}; the session's own copy of the text is shown.", title="Draft file",
                        severity="warning", timeout=10)
        self.dismiss(session)

    def action_rename(self) -> None:
        summary = self._highlighted()
        if summary is None:
            return

        def renamed(title: str | None) -> None:
            if title is None:
                return
            try:
                self._keeper.rename(summary.id, title)
            except SessionError as error:
                self.notify(str(error), severity="error")
            self._fill()

        self.app.push_screen(TextPromptScreen(f"New title for “{summary.title}”", summary.title), renamed)

    def action_delete(self) -> None:
        summary = self._highlighted()
        if summary is None:
            return
        if reason := self._keeper.why_not_deletable(summary.id):
            # Said before the question: asked to confirm first, the author was then told it could not be done.
            self.notify(reason, title="Session not deleted", severity="warning")
            return

        def decided(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self._keeper.delete(summary.id)
            except SessionError as error:
                self.notify(str(error), severity="error")
            else:
                self.notify(f"Deleted the session “{summary.title}”.")
            self._fill()

        self.app.push_screen(ConfirmScreen(f"Delete the session “{summary.title}”? Its draft file, if any, stays.",
                                           "Delete"), decided)
