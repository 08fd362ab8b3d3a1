"""On a busy machine the app says so: the Model panel shows the threads the engine chose
and why, and the Speed panel a decode far below this model's usual rate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tui_helpers import drawn_lines, generated, model_ready, ready, typed

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone
from scriptorium.inference.core.settings import preset
from scriptorium.inference.local.thread_choice import ThreadChooser

LONG = preset("greedy").with_changes(max_tokens=60, preset="greedy")
ONE_BUSY_PROCESS = {1: 21.0, 2: 8.6}
"""Gemma 3 270M's tok/s on the 2-core machine with one competing process (issue 33)."""


class BusyMachineTimes:
    """The decode chooser fed the times a busy 2-core machine gives, whatever this one does:
    the engine, the events, the app and the panel are real."""

    def __init__(self) -> None:
        self.chooser = ThreadChooser(2)

    def __getattr__(self, name: str) -> object:
        return getattr(self.chooser, name)

    def record(self, seconds: float, idle: float | None = None) -> bool:
        # This machine's idle cores are not the busy machine's: the chooser reads none.
        return self.chooser.record(1.0 / ONE_BUSY_PROCESS[self.chooser.threads])


def busy_loader(options: LoadOptions, on_progress=None) -> Engine:  # type: ignore[no-untyped-def]
    engine = Engine.load(options, on_progress)
    engine.threads.decode = BusyMachineTimes()  # type: ignore[assignment]
    return engine


async def test_the_model_panel_says_which_threads_and_why(random_model: Path) -> None:
    app = ScriptoriumApp(
        settings=TuiSettings(sampler=LONG),
        backend_loader=busy_loader,
        load_options=LoadOptions(model_path=random_model, n_ctx=512),
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await model_ready(pilot)
        panel = app.main.sidebar.model
        assert "auto: measuring" in " ".join(line.plain for line in panel.lines(34))
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        assert done.threads is not None and done.threads.n_threads == 1
        # Wrapped over two lines of the narrow side panel, not cut.
        shown = " ".join(drawn_lines(panel))
        assert "threads 1 of 2 (auto: 2 were slower while other work ran)" in " ".join(shown.split())
        assert (
            app.engine_state.model_status.arithmetic is not None
            and app.engine_state.model_status.arithmetic.n_threads == 1
        )
        last = app.sessions.last_generation()
        assert last is not None and last.arithmetic is not None
        record = last.arithmetic
        assert record["threads_reason"] == "2 were slower while other work ran" and record["n_threads"] == 1


async def test_the_speed_panel_says_the_machine_is_busy_when_decode_collapses(random_model: Path) -> None:
    async with ready(random_model, sampler=LONG, size=(160, 48)) as (app, pilot):
        speed = app.main.sidebar.speed
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        assert "machine busy" not in " ".join(drawn_lines(speed))
        usual = done.decode_tokens_per_s
        # Another run at a tenth of it, as when a compile takes the cores.
        slow: GenerationDone = replace(done, decode_tokens_per_s=usual / 10)
        speed.reset()
        speed.show_done(slow)
        await pilot.pause()
        shown = " ".join(drawn_lines(speed))
        assert "machine busy" in shown and f"machine busy; usual {usual:.0f} tok/s" in shown
        # A run at its usual rate says nothing more, and another model starts afresh.
        speed.reset()
        speed.show_done(done)
        await pilot.pause()
        assert "machine busy" not in " ".join(drawn_lines(speed))
        speed.forget()
        speed.show_done(slow)
        await pilot.pause()
        assert "machine busy" not in " ".join(drawn_lines(speed))
