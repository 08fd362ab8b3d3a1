"""Editing the draft session's lorebook (alt+l, the palette): the app's action lands here,
the session keeps the entries (or the shared file they are in), the manuscript saves it,
and the draft pane is given the lorebook (attributes down)."""

from __future__ import annotations

from textual.app import App

from scriptorium.inference.window.lore import Lorebook

from scriptorium.app.sessions import session_lore
from scriptorium.app.tui.manuscript import Manuscript
from scriptorium.app.tui.screens.lore_screen import LoreScreen
from scriptorium.app.tui.screens.main_screen import MainScreen


class SessionLoreShelf:
    """The LoreScreen's shelf: the draft session on screen (made now if there is none yet),
    its pane given every change, and the session saved after each."""

    def __init__(self, main: MainScreen, manuscript: Manuscript) -> None:
        self._main, self._manuscript = main, manuscript

    @property
    def path(self) -> str | None:
        session = self._manuscript.sessions.draft
        return session.lore_path if session is not None else None

    def _kept(self, lorebook: Lorebook) -> Lorebook:
        self._main.draft.lorebook = lorebook
        self._manuscript.save_everything()
        return lorebook

    def keep(self, lorebook: Lorebook) -> None:
        session_lore.keep_lorebook(self._manuscript.draft_session(), lorebook)
        self._kept(lorebook)

    def use_file(self, path: str) -> Lorebook:
        return self._kept(session_lore.use_file(self._manuscript.draft_session(), path))

    def use_own_entries(self, lorebook: Lorebook) -> None:
        session_lore.use_own_entries(self._manuscript.draft_session(), lorebook)
        self._kept(lorebook)


def edit_lore(app: App[None], main: MainScreen, manuscript: Manuscript) -> None:
    """Open the lorebook screen of the draft session."""
    if main.mode == "chat":
        said = main.language.gettext(
            "The lorebook is for the draft: its entries enter a draft prompt when the text mentions them. "
            "In chat, what every reply should know goes in the memory ({key})."
        )
        app.notify(said.format(key=main.chat.key_display("app.memory")), timeout=8)
        return
    draft = main.draft
    shelf = SessionLoreShelf(main, manuscript)
    app.push_screen(LoreScreen(shelf, draft.lorebook, draft.last_lore, main.language))
