"""The Model panel says which arithmetic the probabilities come from, as llama.cpp
reports it: the attention path, the KV-cache types, the threads."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tui_helpers import ready

from scriptorium.inference.local import flash_choice
from scriptorium.inference.local.engine import Engine


@pytest.mark.parametrize("flash_faster", [True, False])
async def test_the_model_panel_shows_the_measured_attention_path(
    random_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flash_faster: bool
) -> None:
    timing = flash_choice.FlashTiming(on_ms=1.0, off_ms=2.0) if flash_faster else flash_choice.FlashTiming(2.0, 1.0)
    monkeypatch.setattr(flash_choice, "time_decode_paths", lambda *a, **k: timing)

    async with ready(
        random_model,
        loader=partial(Engine.load, flash_cache=tmp_path / "flash.json"),
        prompt_threads=2,
        size=(160, 48),
    ) as (app, pilot):
        assert app.engine_state.backend is not None and app.engine_state.backend.arithmetic.flash_attn is flash_faster
        assert app.engine_state.model_status.arithmetic == app.engine_state.backend.arithmetic
        lines = [line.plain for line in app.main.sidebar.model.lines(60)]
        # Two lines, so that a narrow panel cuts neither the path nor the threads.
        expected = [f"flash attention {'on' if flash_faster else 'off'} · KV f16", "1 thread (2 for prompts)"]
        assert expected[0] in lines and lines[lines.index(expected[0]) + 1] == expected[1], lines
