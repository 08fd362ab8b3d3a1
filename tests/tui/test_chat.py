"""Chat mode with the real engine: send, stream, regenerate, edit and resend, stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tui_helpers import (Gate, HeldCounts, generated, loader_wrapping, make_app, model_ready, run, saved_chat,
                         spying_loader)

from scriptorium import prompts
from scriptorium.app.tui.widgets.chat_pane import UserMessage
from scriptorium.app.tui.widgets.chat_reply import AssistantMessage
from scriptorium.inference.settings import preset

REPLY = " La casa era buia."  # what the sentence model says after any user turn


def test_send_streams_a_reply_into_the_transcript(sentence_model: Path) -> None:
    async def scenario() -> None:
        load, spies = spying_loader()
        app = make_app(sentence_model, mode="chat", loader=load)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            assert app.focused is app.main.chat.input
            done = await generated(pilot, *"Ciao, come va?", "enter")
            chat = app.main.chat
            assert done.text == REPLY and done.stop_reason == "eos"
            assert chat.messages == [{"role": "user", "content": "Ciao, come va?"},
                                     {"role": "assistant", "content": REPLY}]
            users = list(chat.transcript.query(UserMessage))
            replies = list(chat.transcript.query(AssistantMessage))
            assert [str(u.render()) for u in users] == ["Ciao, come va?"]
            assert [r.source for r in replies] == [REPLY]
            assert chat.input.value == ""
            call = spies[0].last
            assert call["special"] is True  # the template writes control tokens
            engine = app.backend
            assert engine is not None
            system = prompts.load(prompts.CHAT_SYSTEM).strip()
            assert call["prompt"] == engine.chat_prompt(
                [{"role": "system", "content": system}, {"role": "user", "content": "Ciao, come va?"}])

    run(scenario)


def test_regenerate_replaces_the_last_reply(sentence_model: Path) -> None:
    async def scenario() -> None:
        load, spies = spying_loader()
        app = make_app(sentence_model, mode="chat", loader=load)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await generated(pilot, *"Ciao", "enter")
            again = await generated(pilot, "ctrl+r")
            chat = app.main.chat
            assert len(spies[0].calls) == 2 and spies[0].calls[0]["prompt"] == spies[0].calls[1]["prompt"]
            assert again.reused_tokens > 0  # the conversation's prefix stayed in the KV cache
            assert [m["role"] for m in chat.messages] == ["user", "assistant"]
            assert len(chat.transcript.query(AssistantMessage)) == 1

    run(scenario)


def failing_once(generate: Any) -> Any:
    """`generate`, whose first call fails as a server gone away does: asked again, it answers."""
    from scriptorium.inference.errors import GenerationError

    calls = []

    def first_fails(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            raise GenerationError("the server went away")
        return generate(*args, **kwargs)
    return first_fails


def test_regenerate_asks_again_for_a_reply_that_failed(sentence_model: Path) -> None:
    async def scenario() -> None:
        app = make_app(sentence_model, mode="chat", loader=loader_wrapping("generate", failing_once))
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*"Ciao", "enter")
            await app.main.wait_until_idle()
            chat = app.main.chat
            assert [m["role"] for m in chat.messages] == ["user"]
            done = await generated(pilot, "ctrl+r")
            assert done.text == REPLY
            assert [m["role"] for m in chat.messages] == ["user", "assistant"]

    run(scenario)


def test_a_message_after_one_whose_reply_failed_is_answered_on_a_strict_template(gguf_dir: Path) -> None:
    """The message whose reply failed stays; sending another instead of ctrl+r made two user
    turns in a row, which a template wanting alternating roles refused, for every message
    after it: the chat was stuck."""
    from gguf_models import STRICT_CHAT_TEMPLATE, write_llama_model

    model = write_llama_model(gguf_dir / "strict-sentence.gguf", kind="sentence", chat_template=STRICT_CHAT_TEMPLATE)

    async def scenario() -> None:
        load, spies = spying_loader()
        app = make_app(model, mode="chat", loader=lambda *args: failing_once_engine(load(*args)))
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*"Ciao", "enter")
            await app.main.wait_until_idle()
            done = await generated(pilot, *"Ci sei?", "enter")
            assert done.text == REPLY
            assert "user: Ciao\n\nCi sei?\nassistant:" in spies[0].last["prompt"]

    run(scenario)


def failing_once_engine(engine: Any) -> Any:
    engine.generate = failing_once(engine.generate)
    return engine


def test_edit_and_resend_the_last_message(sentence_model: Path) -> None:
    async def scenario() -> None:
        load, spies = spying_loader()
        app = make_app(sentence_model, mode="chat", loader=load)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await generated(pilot, *"Ciao", "enter")
            await pilot.press("up")
            chat = app.main.chat
            assert chat.input.value == "Ciao" and chat.messages == []
            assert len(chat.transcript.query(".message")) == 0
            await generated(pilot, *" a tutti", "enter")
            assert chat.messages[0] == {"role": "user", "content": "Ciao a tutti"}
            assert "Ciao a tutti" in spies[0].last["prompt"] and len(chat.messages) == 2

    run(scenario)


def test_a_message_taken_back_by_a_stray_up_key_is_put_back_with_its_reply(sentence_model: Path) -> None:
    """↑ in the empty message field (pressed to scroll back, say) took the last message and
    its reply off the conversation, with no way to bring the reply back; the session was
    saved without them until the message was sent again."""
    from textual.widgets import Footer

    async def scenario() -> None:
        app = make_app(sentence_model, mode="chat")
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await generated(pilot, *"Ciao", "enter")
            chat = app.main.chat
            conversation = list(chat.messages)
            await pilot.press("up")
            # Kept meanwhile: quitting now (the field is not saved) lost both.
            assert [t.content for t in saved_chat(app).turns] == [m["content"] for m in conversation]
            footer = app.main.query_one(Footer)
            assert "Put back" in [key.description for key in footer.query("FooterKey")]
            await pilot.press("!", "escape")  # changed: Esc does not put back a message it would lose
            assert chat.input.value == "Ciao!" and chat.messages == []
            await pilot.pause()  # and the footer no longer offers it
            assert "Put back" not in [key.description for key in footer.query("FooterKey")]
            await pilot.press("backspace", "escape")
            assert chat.messages == conversation and chat.input.value == ""
            assert [type(m) for m in chat.transcript.query(".message")] == [UserMessage, AssistantMessage]
            assert chat.transcript.query(AssistantMessage).last().source == REPLY
            saved = saved_chat(app)
            assert [(t.role, t.content) for t in saved.turns] == [(m["role"], m["content"]) for m in conversation]
            await pilot.press("up")
            await generated(pilot, *" a tutti", "enter")  # sent: nothing is left to put back
            await pilot.press("escape")
            assert [m["content"] for m in chat.messages] == ["Ciao a tutti", REPLY]
            assert [t.content for t in saved_chat(app).turns] == ["Ciao a tutti", REPLY]

    run(scenario)


def test_a_model_without_a_chat_template_uses_the_fallback_and_stops_at_the_next_turn(random_model: Path) -> None:
    async def scenario() -> None:
        load, spies = spying_loader()
        app = make_app(random_model, mode="chat", loader=load)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await generated(pilot, *"Ciao", "enter")
            call = spies[0].last
            assert call["prompt"].endswith("Utente: Ciao\nAssistente:")
            assert "\nUtente:" in call["settings"].stop

    run(scenario)


def held_app(model: Path, gate: Gate, *, mode: str = "chat", max_tokens: int = 200) -> Any:
    """An app whose model `gate` holds mid-generation, writing greedily up to `max_tokens`."""
    return make_app(model, mode=mode, loader=gate.loader, sampler=preset("greedy").with_changes(max_tokens=max_tokens))


async def start_held_reply(pilot: Pilot[Any], gate: Gate) -> None:
    """Send a message; return once the gate holds the model mid-reply."""
    await model_ready(pilot)
    await pilot.press(*"Ciao", "enter")
    await gate.wait_reached()


def test_escape_stops_a_reply_and_keeps_it(random_model: Path) -> None:
    async def scenario() -> None:
        gate = Gate(after_tokens=3)
        app = held_app(random_model, gate)
        async with app.run_test() as pilot:
            await start_held_reply(pilot, gate)
            _, done = await gate.escape(pilot)
            chat = app.main.chat
            assert done.stop_reason == "cancelled"
            reply = chat.transcript.query(AssistantMessage).last()
            assert reply.has_class("-stopped") and reply.source == done.text
            assert chat.messages[-1] == {"role": "assistant", "content": done.text}

    run(scenario)


@pytest.mark.parametrize("writing", ["chat", "draft"])
def test_escape_in_the_other_mode_stops_the_model_as_the_refusal_says(random_model: Path, writing: str) -> None:
    """While the chat's reply streamed, the draft's ctrl+g said "press Esc to stop it first",
    and Esc in the draft did nothing (and the other way round): only the mode that started
    the generation could stop it."""
    async def scenario() -> None:
        gate = Gate(after_tokens=3)
        app = held_app(random_model, gate, mode=writing)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*"Ciao", "enter" if writing == "chat" else "ctrl+g")
            await gate.wait_reached()
            await pilot.press("f2", *(("ctrl+g",) if writing == "chat" else ("O", "k", "enter")))
            assert any("press Esc to stop it first" in n.message for n in app._notifications)
            _, done = await gate.escape(pilot)
            assert done.stop_reason == "cancelled"
            if writing == "chat":
                assert app.main.chat.messages[-1] == {"role": "assistant", "content": done.text}
            else:
                ghost = app.main.draft.editor.ghost
                assert ghost is not None and ghost.text == done.text

    run(scenario)


def test_each_reply_version_keeps_its_stopped_mark(random_model: Path) -> None:
    """A reply stopped with Esc, then regenerated: going back to it with alt+← showed it
    as if it had ended by itself (the mark was dropped for every version shown). Once a new
    message followed, the versions were forgotten but the note under the reply still offered
    them ("version 1/2 · first · alt+← alt+→"), keys that no longer did anything."""
    async def scenario() -> None:
        gate = Gate(after_tokens=3)
        app = held_app(random_model, gate, max_tokens=20)
        async with app.run_test() as pilot:
            await start_held_reply(pilot, gate)
            await gate.escape(pilot)
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
            await generated(pilot, *"E poi?", "enter")
            assert reply.border_subtitle == "stopped" and reply.has_class("-stopped")

    run(scenario)


def test_a_reply_after_opening_another_chat_mid_reply_holds_only_its_own_text(random_model: Path) -> None:
    """Opening another chat while a reply streamed left the pane's stream behind: the next
    reply's text began with the abandoned one's, which a reply failing midway then kept
    (on screen and in the session)."""
    from scriptorium.app.sessions import SessionStore
    from scriptorium.inference.errors import GenerationError

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

    async def scenario() -> None:
        app = make_app(random_model, mode="chat", loader=held_then_failing,
                       sampler=preset("greedy").with_changes(max_tokens=30))
        async with app.run_test() as pilot:
            store = SessionStore()
            other = store.create_chat("Other")
            other.add_user_turn("Salve")
            store.save(other)
            await start_held_reply(pilot, gate)
            await app.show_session(store.load(other.id))
            gate.release()
            await app.main.wait_until_idle()
            await pilot.press(*"E poi", "enter")
            await app.main.wait_until_idle()
            await pilot.pause()
            chat = app.main.chat
            assert [m["role"] for m in chat.messages] == ["user", "user", "assistant"]
            reply = chat.transcript.query(AssistantMessage).last()
            assert reply.has_class("-stopped") and reply.source == chat.messages[-1]["content"]
            written = app.sessions.chat.generations[-1].text if app.sessions.chat else None
            assert chat.messages[-1]["content"] == written

    run(scenario)


def test_the_message_cursor_stays_lit_while_a_reply_streams(random_model: Path) -> None:
    async def scenario() -> None:
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

    run(scenario)


def test_switching_modes_keeps_both(sentence_model: Path) -> None:
    async def scenario() -> None:
        app = make_app(sentence_model)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*"Bozza", "f2")
            assert app.main.mode == "chat" and app.focused is app.main.chat.input
            await generated(pilot, *"Ciao", "enter")
            await pilot.press("f2")
            assert app.main.mode == "draft" and app.main.draft.editor.text == "Bozza"

    run(scenario)


def test_escape_while_the_conversation_is_fitted_keeps_the_message_and_records_nothing(sentence_model: Path) -> None:
    """Fitting the conversation to the window counts tokens in the generation's worker (a
    server may be slow to answer): keys are taken meanwhile, Esc ends it at once, and the
    author's message stays, ready for ctrl+r."""
    counts = HeldCounts()

    async def scenario() -> None:
        app = make_app(sentence_model, mode="chat", loader=counts.loader())
        async with app.run_test() as pilot:
            await model_ready(pilot)
            counts.hold()
            await pilot.press(*"Ciao", "enter")
            await pilot.pause(0.2)
            chat = app.main.chat
            assert counts.counting.is_set() and app.main.is_generating
            await pilot.press(*"Come va?")
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

    try:
        run(scenario)
    finally:
        counts.release()


def test_one_message_left_out_is_said_in_the_singular(sentence_model: Path) -> None:
    """A message whose reply failed (the server went away) stays in the transcript without a
    reply; the next one, too long to go with it, leaves it out, and the notice says so of
    one message."""
    from tui_helpers import GREEDY

    words = " ".join(["parola"] * 120)

    async def scenario() -> None:
        # 256 tokens for the prompt (half the context): either message fits with the chat's
        # 69, not both.
        app = make_app(sentence_model, mode="chat", sampler=GREEDY.with_changes(max_tokens=400),
                       loader=loader_wrapping("generate", failing_once))
        async with app.run_test() as pilot:
            await model_ready(pilot)
            chat = app.main.chat
            chat.input.value = words
            await pilot.press("enter")
            await app.main.wait_until_idle()
            assert [m["role"] for m in chat.messages] == ["user"]
            chat.input.value = "Ciao " + words
            done = await generated(pilot, "enter")
            assert done.text == REPLY
            messages = [n.message for n in app._notifications]
            assert any(m.startswith("The oldest message no longer fits") for m in messages), messages
    run(scenario)


def test_a_reply_byte_that_is_no_text_is_the_replacement_character(byte_loop_model: Path) -> None:
    """With the byte ban lifted the byte-loop model replies <0xFF> <0xFF>...: the reply read
    "\\xff\\xff" and the conversation (sent back to the model, saved) held the escapes."""
    async def scenario() -> None:
        app = make_app(byte_loop_model, mode="chat", sampler=preset("greedy").with_changes(max_tokens=3, preset="greedy"))
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press("ctrl+t", "b", "escape")
            assert not app.bias.ban_byte_tokens
            await generated(pilot, *"Ciao", "enter")
            assert app.main.chat.messages[-1] == {"role": "assistant", "content": "\ufffd" * 3}
            session = app.sessions.chat
            assert session is not None and session.turns[-1].content == "\ufffd" * 3

    run(scenario)


def test_a_message_the_context_cannot_hold_goes_back_into_the_input(sentence_model: Path) -> None:
    """A message longer than the context leaves for the prompt was refused, and stayed in the
    transcript as a turn with no reply that ctrl+r refused again the same way (and the
    session saved it so)."""
    from scriptorium.app.sessions import ChatSession

    long_message = " ".join(["parola"] * 600)

    async def scenario() -> None:
        app = make_app(sentence_model, mode="chat")
        async with app.run_test() as pilot:
            await model_ready(pilot)
            done = await generated(pilot, *"Ciao", "enter")
            chat = app.main.chat
            chat.input.value = long_message
            app._notifications.clear()
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await app.main.wait_until_idle()
            await pilot.pause()
            [said] = app._notifications
            assert said.title == "Window" and "the last message take" in said.message
            assert chat.messages == [{"role": "user", "content": "Ciao"}, {"role": "assistant", "content": done.text}]
            assert chat.input.value == long_message and len(chat.transcript.query(".message")) == 2
            saved = saved_chat(app)
            assert isinstance(saved, ChatSession) and [t.content for t in saved.turns] == ["Ciao", done.text]

    run(scenario)


def test_the_saved_chat_and_its_export_say_the_system_prompt_the_model_was_given(sentence_model: Path) -> None:
    """The session never kept the system prompt a chat was asked with, so the export's
    "System prompt" section never appeared: a reader saw replies to instructions they
    could not see."""
    from scriptorium.app.sessions import ChatSession
    from scriptorium.app.sessions.export import render_markdown

    async def scenario() -> None:
        app = make_app(sentence_model, mode="chat")
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await generated(pilot, *"Ciao", "enter")
            saved = saved_chat(app)
            system = prompts.load(prompts.CHAT_SYSTEM).strip()
            assert isinstance(saved, ChatSession) and saved.system_prompt == system
            assert [t.content for t in saved.turns] == ["Ciao", REPLY]
            assert f"## System prompt\n\n{system}\n" in render_markdown(saved)

    run(scenario)
