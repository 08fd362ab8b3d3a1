"""Loading happens in the background with progress; a bad model or adapter is a clear
message, the draft stays editable, and another model can be loaded from the app."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Callable

import pytest
from gguf_corrupt import corrupt_copy
from tui_helpers import generated, make_app, model_ready, notifications, ready, replacement_ready, typed

from scriptorium.app.tui.screens.load_model_screen import LoadModelScreen
from scriptorium.inference.local.engine import Engine, LoadOptions


def model_panel(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in app.main.sidebar.model.lines(60))


def refusing(model: Path, load: Callable[..., Engine] = Engine.load) -> Callable[..., Engine]:
    """A loader with which llama.cpp refuses `model` (out of memory, an architecture it does
    not know): a failure found only after the model running was closed."""
    from scriptorium.inference.core.errors import ModelLoadError

    def loader(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        if options.model_path == model:
            raise ModelLoadError(f"llama.cpp could not load {model}: unknown model architecture: 'x'")
        return load(options, on_progress)

    return loader


async def test_a_bad_model_file_is_a_message_and_another_model_can_be_loaded(
    bad_gguf_files: dict[str, Path], random_model: Path
) -> None:
    bad = bad_gguf_files["not_gguf"]

    async with ready(bad) as (app, pilot):
        assert app.engine_state.backend is None and app.engine_state.model_status.state == "failed"
        assert any(str(bad) in message and "not a GGUF file" in message for message in notifications(app))
        assert "not a GGUF file" in model_panel(app) and "^l: choose another model" in model_panel(app)
        await typed(pilot, "Scrivo lo stesso")  # the draft is still there to write in
        assert app.main.draft.editor.text == "Scrivo lo stesso"
        await pilot.press("ctrl+g")  # no model: a message, not a crash
        assert any("No model is loaded" in message for message in notifications(app))

        await pilot.press("ctrl+l")
        assert isinstance(app.screen, LoadModelScreen)
        model_input = app.screen.query_one("#model-path")
        assert model_input.value == str(bad)
        model_input.value = str(random_model)
        await pilot.press("enter")
        await model_ready(pilot)
        assert app.engine_state.backend is not None and app.engine_state.model_status.state == "ready"
        assert app.main.draft.editor.text == "Scrivo lo stesso"
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens > 0


@pytest.mark.parametrize("refused", ["truncated", "adapter"])
async def test_a_file_that_cannot_load_leaves_the_running_model_loaded(
    refused: str, bad_gguf_files: dict[str, Path], random_model: Path, wider_model_lora_adapter: Path
) -> None:
    """The running model was closed first, so a mistyped path in ctrl+l left none (a 7B
    to load again); the files are checked before it is closed."""

    async with ready(random_model) as (app, pilot):
        running = app.engine_state.backend
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, LoadModelScreen)
        if refused == "truncated":
            app.screen.query_one("#model-path").value = str(bad_gguf_files["truncated"])
        else:
            app.screen.query_one("#lora-path").value = str(wider_model_lora_adapter)
        await pilot.press("enter")
        await model_ready(pilot)
        assert app.engine_state.backend is running and app.engine_state.model_status.state == "ready"
        assert any("Still writing with scriptorium-test-random" in message for message in notifications(app))
        await typed(pilot, "Era")
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens > 0


async def test_a_missing_model_file_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "non-esiste.gguf"

    async with ready(missing) as (app, pilot):
        assert app.engine_state.model_status.state == "failed"
        assert f"model not found: {missing}" in app.engine_state.model_status.error
        assert "model failed to load" in str(app.main.status.render())


async def test_an_adapter_for_another_architecture_is_refused_with_a_reason(
    random_model: Path, foreign_lora_adapter: Path
) -> None:
    async with ready(random_model, lora=foreign_lora_adapter) as (app, pilot):
        assert app.engine_state.backend is None
        assert "'gemma3' model, but the model is 'llama'" in app.engine_state.model_status.error
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, LoadModelScreen)
        app.screen.query_one("#lora-path").value = ""  # drop the adapter and retry
        await pilot.press("enter")
        await model_ready(pilot)
        assert (
            app.engine_state.backend is not None
            and app.engine_state.backend.adapter is None
            and app.engine_state.lora_scale is None
        )


async def test_the_editor_works_while_the_model_loads_and_progress_is_shown(random_model: Path) -> None:
    reported, release = threading.Event(), threading.Event()

    def slow_loader(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        on_progress(0.42)
        reported.set()
        release.wait(30)
        return Engine.load(options, on_progress)

    app = make_app(random_model, loader=slow_loader)
    async with app.run_test() as pilot:
        # Not a fixed delay: a busy machine can take longer to start the worker.
        assert await asyncio.to_thread(reported.wait, 30)
        await pilot.pause()
        assert app.engine_state.model_status.state == "loading" and app.engine_state.model_status.progress == 0.42
        assert "42%" in model_panel(app) and "loading random.gguf 42%" in str(app.main.status.render())
        await typed(pilot, "Intanto scrivo")
        await pilot.press("ctrl+g")
        assert app.main.draft.editor.text == "Intanto scrivo"
        assert any("still loading (42%)" in message for message in notifications(app))
        release.set()
        await model_ready(pilot)
        assert app.engine_state.model_status.state == "ready"
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens > 0


async def test_escape_in_the_load_dialog_goes_back_to_the_draft(random_model: Path) -> None:
    app = make_app(None)
    async with app.run_test() as pilot:
        assert "no model loaded" in model_panel(app)
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, LoadModelScreen)
        await pilot.press("escape")
        assert app.screen is app.main and app.engine_state.model_status.state == "none"


async def test_the_model_panel_shows_the_whole_failure(tmp_path: Path) -> None:
    """The message was cut after three lines of the narrow panel, mid-path."""
    missing = tmp_path / "una-cartella-dal-nome-piuttosto-lungo" / "e-un-modello-che-non-esiste-affatto-Q4_K_M.gguf"

    async with ready(missing, size=(120, 45)) as (app, pilot):
        panel = app.main.sidebar.model
        width = panel.content_size.width
        lines = [line.plain for line in panel.lines(width)]
        assert len(lines) > 5 and panel.content_size.height == len(lines)  # it grew to fit
        shown = "".join(lines[:-1]).replace(" ", "")
        assert shown == app.engine_state.model_status.error.replace(" ", "")
        assert f"model not found: {missing}".replace(" ", "") in shown
        assert lines[-1].endswith("choose another model")


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"block_count": 1000}, "declares 1000 layers"),
        ({"rms_epsilon": float("nan")}, "layer_norm_rms_epsilon = nan"),
        ({"same_byte_token_texts": True}, "with the same text '<0x00>'"),
        ({"tensor_count": 22}, "corrupt GGUF header"),
    ],
)
async def test_a_model_llama_cpp_would_abort_on_is_refused_and_the_typing_kept(
    random_model: Path, tmp_path: Path, change: dict, fragment: str
) -> None:
    """These took the process down (or hung it) while the author kept writing."""
    broken = corrupt_copy(random_model, tmp_path / "rotto.gguf", **change)
    draft = tmp_path / "bozza.md"

    app = make_app(broken, draft=draft)
    async with app.run_test() as pilot:
        await typed(pilot, "Scrivo mentre carica")
        await model_ready(pilot)
        assert app.engine_state.backend is None and app.engine_state.model_status.state == "failed"
        assert fragment in app.engine_state.model_status.error
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.main.draft.editor.text == "Scrivo mentre carica"
        assert app.manuscript.save_everything()
    assert draft.read_text(encoding="utf-8") == "Scrivo mentre carica"


async def test_the_heap_is_frozen_once_a_model_is_ready_and_given_back_at_exit(random_model: Path) -> None:
    """process_tuning.py: a full collection during a generation would walk every widget
    and style; after a model loads they are frozen, and unfrozen when the app ends."""
    import gc
    import sys

    switch_interval = sys.getswitchinterval()

    async with ready(random_model) as (app, pilot):
        assert app.engine_state.model_status.state == "ready"
        assert gc.get_freeze_count() > 1000
        assert sys.getswitchinterval() < switch_interval
    assert gc.get_freeze_count() == 0
    assert sys.getswitchinterval() == switch_interval


async def test_the_load_dialog_can_be_read_whole_on_an_80x24_terminal(bad_gguf_files: dict[str, Path]) -> None:
    """With the failure shown and three fields, the dialog is taller than 24 rows: its Load
    button was drawn off the bottom of the screen, out of reach of the mouse."""

    async with ready(bad_gguf_files["not_gguf"], size=(80, 24)) as (app, pilot):
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, LoadModelScreen)
        dialog, load = app.screen.query_one("#dialog"), app.screen.query_one("#load")
        assert dialog.region.bottom <= 24
        load.focus()
        await pilot.pause()
        assert app.screen.find_widget(load).region.bottom <= dialog.region.bottom


async def test_the_probabilities_panel_drops_the_last_model_s_token_when_another_loads(
    random_model: Path, sentence_model: Path
) -> None:
    """After choosing another model the panel kept the old model's candidates (under the
    new model's name) until the cursor moved. It now says what the new model's state is."""
    from dataclasses import replace

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, "La casa")
        await generated(pilot, "ctrl+g")
        panel = app.main.sidebar.probabilities
        assert panel.event is not None
        first = app.engine_state.backend
        app.load_model(replace(first.options, model_path=sentence_model))
        await replacement_ready(pilot, first)
        assert app.engine_state.model_status.state == "ready"
        assert panel.event is None and panel.border_subtitle == ""
        shown = "\n".join(line.plain for line in panel.lines(40))
        assert "to continue the draft" in shown, shown


async def test_the_speed_panel_drops_the_last_model_s_figures_when_another_loads(
    random_model: Path, sentence_model: Path
) -> None:
    """After choosing another model the Speed panel kept the old model's TTFT and tok/s beside
    the new model's name. The same model loaded again is still the model they measured."""
    from dataclasses import replace

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        speed = app.main.sidebar.speed
        idle = "\n".join(line.plain for line in speed.lines(40))  # before any generation
        await typed(pilot, "La casa")
        done = await generated(pilot, "ctrl+g")
        figures = "\n".join(line.plain for line in speed.lines(40))
        assert speed.done == done and figures != idle
        first = app.engine_state.backend
        app.load_model(first.options)  # as after a crash: the same model's engine, again
        await replacement_ready(pilot, first)
        assert speed.done == done and "\n".join(line.plain for line in speed.lines(40)) == figures
        second = app.engine_state.backend
        app.load_model(replace(second.options, model_path=sentence_model))
        await replacement_ready(pilot, second)
        assert app.engine_state.model_status.state == "ready"
        assert speed.done is None and speed.border_title == "Speed"
        assert "\n".join(line.plain for line in speed.lines(40)) == idle


async def test_the_speed_panel_shows_nothing_measured_once_a_failed_load_leaves_no_model(
    random_model: Path, sentence_model: Path, bad_gguf_files: dict[str, Path]
) -> None:
    """llama.cpp refused the next model (out of memory, say) after the old one was closed:
    no model was loaded, and the Speed panel still showed the old one's TTFT and tok/s. A
    file refused before the old model is closed leaves it running, and its figures stay."""
    from dataclasses import replace

    async with ready(random_model, loader=refusing(sentence_model), size=(120, 40)) as (app, pilot):
        speed = app.main.sidebar.speed
        idle = "\n".join(line.plain for line in speed.lines(40))
        await typed(pilot, "La casa")
        done = await generated(pilot, "ctrl+g")
        figures = "\n".join(line.plain for line in speed.lines(40))
        running = app.engine_state.backend
        app.load_model(replace(running.options, model_path=bad_gguf_files["truncated"]))
        await model_ready(pilot)
        assert app.engine_state.backend is running and speed.done == done  # still the model they measured
        assert "\n".join(line.plain for line in speed.lines(40)) == figures
        app.load_model(replace(running.options, model_path=sentence_model))
        await model_ready(pilot)
        assert app.engine_state.backend is None and app.engine_state.model_status.state == "failed"
        assert speed.done is None and "\n".join(line.plain for line in speed.lines(40)) == idle


async def test_a_generation_stopped_by_a_load_that_fails_leaves_no_numbers_behind(
    random_model: Path, sentence_model: Path
) -> None:
    """Another model chosen while the model wrote: the generation's last tokens and its end,
    drawn after the old model was closed, put its probabilities and its KV cache back on the
    panels, and there they stayed once the new model failed to load: 'no model loaded' in
    the Model panel beside a KV cache 6 tokens full."""
    from dataclasses import replace

    from tui_helpers import Gate, until

    gate = Gate(after_tokens=3)

    async with ready(random_model, loader=refusing(sentence_model, gate.loader), size=(120, 40)) as (app, pilot):
        await typed(pilot, "La casa")
        await pilot.press("ctrl+g")
        await gate.wait_reached()
        await pilot.pause()
        app.load_model(replace(app.engine_state.backend.options, model_path=sentence_model))
        gate.release()
        await app.main.wait_until_idle()
        await until(pilot, lambda: app.engine_state.model_status.state == "failed", "the load to fail")
        await app.workers.wait_for_complete()
        await pilot.pause()
        sidebar = app.main.sidebar
        for panel in (sidebar.kv, sidebar.probabilities):
            shown = "\n".join(line.plain for line in panel.lines(40))
            assert shown.strip() == "no model loaded", shown
        assert sidebar.speed.done is None and sidebar.speed.last_token is None
        assert app.main.draft.editor.text == "La casa" and app.main.draft.editor.ghost is not None
