"""SVG snapshots of text coloured by probability (issue 6), draft and chat.

Deterministic on any CPU: greedy sampling on generated models whose every choice wins by a
wide margin (no float32 rounding changes a word or a colour), a fixed clock for the speed panel.
Update with `pytest tests/tui/test_token_snapshots.py --snapshot-update`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_helpers import fixed_clock_loader, make_app, model_ready, saved, typed

# The Speed panel's "TTFT from key" on a fixed clock, as the engine's times are.
pytestmark = pytest.mark.usefixtures("fixed_key_clock")


async def coloured_draft(pilot: Pilot[Any]) -> None:
    await model_ready(pilot)
    app = pilot.app
    app.main.draft.editor.cursor_blink = False
    # At once: typed key by key, the session was titled by as many words as were typed at the autosave's first pause.
    app.main.draft.editor.insert("C'era una volta una casa sul lago.")
    await pilot.pause()
    await pilot.press("ctrl+g")
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
    await typed(pilot, "Ciao! Com'è la casa?")
    await pilot.press("enter")
    await app.main.wait_until_idle()
    await pilot.press("f8")
    await saved(pilot)


def test_draft_coloured_by_probability(snap_compare: Any, phrases_model: Path) -> None:
    app = make_app(phrases_model, loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=(100, 30), run_before=coloured_draft)


def test_chat_coloured_by_probability(snap_compare: Any, sentence_model: Path) -> None:
    app = make_app(sentence_model, mode="chat", loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=(100, 30), run_before=coloured_chat)
