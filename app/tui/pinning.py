"""Editing what is pinned into every prompt: the memory and the author's note of the
session on screen. The app's actions land here; the session keeper keeps the text and
the panes are given it (attributes down)."""

from __future__ import annotations

from typing import Callable

from textual.app import App

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.window.lore import Lorebook
from scriptorium.inference.window.window import Pinned

from scriptorium.app.sessions import session_lore
from scriptorium.app.tui.session_keeper import SessionKeeper
from scriptorium.app.sessions.model import DraftSession
from scriptorium.app.tui.pinned_count import PinnedCounter
from scriptorium.app.tui.screens.main_screen import MainScreen


def edit_pinned(
    app: App[None], main: MainScreen, sessions: SessionKeeper, which: str, save: Callable[[], object]
) -> None:
    """Open the editor of the memory, the note or the lorebook (`which`) for the mode on screen."""
    if app.screen is not main:  # a dialog open keeps the keys
        return
    # Imported when first opened: start-up loads only what the first frame shows.
    from scriptorium.app.tui import lore_editing
    from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

    if which == "lore":
        lore_editing.edit_lore(app, main, sessions, save)
        return
    mode = main.mode
    if which == "note" and mode == "chat":
        # A chat prompt is the system prompt (with the memory) and the turns: a note kept
        # here would be in no prompt at all.
        app.notify(
            main.language.gettext(
                "The author's note steers the draft. In chat, what should steer every reply goes in the memory "
                "({key}), which joins the system prompt."
            ).format(key=main.chat.key_display("app.memory")),
            timeout=8,
        )
        return

    def kept(pinned: Pinned | None) -> None:
        if pinned is None:
            return
        sessions.set_pinned(mode, pinned, main.draft_text())
        show_pinned(main, sessions)
        save()
        _ = main.language.gettext
        memory, text = which == "memory", pinned.memory if which == "memory" else pinned.note
        if not text.strip():
            app.notify(_("Memory cleared.") if memory else _("Author's note cleared."))
        elif screen.pinned_size is None or screen.pinned_size.fits:
            app.notify(
                _("Memory kept: the model sees it in every prompt.")
                if memory
                else _("Author's note kept: the model sees it in every prompt.")
            )
        elif mode == "chat":  # no window marker there to say it
            said = _("Memory kept, but {size}.") if memory else _("Author's note kept, but {size}.")
            app.notify(said.format(size=screen.pinned_size.line(main.language)), severity="warning", timeout=12)
        # Else the window's warning alone says it: 'the model sees it' then 'more than the window' contradicted each other.

    backend, max_tokens = main.engine_state.backend, main.engine_state.sampler.max_tokens
    counter = None if backend is None else PinnedCounter(backend.count_tokens, backend.n_ctx, max_tokens)
    screen = PinnedScreen(which, sessions.pinned(mode), counter, main.language)
    app.push_screen(screen, kept)


def show_pinned(main: MainScreen, sessions: SessionKeeper) -> None:
    """Give each pane its session's memory and note, and the draft its lorebook."""
    main.draft.pinned = sessions.pinned("draft")
    main.chat.pinned = sessions.pinned("chat")
    main.draft.lorebook = lorebook_shown(main, sessions.draft)


def lorebook_shown(main: MainScreen, session: DraftSession | None) -> Lorebook:
    """The draft session's lorebook; a shared file that cannot be read is said, and the
    draft goes on without lore until it can."""
    try:
        return session_lore.lorebook_of(session)
    except ScriptoriumError as error:
        _ = main.language.gettext
        main.notify(
            _("{error}; the draft is continued without its lore until the file is fixed.").format(error=error),
            title=_("Lorebook"),
            severity="error",
            timeout=15,
        )
        return Lorebook()


def keep_typed(app: App[None], main: MainScreen, sessions: SessionKeeper) -> None:
    """Quitting with the memory or note editor open keeps what was typed there, as it keeps
    the draft: it is the author's text (Esc is the way to leave it unchanged)."""
    from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

    for screen in app.screen_stack:
        if isinstance(screen, PinnedScreen):
            typed = screen.typed(strict=False)
            if typed != sessions.pinned(main.mode):
                sessions.set_pinned(main.mode, typed, main.draft_text())
