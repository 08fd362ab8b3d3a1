"""Leaving while the model writes: quitting, opening another screen, changing the model.

The generation worker posts its last messages after the author has moved on; whatever
screen they reach, the app must not raise (issue 10: `NoScreen` from a pane that had
left its screen), must exit cleanly, and must keep the draft on disk."""

from __future__ import annotations

import shutil
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList
from tui_helpers import Gate, GREEDY, model_ready, ready, typed

from scriptorium.app.tui.screens.model_picker import ModelPickerScreen
from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.app.tui.manuscript import session_keeper

LONG = GREEDY.with_changes(max_tokens=200, preset="greedy")
OPENING = "C'era una volta"


def writing(
    model: Path, draft: Path, gate: Gate, size: tuple[int, int] | None = None
) -> AbstractAsyncContextManager[tuple[ScriptoriumApp, Pilot[Any]]]:
    """ready() for an app whose generations stop at `gate` until it is released."""
    return ready(model, draft=draft, loader=gate.loader, sampler=LONG, size=size)


async def model_writing(pilot: Pilot[Any], gate: Gate) -> None:
    """Type OPENING, continue it, and return while the model is writing (held at the gate)."""
    await typed(pilot, OPENING)
    await pilot.press("ctrl+g")
    await gate.wait_reached()


async def test_quitting_while_the_model_writes(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "draft.md"
    gate = Gate(after_tokens=2)

    async with writing(random_model, draft, gate) as (app, pilot):
        await model_writing(pilot, gate)
        # The worker sends the rest of its tokens while the app is closing.
        gate.release()
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    assert draft.read_text(encoding="utf-8") == OPENING


@pytest.mark.parametrize("key", ["f1", "f5", "f10"])
async def test_another_screen_while_the_model_writes(random_model: Path, tmp_path: Path, key: str) -> None:
    draft = tmp_path / "draft.md"
    gate = Gate(after_tokens=2)

    async with writing(random_model, draft, gate) as (app, pilot):
        await model_writing(pilot, gate)
        await pilot.press(key)
        assert app.screen is not app.main
        gate.release()  # the tokens arrive while the other screen is on top
        await app.main.wait_until_idle()
        await pilot.pause()
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and not ghost.streaming and ghost.text
        await pilot.press("ctrl+q")  # from the other screen, the suggestion still waiting
    assert app.return_code == 0
    assert draft.read_text(encoding="utf-8") == OPENING


async def test_changing_the_model_while_it_writes(
    random_model: Path, sentence_model: Path, models_dir: Path, tmp_path: Path
) -> None:
    shutil.copy(sentence_model, models_dir / "frasi.gguf")
    draft = tmp_path / "draft.md"
    gate = Gate(after_tokens=2)

    async with writing(random_model, draft, gate, size=(120, 45)) as (app, pilot):
        await model_writing(pilot, gate)
        await pilot.press("f10")
        picker = app.screen
        assert isinstance(picker, ModelPickerScreen)
        # The picker's own discovery, not the generation held at the gate.
        for worker in [w for w in app.workers if w.node is picker]:
            await worker.wait()
        await pilot.pause()
        models = picker.query_one("#picker-models", OptionList)
        models.highlighted = next(
            i for i in range(models.option_count) if "frasi.gguf" in str(models.get_option_at_index(i).prompt)
        )
        await pilot.pause()
        await pilot.click("#load")
        gate.release()  # the old model's last tokens arrive while the new one loads
        await model_ready(pilot)
        await app.main.wait_until_idle()
        await pilot.pause()
        assert app.screen is app.main
        assert (
            app.engine_state.backend is not None
            and app.engine_state.backend.options.model_path == models_dir / "frasi.gguf"
        )
        assert app.main.draft.editor.text == OPENING
        # What the old model wrote stays as a finished suggestion: it said "writing…"
        # for good, with the streaming keys, when its stream's end was not drawn.
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and ghost.text and not ghost.streaming
        assert "writing" not in str(app.main.draft.suggestion.border_title)
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    assert draft.read_text(encoding="utf-8") == OPENING


async def test_an_autosave_as_the_app_closes_leaves_the_panes_alone(
    random_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The autosave timer (soon after a change) can fire while the app closes, after the
    panes have left their screen: it saves, and draws nothing."""
    draft = tmp_path / "draft.md"
    # The test makes the save itself: typing slower than the autosave's longest wait (a busy
    # machine) had saved it already, and the draft was no longer modified when it looked.
    monkeypatch.setattr(session_keeper, "AUTOSAVE_SECONDS", 3600.0)
    monkeypatch.setattr(session_keeper, "AUTOSAVE_LONGEST_SECONDS", 3600.0)

    async with ready(random_model, draft=draft) as (app, pilot):
        await typed(pilot, OPENING)
        assert app.main.draft.modified
    assert not app.main.draft.is_attached
    assert app.manuscript.save_everything()  # what the timer calls
    assert not app.main.draft.modified and not app.main.draft.streaming
    assert draft.read_text(encoding="utf-8") == OPENING
