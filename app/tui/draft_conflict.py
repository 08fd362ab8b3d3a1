"""ctrl+s met a draft file another program changed while the author wrote here too: the
author chooses whose text the file keeps (file_conflict_screen.py), and the other text is
kept either way. ctrl+s alone used to replace the file, and the other program's words
were gone: no backup, not in the session."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from textual.app import App

from scriptorium.app.sessions import SessionError, draft_files, file_choice
from scriptorium.app.tui.session_keeper import SessionKeeper
from scriptorium.app.tui import session_tokens
from scriptorium.app.tui.screens.main_screen import MainScreen


def ask_whose_text(app: App[None], main: MainScreen, sessions: SessionKeeper, save: Callable[..., bool]) -> None:
    """Show the choice; `save(explicit=True, replace_file=True)` writes the author's text over the
    file, which sets the file's own text aside first (draft_files.set_aside; the keeper says where)."""
    session = sessions.draft
    if session is None or not session.draft_path:
        return
    path = Path(session.draft_path)
    try:
        on_disk, unreadable = draft_files.read(path), ""
    except SessionError as error:
        on_disk, unreadable = None, str(error)
    name = sessions.draft_file.display_name

    def chosen(choice: str | None) -> None:
        if choice == "keep-mine" and save(explicit=True, replace_file=True):
            app.notify(main.language.gettext("Saved {name}").format(name=name))
        elif choice == "take-file":
            take_file_text(app, main, sessions)

    from scriptorium.app.tui.screens.file_conflict_screen import FileConflictScreen  # opened on demand

    app.push_screen(FileConflictScreen(name, on_disk, main.draft_text(), unreadable, main.language), chosen)


def take_file_text(app: App[None], main: MainScreen, sessions: SessionKeeper) -> None:
    """Show the file's text in place of the author's, theirs kept in a copy of the session."""
    main.stop_generation()  # its suggestion is recorded with the author's text, in the copy
    try:
        text, copy_title = file_choice.take_file_text(sessions.draft, sessions.store, main.draft_text())
    except SessionError as error:
        app.notify(str(error), title=main.language.gettext("Not taken"), severity="error", timeout=15)
        return
    sessions.save_draft(text)  # the file already holds it: this stamps the file and saves the session
    main.draft.show_text(text, session_tokens.spans_of(sessions.draft))
    main.draft_state_changed()
    _ = main.language.gettext
    app.notify(
        _("{name}'s text is shown; yours is kept in the session “{title}” (F5 lists it).").format(
            name=sessions.draft_file.display_name, title=copy_title
        ),
        title=_("Draft file"),
        timeout=20,
    )
