"""Stopping a chat reply with the real engine held mid-generation: Esc keeps what was
written (from either mode), each version keeps its stopped mark, a reply abandoned by
opening another chat leaves nothing behind, and Esc while the conversation is fitted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tui_helpers import (
    Gate,
    generated,
    HeldCounts,
    loader_failing_after,
    make_app,
    model_ready,
    ready,
    typed,
    window_marked,
)

from scriptorium.app.tui.widgets.chat_reply import AssistantMessage
from scriptorium.inference.core.settings import preset

REPLY = " La casa era buia."  # what the sentence model says after any user turn


def held_app(model: Path, gate: Gate, *, mode: str = "chat", max_tokens: int = 200) -> Any:
    """An app whose model `gate` holds mid-generation, writing greedily up to `max_tokens`."""
    return make_app(model, mode=mode, loader=gate.loader, sampler=preset("greedy").with_changes(max_tokens=max_tokens))


async def start_held_reply(pilot: Pilot[Any], gate: Gate) -> None:
    """Send a message; return once the gate holds the model mid-reply."""
    await model_ready(pilot)
    await typed(pilot, "Ciao")
    await pilot.press("enter")
    await gate.wait_reached()


async def stopped_reply(pilot: Pilot[Any], gate: Gate) -> Any:
    """Send a message and stop its reply with Esc while `gate` holds it; the reply's GenerationDone."""
    await start_held_reply(pilot, gate)
    _, done = await gate.escape(pilot)
    return done


async def test_escape_stops_a_reply_and_keeps_it(random_model: Path) -> None:
    gate = Gate(after_tokens=3)
    app = held_app(random_model, gate)
    async with app.run_test() as pilot:
        done = await stopped_reply(pilot, gate)
        chat = app.main.chat
        assert done.stop_reason == "cancelled"
        reply = chat.transcript.query(AssistantMessage).last()
        assert reply.has_class("-stopped") and reply.source == done.text
        assert chat.messages[-1] == {"role": "assistant", "content": done.text}


@pytest.mark.parametrize("writing", ["chat", "draft"])
async def test_escape_in_the_other_mode_stops_the_model_as_the_refusal_says(random_model: Path, writing: str) -> None:
    """While the chat's reply streamed, the draft's ctrl+g said "press Esc to stop it first",
    and Esc in the draft did nothing (and the other way round): only the mode that started
    the generation could stop it."""

    gate = Gate(after_tokens=3)
    app = held_app(random_model, gate, mode=writing)
    async with app.run_test() as pilot:
        await model_ready(pilot)
        await typed(pilot, "Ciao")
        await pilot.press("enter" if writing == "chat" else "ctrl+g")
        await gate.wait_reached()
        await pilot.press("f2", *(("ctrl+g",) if writing == "chat" else ("O", "k", "enter")))
        assert any("press Esc to stop it first" in n.message for n in app.notices)
        _, done = await gate.escape(pilot)
        assert done.stop_reason == "cancelled"
        if writing == "chat":
            assert app.main.chat.messages[-1] == {"role": "assistant", "content": done.text}
        else:
            ghost = app.main.draft.editor.ghost
            assert ghost is not None and ghost.text == done.text


async def test_each_reply_version_keeps_its_stopped_mark(random_model: Path) -> None:
    """A reply stopped with Esc, then regenerated: going back to it with alt+← showed it
    as if it had ended by itself (the mark was dropped for every version shown). Once a new
    message followed, the versions were forgotten but the note under the reply still offered
    them ("version 1/2 · first · alt+← alt+→"), keys that no longer did anything."""

    gate = Gate(after_tokens=3)
    app = held_app(random_model, gate, max_tokens=20)
    async with app.run_test() as pilot:
        await stopped_reply(pilot, gate)
        await generated(pilot, "ctrl+r")
        reply = app.main.chat.transcript.query(AssistantMessage).last()
        assert not reply.has_class("-stopped") and "stopped" not in str(reply.border_subtitle)
        await pilot.press("alt+left")
        reply = app.main.chat.transcript.query(AssistantMessage).last()
        assert reply.has_class("-stopped") and str(reply.border_subtitle).startswith("version 1/2")
        assert str(reply.border_subtitle).endswith(" · stopped")
        await pilot.press("alt+right")
        assert not reply.has_class("-stopped") and "stopped" not in str(reply.border_subtitle)
        await pilot.press("alt+left")
        await typed(pilot, "E poi?")
        await generated(pilot, "enter")
        assert reply.border_subtitle == "stopped" and reply.has_class("-stopped")


async def test_a_reopened_chat_marks_the_replies_that_were_stopped(random_model: Path) -> None:
    """Reopened with --resume or from the sessions screen, a chat showed a reply stopped
    with Esc as if it had ended by itself, though the session records that it was stopped
    (and the live chat and the export both said so)."""
    from scriptorium.app.sessions import SessionStore

    async def first() -> None:
        gate = Gate(after_tokens=3)
        app = held_app(random_model, gate, max_tokens=20)
        async with app.run_test() as pilot:
            await stopped_reply(pilot, gate)
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def reopened() -> None:
        async with ready(
            random_model,
            resume=True,
            sampler=preset("greedy").with_changes(max_tokens=5),
        ) as (app, pilot):
            chat = app.main.chat
            reply = chat.transcript.query(AssistantMessage).last()
            assert reply.has_class("-stopped") and reply.border_subtitle == "stopped"
            await typed(pilot, "E poi?")
            await generated(pilot, "enter")  # the stopped reply is no longer the last one
            assert app.manuscript.save_everything() and app.sessions.chat is not None
            await app.show_session(SessionStore().load(app.sessions.chat.id))
            await pilot.pause()
            stopped, answer = chat.transcript.query(AssistantMessage)
            assert stopped.has_class("-stopped") and stopped.border_subtitle == "stopped"
            assert not answer.has_class("-stopped") and not answer.border_subtitle

    await first()
    await reopened()


async def test_a_failed_reply_stays_failed_as_the_last_one_again_and_reopened(random_model: Path) -> None:
    """A reply that failed midway became 'stopped' once it was the last reply again (↑ took
    back the turn after it), and showed nothing when the chat was reopened."""
    from scriptorium.app.sessions import SessionStore

    async with ready(
        random_model,
        mode="chat",
        loader=loader_failing_after(6),
        sampler=preset("greedy").with_changes(max_tokens=20),
    ) as (app, pilot):
        chat = app.main.chat
        for message in ("Ciao", "E poi?"):
            await typed(pilot, message)
            await pilot.press("enter")
            await app.main.wait_until_idle()
            await pilot.pause()
            assert chat.transcript.query(AssistantMessage).last().border_subtitle == "failed"
        await pilot.press("up")
        failed = chat.transcript.query(AssistantMessage).last()
        assert failed.has_class("-stopped") and failed.border_subtitle == "failed"
        await pilot.press("escape")  # both turns back, then reopened
        assert app.manuscript.save_everything() and app.sessions.chat is not None
        await app.show_session(SessionStore().load(app.sessions.chat.id))
        await pilot.pause()
        assert [reply.border_subtitle for reply in chat.transcript.query(AssistantMessage)] == ["failed", "failed"]


async def test_a_reply_after_opening_another_chat_mid_reply_holds_only_its_own_text(random_model: Path) -> None:
    """Opening another chat while a reply streamed left the pane's stream behind: the next
    reply's text began with the abandoned one's, which a reply failing midway then kept
    (on screen and in the session)."""
    from scriptorium.app.sessions import SessionStore
    from scriptorium.inference.core.errors import GenerationError

    gate = Gate(after_tokens=3)
    calls: list[int] = []

    def held_then_failing(*args: Any) -> Any:
        engine = gate.loader(*args)
        generate = engine.generate

        def first_held_then_failing(*args: Any, **kwargs: Any) -> Any:
            calls.append(1)
            for count, event in enumerate(generate(*args, **kwargs)):
                if len(calls) > 1 and count == 6:
                    raise GenerationError("llama-server closed the connection mid-generation")
                yield event

        engine.generate = first_held_then_failing
        return engine

    app = make_app(
        random_model, mode="chat", loader=held_then_failing, sampler=preset("greedy").with_changes(max_tokens=30)
    )
    async with app.run_test() as pilot:
        store = SessionStore()
        other = store.create_chat("Other")
        other.add_user_turn("Salve")
        store.save(other)
        await start_held_reply(pilot, gate)
        await app.show_session(store.load(other.id))
        gate.release()
        await app.main.wait_until_idle()
        await typed(pilot, "E poi")
        await pilot.press("enter")
        await app.main.wait_until_idle()
        await pilot.pause()
        chat = app.main.chat
        assert [m["role"] for m in chat.messages] == ["user", "user", "assistant"]
        reply = chat.transcript.query(AssistantMessage).last()
        assert reply.has_class("-stopped") and reply.source == chat.messages[-1]["content"]
        written = app.sessions.chat.generations[-1].text if app.sessions.chat else None
        assert chat.messages[-1]["content"] == written


async def test_the_message_cursor_stays_lit_while_a_reply_streams(random_model: Path) -> None:
    gate = Gate(after_tokens=3)
    app = held_app(random_model, gate)
    async with app.run_test() as pilot:
        field = app.main.chat.input
        assert field.cursor_blink
        await start_held_reply(pilot, gate)
        assert not field.cursor_blink
        await pilot.press("escape")
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        assert field.cursor_blink


async def test_escape_while_the_conversation_is_fitted_keeps_the_message_and_records_nothing(
    sentence_model: Path,
) -> None:
    """Fitting the conversation to the window counts tokens in the generation's worker (a
    server may be slow to answer): keys are taken meanwhile, Esc ends it at once, and the
    author's message stays, ready for ctrl+r."""
    counts = HeldCounts()

    try:
        async with ready(sentence_model, mode="chat", loader=counts.loader()) as (app, pilot):
            await window_marked(pilot)  # the draft's marker counts after the load: not the count held here
            counts.hold()
            await typed(pilot, "Ciao")
            await pilot.press("enter")
            await counts.wait_counting()
            chat = app.main.chat
            assert app.main.is_generating
            await typed(pilot, "Come va?")
            assert chat.input.value == "Come va?"
            await pilot.press("escape")
            assert not app.main.is_generating
            assert chat.messages == [{"role": "user", "content": "Ciao"}]
            assert not list(chat.transcript.query(AssistantMessage))
            counts.release()
            await app.workers.wait_for_complete()
            await pilot.pause()
            session = app.sessions.chat
            assert session is not None and session.generations == []
            done = await generated(pilot, "ctrl+r")
            assert done.text == REPLY
            assert [m["role"] for m in chat.messages] == ["user", "assistant"]
    finally:
        counts.release()
