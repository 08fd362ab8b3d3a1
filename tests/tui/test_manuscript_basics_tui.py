"""What a writer expects of any editor: undo and redo listed in F1 and the palette, a live
word count, and F4 on accepted text that inspects it or says why not."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, make_app, ready, typed, until

from scriptorium.app.tui.screens.help_screen import HelpScreen


async def test_undo_and_redo_are_in_f1_and_the_palette() -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        rows = {(name, binding_id) for _, _, name, _, binding_id in app.keys.rows()}
        assert {("Undo", "draft.undo"), ("Redo", "draft.redo")} <= rows
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await typed(pilot, "Una casa")
        await commands["Draft: Undo"].callback()
        await pilot.pause()
        assert app.main.draft.editor.text != "Una casa"
        await commands["Draft: Redo"].callback()
        await pilot.pause()
        assert app.main.draft.editor.text == "Una casa"


async def test_the_status_bar_counts_the_drafts_words_as_the_author_types() -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await typed(pilot, "Una casa sul fiume")
        await until(pilot, lambda: app.main.status.words == 4, "the words counted")
        assert "4 words" in str(app.main.status.render())
        await pilot.press("space")
        await typed(pilot, "e")
        await until(pilot, lambda: "5 words" in str(app.main.status.render()), "the count following")


async def test_the_status_bar_counts_chinese_and_japanese_as_the_sessions_list_does(tmp_path: Path) -> None:
    """A character each, as word processors count them: the bar split on spaces, and showed a
    Japanese paragraph as one word while the sessions list said 19."""
    draft = tmp_path / "racconto.txt"
    draft.write_text("東京の夜は静かだった。彼女は「まだ？」と言った。", encoding="utf-8")
    app = make_app(None, draft=draft)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.main.status.words == 19, "the words counted")
        assert "19 words" in str(app.main.status.render())


async def test_f4_on_accepted_text_says_where_it_shows_or_why_it_cannot(random_model: Path) -> None:
    """F4 on accepted text sent its token to the probabilities panel and said nothing: with
    the panels hidden, the key did nothing at all the author could see."""

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, "Era")
        await generated(pilot, "ctrl+g")
        await pilot.press("tab")
        await pilot.pause()
        await pilot.press("f4")
        await pilot.pause()
        assert any("probabilities panel shows" in n.message for n in app.notices)
        await pilot.press("f3")  # the panels hidden
        await pilot.pause()
        await pilot.press("f4")
        await pilot.pause()
        assert any("panels are hidden" in n.message for n in app.notices)
