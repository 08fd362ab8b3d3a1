"""What keeps the interface's own work out of llama.cpp's way while a model streams.

On a machine whose every core runs llama.cpp's threads, whatever the interface does during
a decode is taken from it (bench/tui_stream.py). Two things are held here: the garbage
collector waits for the stream's end (process_tuning.py), and the engine starts only once
the screen has drawn a generation's first, costliest frame (main_screen.py).
"""

from __future__ import annotations

import gc
from pathlib import Path
import pytest

from scriptorium.app.tui.generation import GenerationFinished, GenerationRequest, TokensGenerated, stream_generation
from scriptorium.app.tui.process_tuning import collector_paused
from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.settings import LogitBias

from tui_helpers import GREEDY, generated, loader_calling, make_app, model_ready, run


def test_the_collector_does_not_run_while_tokens_stream(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=256, n_threads=1))
    posted: list[tuple[type, bool]] = []
    request = GenerationRequest(kind="draft", id=1, prompt="Il gatto", settings=GREEDY, bias=LogitBias(), top_n=3)
    try:
        stream_generation(engine, request, lambda message: posted.append((type(message), gc.isenabled())),
                          should_stop=lambda: False, frame_interval=0.0)
    finally:
        engine.close()
    kinds = {kind for kind, _ in posted}
    assert TokensGenerated in kinds and GenerationFinished in kinds
    assert not any(enabled for _, enabled in posted)
    assert gc.isenabled()


def test_the_collector_comes_back_as_it_was_when_the_last_stream_ends() -> None:
    assert gc.isenabled()
    with collector_paused():
        with collector_paused():  # the candidates screen's stream, over the main one's
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the engine failed mid-stream")
    assert gc.isenabled()
    gc.disable()  # switched off by someone else: left off
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_engine_starts_once_the_generations_first_frame_is_drawn(random_model: Path) -> None:
    frames = [0]
    frames_at: dict[str, int] = {}

    def engine_started() -> None:
        frames_at["engine started"] = frames[0]

    async def scenario() -> None:
        app = make_app(random_model, loader=loader_calling(engine_started))
        async with app.run_test() as pilot:
            await model_ready(pilot)
            main = app.main
            draw, started = main._compositor_refresh, main.sidebar.generation_started

            def drawn() -> None:
                frames[0] += 1
                draw()

            def requested() -> None:
                frames_at["requested"] = frames[0]
                started()

            main._compositor_refresh = drawn  # type: ignore[method-assign]
            main.sidebar.generation_started = requested  # type: ignore[method-assign]
            await pilot.press(*"Il gatto")
            done = await generated(pilot, "ctrl+g")
            assert done.completion_tokens > 0

    run(scenario)
    assert frames_at["engine started"] > frames_at["requested"]
