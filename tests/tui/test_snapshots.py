"""SVG snapshots of both modes, at 80x24 and at a large size (pytest-textual-snapshot).

Deterministic on any CPU: greedy sampling, the real engine on generated models whose
every choice wins by a wide margin (no float32 rounding changes a word or a percentage),
and its event times replaced by a fixed clock (FixedClockEngine) so the speed panel reads
the same on every run. Update with `pytest tests/tui/test_snapshots.py --snapshot-update`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_helpers import fixed_clock_loader, make_app, model_ready, saved, typed

from scriptorium.app.i18n.language import Language

# The Speed panel's "TTFT from key" on a fixed clock, as the engine's times are.
pytestmark = pytest.mark.usefixtures("fixed_key_clock")

SIZES = {"small": (80, 24), "large": (160, 48)}


async def continue_draft(pilot: Pilot[Any]) -> None:
    await model_ready(pilot)
    app = pilot.app
    app.main.draft.editor.cursor_blink = False
    # At once: typed key by key, the session was made (and titled by its first words) at the
    # autosave's first pause, with as many words as the machine had typed by then.
    app.main.draft.editor.insert("C'era una volta una casa sul lago.")
    await pilot.pause()
    await pilot.press("ctrl+g")
    await app.main.wait_until_idle()
    await saved(pilot)


async def chat_once(pilot: Pilot[Any]) -> None:
    await model_ready(pilot)
    app = pilot.app
    app.main.chat.input.cursor_blink = False
    await typed(pilot, "Ciao! Com'è la casa?")
    await pilot.press("enter")
    await app.main.wait_until_idle()
    await saved(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_draft_mode(snap_compare: Any, phrases_model: Path, size: str) -> None:
    app = make_app(phrases_model, loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=continue_draft)


@pytest.mark.parametrize("size", SIZES)
def test_chat_mode(snap_compare: Any, sentence_model: Path, size: str) -> None:
    app = make_app(sentence_model, mode="chat", loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=chat_once)


def test_draft_mode_in_italian(snap_compare: Any, phrases_model: Path) -> None:
    """[ui] language = "it": the footer, the panels, the status bar and the suggestion's box in
    Italian, the numbers written the Italian way ("2.048", "3.500,0 tok/s")."""
    app = make_app(phrases_model, loader=fixed_clock_loader, language=Language.load("it"))
    assert snap_compare(app, terminal_size=SIZES["large"], run_before=continue_draft)
