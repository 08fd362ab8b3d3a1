"""The context viewer (F6): the exact prompt the model sees, part by part with its tokens and
where the window and the note cut the draft; the next prompt is the one ctrl+g then sends,
and after a generation tab shows the one the engine evaluated."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, make_app, ready, spying_loader, until, write_pinned

from scriptorium.app.tui.screens.context_screen import ContextScreen
from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

DRAFT = "\n\n".join(f"Paragrafo {i}: Lucia scese al porto." for i in range(6))


async def test_the_next_prompt_shown_is_the_one_the_engine_gets(random_model: Path) -> None:
    loader, spies = spying_loader()
    async with ready(random_model, loader=loader, size=(120, 40)) as (app, pilot):
        app.main.draft.editor.load_text(DRAFT)
        await write_pinned(pilot, "alt+e", "Un romanzo sul mare.")
        await write_pinned(pilot, "alt+n", "[Tono: calmo.]", depth="2")
        await pilot.press("f6")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await until(pilot, lambda: screen._next is not None, "the next prompt made")
        shown = screen._next
        assert [name for name, _, _ in shown.parts][:2] == ["memory", "draft"]
        assert "note" in [name for name, _, _ in shown.parts]
        said = "\n".join(shown.counts + shown.cuts)
        assert "memory" in said and "author's note" in said and "prompt" in said
        assert "The author's note goes before ‘Paragrafo 4:" in said
        assert "Un romanzo sul mare." in str(screen.query_one("#context-prompt").render())
        await pilot.press("escape")
        await pilot.pause()
        await generated(pilot, "ctrl+g")
        assert spies[-1].last["prompt"] == shown.prompt
        await pilot.press("f6")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await pilot.press("tab")  # the last prompt: the one the engine evaluated
        await pilot.pause()
        assert screen.showing == "last" and screen._last is not None
        assert screen._last.prompt == spies[-1].last["prompt"]
        assert "in the cache already" in screen._last.title
        await pilot.press("m")  # the memory's editor, by a key any terminal sends
        await pilot.pause()
        assert isinstance(app.screen, PinnedScreen) and app.screen.which == "memory"


async def test_the_palette_opens_the_context_viewer_without_a_model() -> None:
    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await commands["General: Context"].callback()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        assert "No model is loaded" in str(screen.query_one("#context-counts").render())
