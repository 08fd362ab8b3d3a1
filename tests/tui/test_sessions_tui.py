"""Sessions in the app: every accepted suggestion saved at once, typing within seconds,
generations and chat turns recorded, --resume, export. The sessions screen (F5) is in
test_sessions_screen.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_helpers import (
    autosaved,
    Gate,
    generated,
    kept_whole,
    loader_calling,
    make_app,
    notifications,
    ready,
    saved_draft,
    typed,
)

from scriptorium.inference.core.events import GenerationDone
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen
from scriptorium.app.sessions import ChatSession, SessionStore
from scriptorium.app.sessions.records import recorded_p

OPENING = "C'era una volta"


async def suggestion_after_opening(pilot: Pilot[Any]) -> GenerationDone:
    """With the model ready, type OPENING and let the model continue it to the end."""
    await typed(pilot, OPENING)
    return await generated(pilot, "ctrl+g")


async def test_an_accepted_suggestion_is_saved_at_once_with_its_generation(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        done = await suggestion_after_opening(pilot)
        await pilot.press("tab")
        await pilot.pause()
        # No timer has fired yet: the accept itself saved.
        text = app.main.draft.editor.text
        assert text == OPENING + done.text
        assert draft.read_text(encoding="utf-8") == text
        session = saved_draft(draft)
        assert session.text == text
        (generation,) = session.generations
        assert generation.outcome == "accepted" and generation.accepted_text == done.text
        assert generation.model.path == str(random_model) and generation.sampler["temperature"] == 0.0
        assert generation.tokens is not None and len(generation.tokens) == done.completion_tokens
        assert [(s.start, s.end) for s in session.spans] == [(len(OPENING), len(text))]


async def test_a_generation_kept_whole_is_no_longer_held_live(random_model: Path, tmp_path: Path) -> None:
    """Once its whole text is in the draft nothing more can be recorded of it: the keeper
    lets it go (it stayed for as long as the app ran); one kept word by word stays live
    until its last word."""
    draft = tmp_path / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        done = await suggestion_after_opening(pilot)
        assert len(done.text.split()) > 1
        await pilot.press("ctrl+right")
        await pilot.pause()
        assert len(app.sessions._live) == 1  # words are left to accept
        await pilot.press("tab")
        await pilot.pause()
        assert app.sessions._live == {}
        (generation,) = saved_draft(draft).generations
        assert generation.outcome == "accepted" and generation.accepted_text == done.text


async def test_undoing_a_word_accepted_gives_it_back_to_the_suggestion(random_model: Path, tmp_path: Path) -> None:
    """ctrl+→ then ctrl+z: the rest of the suggestion was dropped, and alt+← could not bring
    it back. Now the suggestion is as it was before the word went in, and keeping it all
    then records the generation as kept whole (not the word twice)."""
    draft = tmp_path / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        done = await suggestion_after_opening(pilot)
        editor = app.main.draft.editor
        assert editor.ghost is not None and len(done.text.split()) > 1
        tokens = list(editor.ghost.tokens)
        await pilot.press("ctrl+right", "ctrl+z")
        await pilot.pause()
        ghost = editor.ghost
        assert editor.text == OPENING
        assert ghost is not None and ghost.text == done.text and ghost.tokens == tokens
        assert app.main.draft.suggestion.display
        await kept_whole(pilot, draft, OPENING, done)


async def test_a_reopened_draft_knows_the_tokens_of_its_generated_text(random_model: Path, tmp_path: Path) -> None:
    """Reopened, the accepted passage was plain text: ctrl+b asked for generated text and F8
    coloured nothing until F9 scored it. The session's records give its tokens back."""
    draft = tmp_path / "bozza.md"
    kept: list[Any] = []

    async def write() -> None:
        async with ready(random_model, draft=draft) as (app, pilot):
            await suggestion_after_opening(pilot)
            kept.extend(app.main.draft.editor.ghost.tokens)
            await pilot.press("tab", "ctrl+q")
            await pilot.pause()

    async def reopen() -> None:
        async with ready(random_model, draft=draft) as (app, pilot):
            editor = app.main.draft.editor
            assert editor.text.startswith(OPENING)
            (span,) = editor.spans.spans
            assert span.start == len(OPENING) and span.text == editor.text[len(OPENING) :]
            # As saved: the probabilities to the digits the session file keeps.
            assert [(t.start, t.text, t.id, t.p) for t in span.tokens] == [
                (t.start, t.text, t.id, recorded_p(t.p)) for t in kept
            ]
            assert [c.id for c in span.tokens[0].top] == [c.id for c in kept[0].top]
            editor.move_cursor(editor.document.get_location_from_index(len(OPENING) + 1))
            await pilot.press("ctrl+b")
            await pilot.pause()
            assert not any("Put the cursor on generated" in message for message in notifications(app))
            await pilot.press("escape")
            editor.move_cursor((0, 1))  # the author's own words: F9 gives them tokens
            await pilot.press("ctrl+b")
            await pilot.pause()
            assert any(
                message.startswith("Put the cursor on generated") and "f9 scores your own text" in message
                for message in notifications(app)
            ), notifications(app)

    await write()
    await reopen()


async def test_a_finished_generation_is_saved_before_the_next_can_start(random_model: Path, tmp_path: Path) -> None:
    """Its records are written as it ends, not after the autosave's pause, which would
    put the save inside the generation the author starts next (a re-roll)."""
    draft = tmp_path / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        done = await suggestion_after_opening(pilot)
        session = saved_draft(draft)
        assert session.text == OPENING
        (generation,) = session.generations
        assert generation.tokens is not None and len(generation.tokens) == done.completion_tokens


async def test_an_edit_waiting_for_its_save_is_saved_before_the_engine_starts(
    random_model: Path, tmp_path: Path
) -> None:
    """Typing, then asking for a suggestion at once: the autosave's pause would end inside
    the generation, taking llama.cpp's CPU; the edit is saved as the generation starts."""
    draft = tmp_path / "bozza.md"
    on_disk: list[str] = []

    def engine_started() -> None:
        on_disk.append(draft.read_text(encoding="utf-8") if draft.exists() else "")

    async with ready(random_model, draft=draft, loader=loader_calling(engine_started)) as (app, pilot):
        await typed(pilot, OPENING)
        await generated(pilot, "ctrl+g")
    assert on_disk == [OPENING]


async def test_a_word_then_a_rejection_is_partly_accepted(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        await suggestion_after_opening(pilot)
        await pilot.press("ctrl+right", "escape")
        await pilot.pause()
        word = app.main.draft.editor.text[len(OPENING) :]
        app.manuscript.save_everything()
        (generation,) = saved_draft(draft).generations
        assert generation.outcome == "partly_accepted" and generation.accepted_text == word


async def test_resume_reopens_the_last_session_and_quitting_saves(tmp_path: Path) -> None:
    async def first() -> None:
        app = make_app(None)  # an unnamed draft lives only in its session
        async with app.run_test() as pilot:
            await typed(pilot, "Senza nome, ma salvato")
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running

    async def second() -> None:
        app = make_app(None)
        app_resumed = type(app)(backend_loader=app.backend_loader, settings=app.settings, resume=True)
        async with app_resumed.run_test() as pilot:
            await pilot.pause()
            assert app_resumed.main.draft.editor.text == "Senza nome, ma salvato"

    await first()
    await second()


async def test_a_chat_is_recorded_turn_by_turn(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat") as (app, pilot):
        await typed(pilot, "Ciao!")
        done = await generated(pilot, "enter")
        app.manuscript.save_everything()
        chat = app.sessions.chat
        assert chat is not None
        saved = SessionStore().load(chat.id)
        assert isinstance(saved, ChatSession)
        assert [(t.role, t.content) for t in saved.turns] == [("user", "Ciao!"), ("assistant", done.text)]
        assert saved.generations[0].outcome == "accepted" and saved.turns[1].generation == "g1"


async def test_export_asks_before_overwriting(tmp_path: Path) -> None:
    draft = tmp_path / "racconto.md"
    exported = tmp_path / "racconto.export.md"

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await typed(pilot, "Prima versione")
        await pilot.press("f12")
        await pilot.pause()
        assert "Prima versione" in exported.read_text(encoding="utf-8")
        assert any(str(exported) in message for message in notifications(app))
        assert exported.read_text(encoding="utf-8").startswith("---\n")

        await typed(pilot, " e seconda")
        await pilot.press("f12")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # No: the file stays as it was
        assert "seconda" not in exported.read_text(encoding="utf-8")
        await pilot.press("f12")
        await pilot.press("y")
        await pilot.pause()
        assert "Prima versione e seconda" in exported.read_text(encoding="utf-8")


@pytest.mark.parametrize("content", [b"{ not json", b"[" * 200_000], ids=["not-json", "nested-200000-deep"])
async def test_a_damaged_session_file_is_moved_aside_and_the_app_works(tmp_path: Path, content: bytes) -> None:
    store = SessionStore()
    store.directory.mkdir(parents=True, exist_ok=True)
    damaged = store.directory / "2020-01-01-0000-rotto.json"
    damaged.write_bytes(content)

    app = make_app(None)
    async with app.run_test() as pilot:  # a plain start does not trip over it
        await pilot.pause()
        assert app.screen is app.main
    assert damaged.read_bytes() == content
    resumed = type(app)(backend_loader=app.backend_loader, settings=app.settings, resume=True)
    async with resumed.run_test() as pilot:
        await pilot.pause()
        assert any("damaged" in message and "moved aside" in message for message in notifications(resumed))
        await typed(pilot, "Si scrive lo stesso")
        assert resumed.manuscript.save_everything()
    assert not damaged.exists()
    assert [p for p in store.directory.iterdir() if ".corrupt-" in p.name]


async def test_quitting_while_tokens_stream_records_the_generation_as_stopped(
    random_model: Path, tmp_path: Path
) -> None:
    """It was saved unfinished: stop_reason null and no text, as if the process had died."""
    draft = tmp_path / "bozza.md"
    gate = Gate(after_tokens=3)

    async with ready(random_model, draft=draft, loader=gate.loader) as (app, pilot):
        await typed(pilot, OPENING)
        await pilot.press("ctrl+g")
        await gate.wait_reached()
        await pilot.pause()
        await pilot.press("ctrl+q")
        gate.release()
    [generation] = saved_draft(draft).generations
    assert generation.stop_reason == "cancelled" and generation.finished_at is not None
    # What had been drawn: tokens reach the screen in batches, so 1 to 3 of them.
    assert generation.tokens is not None and 1 <= len(generation.tokens) <= 3
    assert generation.text == "".join(token.text for token in generation.tokens) != ""
    assert generation.completion_tokens == len(generation.tokens)


async def test_a_background_save_that_fails_brings_the_unsaved_mark_back(tmp_path: Path) -> None:
    """Autosaves are written on a thread of their own: the draft was marked saved when the
    write began, and a write that then failed left it marked saved, with the one-time
    notification gone after a while and the text only on screen."""
    import shutil

    app = make_app(None)
    async with app.run_test() as pilot:
        await typed(pilot, "Prima")
        await autosaved(pilot)
        draft = app.main.draft
        assert not draft.modified
        directory = app.sessions.store.directory
        shutil.rmtree(directory)
        directory.write_text("not a folder any more", encoding="utf-8")  # every write there fails
        await typed(pilot, " e dopo")
        await autosaved(pilot)
        assert any(n.title == "Not saved" for n in app.notices)
        assert draft.modified
        directory.unlink()
        directory.mkdir()


async def test_resume_reopens_the_last_chat_with_its_turns(sentence_model: Path) -> None:
    """Shown at start, the resumed chat went through 'save what is on screen first', and the
    screen's empty conversation was matched onto it: every turn was taken back, its reply
    recorded as rejected, and the chat opened (and stayed, once saved) empty."""

    async def first() -> None:
        async with ready(sentence_model, mode="chat") as (app, pilot):
            await typed(pilot, "Ciao!")
            await generated(pilot, "enter")
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def second() -> list[dict[str, str]]:
        async with ready(sentence_model, resume=True) as (app, pilot):
            return list(app.main.chat.messages)

    await first()
    [chat] = [s for s in SessionStore().list() if s.kind == "chat"]
    before = SessionStore().load(chat.id)
    assert isinstance(before, ChatSession) and [t.role for t in before.turns] == ["user", "assistant"]
    shown: list[list[dict[str, str]]] = []

    async def resumed() -> None:
        shown.append(await second())

    await resumed()
    assert shown[0] == [{"role": t.role, "content": t.content} for t in before.turns]
    after = SessionStore().load(chat.id)
    assert isinstance(after, ChatSession) and after.turns == before.turns
    assert [g.outcome for g in after.generations] == [g.outcome for g in before.generations]
