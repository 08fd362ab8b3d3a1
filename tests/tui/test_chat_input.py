"""The chat's message field holds several lines: typed, pasted, sent, saved, taken back."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import drawn_lines, generated, make_app, ready, saved_chat, typed

from scriptorium.app.tui.widgets.chat_pane import UserMessage

POEM = "Meriggiare pallido e assorto\npresso un rovente muro d'orto"


async def test_a_new_line_typed_in_the_message_is_sent_and_shown_as_written(sentence_model: Path) -> None:
    """The field held one line: an author could not write a second one, and Enter sent."""

    async with ready(sentence_model, mode="chat") as (app, pilot):
        chat = app.main.chat
        first, second = POEM.split("\n")
        await typed(pilot, first)
        await pilot.press("ctrl+j")
        await typed(pilot, second)
        assert chat.input.value == POEM and chat.messages == []
        await generated(pilot, "enter")
        assert chat.messages[0] == {"role": "user", "content": POEM}
        assert [str(u.render()) for u in chat.transcript.query(UserMessage)] == [POEM]
        assert chat.input.value == ""


async def test_the_message_field_grows_with_its_lines_up_to_a_bound() -> None:
    app = make_app(None)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        field = app.main.chat.input
        one_line = field.outer_size.height
        field.value = POEM
        await pilot.pause()
        assert field.outer_size.height == one_line + 1
        field.value = "\n".join(["verso"] * 30)
        await pilot.pause()
        assert one_line + 1 < field.outer_size.height < 12  # then it scrolls


async def test_a_message_of_several_lines_is_taken_back_and_put_back_whole(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat") as (app, pilot):
        chat = app.main.chat
        chat.input.value = POEM
        await generated(pilot, "enter")
        conversation = list(chat.messages)
        await pilot.press("up")  # in the empty field: takes the message back
        assert chat.input.value == POEM and chat.messages == []
        await pilot.press("up")  # in the message: the cursor moves, nothing else
        assert chat.input.value == POEM and chat.input.cursor_location[0] == 0
        await pilot.press("escape")
        assert chat.messages == conversation and chat.input.value == ""


async def test_an_unsent_message_keeps_its_line_breaks_in_the_session(sentence_model: Path) -> None:
    async with ready(sentence_model, mode="chat") as (app, pilot):
        await pilot.press("a", "ctrl+j", "b")
        saved = saved_chat(app)
        assert saved.unsent == "a\nb"
        await app.main.show_chat([], saved.unsent)
        assert app.main.chat.input.value == "a\nb"


async def test_a_new_line_typed_quickly_lands_where_it_was_typed() -> None:
    """In a terminal the keys arrive together: the new line, bubbled up to the bindings,
    came after the letters typed after it ('uno' ^j 'due' was 'unodue' and a new line)."""
    from textual import events

    app = make_app(None)
    async with app.run_test() as pilot:
        await pilot.press("f2")
        await pilot.pause()
        for key, character in [("u", "u"), ("n", "n"), ("ctrl+j", "\n"), ("d", "d")]:
            app.post_message(events.Key(key, character))
        await pilot.pause()
        assert app.main.chat.input.value == "un\nd"


async def test_shift_and_alt_enter_start_a_new_line_where_the_terminal_tells_them_from_enter() -> None:
    """Not offered (under tmux, and in terminals without the kitty keyboard protocol, they
    arrive as Enter), but where they arrive as themselves they type the new line other
    chats use them for: alt+enter did nothing."""

    app = make_app(None)
    async with app.run_test() as pilot:
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("a", "shift+enter", "b", "alt+enter", "c")
        assert app.main.chat.input.value == "a\nb\nc"
        offered = [b.key for section in app.keys.sections for b in section.bindings if b.action == "new_line"]
        assert offered == ["ctrl+j"]  # F1, the palette and the keymap know only it


async def test_the_empty_fields_hint_shows_whole_on_a_narrow_terminal() -> None:
    """At 80 columns the hint was cut at the field's edge to "Enter sends, ^j": a key without
    what it does. It shows whole, shorter when it must, and whole again when wider."""

    app = make_app(None, mode="chat")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        field = app.main.chat.input
        assert drawn_lines(field)[0].strip() == "Message the model — Enter sends"
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert drawn_lines(field)[0].strip() == "Message the model — Enter sends, ^j starts a new line"
