"""Closing the terminal (SIGHUP) or `kill PID` (SIGTERM) quits as ctrl+q does: what was
typed since the last autosave is saved, and the app ends (giving the terminal back)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from tui_helpers import make_app, typed


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP or SIGTERM handlers on Windows")
@pytest.mark.parametrize("name", ["SIGHUP", "SIGTERM"])
async def test_a_closed_terminal_or_a_kill_saves_the_typing_and_quits(tmp_path: Path, name: str) -> None:
    """The process died on the spot: the last half second of typing was lost, and the
    terminal was left in the app's screen mode."""
    number = getattr(signal, name)
    draft = tmp_path / "bozza.md"
    unhandled: list[int] = []
    # Should the app not handle it, this catches it instead of the signal ending pytest.
    previous = signal.signal(number, lambda received, frame: unhandled.append(received))

    try:
        app = make_app(None, draft=draft)
        async with app.run_test() as pilot:
            await typed(pilot, "Ultime parole")
            os.kill(os.getpid(), number)
            await pilot.pause()
            await pilot.pause()
            assert not app.is_running
        assert draft.read_text(encoding="utf-8") == "Ultime parole"
    finally:
        signal.signal(number, previous)
    assert not unhandled


async def test_ctrl_q_right_at_start_quits_before_the_model_is_ready(random_model: Path, tmp_path: Path) -> None:
    """Keys pressed while the app starts count: ctrl+q before the model is ready quits, and
    the draft typed first is saved (the terminal's part: tests/cli/test_start_keys.py)."""
    import threading

    from scriptorium.inference.local.engine import Engine

    release = threading.Event()

    def slow_load(options, on_progress):  # type: ignore[no-untyped-def]
        release.wait(60)
        return Engine.load(options, on_progress)

    draft = tmp_path / "draft.md"

    app = make_app(random_model, draft=draft, loader=slow_load)
    try:
        async with app.run_test() as pilot:
            await typed(pilot, "Presto")
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert app.engine_state.backend is None  # still loading
            assert not app.is_running
    finally:
        release.set()
    assert draft.read_text(encoding="utf-8") == "Presto"
