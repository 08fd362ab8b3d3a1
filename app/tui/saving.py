"""Saving the draft where the author says: ctrl+s, asking for a name when the draft has
none, and "save as" when quitting finds it unsaved; and when the app saves by itself
(Autosave). The app's requests land here."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from textual.app import App
from textual.message import Message
from textual.timer import Timer

from scriptorium.app.sessions import DraftSession, draft_files
from scriptorium.app.tui.session_keeper import SessionKeeper
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui import draft_conflict, pinning, session_tokens
from scriptorium.app.tui.screens.main_screen import MainScreen
from scriptorium.app.i18n.marker import N_


@dataclass
class SaveFailed(Message):
    """A save made in the background failed: the 'draft' or 'chat' is not saved after all."""

    kind: str


class Autosave:
    """The next save the app makes by itself: once typing pauses (`delay`, the session
    keeper's rule, says how long from now), or at once."""

    def __init__(self, app: App[None], delay: Callable[[float], float], save: Callable[[], object]) -> None:
        self._app, self._delay, self._save = app, delay, save
        self.timer: Timer | None = None

    @property
    def pending(self) -> bool:
        return self.timer is not None

    def schedule(self, *, at_once: bool = False) -> None:
        if self.timer is not None:
            self.timer.stop()
        if at_once:
            return self._due()
        # At least 1 ms: a save due at once would be a 0 s timer, and Textual's timer divides by its delay.
        self.timer = self._app.set_timer(max(self._delay(time.monotonic()), 0.001), self._due)

    def _due(self) -> None:
        self.timer = None
        self._save()


def take_changed_draft_file(
    app: App[None], main: MainScreen, session: DraftSession | None, *, leaving: bool = False
) -> None:
    """Another program changed the draft file, and the author has changed nothing here since
    scriptorium last read or wrote it: the file's text is shown, as a polished editor
    reloads, and said (else quitting asked whether to replace it with the older text on
    screen). The undo history goes with the old text: undone, its autosave would silently
    write it over the other program's. With changes of their own, a save asks (session_keeper.py);
    a generation writing into the draft keeps its suggestion until it ends, unless the
    draft is being left (`leaving`): the suggestion goes with it then anyway."""
    if session is None or (main.is_generating and not leaving):
        return
    if (text := draft_files.take_changed_file(session, main.draft_text())) is not None:
        main.draft.show_text(text, session_tokens.spans_of(session))  # the model's passages the change kept
        main.draft_state_changed()
        _ = main.language.gettext
        app.notify(
            _(
                "{name} was changed by another program: its text is shown (you had changed "
                "nothing here since it was saved)."
            ).format(name=Path(session.draft_path or "").name),
            title=_("Draft file"),
            timeout=12,
        )


def leave_draft(app: App[None], main: MainScreen, sessions: SessionKeeper) -> None:
    """The draft is about to be saved and left (the app quits, another session opens): a
    generation still streaming is recorded as stopped, with the text drawn so far; a memory
    or note being edited is kept; and a draft file another program changed is taken as when
    nothing streams. Left to the save, it was a conflict: quitting asked whether to replace
    the other program's text, though the author had changed nothing."""
    main.stop_generation()
    sessions.interrupt_live()
    pinning.keep_typed(app, main, sessions)
    take_changed_draft_file(app, main, sessions.draft, leaving=True)


def ask_before_quitting(
    app: App[None], main: MainScreen, draft_file: DraftFile, sessions: SessionKeeper, save: Callable[..., bool]
) -> None:
    """Quitting met a save that failed: ask what to do (unsaved_screen.py). Replacing a draft file another
    program changed sets its text aside first (draft_files.set_aside)."""

    def decided(choice: str | None) -> None:
        if choice == "discard" or (choice == "save" and save(explicit=True, replace_file=sessions.conflict)):
            app.exit()
        elif choice == "save-as":
            ask_save_path(app, main, draft_file, save, then_exit=True)

    from scriptorium.app.tui.screens.unsaved_screen import UnsavedScreen  # opened on demand: not at start-up

    app.push_screen(UnsavedScreen(draft_file, sessions.problems.unsaved(), sessions.conflict, main.language), decided)


def save_requested(app: App[None], main: MainScreen, sessions: SessionKeeper, save: Callable[..., bool]) -> None:
    """ctrl+s: save (`save(explicit=True)` writes everything but a draft file another program changed: the
    author is asked whose text it keeps, draft_conflict.py), or ask for a name first."""
    draft_file = sessions.draft_file
    if draft_file.path is None:
        ask_save_path(app, main, draft_file, save)
    elif not save_and_say(app, main, draft_file, lambda: save(explicit=True)) and sessions.conflict:
        draft_conflict.ask_whose_text(app, main, sessions, save)


def save_and_say(app: App[None], main: MainScreen, draft_file: DraftFile, save: Callable[[], bool]) -> bool:
    if saved := save():
        app.notify(main.language.gettext("Saved {name}").format(name=draft_file.display_name))
    return saved


def ask_save_path(
    app: App[None], main: MainScreen, draft_file: DraftFile, save: Callable[..., bool], *, then_exit: bool = False
) -> None:
    """Ask for a name, then save there; `save(explicit=True, replace_file=True)` writes over a file the
    author agreed to replace (any other file there is a conflict, never overwritten)."""

    def save_to(path: Path, replace: bool) -> None:
        draft_file.path = path
        main.draft_state_changed()
        if save_and_say(app, main, draft_file, lambda: save(explicit=True, replace_file=replace)):
            if then_exit:
                app.exit()
            return
        # Kept, a name that cannot be written (its folder is a file, or read-only) was tried
        # at every save, and ctrl+s never asked for another: the draft stays unnamed.
        draft_file.path = None
        main.draft_state_changed()

    # Opened on demand: not loaded at start-up.
    from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen
    from scriptorium.app.tui.screens.load_model_screen import SavePathScreen

    def chosen(path: Path | None) -> None:
        if path is None:
            return
        _ = main.language.gettext
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
                ConfirmScreen(question, N_("Replace"), main.language),
                lambda yes: save_to(path, True) if yes else None,
            )
        else:
            save_to(path, False)

    app.push_screen(SavePathScreen(main.language), chosen)
