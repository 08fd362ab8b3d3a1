"""Another program appended a line to the draft file while the author wrote here too. The
app said "Press ^s to replace it with your text", and one ctrl+s, a writer's reflex,
replaced the file: the other line was gone, with no backup and nothing in the session.
Now ctrl+s asks whose text the file keeps, Enter keeps both (the author's in the file, the
other program's beside it, said where), and no autosave ever replaces the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Button, TextArea
from tui_helpers import autosaved, make_app, typed

from scriptorium.app.sessions import DraftSession, SessionStore
from scriptorium.app.tui.screens.file_conflict_screen import FileConflictScreen
from scriptorium.app.tui.screens.unsaved_screen import UnsavedScreen

MINE = "Lucia scese al porto."
APPENDED = "Una riga scritta con un altro programma.\n"
TYPED = " Il mare era calmo."


def porto(tmp_path: Path) -> Path:
    folder = tmp_path / "romanzo"
    folder.mkdir()
    draft = folder / "porto.md"
    draft.write_text(MINE + "\n", encoding="utf-8")
    return draft


async def typed_while_another_program_appended(pilot: Pilot[Any], draft: Path) -> None:
    """Another program appends a line, the author types, and the autosave meets the change. (Appended
    after the typing, the line could come after an autosave that had saved all of it: no conflict.)"""
    with draft.open("a", encoding="utf-8") as handle:
        handle.write(APPENDED)
    await pilot.press("ctrl+home", "end")
    await typed(pilot, TYPED)
    await autosaved(pilot)
    assert pilot.app.sessions.conflict
    assert draft.read_text(encoding="utf-8") == MINE + "\n" + APPENDED  # no autosave replaces it


async def asked_whose_text(pilot: Pilot[Any], draft: Path) -> FileConflictScreen:
    """...then presses ctrl+s: the question, with nothing written yet."""
    await typed_while_another_program_appended(pilot, draft)
    await pilot.press("ctrl+s")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, FileConflictScreen)
    assert draft.read_text(encoding="utf-8") == MINE + "\n" + APPENDED
    return screen


def set_aside_copies(draft: Path) -> list[Path]:
    return sorted(draft.parent.glob("porto.md.disk-*"))


def said(app: Any, words: str) -> bool:
    return any(words in n.message for n in app.notices)


async def test_ctrl_s_then_enter_keeps_the_other_programs_line_beside_the_file_and_says_where(tmp_path: Path) -> None:
    draft = porto(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await asked_whose_text(pilot, draft)
        assert screen.focused is screen.query_one("#keep-mine", Button)
        await pilot.press("enter")
        await pilot.pause()
        assert draft.read_text(encoding="utf-8") == MINE + TYPED + "\n"
        [copy] = set_aside_copies(draft)
        assert copy.read_text(encoding="utf-8") == MINE + "\n" + APPENDED
        assert said(app, copy.name)
        await typed(pilot, " Poi.")
        await autosaved(pilot)  # the file is the author's again: saves go on
        assert draft.read_text(encoding="utf-8") == MINE + TYPED + " Poi.\n"
        assert set_aside_copies(draft) == [copy]


async def test_taking_the_files_text_shows_it_and_keeps_the_authors_in_a_session_copy(tmp_path: Path) -> None:
    draft = porto(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test(size=(80, 24)) as pilot:
        await asked_whose_text(pilot, draft)
        await pilot.click("#take-file")
        await pilot.pause()
        assert app.main.draft.editor.text == MINE + "\n" + APPENDED
        assert draft.read_text(encoding="utf-8") == MINE + "\n" + APPENDED and not set_aside_copies(draft)
        [copy] = [s for s in SessionStore().list() if s.title == "porto (copy)"]
        kept = SessionStore().load(copy.id)
        assert isinstance(kept, DraftSession) and kept.text == MINE + TYPED + "\n"
        assert said(app, "porto (copy)")
        await pilot.press("ctrl+end")
        await typed(pilot, "Fine.")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, FileConflictScreen)
        assert draft.read_text(encoding="utf-8") == MINE + "\n" + APPENDED + "Fine."


async def test_seeing_both_shows_the_two_texts_and_writes_nothing(tmp_path: Path) -> None:
    draft = porto(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await asked_whose_text(pilot, draft)
        assert not screen.showing_both
        await pilot.click("#see-both")
        await pilot.pause()
        assert screen.showing_both
        disk, here = screen.query_one("#conflict-disk", TextArea), screen.query_one("#conflict-here", TextArea)
        assert disk.region.width > 0 and here.region.width > 0 and disk.region.y == here.region.y
        assert disk.text == MINE + "\n" + APPENDED and here.text == MINE + TYPED + "\n"
        await pilot.press("escape")  # keep writing: nothing is written, nothing is set aside
        await pilot.pause()
        assert not isinstance(app.screen, FileConflictScreen)
        assert draft.read_text(encoding="utf-8") == MINE + "\n" + APPENDED and not set_aside_copies(draft)
        assert app.main.draft.editor.text == MINE + TYPED + "\n"


async def test_replacing_the_file_on_the_way_out_keeps_the_other_programs_text_too(tmp_path: Path) -> None:
    draft = porto(tmp_path)

    app = make_app(None, draft=draft)
    async with app.run_test(size=(120, 40)) as pilot:
        await typed_while_another_program_appended(pilot, draft)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.click("#save")
        await pilot.pause()
        assert not app.is_running
    assert draft.read_text(encoding="utf-8") == MINE + TYPED + "\n"
    [copy] = set_aside_copies(draft)
    assert copy.read_text(encoding="utf-8") == MINE + "\n" + APPENDED
