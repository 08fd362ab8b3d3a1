"""Stopping keeps what the model wrote; rejecting is a deliberate second Esc, and undone.

Esc both stopped and rejected: pressed to stop just as a generation ended, it found
nothing to stop and threw the whole suggestion away. Typing where the model was writing
threw its text away unseen. Now a stop, by Esc or by typing, leaves a suggestion to
accept or reject, the second Esc rejects (the box says so first), and ctrl+z brings a
rejected suggestion back. The texts compared are what streamed, never particular words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_draft import LONG_GREEDY, OPENING, start_held_generation
from textual.widgets import Footer
from tui_helpers import drawn_border, Gate, generated, make_app, ready, typed


def said(app: Any) -> list[str]:
    return [n.message for n in app.notices]


def footer_keys(app: Any) -> list[str]:
    return [key.description for key in app.main.query_one(Footer).query("FooterKey")]


async def test_an_esc_that_comes_as_the_model_finishes_keeps_the_suggestion(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")  # finished before the Esc meant to stop it
        editor, view = app.main.draft.editor, app.main.draft.suggestion
        assert "esc twice: reject" in drawn_border(view, bottom=True) and "Reject…" in footer_keys(app)
        await pilot.press("escape")
        await pilot.pause()
        assert editor.ghost is not None and editor.ghost.text == done.text and view.display
        assert "esc again: reject" in drawn_border(view, bottom=True)
        assert "Reject" in footer_keys(app) and "Reject…" not in footer_keys(app)
        assert any("esc again throws the suggestion away" in m for m in said(app))
        await pilot.press("escape")  # the deliberate second one
        assert editor.ghost is None and editor.text == OPENING
        assert any("^z brings it back" in m for m in said(app))
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert editor.ghost is not None and editor.ghost.text == done.text and editor.text == OPENING
        # Brought back, it asks again before going: one Esc keeps it.
        await pilot.press("escape")
        assert editor.ghost is not None
        # Once the draft is edited, ctrl+z undoes the edit, as ever (with the opening's typing,
        # when the editor took both for one batch: it groups keys typed within a second).
        await pilot.press("escape", "x", "ctrl+z")
        assert editor.ghost is None and editor.text in (OPENING, "")


async def test_esc_while_the_model_writes_stops_it_and_the_next_esc_rejects(random_model: Path) -> None:
    gate = Gate(after_tokens=3)

    try:
        app = make_app(random_model, loader=gate.loader, sampler=LONG_GREEDY)
        async with app.run_test(size=(120, 40)) as pilot:
            await start_held_generation(pilot, gate)
            tokens, done = await gate.escape(pilot)
            editor = app.main.draft.editor
            ghost = editor.ghost
            assert done.stop_reason == "cancelled" and tokens
            assert ghost is not None and not ghost.streaming
            assert ghost.text == "".join(t.text for t in tokens) + done.tail_text  # all that streamed
            assert "esc again: reject" in drawn_border(app.main.draft.suggestion, bottom=True)
            await pilot.press("escape")
            assert editor.ghost is None and editor.text == OPENING
            await pilot.press("ctrl+z")
            assert editor.ghost is ghost and editor.text == OPENING
    finally:
        gate.release()


async def test_typing_while_the_model_writes_stops_it_and_keeps_what_it_wrote(random_model: Path) -> None:
    gate = Gate(after_tokens=3)

    try:
        app = make_app(random_model, loader=gate.loader, sampler=LONG_GREEDY)
        async with app.run_test(size=(120, 40)) as pilot:
            await start_held_generation(pilot, gate)
            editor = app.main.draft.editor
            # Where the model was writing (the end of the draft), a key its text does not start
            # with: one that it does is typed through (taken from the suggestion, as ever).
            written = editor.ghost.text
            other = ("x" if not written.startswith("x") else "y") + "e poi"
            await typed(pilot, other)
            gate.release()
            await app.main.wait_until_idle()
            await pilot.pause()
            _, tokens, done = app.main.last_generation
            ghost = editor.ghost
            assert done.stop_reason == "cancelled"
            assert ghost is not None and not ghost.streaming and ghost.text
            assert ghost.text == "".join(t.text for t in tokens) + done.tail_text  # what streamed, kept
            assert editor.text == OPENING + other  # the keys went into the draft
            assert ghost.anchor == (0, len(OPENING))  # still continuing what it continued
            assert sum("Stopped: you typed" in m for m in said(app)) == 1
            kept = ghost.text
            await pilot.press("tab")  # in where it was written, before what was typed
            assert editor.ghost is None and editor.text == OPENING + kept + other
    finally:
        gate.release()
