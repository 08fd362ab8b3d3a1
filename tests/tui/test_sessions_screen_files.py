"""A draft session opened from the sessions screen (F5) and its draft file: what another
program wrote to the file since is what the author sees, and saving never replaces it."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import make_app, run

from scriptorium.app.sessions import SessionStore


def test_a_draft_opened_from_the_list_shows_what_another_program_wrote_to_its_file(tmp_path: Path) -> None:
    """It showed the session's older copy, then called the file's newer text a conflict and
    offered ctrl+s "to replace it with your text": following that lost the other edits."""
    draft = tmp_path / "capitolo.md"
    draft.write_text("Scritto qui.", encoding="utf-8")
    store = SessionStore()
    session = store.open_draft(draft)
    store.save(session)
    draft.write_text("Scritto qui.\n\nAggiunto in un altro editor.\n", encoding="utf-8")

    async def scenario() -> None:
        app = make_app(None)
        async with app.run_test() as pilot:
            await pilot.press("f5")
            table = app.screen.query_one("DataTable")
            table.move_cursor(row=[s.id for s in app.screen._summaries].index(session.id))
            await pilot.press("enter")
            await pilot.pause()
            assert app.main.draft.editor.text == "Scritto qui.\n\nAggiunto in un altro editor.\n"
            await pilot.press(*"Ora. ", "ctrl+s")
            await pilot.pause()
        assert draft.read_text(encoding="utf-8") == "Ora. Scritto qui.\n\nAggiunto in un altro editor.\n"

    run(scenario)


def test_a_draft_file_that_cannot_be_read_opens_the_sessions_own_copy_and_says_so(tmp_path: Path) -> None:
    draft = tmp_path / "capitolo.md"
    draft.write_text("Il testo della sessione.", encoding="utf-8")
    store = SessionStore()
    session = store.open_draft(draft)
    store.save(session)
    draft.write_bytes(b"\xff\xfe not UTF-8")

    async def scenario() -> None:
        app = make_app(None)
        async with app.run_test() as pilot:
            await pilot.press("f5")
            table = app.screen.query_one("DataTable")
            table.move_cursor(row=[s.id for s in app.screen._summaries].index(session.id))
            await pilot.press("enter")
            await pilot.pause()
            assert app.main.draft.editor.text == "Il testo della sessione."
            assert any("not UTF-8" in n.message and "own copy" in n.message for n in app._notifications)
            await pilot.press(*"X")
            app.save_everything()
        assert draft.read_bytes() == b"\xff\xfe not UTF-8"  # a conflict: never written over

    run(scenario)
