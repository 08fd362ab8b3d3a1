"""Chat mode with the real engine: send, stream, regenerate, edit and resend, take back and
put back, replies that failed and messages that do not fit. Stopping a reply is in
test_chat_stop.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_helpers import generated, loader_wrapping, ready, saved_chat, spying_loader, typed

from scriptorium import prompts
from scriptorium.app.tui.widgets.chat_pane import UserMessage
from scriptorium.app.tui.widgets.chat_reply import AssistantMessage
from scriptorium.inference.core.settings import preset

REPLY = " La casa era buia."  # what the sentence model says after any user turn


async def test_send_streams_a_reply_into_the_transcript(sentence_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(sentence_model, mode="chat", loader=load) as (app, pilot):
        assert app.focused is app.main.chat.input
        await typed(pilot, "Ciao, come va?")
        done = await generated(pilot, "enter")
        chat = app.main.chat
        assert done.text == REPLY and done.stop_reason == "eos"
        assert chat.messages == [
            {"role": "user", "content": "Ciao, come va?"},
            {"role": "assistant", "content": REPLY},
        ]
        users = list(chat.transcript.query(UserMessage))
        replies = list(chat.transcript.query(AssistantMessage))
        assert [str(u.render()) for u in users] == ["Ciao, come va?"]
        assert [r.source for r in replies] == [REPLY]
        assert chat.input.value == ""
        call = spies[0].last
        assert call["special"] is True  # the template writes control tokens
        engine = app.engine_state.backend
        assert engine is not None
        system = prompts.packaged_text(prompts.CHAT_SYSTEM).strip()
        assert call["prompt"] == engine.chat_prompt(
            [{"role": "system", "content": system}, {"role": "user", "content": "Ciao, come va?"}]
        )


async def test_regenerate_replaces_the_last_reply(sentence_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(sentence_model, mode="chat", loader=load) as (app, pilot):
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        again = await generated(pilot, "ctrl+r")
        chat = app.main.chat
        assert len(spies[0].calls) == 2 and spies[0].calls[0]["prompt"] == spies[0].calls[1]["prompt"]
        assert again.reused_tokens > 0  # the conversation's prefix stayed in the KV cache
        assert [m["role"] for m in chat.messages] == ["user", "assistant"]
        assert len(chat.transcript.query(AssistantMessage)) == 1


def failing_once(generate: Any) -> Any:
    """`generate`, whose first call fails as a server gone away does: asked again, it answers."""
    from scriptorium.inference.core.errors import GenerationError

    calls = []

    def first_fails(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            raise GenerationError("the server went away")
        return generate(*args, **kwargs)

    return first_fails


async def test_regenerate_asks_again_for_a_reply_that_failed(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat", loader=loader_wrapping("generate", failing_once)) as (app, pilot):
        await typed(pilot, "Ciao")
        await pilot.press("enter")
        await app.main.wait_until_idle()
        chat = app.main.chat
        assert [m["role"] for m in chat.messages] == ["user"]
        done = await generated(pilot, "ctrl+r")
        assert done.text == REPLY
        assert [m["role"] for m in chat.messages] == ["user", "assistant"]


async def test_a_message_after_one_whose_reply_failed_is_answered_on_a_strict_template(gguf_dir: Path) -> None:
    """The message whose reply failed stays; sending another instead of ctrl+r made two user
    turns in a row, which a template wanting alternating roles refused, for every message
    after it: the chat was stuck."""
    from gguf_models import STRICT_CHAT_TEMPLATE, write_llama_model

    model = write_llama_model(gguf_dir / "strict-sentence.gguf", kind="sentence", chat_template=STRICT_CHAT_TEMPLATE)

    load, spies = spying_loader()
    async with ready(model, mode="chat", loader=lambda *args: failing_once_engine(load(*args))) as (app, pilot):
        await typed(pilot, "Ciao")
        await pilot.press("enter")
        await app.main.wait_until_idle()
        await typed(pilot, "Ci sei?")
        done = await generated(pilot, "enter")
        assert done.text == REPLY
        assert "user: Ciao\n\nCi sei?\nassistant:" in spies[0].last["prompt"]


def failing_once_engine(engine: Any) -> Any:
    engine.generate = failing_once(engine.generate)
    return engine


async def test_edit_and_resend_the_last_message(sentence_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(sentence_model, mode="chat", loader=load) as (app, pilot):
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        await pilot.press("up")
        chat = app.main.chat
        assert chat.input.value == "Ciao" and chat.messages == []
        assert len(chat.transcript.query(".message")) == 0
        await typed(pilot, " a tutti")
        await generated(pilot, "enter")
        assert chat.messages[0] == {"role": "user", "content": "Ciao a tutti"}
        assert "Ciao a tutti" in spies[0].last["prompt"] and len(chat.messages) == 2


async def test_a_message_taken_back_by_a_stray_up_key_is_put_back_with_its_reply(sentence_model: Path) -> None:
    """↑ in the empty message field (pressed to scroll back, say) took the last message and
    its reply off the conversation, with no way to bring the reply back; the session was
    saved without them until the message was sent again."""
    from textual.widgets import Footer

    async with ready(sentence_model, mode="chat") as (app, pilot):
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
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
        await typed(pilot, " a tutti")
        await generated(pilot, "enter")  # sent: nothing is left to put back
        await pilot.press("escape")
        assert [m["content"] for m in chat.messages] == ["Ciao a tutti", REPLY]
        assert [t.content for t in saved_chat(app).turns] == ["Ciao a tutti", REPLY]


async def test_a_model_without_a_chat_template_uses_the_fallback_and_stops_at_the_next_turn(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, mode="chat", loader=load) as (app, pilot):
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        call = spies[0].last
        assert call["prompt"].endswith("Utente: Ciao\nAssistente:")
        assert "\nUtente:" in call["settings"].stop


async def test_switching_modes_keeps_both(sentence_model: Path) -> None:
    async with ready(sentence_model) as (app, pilot):
        await typed(pilot, "Bozza")
        await pilot.press("f2")
        assert app.main.mode == "chat" and app.focused is app.main.chat.input
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        await pilot.press("f2")
        assert app.main.mode == "draft" and app.main.draft.editor.text == "Bozza"


async def test_one_message_left_out_is_said_in_the_singular(sentence_model: Path) -> None:
    """A message whose reply failed (the server went away) stays in the transcript without a
    reply; the next one, too long to go with it, leaves it out, and the notice says so of
    one message."""
    from tui_helpers import GREEDY

    words = " ".join(["parola"] * 120)

    # 256 tokens for the prompt (half the context): either message fits with the chat's
    # 69, not both.
    async with ready(
        sentence_model,
        mode="chat",
        sampler=GREEDY.with_changes(max_tokens=400),
        loader=loader_wrapping("generate", failing_once),
    ) as (app, pilot):
        chat = app.main.chat
        chat.input.value = words
        await pilot.press("enter")
        await app.main.wait_until_idle()
        assert [m["role"] for m in chat.messages] == ["user"]
        chat.input.value = "Ciao " + words
        done = await generated(pilot, "enter")
        assert done.text == REPLY
        messages = [n.message for n in app.notices]
        assert any(m.startswith("The oldest message no longer fits") for m in messages), messages


async def test_a_reply_byte_that_is_no_text_is_the_replacement_character(byte_loop_model: Path) -> None:
    """With the byte ban lifted the byte-loop model replies <0xFF> <0xFF>...: the reply read
    "\\xff\\xff" and the conversation (sent back to the model, saved) held the escapes."""

    async with ready(
        byte_loop_model, mode="chat", sampler=preset("greedy").with_changes(max_tokens=3, preset="greedy")
    ) as (app, pilot):
        await pilot.press("ctrl+t", "b", "escape")
        assert not app.engine_state.bias.ban_byte_tokens
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        assert app.main.chat.messages[-1] == {"role": "assistant", "content": "\ufffd" * 3}
        session = app.sessions.chat
        assert session is not None and session.turns[-1].content == "\ufffd" * 3


async def test_a_message_the_context_cannot_hold_goes_back_into_the_input(sentence_model: Path) -> None:
    """A message longer than the context leaves for the prompt was refused, and stayed in the
    transcript as a turn with no reply that ctrl+r refused again the same way (and the
    session saved it so)."""
    from scriptorium.app.sessions import ChatSession

    long_message = " ".join(["parola"] * 600)

    async with ready(sentence_model, mode="chat") as (app, pilot):
        await typed(pilot, "Ciao")
        done = await generated(pilot, "enter")
        chat = app.main.chat
        chat.input.value = long_message
        app.notices.clear()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await app.main.wait_until_idle()
        await pilot.pause()
        [said] = app.notices
        assert said.title == "Window" and "the last message take" in said.message
        assert chat.messages == [{"role": "user", "content": "Ciao"}, {"role": "assistant", "content": done.text}]
        assert chat.input.value == long_message and len(chat.transcript.query(".message")) == 2
        saved = saved_chat(app)
        assert isinstance(saved, ChatSession) and [t.content for t in saved.turns] == ["Ciao", done.text]


async def test_the_saved_chat_and_its_export_say_the_system_prompt_the_model_was_given(sentence_model: Path) -> None:
    """The session never kept the system prompt a chat was asked with, so the export's
    "System prompt" section never appeared: a reader saw replies to instructions they
    could not see."""
    from scriptorium.app.sessions import ChatSession
    from scriptorium.app.sessions.export import render_markdown

    async with ready(sentence_model, mode="chat") as (app, pilot):
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        saved = saved_chat(app)
        system = prompts.packaged_text(prompts.CHAT_SYSTEM).strip()
        assert isinstance(saved, ChatSession) and saved.system_prompt == system
        assert [t.content for t in saved.turns] == ["Ciao", REPLY]
        assert f"## System prompt\n\n{system}\n" in render_markdown(saved)


async def test_a_chat_template_that_loops_for_ever_is_one_notification(
    gguf_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nested range(99999) loops in the GGUF's template ran in the app's own process at 100%
    CPU: Esc could not stop it and the app outlived ctrl+q. Rendered in its own process, it
    is stopped at the bound; the message goes back into the input, and the app goes on."""
    import gguf_models

    from scriptorium.inference.window import template_process

    monkeypatch.setattr(template_process, "RENDER_WAIT_S", 0.5)
    looping = "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}"
    model = gguf_models.write_llama_model(gguf_dir / "looping-chat.gguf", kind="sentence", chat_template=looping)

    async with ready(model, mode="chat") as (app, pilot):
        app.notices.clear()
        await typed(pilot, "Ciao")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await app.main.wait_until_idle()
        await pilot.pause()
        [said] = app.notices
        assert "the chat template did not finish within 0.5 s" in said.message
        assert app.main.chat.input.value == "Ciao" and app.main.chat.messages == []
