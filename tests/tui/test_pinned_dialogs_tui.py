"""The memory and author's note dialogs (alt+e, alt+n) themselves: opened by a terminal's
Alt keys without typing the letter, a bad note depth refused in the dialog, no note in chat
(the memory steers there), what was typed kept on quitting, ctrl+a selecting all. What the
model is sent and the window are in test_window_tui.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import Input, TextArea

from tui_helpers import make_app, ready, typed, write_pinned

from scriptorium.app.sessions import SessionStore
from scriptorium.app.tui.screens.pinned_screen import PinnedScreen


async def test_alt_keys_from_a_terminal_open_the_dialogs_instead_of_typing(random_model: Path) -> None:
    """A terminal sends Alt+E as ESC e, which Textual reads as 'alt+e' carrying 'e' (Pilot's
    press carries no character): the editors must leave the letter to the bindings."""

    def alt(app: Any, letter: str) -> None:
        key = events.Key(f"alt+{letter}", letter)
        key.set_sender(app)
        app.post_message(key)

    async with ready(random_model) as (app, pilot):
        await typed(pilot, "Una casa.")
        for letter in "en":
            alt(app, letter)
            await pilot.pause()
            assert isinstance(app.screen, PinnedScreen)
            await pilot.press("escape")
            await pilot.pause()
        assert app.main.draft.editor.text == "Una casa."
        await pilot.press("f2")
        await typed(pilot, "Ciao")
        alt(app, "e")
        await pilot.pause()
        assert isinstance(app.screen, PinnedScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.chat.input.value == "Ciao"


async def test_a_bad_note_depth_is_refused_in_the_dialog(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        await write_pinned(pilot, "alt+n", "[Nota]", depth="500")
        assert isinstance(app.screen, PinnedScreen)  # still open, the author told why
        await pilot.press("escape")
        assert app.sessions.pinned("draft").note == ""


async def test_in_chat_the_note_key_says_the_memory_steers_instead(random_model: Path) -> None:
    """A chat prompt holds the system prompt with the memory, then the turns: no author's
    note. Keeping one there would be told 'the model sees it in every prompt', untrue."""

    async with ready(random_model, mode="chat", size=(160, 50)) as (app, pilot):
        await pilot.press("alt+n")
        await pilot.pause()
        assert not isinstance(app.screen, PinnedScreen)
        assert any("memory" in n.message and "draft" in n.message for n in app.notices)
        await pilot.press("alt+e")  # the memory is still edited in chat
        await pilot.pause()
        assert isinstance(app.screen, PinnedScreen) and app.screen.which == "memory"


async def test_quitting_with_the_memory_or_note_open_keeps_what_was_typed(tmp_path: Path) -> None:
    """ctrl+q with the memory dialog open quit at once and the synopsis typed there was gone
    (the session saved the memory as it was before): the author's text, lost. Esc is the
    way to leave it unchanged; quitting keeps it, as it keeps the draft."""
    draft = tmp_path / "bozza.md"

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await typed(pilot, "Una casa sul fiume.")
        await write_pinned(pilot, "alt+n", "[Tono cupo.]")
        await pilot.press("alt+e")
        await pilot.pause()
        assert isinstance(app.screen, PinnedScreen)
        app.screen.query_one("#pinned-text", TextArea).text = "Sinossi: la nonna, Marco e Lucia, il mulino."
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
    session = SessionStore().load(SessionStore().list()[0].id)
    assert session.memory == "Sinossi: la nonna, Marco e Lucia, il mulino."
    assert session.note == "[Tono cupo.]" and session.text == "Una casa sul fiume."


async def test_ctrl_a_selects_all_in_the_memory_and_note_dialogs() -> None:
    """ctrl+a went to the line's start (the text field's default) where authors rewriting a
    memory expect select-all."""

    app = make_app(None)
    async with app.run_test(size=(160, 50)) as pilot:
        await write_pinned(pilot, "alt+e", "Il gatto si chiama Nero.\nVive sul tetto.")
        await pilot.press("alt+e")
        await pilot.pause()
        await pilot.press("ctrl+a")
        await typed(pilot, "Nero è un cane.")
        assert app.screen.query_one("#pinned-text", TextArea).text == "Nero è un cane."
        await pilot.press("tab", "ctrl+a", "escape")  # from the button: nothing to select, nothing breaks
        await pilot.pause()
        await pilot.press("alt+n")
        await pilot.pause()
        app.screen.query_one("#pinned-depth", Input).focus()
        await pilot.pause()
        await pilot.press("ctrl+a", "4")
        assert app.screen.query_one("#pinned-depth", Input).value == "4"


async def test_the_note_depth_field_is_on_screen_beside_its_label() -> None:
    """The label took the whole row (`.dialog Label { width: 100% }`) and pushed the depth
    field out of the dialog: 'paragraphs before the end' with nothing to type into."""

    async def scenario(size: tuple[int, int]) -> None:
        app = make_app(None)
        async with app.run_test(size=size) as pilot:
            await pilot.press("alt+n")
            await pilot.pause()
            depth = app.screen.query_one("#pinned-depth", Input)
            dialog = app.screen.query_one("#pinned-dialog")
            region = depth.region
            assert region.width >= 5 and region.height >= 1, (size, region)
            assert dialog.region.contains_region(region), (size, region, dialog.region)
            assert app.screen.find_widget(depth) is not None
            assert depth in [app.screen.get_widget_at(region.x + 2, region.y + 1)[0]]

    for size in ((80, 24), (120, 40), (200, 50)):
        await scenario(size)
