"""SVG snapshots of text coloured by probability (issue 6), draft and chat.

Deterministic on any CPU: greedy sampling on generated models whose every choice wins by a
wide margin (no float32 rounding changes a word or a colour), a fixed clock for the speed panel.
Update with `pytest tests/tui/test_token_snapshots.py --snapshot-update`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from tui_helpers import fixed_clock_loader, make_app, model_ready, saved


async def coloured_draft(pilot: Pilot[Any]) -> None:
    await model_ready(pilot)
    app = pilot.app
    app.main.draft.editor.cursor_blink = False
    await pilot.press(*"C'era una volta una casa sul lago.", "ctrl+g")
    await app.main.wait_until_idle()
    # Accept it, ask for more: coloured text in the draft and in the suggestion.
    await pilot.press("tab", "ctrl+g")
    await app.main.wait_until_idle()
    await pilot.press("f8", "f4", "left")
    await saved(pilot)


async def coloured_chat(pilot: Pilot[Any]) -> None:
    await model_ready(pilot)
    app = pilot.app
    app.main.chat.input.cursor_blink = False
    await pilot.press(*"Ciao! Com'è la casa?", "enter")
    await app.main.wait_until_idle()
    await pilot.press("f8")
    await saved(pilot)


def test_draft_coloured_by_probability(snap_compare: Any, phrases_model: Path) -> None:
    app = make_app(phrases_model, loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=(100, 30), run_before=coloured_draft)


def test_chat_coloured_by_probability(snap_compare: Any, sentence_model: Path) -> None:
    app = make_app(sentence_model, mode="chat", loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=(100, 30), run_before=coloured_chat)
