"""What keeps the interface's own work out of llama.cpp's way while a model streams.

On a machine whose every core runs llama.cpp's threads, whatever the interface does during
a decode is taken from it (bench/tui_stream.py). Two things are held here: the garbage
collector's passes over older objects wait for the stream's end (process_tuning.py), and
the engine starts only once the screen has drawn a generation's first, costliest frame
(generation.py, for the main screen and the candidates dialog).
"""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

from scriptorium.app.tui.screens import candidates_screen
from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen
from scriptorium.app.tui.generation import GenerationFinished, TokensGenerated, stream_generation
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.app.tui.process_tuning import YOUNG_ONLY, older_collections_deferred
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.settings import LogitBias

from tui_helpers import generated, GREEDY, loader_calling, ready, typed


def test_only_the_young_generation_is_collected_while_tokens_stream(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=256, n_threads=1))
    request = GenerationRequest(kind="draft", id=1, prompt="Il gatto", settings=GREEDY, bias=LogitBias(), top_n=3)
    posted: list[type] = []
    kept: list[list[int]] = []
    collected: list[int] = []

    def post(message: object) -> None:
        posted.append(type(message))
        # Long-lived objects, as many as a long stream makes: enough young collections
        # that, with Python's thresholds, older generations would be collected too.
        kept.extend([i] for i in range(20_000))

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collected.append(info["generation"])

    gc.collect()
    gc.callbacks.append(watch)
    try:
        stream_generation(engine, request, post, should_stop=lambda: False, frame_interval=0.0)
    finally:
        gc.callbacks.remove(watch)
        engine.close()
    assert TokensGenerated in posted and GenerationFinished in posted
    assert collected and set(collected) == {0}
    assert gc.get_threshold()[1] != YOUNG_ONLY


def test_the_thresholds_come_back_as_they_were_when_the_last_stream_ends() -> None:
    before = gc.get_threshold()
    with older_collections_deferred():
        with older_collections_deferred():  # the candidates screen's stream, over the main one's
            assert gc.get_threshold()[:2] == (before[0], YOUNG_ONLY)
        assert gc.get_threshold()[:2] == (before[0], YOUNG_ONLY)
    assert gc.get_threshold() == before
    with pytest.raises(RuntimeError), older_collections_deferred():
        raise RuntimeError("the engine failed mid-stream")
    assert gc.get_threshold() == before


async def test_the_engine_starts_once_the_generations_first_frame_is_drawn(random_model: Path) -> None:
    frames = [0]
    frames_at: dict[str, int] = {}

    def engine_started() -> None:
        frames_at["engine started"] = frames[0]

    async with ready(random_model, loader=loader_calling(engine_started)) as (app, pilot):
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
        await typed(pilot, "Il gatto")
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens > 0
    assert frames_at["engine started"] > frames_at["requested"]


async def test_each_candidate_starts_once_its_first_frame_is_drawn(
    phrases_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The candidates dialog runs its generations one after another: each engine start waits
    for the dialog's next_frame (set once the screen has drawn what changed; at once when
    nothing did, as for a candidate already shown waiting). Here each frame comes late, on
    purpose: no candidate may start before its own."""
    order: list[str] = []
    lock = threading.Lock()

    def next_frame(screen: CandidatesScreen) -> threading.Event:
        drawn = threading.Event()
        number = sum(entry.startswith("asked") for entry in order) + 1
        order.append(f"asked {number}")

        def draw() -> None:
            with lock:
                order.append(f"drawn {number}")
            drawn.set()

        threading.Timer(0.15, draw).start()
        return drawn

    def started() -> None:
        with lock:
            order.append(f"started {sum(entry.startswith('started') for entry in order) + 1}")

    monkeypatch.setattr(candidates_screen, "next_frame", next_frame)

    async with ready(phrases_model, loader=loader_calling(started), size=(130, 40)) as (app, pilot):
        await typed(pilot, "C'era una volta")
        await pilot.press("ctrl+n")
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        while not all(candidate.finished for candidate in screen.candidates):
            await pilot.pause(0.05)
    for number in (1, 2, 3):
        assert order.index(f"asked {number}") < order.index(f"drawn {number}") < order.index(f"started {number}"), order
