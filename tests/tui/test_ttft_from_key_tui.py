"""The Speed panel's time to first token is what the author waits for: from the key to the
first token on screen. It said "TTFT 8.1 ms", the engine's own figure, while the author had
waited about a second: the prompt was made and handed to the engine's process first."""

from __future__ import annotations

import time
from pathlib import Path

from tui_helpers import generated, loader_calling, ready, typed

from scriptorium.app.tui.widgets.formatting import format_ms

SLOW_START_S = 0.6
"""How long the engine takes before its first step, as a busy or remote engine may."""


async def test_the_speed_panel_times_the_first_token_from_the_key(random_model: Path) -> None:
    async with ready(
        random_model,
        loader=loader_calling(lambda: time.sleep(SLOW_START_S)),
        size=(120, 40),
    ) as (app, pilot):
        await typed(pilot, "Era")
        done = await generated(pilot, "ctrl+g")
        speed = app.main.sidebar.speed
        assert done.ttft_ms < SLOW_START_S * 1000  # the engine's clock starts after the wait
        assert speed.waited_ms is not None and speed.waited_ms >= SLOW_START_S * 1000
        shown = "\n".join(line.plain for line in speed.lines(40))
        assert "TTFT from key" in shown and format_ms(speed.waited_ms) in shown
