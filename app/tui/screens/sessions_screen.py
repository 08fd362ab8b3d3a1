"""The sessions screen: every saved draft and chat, to open, rename or delete."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from scriptorium.app.sessions import AnySession, SessionError, SessionSummary
from scriptorium.app.units import format_bytes
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen, TextPromptScreen
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper


class SessionsScreen(ModalScreen[AnySession | None]):
    """Returns the session to open (read from its file), or None: closed, the session on
    screen chosen again, or a file that cannot be read (said in a notification)."""

    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close", id="sessions.close", tooltip="Back to writing"),
        Binding("enter", "open", "Open", id="sessions.open", tooltip="Open the highlighted session"),
        Binding("r", "rename", "Rename", id="sessions.rename", tooltip="Give the highlighted session a new title"),
        Binding(
            "d,delete",
            "delete",
            "Delete",
            id="sessions.delete",
            tooltip="Delete the highlighted session file (asks first; the draft file stays)",
        ),
    ]

    def __init__(self, keeper: "SessionKeeper", on_screen: set[str], language: Language = ENGLISH) -> None:
        """`on_screen`: the ids of the sessions shown now (opening one again does nothing)."""
        super().__init__()
        self._language = language
        self._keeper = keeper
        self._on_screen = on_screen
        self._summaries: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-box"):
            title = self._language.gettext("Sessions · Enter opens · r renames · d deletes · Esc closes")
            yield Static(title, id="sessions-title")
            yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        _ = self._language.gettext
        table.add_columns(_("title"), _("kind"), _("updated"), _("model"), _("words"), _("size"))
        self._fill()
        table.focus()

    def _fill(self) -> None:
        table: DataTable[str | Text] = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        self._summaries = self._keeper.store.list()
        self._keeper.report_damaged()
        open_ids = self._keeper.open_ids()
        for summary in self._summaries:
            title = summary.title + ("  " + self._language.gettext("(open)") if summary.id in open_ids else "")
            # As Text: a plain string cell is read as markup, and a title such as "[/i]" (the
            # draft's first words) stopped the app with a MarkupError.
            table.add_row(
                Text(title),
                summary.kind,
                summary.updated_at[:16].replace("T", " "),
                Text(summary.model or "—"),
                self._language.number(summary.words, ""),
                format_bytes(summary.file_size, self._language.number),
                key=summary.id,
            )
        if not self._summaries:
            table.add_row(self._language.gettext("No saved sessions yet"), "", "", "", "", "")
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
            _ = self._language.gettext
            self.notify(
                _(
                    "What you wrote could not be saved (the message before says why), so it is only on screen: "
                    "opening another session now would lose it."
                ),
                title=_("Session not opened"),
                severity="error",
                timeout=15,
            )
            return
        try:
            session = self._keeper.store.load(summary.id)
        except SessionError as error:
            self.notify(str(error), title=self._language.gettext("Session not opened"), severity="error", timeout=10)
            return
        try:
            if note := self._keeper.store.take_draft_file(session):
                self.notify(note, title=self._language.gettext("Draft file"), severity="warning", timeout=15)
        except SessionError as error:
            self.notify(
                self._language.gettext("{error}; the session's own copy of the text is shown.").format(error=error),
                title=self._language.gettext("Draft file"),
                severity="warning",
                timeout=10,
            )
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

        question = self._language.gettext("New title for “{title}”").format(title=summary.title)
        self.app.push_screen(TextPromptScreen(question, summary.title, language=self._language), renamed)

    def action_delete(self) -> None:
        summary = self._highlighted()
        if summary is None:
            return
        if reason := self._keeper.why_not_deletable(summary.id):
            # Said before the question: asked to confirm first, the author was then told it could not be done.
            self.notify(reason, title=self._language.gettext("Session not deleted"), severity="warning")
            return

        def decided(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self._keeper.delete(summary.id)
            except SessionError as error:
                self.notify(str(error), severity="error")
            else:
                self.notify(self._language.gettext("Deleted the session “{title}”.").format(title=summary.title))
            self._fill()

        question = self._language.gettext("Delete the session “{title}”? Its draft file, if any, stays.")
        self.app.push_screen(ConfirmScreen(question.format(title=summary.title), N_("Delete"), self._language), decided)
