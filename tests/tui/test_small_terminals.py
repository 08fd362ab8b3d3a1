"""The app in small and resized terminals: what matters (the draft, the suggestion, the
keys) stays reachable."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import GREEDY, generated, make_app, model_ready, run

from scriptorium.app.tui.widgets.suggestion_view import SuggestionView


def _shown(view: SuggestionView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.content_size.height)]


def test_a_suggestion_taller_than_its_view_shows_its_end_and_scrolls_back_to_its_start(random_model: Path) -> None:
    async def scenario() -> None:
        app = make_app(random_model, sampler=GREEDY.with_changes(max_tokens=150))
        async with app.run_test(size=(80, 24)) as pilot:
            await model_ready(pilot)
            await pilot.press(*"C'era una volta")
            done = await generated(pilot, "ctrl+g")
            await pilot.pause()
            view = app.main.draft.suggestion
            last_word = done.text.split()[-1]
            assert view.virtual_size.height > view.content_size.height  # it does not fit
            assert [line for line in _shown(view) if line][-1].endswith(last_word)
            await pilot.resize_terminal(60, 15)
            await pilot.pause()
            await pilot.pause()
            assert [line for line in _shown(view) if line][-1].endswith(last_word)
            view.scroll_home(animate=False)
            await pilot.pause()
            assert _shown(view)[0].startswith("C'era una volta")

    run(scenario)
