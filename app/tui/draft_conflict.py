"""ctrl+s met a draft file another program changed while the author wrote here too: the
author chooses whose text the file keeps (file_conflict_screen.py), and the other text is
kept either way. ctrl+s alone used to replace the file, and the other program's words
were gone: no backup, not in the session."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from scriptorium.app.sessions import SessionError, draft_files
from scriptorium.app.tui.manuscript import Manuscript


def ask_whose_text(app: App[None], manuscript: Manuscript) -> None:
    """Show the choice. Keeping the author's text writes it over the file, which sets the file's own
    text aside first (draft_files.set_aside; the keeper says where); taking the file's keeps the author's
    in a copy of the session (Manuscript.take_file_text)."""
    session, page = manuscript.sessions.draft, manuscript.page
    if session is None or not session.draft_path or page is None:
        return
    path = Path(session.draft_path)
    try:
        on_disk, unreadable = draft_files.read(path), ""
    except SessionError as error:
        on_disk, unreadable = None, str(error)
    name = manuscript.draft_file.display_name

    def chosen(choice: str | None) -> None:
        if choice == "keep-mine" and manuscript.save_everything(explicit=True, replace_file=True):
            app.notify(manuscript.language.gettext("Saved {name}").format(name=name))
        elif choice == "take-file":
            manuscript.take_file_text()

    from scriptorium.app.tui.screens.file_conflict_screen import FileConflictScreen  # opened on demand

    app.push_screen(FileConflictScreen(name, on_disk, page.draft_text(), unreadable, manuscript.language), chosen)
