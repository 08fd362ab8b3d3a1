"""The engine's child stopped (SIGSTOP) while idle, then asked to write: the app takes it
back (it ends the child and loads the model again), as it does for one stopped mid-stream."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from tui_helpers import generated, model_ready, ready, typed, until

from scriptorium.inference.process.isolated import IsolatedBackend

OPENING = "C'era una volta"


async def test_an_engine_stopped_while_idle_is_taken_back_at_the_next_request(
    random_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGSTOP the idle engine, ctrl+g, Esc: the status counted the model's silence, Esc went
    back to idle without a word, the worker stayed blocked on the stopped child and the next
    ctrl+g waited behind it. The request's silence now ends the child, and the model loads again."""
    from scriptorium.inference.process import isolated as isolated_module

    monkeypatch.setattr(isolated_module, "REPLY_WAIT_S", 1.0, raising=False)

    async with ready(random_model, loader=IsolatedBackend.load) as (app, pilot):
        first = app.engine_state.backend
        assert isinstance(first, IsolatedBackend)
        await typed(pilot, OPENING)
        os.kill(first.pid, signal.SIGSTOP)
        try:
            await pilot.press("ctrl+g")
            await pilot.pause(0.2)
            await pilot.press("escape")
            await until(
                pilot,
                lambda: app.engine_state.backend is not None and app.engine_state.backend is not first,
                "the model loaded again",
            )
            await model_ready(pilot)
        finally:
            if first._process.process.poll() is None:
                os.kill(first.pid, signal.SIGKILL)
        assert first._process.process.poll() == -signal.SIGKILL
        assert app.engine_state.model_status.state == "ready"
        said = "\n".join(n.message for n in app.notices)  # the generation, stopped, said nothing: the app says why
        assert "the model's engine did not answer within 1 s, so it was ended" in said
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens == 12 and app.main.draft.editor.text == OPENING
