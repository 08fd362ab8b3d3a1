"""The context viewer's hook (F6, and the palette): which prompts the main screen can show,
the last a generation evaluated and the next ctrl+g would send, made as the generation
makes them (the draft pane's window builder, the request's own Window)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App

from scriptorium.app.tui.prompt_view import PromptView, chat_view, draft_view
from scriptorium.app.tui.screens.context_screen import ContextScreen
from scriptorium.app.tui.screens.main_screen import MainScreen


def show_context(app: App[None], main: MainScreen, edit_pinned: Callable[[str], None]) -> None:
    """Open the viewer over `main`; its m, n and l keys come back as `edit_pinned('memory')`..."""
    if app.screen is not main:  # a dialog open keeps the keys
        return
    make_next, why_not = _next_maker(main)

    def chosen(which: str | None) -> None:
        if which:
            edit_pinned(which)

    app.push_screen(ContextScreen(last_view(main), make_next, why_not), chosen)


def last_view(main: MainScreen) -> PromptView | None:
    """The prompt of the last finished generation, as the engine was given it."""
    if main.last_generation is None:
        return None
    request, _, done = main.last_generation
    title = (
        f"The last prompt, as the engine evaluated it ({done.reused_tokens:,} of its {done.prompt_tokens:,} "
        "tokens were in the cache already)"
    )
    if request.window is not None:
        return draft_view(title, request.window, done.kv_cache.n_ctx, None)
    return chat_view(title, request.prompt, done.prompt_tokens, done.kv_cache.n_ctx)


def _next_maker(main: MainScreen) -> tuple[Callable[[], PromptView] | None, str]:
    """What makes the next draft prompt in a worker, or why none can be made now."""
    backend, draft = main.backend, main.draft
    if main.mode != "draft":
        return None, "In chat the prompt is made as you send; tab shows the last one."
    if backend is None:
        return None, "No model is loaded: a prompt is measured in its tokens."
    if main.is_generating or draft.scoring:
        return None, "The model is busy: the next prompt can be made once it stops; tab shows the last one."
    build, text = draft.next_window(backend)
    key = draft.key_display("draft.continue")

    def make() -> PromptView:
        window = build(text)
        return draft_view(f"The next prompt: what {key} sends now", window, backend.n_ctx, window.dropped_tokens)

    return make, ""
