"""The draft file changed by another program (vim, `echo >>`) while the author changed
nothing here: scriptorium takes the file's text, as a polished editor reloads, instead of
asking at the next save whether to replace it with the older text still on screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from tui_helpers import Gate, make_app, ready, typed

from scriptorium.app.sessions import ModelSpan, SessionStore
from scriptorium.app.tui.screens.unsaved_screen import UnsavedScreen
from scriptorium.inference.core.settings import preset


def capitolo(folder: Path, text: str) -> Path:
    """The draft file, as another program will find it."""
    draft = folder / "capitolo.md"
    draft.write_text(text, encoding="utf-8")
    return draft


async def test_quitting_without_typing_keeps_what_another_program_wrote(tmp_path: Path) -> None:
    """ctrl+q asked whether to replace the other program's text with the old one on screen."""
    draft = capitolo(tmp_path, "Prima.\n")

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        with draft.open("a", encoding="utf-8") as handle:
            handle.write("Scritto con vim.\n")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not isinstance(app.screen, UnsavedScreen)
        assert not app.is_running
    assert draft.read_text(encoding="utf-8") == "Prima.\nScritto con vim.\n"
    assert app.sessions.draft.text == "Prima.\nScritto con vim.\n"


async def test_coming_back_to_the_app_shows_the_files_new_text_and_says_so(tmp_path: Path) -> None:
    """Undo does not bring back the old text: its autosave would silently write it over the file."""
    draft = capitolo(tmp_path, "Prima.")

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        draft.write_text("Riscritto altrove.", encoding="utf-8")
        app.post_message(events.AppFocus())
        await pilot.pause()
        assert app.main.draft.editor.text == "Riscritto altrove."
        assert any(n.title == "Draft file" and "changed by another program" in n.message for n in app.notices)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.main.draft.editor.text == "Riscritto altrove."
        app.manuscript.save_everything()
    assert draft.read_text(encoding="utf-8") == "Riscritto altrove."


async def test_the_models_passages_follow_the_other_programs_change(tmp_path: Path) -> None:
    """Text added before the model's passage moves it: the session still marks the model's words."""
    draft = capitolo(tmp_path, "Io. Il modello.")
    store = SessionStore()
    session = store.open_draft(draft)
    session.spans = [ModelSpan(start=4, end=15, generation="g1")]
    store.save(session)

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        draft.write_text("Titolo.\n\nIo. Il modello.", encoding="utf-8")
        await pilot.press("ctrl+s")
        await pilot.pause()
        kept = app.sessions.draft
        assert kept.text == "Titolo.\n\nIo. Il modello."
        assert [kept.text[s.start : s.end] for s in kept.spans] == ["Il modello."]
    assert draft.read_text(encoding="utf-8") == "Titolo.\n\nIo. Il modello."


async def test_with_changes_of_the_authors_own_quitting_still_asks(tmp_path: Path) -> None:
    draft = capitolo(tmp_path, "Prima.")

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        draft.write_text("Prima. Scritto con vim.", encoding="utf-8")
        await pilot.press("end")
        await typed(pilot, " Qui.")
        app.post_message(events.AppFocus())
        await pilot.pause()
        assert app.main.draft.editor.text == "Prima. Qui."
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
    assert draft.read_text(encoding="utf-8") == "Prima. Scritto con vim."


@pytest.mark.parametrize("typing", [False, True], ids=["nothing-typed", "typed-here-too"])
async def test_quitting_while_the_model_writes_answers_as_when_it_does_not(
    random_model: Path, tmp_path: Path, typing: bool
) -> None:
    """ctrl+q while a suggestion streamed: the changed file was not taken (a generation was
    writing), so the save called it a conflict and quitting asked whether to replace the
    other program's text, though the author had changed nothing. With a change of their own,
    it still asks, as when nothing streams."""
    draft = capitolo(tmp_path, "Prima.")

    gate = Gate(after_tokens=3)
    async with ready(
        random_model,
        draft=draft,
        loader=gate.loader,
        sampler=preset("greedy").with_changes(max_tokens=200),
    ) as (app, pilot):
        await pilot.press("ctrl+end", "ctrl+g")
        await gate.wait_reached()
        draft.write_text("Prima. Scritto con vim.", encoding="utf-8")
        if typing:
            await pilot.press("ctrl+home")  # before the suggestion: it streams on
            await typed(pilot, "Qui. ")
        assert app.main.is_generating and app.main.draft.editor.ghost is not None
        await pilot.press("ctrl+q")
        gate.release()
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen) == typing == app.is_running
        if not typing:
            assert app.sessions.draft.text == "Prima. Scritto con vim."
            assert not [n for n in app.notices if n.title == "Not saved"]
    assert draft.read_text(encoding="utf-8") == "Prima. Scritto con vim."
