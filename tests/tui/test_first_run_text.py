"""What the panels and the status bar say before anything was generated is true for the
model's state: loading, loaded (and then which key starts), failed, or no model."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

from tui_helpers import make_app, model_ready, ready, typed

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import Event


def shown(app) -> dict[str, str]:  # type: ignore[no-untyped-def]
    sidebar = app.main.sidebar
    return {
        "probabilities": " / ".join(line.plain for line in sidebar.probabilities.lines(40) if line.plain),
        "kv": sidebar.kv.lines(40)[0].plain,
        "status": str(app.main.status.render()),
    }


async def test_loading_then_loaded_says_which_key_starts(random_model: Path) -> None:
    loading = threading.Event()
    release = threading.Event()

    def slow_loader(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        loading.set()
        release.wait(30)
        return Engine.load(options, on_progress)

    app = make_app(random_model, loader=slow_loader, keymap={"draft.continue": "ctrl+j"})
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.engine_state.model_status.state == "loading"
        before = shown(app)
        assert before["probabilities"] == "the model is loading…"
        assert before["kv"] == "the model is loading…"
        assert "loading random.gguf" in before["status"]
        release.set()
        await model_ready(pilot)
        ready = shown(app)
        # The key from the keymap, as the footer shows it.
        assert ready["probabilities"] == "press ^j to continue the draft / then the candidates show here"
        assert "/ 512 tokens" in "\n".join(line.plain for line in app.main.sidebar.kv.lines(40))
        assert "scriptorium-test-random" in ready["status"]
        await pilot.press("f2")
        assert shown(app)["probabilities"] == "press ⏎ to send a message / then the candidates show here"


async def test_while_the_first_token_is_awaited_and_after_a_generation_without_one(random_model: Path) -> None:
    held, go = threading.Event(), threading.Event()

    def holding_loader(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = Engine.load(options, on_progress)
        generate = engine.generate

        def held_generate(*args: Any, **kwargs: Any) -> Iterator[Event]:
            held.set()  # in the worker, before the prompt is evaluated
            go.wait(30)
            yield from generate(*args, **kwargs)

        engine.generate = held_generate  # type: ignore[method-assign]
        return engine

    async with ready(random_model, loader=holding_loader, size=(120, 40)) as (app, pilot):
        await typed(pilot, "Era")
        await pilot.press("ctrl+g")
        assert await asyncio.to_thread(held.wait, 30)
        await pilot.pause()
        assert shown(app)["probabilities"] == "waiting for the first token"
        await pilot.press("escape")  # stopped before its first token
        go.set()
        await app.main.wait_until_idle()
        await pilot.pause()
        assert app.main.last_generation is not None and app.main.last_generation[2].completion_tokens == 0
        assert shown(app)["probabilities"] == "press ^g to continue the draft / then the candidates show here"


async def test_a_failed_load_and_no_model_say_there_is_no_model(bad_gguf_files: dict[str, Path]) -> None:
    async def scenario(model: Path | None, status: str) -> None:
        async with ready(model, size=(120, 40)) as (app, pilot):
            now = shown(app)
            assert now["probabilities"] == "no model loaded" and now["kv"] == "no model loaded"
            assert status in now["status"]

    await scenario(bad_gguf_files["not_gguf"], "model failed to load")
    await scenario(None, "no model")
