"""Editing what is pinned into every prompt: the memory and the author's note of the
session on screen. The app's actions land here; the manuscript keeps the text, gives it
to the panes (attributes down) and saves it."""

from __future__ import annotations

from typing import Iterable

from textual.app import App
from textual.screen import Screen

from scriptorium.inference.window.window import Pinned

from scriptorium.app.tui.manuscript import Manuscript
from scriptorium.app.tui.pinned_count import PinnedCounter
from scriptorium.app.tui.screens.main_screen import MainScreen


def edit_pinned(app: App[None], main: MainScreen, manuscript: Manuscript, which: str) -> None:
    """Open the editor of the memory, the note or the lorebook (`which`) for the mode on screen."""
    if app.screen is not main:  # a dialog open keeps the keys
        return
    # Imported when first opened: start-up loads only what the first frame shows.
    from scriptorium.app.tui import lore_editing
    from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

    if which == "lore":
        lore_editing.edit_lore(app, main, manuscript)
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
        manuscript.keep_pinned(mode, pinned)
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
    screen = PinnedScreen(which, manuscript.sessions.pinned(mode), counter, main.language)
    app.push_screen(screen, kept)


def typed_in_editors(screens: Iterable[Screen[object]]) -> list[Pinned]:
    """What the memory or note editors open in `screens` hold: quitting with one open keeps what was typed
    there, as it keeps the draft (Manuscript.leave)."""
    from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

    return [screen.typed(strict=False) for screen in screens if isinstance(screen, PinnedScreen)]
