"""The sessions screen (F5): a session is opened, renamed and deleted from the list, and the
session open in the app is refused deletion at once, saying why."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import make_app, ready, session_written_with, typed

from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen, TextPromptScreen
from scriptorium.app.tui.screens.sessions_screen import SessionsScreen
from scriptorium.app.sessions import SessionStore


async def test_the_sessions_screen_opens_renames_and_deletes(tmp_path: Path) -> None:
    store = SessionStore()
    first = store.create_draft("Primo", "Il primo testo")
    second = store.create_draft("Secondo", "Il secondo testo")

    app = make_app(None)
    async with app.run_test() as pilot:
        await pilot.press("f5")
        assert isinstance(app.screen, SessionsScreen)
        titles = [s.title for s in app.screen._summaries]
        assert set(titles) == {"Primo", "Secondo"}
        index = [s.id for s in app.screen._summaries].index(second.id)
        app.screen.query_one("DataTable").move_cursor(row=index)
        await pilot.press("r")
        assert isinstance(app.screen, TextPromptScreen)
        app.screen.query_one("Input").value = "Secondo, rivisto"
        await pilot.press("enter")
        await pilot.pause()
        assert store.load(second.id).title == "Secondo, rivisto"

        index = [s.id for s in app.screen._summaries].index(first.id)
        app.screen.query_one("DataTable").move_cursor(row=index)
        await pilot.press("d")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert not store.path_for(first.id).exists() and store.path_for(second.id).exists()

        await pilot.press("enter")  # the one left
        await pilot.pause()
        assert app.screen is app.main
        assert app.main.draft.editor.text == "Il secondo testo" and app.sessions.draft.id == second.id


async def test_deleting_the_open_session_says_at_once_that_it_cannot_be_done(tmp_path: Path) -> None:
    app = make_app(None)
    async with app.run_test() as pilot:
        await typed(pilot, "Un testo aperto")
        app.manuscript.save_everything()
        await pilot.press("f5")
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        open_row = next(row for row, s in enumerate(screen._summaries) if s.id in screen._on_screen)
        screen.query_one("DataTable").move_cursor(row=open_row)
        await pilot.press("d")
        assert app.screen is screen  # no question asked
        assert any("this session is open" in n.message for n in app.notices)
        assert len(SessionStore().list()) == 1


async def test_opening_a_session_written_with_another_model_says_which(
    random_model: Path, sentence_model: Path
) -> None:
    """A session is opened with the model loaded, not switched: the author is told that it
    last ran on another, as at start, and how to switch."""

    async def open_it_on_the_random_model() -> None:
        async with ready(random_model) as (app, pilot):
            await pilot.press("f5")
            await pilot.press("enter")
            await pilot.pause()
            opened = [n.message for n in app.notices if n.message.startswith("Opened")]
            assert len(opened) == 1 and "This session was last written with scriptorium-test-sentence" in opened[0]
            assert opened[0].endswith(f"Press {app.keys.key_display('app.models')} to switch.")

    await session_written_with(sentence_model)
    await open_it_on_the_random_model()
