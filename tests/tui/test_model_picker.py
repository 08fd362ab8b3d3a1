"""The model picker: discovered models and, for the chosen model's architecture, its LoRA
adapters; switching at runtime, with every generation recording the model it ran on."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual import events
from textual.widgets import OptionList
from tui_helpers import generated, model_ready, ready, typed

from scriptorium.app.tui.screens.model_picker import ModelPickerScreen
from scriptorium.inference.local.engine import Engine


def _index_of(options: OptionList, name: str) -> int:
    for index in range(options.option_count):
        if name in str(options.get_option_at_index(index).prompt):
            return index
    raise AssertionError(f"{name} is not listed")


async def open_picker(pilot) -> None:  # type: ignore[no-untyped-def]
    """F10, then wait for discovery to fill the list."""
    await pilot.press("f10")
    await pilot.app.screen.workers.wait_for_complete()
    await pilot.pause()


async def test_switching_model_and_adapter_in_the_app(
    random_model: Path, sentence_model: Path, lora_adapter: Path, models_dir: Path
) -> None:
    shutil.copy(sentence_model, models_dir / "frasi.gguf")
    shutil.copy(random_model, models_dir / "casuale.gguf")
    shutil.copy(lora_adapter, models_dir / "gatto-lora.gguf")

    async with ready(sentence_model, size=(120, 45)) as (app, pilot):
        await typed(pilot, "C'era")
        first = await generated(pilot, "ctrl+g")
        await pilot.press("escape")

        await pilot.press("f10")
        assert isinstance(app.screen, ModelPickerScreen)
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        models = app.screen.query_one("#picker-models", OptionList)
        models.highlighted = _index_of(models, "casuale.gguf")
        await pilot.pause()
        adapters = app.screen.query_one("#picker-adapters", OptionList)
        adapters.highlighted = _index_of(adapters, "gatto-lora.gguf")
        app.screen.query_one("#picker-scale").value = "0.5"
        await pilot.click("#load")
        await model_ready(pilot)
        assert app.screen is app.main
        assert (
            app.engine_state.backend is not None
            and app.engine_state.backend.options.model_path == models_dir / "casuale.gguf"
        )
        assert app.engine_state.backend.adapter is not None and app.engine_state.lora_scale == 0.5
        assert app.main.draft.editor.text == "C'era"  # the draft survives the switch

        second = await generated(pilot, "ctrl+g")
        assert second.completion_tokens > 0 and first.completion_tokens > 0
        session = app.sessions.draft
        assert session is not None
        old, new = session.generations
        assert old.model.path == str(sentence_model) and old.lora is None
        assert new.model.path == str(models_dir / "casuale.gguf")
        assert new.lora is not None and new.lora.scale == 0.5 and new.lora.name == "gatto-lora"


async def test_a_bad_scale_is_a_message_and_escape_keeps_the_model(random_model: Path, models_dir: Path) -> None:
    shutil.copy(random_model, models_dir / "casuale.gguf")

    async with ready(random_model, size=(120, 45)) as (app, pilot):
        await open_picker(pilot)
        app.screen.query_one("#picker-scale").value = "tanto"
        await pilot.click("#load")
        assert isinstance(app.screen, ModelPickerScreen)
        assert any("between 0 and 4, not 'tanto'" in n.message for n in app.notices)
        await pilot.press("escape")
        assert app.screen is app.main and app.engine_state.backend.options.model_path == random_model


async def test_enter_pressed_twice_loads_once_and_keeps_the_main_screen(random_model: Path, models_dir: Path) -> None:
    """The second Enter reached the picker after its dismissal had popped it, and popped
    whatever was on top: the main screen, leaving a blank app."""
    shutil.copy(random_model, models_dir / "casuale.gguf")
    loads: list[Path] = []

    def loader(options, *args, **kwargs):
        loads.append(options.model_path)
        return Engine.load(options, *args, **kwargs)

    async with ready(random_model, loader=loader, size=(120, 45)) as (app, pilot):
        main_stack = list(app.screen_stack)
        await open_picker(pilot)
        models = app.screen.query_one("#picker-models", OptionList)
        models.highlighted = _index_of(models, "casuale.gguf")
        await pilot.pause()
        # Both keys queued before either is handled, as a fast double press arrives.
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("enter", "\r"))
        await pilot.pause()
        await model_ready(pilot)
        assert app.screen is app.main
        assert app.screen_stack == main_stack
        assert loads == [random_model, models_dir / "casuale.gguf"]
        await typed(pilot, "ancora")
        assert app.main.draft.editor.text == "ancora"


async def test_the_picker_lists_around_a_file_with_a_corrupt_tensor_count(random_model: Path, models_dir: Path) -> None:
    """A tensor count of 2^40 (or one too many) made discovery spin for ever: the picker
    said "Looking for GGUF files…" and the app could not quit."""
    from gguf_corrupt import corrupt_copy

    shutil.copy(random_model, models_dir / "casuale.gguf")
    corrupt_copy(random_model, models_dir / "rotto-22.gguf", tensor_count=22)
    corrupt_copy(random_model, models_dir / "rotto-2e40.gguf", tensor_count=2**40)

    async with ready(random_model, size=(120, 45)) as (app, pilot):
        await open_picker(pilot)
        models = app.screen.query_one("#picker-models", OptionList)
        _index_of(models, "casuale.gguf")
        listed = [str(models.get_option_at_index(i).prompt) for i in range(models.option_count)]
        assert not any("rotto" in line for line in listed)
        await pilot.press("escape")
        assert app.screen is app.main


async def test_a_model_picked_after_a_failed_load_is_not_given_the_other_models_tokenizer(
    unigram_gguf: Path, random_model: Path, models_dir: Path, tmp_path: Path
) -> None:
    """A .model belongs to the model it was named for: once that model had failed to load
    (here, its --spm mistyped), every model picked with F10 was given the same .model and
    failed the same way, so F10 could not get the author writing again."""
    from scriptorium.app.cli.main import build_parser
    from scriptorium.app.cli.tui_cmd import build_app

    shutil.copy(random_model, models_dir / "casuale.gguf")
    missing = tmp_path / "tokeniser.model"

    app = build_app(
        build_parser(None).parse_args(["--model", str(unigram_gguf), "--spm", str(missing), "--ctx", "512"])
    )
    async with app.run_test(size=(120, 45)) as pilot:
        await model_ready(pilot)
        assert (
            app.engine_state.backend is None and "SentencePiece model not found" in app.engine_state.model_status.error
        )
        await open_picker(pilot)
        models = app.screen.query_one("#picker-models", OptionList)
        models.highlighted = _index_of(models, "casuale.gguf")
        await pilot.pause()
        await pilot.click("#load")
        await model_ready(pilot)
        assert app.engine_state.model_status.error == ""
        assert (
            app.engine_state.backend is not None
            and app.engine_state.backend.options.model_path == models_dir / "casuale.gguf"
        )
        assert app.engine_state.backend.options.spm_path is None
