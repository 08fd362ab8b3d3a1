"""What a session records beyond the text: the model a reopened session last ran on,
and a generation that failed midway."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import (
    copy_of,
    generated,
    GREEDY,
    loader_failing_after,
    make_app,
    notifications,
    ready,
    session_written_with,
    typed,
    write_pinned,
)


async def test_resuming_a_session_written_with_another_model_says_so(random_model: Path, sentence_model: Path) -> None:
    """A model given with the session (--model) is the one loaded: the author is told which one the session ran on."""

    async def resume_with(model: Path, told: bool) -> None:
        async with ready(model, resume=True) as (resumed, pilot):
            said = [message for message in notifications(resumed) if "last written with" in message]
            assert bool(said) == told
            if told:
                assert str(random_model) in said[0] and said[0].endswith("to switch.")
            await pilot.press("ctrl+q")
            await pilot.pause()

    await session_written_with(random_model)
    await resume_with(random_model, told=False)
    await resume_with(sentence_model, told=True)


async def test_a_generation_that_fails_midway_is_recorded_as_failed(random_model: Path) -> None:
    async with ready(random_model, loader=loader_failing_after(6)) as (app, pilot):
        await typed(pilot, "Era notte")
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()
        await pilot.pause()
        session = app.sessions.draft
        assert session is not None
        generation = session.generations[-1]
        ghost = app.main.draft.editor.ghost
        assert generation.stop_reason == "error" and generation.finished_at is not None
        assert ghost is not None and generation.text == ghost.text != ""
        await pilot.press("tab")  # what the author saw can still be kept
        assert generation.outcome == "accepted"


async def test_opening_another_session_mid_stream_keeps_the_generation_as_stopped(random_model: Path) -> None:
    """A generation still streaming when the author opens another session belongs to the
    session going away: it is saved there as stopped, with the text it had, and what it
    sends after is not recorded anywhere."""
    from tui_helpers import Gate

    from scriptorium.app.sessions import SessionStore

    gate = Gate(after_tokens=3)

    try:
        async with ready(random_model, loader=gate.loader) as (app, pilot):
            await typed(pilot, "Era notte")
            await pilot.press("ctrl+g")
            await gate.wait_reached()
            await pilot.pause(0.3)
            first = app.sessions.draft
            assert first is not None
            other = SessionStore().create_draft("Altro", "Un'altra storia.")
            await app.show_session(other)
            gate.release()
            while any(worker.is_running for worker in app.workers):
                await pilot.pause(0.05)
            await pilot.pause()
            saved = SessionStore().load(first.id)
            generation = saved.generations[-1]
            assert generation.finished_at is not None and generation.stop_reason == "cancelled"
            assert 1 <= len(generation.tokens or []) <= 3 and generation.text
            assert app.sessions.draft is not None and app.sessions.draft.id == other.id
            assert app.sessions.draft.generations == []
    finally:
        gate.release()


async def test_the_version_kept_is_credited_to_the_generation_that_wrote_it(random_model: Path) -> None:
    """A re-roll keeps the text it replaces as a version. Going back to it and keeping it
    credited the re-roll (the suggestion's newest generation) with the first's text, so
    the session and the export named the wrong seed and settings."""

    async with ready(random_model) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        await generated(pilot, "ctrl+r")
        await pilot.press("alt+left", "tab")
        await pilot.pause()
        session = app.sessions.draft
        assert session is not None
        first, reroll = session.generations
        assert first.text and first.outcome == "accepted" and first.accepted_text == first.text
        assert reroll.outcome == "rejected" and reroll.accepted_text is None
        assert app.main.draft.editor.text == "Era notte" + first.text


async def test_redo_after_undo_gives_the_model_its_passage_back(random_model: Path) -> None:
    """Undo then redo replays edits the session and the token colours did not see: once a
    save came between the two, the redone suggestion was recorded as the author's text
    (the export no longer marked it) and its tokens had lost their numbers."""

    async with ready(random_model) as (app, pilot):
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        await pilot.press("tab")
        await pilot.pause()
        session, editor = app.sessions.draft, app.main.draft.editor
        assert session is not None
        kept = [(s.start, s.end) for s in session.spans]
        assert kept == [(9, 9 + len(done.text))] and len(editor.spans) == 1
        await pilot.press("ctrl+z")
        app.manuscript.save_everything()  # as the autosave does once typing pauses
        assert session.text == "Era notte" and session.spans == [] and len(editor.spans) == 0
        await pilot.press("ctrl+y")
        app.manuscript.save_everything()
        assert session.text == editor.text == "Era notte" + done.text
        assert [(s.start, s.end) for s in session.spans] == kept
        assert len(editor.spans) == 1 and editor.token_at_cursor() is not None


async def test_a_suggestion_an_edit_takes_away_is_recorded_as_rejected(random_model: Path) -> None:
    """Undo, or typing other words where the suggestion attaches, throws it away as Esc
    does, but only Esc said so: the session (and the export) kept it 'undecided' for good."""

    async with ready(random_model) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        await pilot.press("ctrl+z")  # the typing undone, and the suggestion with it
        await pilot.pause()
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        await pilot.press("backspace")  # an edit that reaches where it attaches
        await pilot.pause()
        session = app.sessions.draft
        assert session is not None and app.main.draft.editor.ghost is None
        assert [g.outcome for g in session.generations] == ["rejected", "rejected"]


async def test_a_models_crlf_line_breaks_are_the_editors_line_breaks(crlf_model: Path) -> None:
    """SmolLM2's vocabulary has "\\r\\n" tokens, as this model's newline. The editor turns
    "\\r\\n" into one line break, but the suggestion's tokens and the session counted two
    characters: after accepting, the colours and the passage credited to the model sat off
    by one a line."""

    async with ready(crlf_model) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        assert editor.ghost is not None and editor.ghost.text == " La casa." + "\n" * 9
        await pilot.press("tab")
        await pilot.pause()
        [span] = editor.spans.spans
        assert editor.text == "Era notte" + span.text
        session = app.sessions.draft
        assert session is not None and session.text == editor.text
        assert [(s.start, s.end) for s in session.spans] == [(9, len(editor.text))]
        assert session.generations[0].text == span.text


async def test_a_stop_string_ends_the_suggestion_on_a_crlf_model(crlf_model: Path) -> None:
    """The config's stop "\\n\\n" (a paragraph's end) never fired on a model whose newline
    token is "\\r\\n": the suggestion ran on to its length."""

    async with ready(crlf_model, sampler=GREEDY.with_changes(stop=("\n\n",))) as (app, pilot):
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        assert done.stop_reason == "stop" and app.main.draft.editor.ghost.text == " La casa."


async def test_resuming_a_session_whose_model_file_now_holds_another_model_says_so(
    random_model: Path, sentence_model: Path, tmp_path: Path
) -> None:
    """The author converted another model to the same path between two runs: the session
    was taken for written with the model loaded, because the path was the same."""
    model = copy_of(random_model, tmp_path)

    async def resume() -> None:
        async with ready(model, resume=True) as (resumed, pilot):
            said = [message for message in notifications(resumed) if "last written with" in message]
            assert len(said) == 1 and said[0].startswith(
                f"This session was last written with scriptorium-test-random "
                f"({model}); the model loaded is scriptorium-test-sentence"
            ), said

    await session_written_with(model)
    model.write_bytes(sentence_model.read_bytes())
    await resume()


async def test_a_chat_message_typed_but_not_sent_is_there_again_on_resume() -> None:
    """ctrl+q (or a closed terminal) with a message typed in the chat box, not yet sent:
    the author's words were gone when the session was opened again."""

    async def type_and_quit() -> None:
        app = make_app(None)
        async with app.run_test() as pilot:
            await pilot.press("f2")
            await typed(pilot, "Chi è Nero?")
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def resume() -> None:
        resumed = make_app(None, resume=True)
        async with resumed.run_test() as pilot:
            await pilot.pause()
            assert resumed.main.chat.input.value == "Chi è Nero?"
            await pilot.press("ctrl+q")
            await pilot.pause()

    await type_and_quit()
    await resume()


async def test_the_suggestions_beginning_typed_leaves_the_rest_credited_to_who_wrote_it(comma_stop_model: Path) -> None:
    """A note at depth 0: the suggestion is the note's paragraph break (the author's) then
    " La,." (the model's). Typing the break (Enter, Enter) consumed it from the suggestion,
    but who wrote what still counted from the old start: keeping the rest credited " L" to
    the break and the generation only with "a,." (partly kept)."""

    async with ready(comma_stop_model) as (app, pilot):
        await typed(pilot, "Il gatto dorme")
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="0")
        done = await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        assert done.text == " La,." and editor.ghost is not None and editor.ghost.text == "\n\n La,."
        await pilot.press("enter", "enter")
        assert editor.ghost is not None and editor.ghost.text == " La,."
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == "Il gatto dorme\n\n La,."
        session = app.sessions.draft
        assert session is not None
        (generation,) = session.generations
        assert generation.outcome == "accepted" and generation.accepted_text == done.text
