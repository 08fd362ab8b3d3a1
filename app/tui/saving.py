"""Saving where the author says: ctrl+s, asking for a name when the draft has none, and
asking what to do when quitting meets a save that failed. The dialogs are here; the saving
is the manuscript's (manuscript/), which each answer asks."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from scriptorium.app.tui import draft_conflict
from scriptorium.app.tui.manuscript import Manuscript
from scriptorium.app.i18n.marker import N_


def ask_before_quitting(app: App[None], manuscript: Manuscript) -> None:
    """Quitting met a save that failed: ask what to do (unsaved_screen.py). Replacing a draft file another
    program changed sets its text aside first (draft_files.set_aside)."""
    sessions = manuscript.sessions

    def decided(choice: str | None) -> None:
        if choice == "discard" or (
            choice == "save" and manuscript.save_everything(explicit=True, replace_file=sessions.conflict)
        ):
            app.exit()
        elif choice == "save-as":
            ask_save_path(app, manuscript, then_exit=True)

    from scriptorium.app.tui.screens.unsaved_screen import UnsavedScreen  # opened on demand: not at start-up

    app.push_screen(
        UnsavedScreen(manuscript.draft_file, sessions.problems.unsaved(), sessions.conflict, manuscript.language),
        decided,
    )


def save_requested(app: App[None], manuscript: Manuscript) -> None:
    """ctrl+s: save (an explicit save writes everything but a draft file another program changed: the
    author is asked whose text it keeps, draft_conflict.py), or ask for a name first."""
    if manuscript.draft_file.path is None:
        ask_save_path(app, manuscript)
    elif not _said_saved(app, manuscript, manuscript.save_everything(explicit=True)) and manuscript.sessions.conflict:
        draft_conflict.ask_whose_text(app, manuscript)


def _said_saved(app: App[None], manuscript: Manuscript, saved: bool) -> bool:
    if saved:
        app.notify(manuscript.language.gettext("Saved {name}").format(name=manuscript.draft_file.display_name))
    return saved


def ask_save_path(app: App[None], manuscript: Manuscript, *, then_exit: bool = False) -> None:
    """Ask for a name, then save there (Manuscript.save_as): over an existing file only once the author
    agreed to replace it."""

    def save_to(path: Path, replace: bool) -> None:
        if _said_saved(app, manuscript, manuscript.save_as(path, replace=replace)) and then_exit:
            app.exit()

    # Opened on demand: not loaded at start-up.
    from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen
    from scriptorium.app.tui.screens.load_model_screen import SavePathScreen

    language = manuscript.language

    def chosen(path: Path | None) -> None:
        if path is None:
            return
        _ = language.gettext
        if path.is_dir():
            app.notify(
                _("{path} is a folder: give the draft a file name.").format(path=path),
                title=_("Not saved"),
                severity="error",
            )
        elif path.exists():
            # Saved without asking, the file was called "changed on disk" and the next ctrl+s replaced it.
            question = _("{path} already exists. Replace it with this draft?").format(path=path)
            app.push_screen(
                ConfirmScreen(question, N_("Replace"), language),
                lambda yes: save_to(path, True) if yes else None,
            )
        else:
            save_to(path, False)

    app.push_screen(SavePathScreen(language), chosen)
