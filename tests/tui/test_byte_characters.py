"""A character the model writes in byte tokens (<0xC3> <0xA8> for "è", the byte ban
lifted) is one character to the author: the chance of all its bytes, each byte's own
step, and a branch there replaces the whole character. The utf8 model writes "è" over and
over after "casa", each byte by a margin of about 30 logits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tui_helpers import generated, ready, typed

from italian_vocab import byte_id
from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
from scriptorium.app.tui.session_tokens import spans_of
from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.settings import preset

GREEDY_FOUR = preset("greedy").with_changes(max_tokens=4, preset="greedy")
C3, A8 = byte_id(0xC3), byte_id(0xA8)


async def written_after_casa(pilot: Pilot[Any]) -> list[TokenEvent]:
    """With the byte ban lifted, what the model writes after "La casa": its tokens."""
    await pilot.press("ctrl+t", "b", "escape")
    await typed(pilot, "La casa")
    await generated(pilot, "ctrl+g")
    return pilot.app.main.last_generation[1]


def panel_text(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in app.main.sidebar.probabilities.lines(60))


async def test_a_generated_character_in_byte_tokens_shows_the_chance_of_all_its_bytes_and_each_step(
    utf8_model: Path,
) -> None:
    """The token cursor on the second "è" showed <0xA8>'s numbers alone: how probable that
    byte was once <0xC3> was written, with candidates for the middle of a character."""

    async with ready(utf8_model, sampler=GREEDY_FOUR, size=(120, 40)) as (app, pilot):
        events = await written_after_casa(pilot)
        assert [e.id for e in events] == [C3, A8, C3, A8] and [e.text for e in events] == ["", "è", "", "è"]
        ghost = app.main.draft.editor.ghost
        assert ghost.text == "èè"
        assert [(r.start, r.text) for r in ghost.tokens] == [(0, "è"), (1, "è")]
        await pilot.press("f4")
        second = ghost.tokens[app.main.draft.inspection.inspected]
        assert second.start == 1 and second.id == C3 and second.top == events[2].top and second.index == 2
        assert second.p == events[2].p * events[3].p
        panel = app.main.sidebar.probabilities
        assert panel.event.p == second.p and panel.event.id == C3
        assert [(s.id, s.p, s.top, s.text) for s in panel.steps] == [
            (C3, events[2].p, events[2].top, "<0xC3>"),
            (A8, events[3].p, events[3].top, "<0xA8>"),
        ]
        assert panel.border_title == "Probabilities · tokens 3–4"
        shown = panel_text(app)
        assert "1/2 token 3: ▶ <0xC3>" in shown and "2/2 token 4: ▶ <0xA8>" in shown
        assert "chosen è" in shown


async def test_branching_at_a_character_in_byte_tokens_offers_the_alternatives_where_it_starts(
    utf8_model: Path,
) -> None:
    """ctrl+b on "è" listed what the model expected after <0xC3> (the middle of the
    character) as alternatives to the whole character."""

    async with ready(utf8_model, sampler=GREEDY_FOUR, size=(120, 40)) as (app, pilot):
        events = await written_after_casa(pilot)
        await pilot.press("f4", "ctrl+b")
        screen = app.screen
        assert isinstance(screen, AlternativesScreen)
        assert screen.record.id == C3 and screen.record.top == events[2].top and screen.record.text == "è"
        await pilot.press("escape")


async def test_an_accepted_character_in_byte_tokens_keeps_its_steps_in_the_draft_and_the_session(
    utf8_model: Path,
) -> None:
    """Accepted, and again from the session (a reopened draft), the cursor on "è" showed
    <0xA8>'s numbers: the session keeps each byte token, and they are joined again."""

    async with ready(utf8_model, sampler=GREEDY_FOUR, size=(120, 40)) as (app, pilot):
        events = await written_after_casa(pilot)
        await pilot.press("tab")
        await pilot.pause()
        editor = app.main.draft.editor
        assert editor.text == "La casaèè"
        editor.move_cursor((0, len("La casa")))
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        assert panel.event.id == C3 and panel.event.p == events[0].p * events[1].p
        assert [s.id for s in panel.steps] == [C3, A8]
        [span] = spans_of(app.sessions.draft)
        assert [(r.start, r.text, r.id) for r in span.tokens] == [(0, "è", C3), (1, "è", C3)]
        first = span.tokens[0]
        assert [(s.id, s.label) for s in first.steps] == [(C3, "<0xC3>"), (A8, "<0xA8>")]
        recorded = app.sessions.draft.generations[-1].tokens
        assert first.p == recorded[0].p * recorded[1].p and first.top == first.steps[0].top


async def test_a_character_left_open_at_the_end_leaves_no_token_behind(utf8_model: Path) -> None:
    """Cut after <0xC3>, the last "è" is never written: its byte waited for the rest as a
    token of no text, which the cursor stepped onto and a branch could start from."""

    async with ready(utf8_model, sampler=GREEDY_FOUR.with_changes(max_tokens=3), size=(120, 40)) as (app, pilot):
        await written_after_casa(pilot)
        ghost = app.main.draft.editor.ghost
        assert ghost.text == "è" and [(r.start, r.text) for r in ghost.tokens] == [(0, "è")]


async def test_a_chat_reply_in_byte_tokens_is_inspected_a_character_at_a_time(tmp_path: Path) -> None:
    """The chat keeps a reply's tokens as the draft does: F4 on "è" showed <0xA8> alone, and
    stepping went through a token of no text for each <0xC3>."""
    import gguf_models

    model = gguf_models.write_llama_model(
        tmp_path / "utf8-chat.gguf", kind="utf8_bytes", chat_template=gguf_models.SIMPLE_CHAT_TEMPLATE
    )

    async with ready(model, mode="chat", sampler=GREEDY_FOUR, size=(120, 40)) as (app, pilot):
        await pilot.press("ctrl+t", "b", "escape")
        await typed(pilot, "Ciao")
        await generated(pilot, "enter")
        _, events, _ = app.main.last_generation
        chat = app.main.chat
        assert chat.messages[-1] == {"role": "assistant", "content": "èè"}
        await pilot.press("f4")
        panel = app.main.sidebar.probabilities
        assert panel.event.id == C3 and panel.event.p == events[2].p * events[3].p
        assert [(s.id, s.text) for s in panel.steps] == [(C3, "<0xC3>"), (A8, "<0xA8>")]
        await pilot.press("left")
        assert panel.event.p == events[0].p * events[1].p and panel.border_title == "Probabilities · tokens 1–2"
