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

    app.push_screen(ContextScreen(last_view(main), make_next, why_not, main.language), chosen)


def last_view(main: MainScreen) -> PromptView | None:
    """The prompt of the last finished generation, as the engine was given it."""
    if main.last_generation is None:
        return None
    request, _record, done = main.last_generation
    language = main.language
    title = language.gettext(
        "The last prompt, as the engine evaluated it ({reused} of its {tokens} tokens were in the cache already)"
    ).format(reused=language.number(done.reused_tokens, ","), tokens=language.number(done.prompt_tokens, ","))
    if request.window is not None:
        return draft_view(title, request.window, done.kv_cache.n_ctx, None, language)
    return chat_view(title, request.prompt, done.prompt_tokens, done.kv_cache.n_ctx, language)


def _next_maker(main: MainScreen) -> tuple[Callable[[], PromptView] | None, str]:
    """What makes the next draft prompt in a worker, or why none can be made now."""
    backend, draft, language = main.engine_state.backend, main.draft, main.language
    _ = language.gettext
    if main.mode != "draft":
        return None, _("In chat the prompt is made as you send; tab shows the last one.")
    if backend is None:
        return None, _("No model is loaded: a prompt is measured in its tokens.")
    if main.is_generating or draft.scoring:
        return None, _("The model is busy: the next prompt can be made once it stops; tab shows the last one.")
    build, text = draft.next_window(backend)
    title = _("The next prompt: what {key} sends now").format(key=draft.key_display("draft.continue"))

    def make() -> PromptView:
        window = build(text)
        return draft_view(title, window, backend.n_ctx, window.dropped_tokens, language)

    return make, ""
