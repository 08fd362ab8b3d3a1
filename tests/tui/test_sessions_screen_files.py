"""A draft session opened from the sessions screen (F5) and its draft file: what another
program wrote to the file since is what the author sees, and saving never replaces it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static
from tui_helpers import autosaved, make_app, typed

from scriptorium.app.sessions import DraftSession, SessionError, SessionStore
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen
from scriptorium.app.tui.screens.load_model_screen import SavePathScreen
from scriptorium.app.tui.screens.unsaved_screen import UnsavedScreen


def disk_full(*args: object, **kwargs: object) -> None:
    """SessionStore._write_session on a full disk."""
    raise SessionError("session not saved: cannot write it: No space left on device")


def a_draft_file(folder: Path) -> Path:
    """capitolo.md, holding "Prima."."""
    draft = folder / "capitolo.md"
    draft.write_text("Prima.", encoding="utf-8")
    return draft


def saved_draft_session(draft: Path, text: str) -> DraftSession:
    draft.write_text(text, encoding="utf-8")
    store = SessionStore()
    session = store.open_draft(draft)
    store.save(session)
    return session


async def open_from_the_list(pilot: Pilot[Any], session_id: str) -> None:
    await pilot.press("f5")
    table = pilot.app.screen.query_one("DataTable")
    table.move_cursor(row=[s.id for s in pilot.app.screen._summaries].index(session_id))
    await pilot.press("enter")
    await pilot.pause()


async def test_a_draft_opened_from_the_list_shows_what_another_program_wrote_to_its_file(tmp_path: Path) -> None:
    """It showed the session's older copy, then called the file's newer text a conflict and
    offered ctrl+s "to replace it with your text": following that lost the other edits."""
    draft = tmp_path / "capitolo.md"
    session = saved_draft_session(draft, "Scritto qui.")
    draft.write_text("Scritto qui.\n\nAggiunto in un altro editor.\n", encoding="utf-8")

    app = make_app(None)
    async with app.run_test() as pilot:
        await open_from_the_list(pilot, session.id)
        assert app.main.draft.editor.text == "Scritto qui.\n\nAggiunto in un altro editor.\n"
        await typed(pilot, "Ora. ")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert draft.read_text(encoding="utf-8") == "Ora. Scritto qui.\n\nAggiunto in un altro editor.\n"


async def test_a_draft_file_that_cannot_be_read_opens_the_sessions_own_copy_and_says_so(tmp_path: Path) -> None:
    draft = tmp_path / "capitolo.md"
    session = saved_draft_session(draft, "Il testo della sessione.")
    draft.write_bytes(b"\xff\xfe not UTF-8")

    app = make_app(None)
    async with app.run_test() as pilot:
        await open_from_the_list(pilot, session.id)
        assert app.main.draft.editor.text == "Il testo della sessione."
        assert any("not UTF-8" in n.message and "own copy" in n.message for n in app.notices)
        await typed(pilot, "X")
        app.manuscript.save_everything()
    assert draft.read_bytes() == b"\xff\xfe not UTF-8"  # a conflict: never written over


async def test_saving_an_unnamed_draft_over_an_existing_file_asks_first(tmp_path: Path) -> None:
    """It saved without asking, called the other file "changed on disk" and left the next
    ctrl+s to replace it; a folder's name got the same "changed on disk" line."""
    existing = tmp_path / "altro.md"
    existing.write_text("Un altro racconto.", encoding="utf-8")

    async def save_as(pilot: Pilot[Any], name: str) -> None:
        await pilot.press("ctrl+s")
        assert isinstance(pilot.app.screen, SavePathScreen)
        pilot.app.screen.query_one(Input).value = name
        await pilot.press("enter")
        await pilot.pause()

    app = make_app(None)
    async with app.run_test() as pilot:
        await typed(pilot, "Senza nome")
        await save_as(pilot, str(tmp_path))
        assert app.screen is app.main and app.manuscript.draft_file.path is None
        assert any("is a folder" in n.message for n in app.notices)

        await save_as(pilot, str(existing))
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert app.manuscript.draft_file.path is None and existing.read_text(encoding="utf-8") == "Un altro racconto."

        await save_as(pilot, str(existing))
        await pilot.press("y")
        await pilot.pause()
        assert app.manuscript.draft_file.path == existing and existing.read_text(encoding="utf-8") == "Senza nome"
        assert not any("changed on disk" in n.message for n in app.notices)


async def test_quitting_after_another_program_changed_the_file_says_so_and_enter_keeps_writing(tmp_path: Path) -> None:
    """The question read "has changes that are not saved" with "Save and quit" first, which
    wrote the author's text over the other program's without a word about it."""
    draft = a_draft_file(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        draft.write_text("Prima. Scritto con vim.", encoding="utf-8")
        await typed(pilot, "Qui. ")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        question = str(app.screen.query_one(".dialog-title", Static).render())
        assert question.startswith("Another program changed capitolo.md")
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.screen is app.main
    assert draft.read_text(encoding="utf-8") == "Prima. Scritto con vim."


async def test_titles_that_read_as_markup_are_listed_as_written() -> None:
    """A title is the draft's first words or its file's name: "[/i]" (a closing tag with
    nothing open) stopped the app with a MarkupError when the list was drawn, and "[red]"
    was swallowed as a style."""
    store = SessionStore()
    titles = ["[/i] fine del corsivo", "[red]rosso", "Nota[^1] qui"]
    for title in titles:
        store.create_draft(title, "testo")

    app = make_app(None)
    async with app.run_test() as pilot:
        await pilot.press("f5")
        await pilot.pause()
        table = app.screen.query_one("DataTable")
        shown = [str(table.get_row_at(row)[0]) for row in range(table.row_count)]
        assert sorted(shown) == sorted(titles)
        table.move_cursor(row=shown.index("[/i] fine del corsivo"))
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main and app.sessions.draft.title == "[/i] fine del corsivo"


async def test_another_session_is_not_opened_over_text_that_could_not_be_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the session files failing to save (a full disk), opening another session from
    the list put it in the editor in place of the text that existed nowhere else."""
    store = SessionStore()
    other = store.create_draft("Altro", "Il testo di un'altra sessione.")

    app = make_app(None)
    async with app.run_test() as pilot:
        monkeypatch.setattr(SessionStore, "_write_session", disk_full)
        await typed(pilot, "Solo qui")
        assert not app.manuscript.save_everything()
        await open_from_the_list(pilot, other.id)
        assert any("only on screen" in n.message for n in app.notices)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main and app.main.draft.editor.text == "Solo qui"


async def test_a_name_that_cannot_be_written_is_not_kept_and_ctrl_s_asks_again(tmp_path: Path) -> None:
    """The draft kept the name whose save failed: every save tried it again, and ctrl+s,
    the draft having a name, never asked for another."""
    (tmp_path / "file.md").write_text("a file, not a folder", encoding="utf-8")

    app = make_app(None)
    async with app.run_test() as pilot:
        await typed(pilot, "Senza nome")
        await pilot.press("ctrl+s")
        app.screen.query_one(Input).value = str(tmp_path / "file.md" / "bozza.md")
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main and app.manuscript.draft_file.path is None
        assert any(n.title == "Not saved" for n in app.notices)
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SavePathScreen)


async def test_quitting_with_only_the_session_unsaved_says_the_draft_file_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The draft file saved and only the session's write failing (its folder on a full
    disk), the quit dialog said the draft had unsaved changes: the author went looking for a
    way to save a file that was saved. It says what is lost: the session's record."""
    draft = a_draft_file(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        monkeypatch.setattr(SessionStore, "_write_session", disk_full)
        await pilot.press("end")
        await typed(pilot, " Dopo.")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        question = str(app.screen.query_one(".dialog-title", Static).render())
        assert question.startswith("capitolo.md is saved, but its session could not be written"), question
        assert "has changes that are not saved" not in question
        assert draft.read_text(encoding="utf-8") == "Prima. Dopo."
        await pilot.click("#discard")
        await pilot.pause()
        assert not app.is_running


async def test_quitting_with_only_the_chat_unsaved_says_the_chat(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat's session failing to save, the quit dialog spoke of the (empty, unnamed)
    draft's unsaved changes, and never of the chat that quitting would lose."""

    app = make_app(None, mode="chat")
    async with app.run_test() as pilot:
        await app.main.show_chat([{"role": "user", "content": "Ciao"}, {"role": "assistant", "content": "Salve"}])
        monkeypatch.setattr(SessionStore, "_write_session", disk_full)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        question = str(app.screen.query_one(".dialog-title", Static).render())
        assert question == "The chat could not be saved: quitting loses what was said since its last save."


async def test_quitting_over_a_draft_file_that_refuses_the_text_says_why_and_offers_another_name(
    tmp_path: Path,
) -> None:
    """The draft file read-only, quitting asked only "Save and quit", which could never
    work, without saying why: the author could neither save elsewhere nor tell what was wrong."""
    draft = a_draft_file(tmp_path)
    elsewhere = tmp_path / "capitolo-copia.md"

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        draft.chmod(0o444)
        await pilot.press("end")
        await typed(pilot, " Dopo.")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        reason = str(app.screen.query_one(".dialog-reason", Static).render())
        assert reason.startswith("capitolo.md is read-only, so the draft file was not saved"), reason
        await pilot.click("#save-as")
        await pilot.pause()
        assert isinstance(app.screen, SavePathScreen)
        app.screen.query_one(Input).value = str(elsewhere)
        await pilot.press("enter")
        await pilot.pause()
        assert not app.is_running
    assert elsewhere.read_text(encoding="utf-8") == "Prima. Dopo."
    assert draft.read_text(encoding="utf-8") == "Prima."


async def test_ctrl_s_again_on_a_failure_already_said_says_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions folder still full, a second ctrl+s said nothing at all (the failure had
    been said once, for autosave's sake): the key seemed to do nothing."""
    draft = a_draft_file(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        monkeypatch.setattr(SessionStore, "_write_session", disk_full)

        def said() -> list[str]:
            return [n.message for n in app.notices if n.title == "Not saved"]

        for _ in range(2):
            await pilot.press("end")
            await typed(pilot, " Dopo.")
            # The typing's autosave is made first, as a slow machine may make it before the
            # key: counted with ctrl+s's, its own notice made three.
            await autosaved(pilot)
            before = len(said())
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert len(said()) == before + 1 and "No space left on device" in said()[-1], said()
