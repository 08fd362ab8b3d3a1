"""A session reopened at start goes on with the model (and adapter, at its scale) it was
last written with, unless the command line names another: the config's model is a
default for new writing, not a switch for old."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui_helpers import model_ready, session_written_with

from scriptorium.app.cli.main import build_parser
from scriptorium.app.cli.tui_cmd import build_app


def app_for(*argv: str) -> Any:
    return build_app(build_parser(None).parse_args([*argv, "--ctx", "512", "--preset", "greedy", "--max-tokens", "4"]))


def config_naming(model: Path, folder: Path) -> Path:
    config = folder / "config.toml"
    config.write_text(f'[model]\npath = "{model}"\n', encoding="utf-8")
    return config


def said(app: Any, words: str) -> list[str]:
    return [n.message for n in app.notices if words in n.message]


async def write_with(*argv: str) -> None:
    await session_written_with(app_for(*argv))


async def resumed(*argv: str) -> tuple[Any, Any]:
    """The app started with `argv`, run until its model is ready and then quit, and the
    options its model was loaded with."""
    app, loaded = app_for(*argv), []

    async with app.run_test() as pilot:
        await model_ready(pilot)
        loaded.append(app.engine_state.backend.options)
        await pilot.press("ctrl+q")
        await pilot.pause()
    return app, loaded[0]


async def test_resume_goes_on_with_the_sessions_model_not_the_configs(
    random_model: Path, sentence_model: Path, tmp_path: Path
) -> None:
    config = config_naming(random_model, tmp_path)

    await write_with("--config", str(config), "--model", str(sentence_model))
    app, options = await resumed("--config", str(config), "--resume")
    assert options.model_path == sentence_model
    assert said(app, "as this session last did") == [
        f"Writing with {sentence_model.name}, as this session last did; --model on the command line chooses another."
    ]
    assert not said(app, "last written with")


async def test_a_model_named_on_the_command_line_wins_and_the_author_is_told(
    random_model: Path, sentence_model: Path, tmp_path: Path
) -> None:
    await write_with("--model", str(sentence_model))
    app, options = await resumed("--resume", "--model", str(random_model))
    assert options.model_path == random_model
    assert len(said(app, "last written with")) == 1 and not said(app, "as this session last did")


async def test_the_sessions_adapter_comes_back_at_its_scale(
    random_model: Path, lora_adapter: Path, tmp_path: Path
) -> None:
    config = config_naming(random_model, tmp_path)

    await write_with("--config", str(config), "--lora", str(lora_adapter), "--lora-scale", "0.5")
    app, options = await resumed("--config", str(config), "--resume")
    assert (options.model_path, options.lora_path, options.lora_scale) == (random_model, lora_adapter, 0.5)
    assert not said(app, "as this session last did")  # the config's model: nothing to tell


async def test_a_session_whose_model_file_is_gone_starts_with_the_configs_and_says_so(
    random_model: Path, sentence_model: Path, tmp_path: Path
) -> None:
    gone = tmp_path / "gone.gguf"
    gone.write_bytes(sentence_model.read_bytes())
    config = config_naming(random_model, tmp_path)

    await write_with("--config", str(config), "--model", str(gone))
    gone.unlink()
    app, options = await resumed("--config", str(config), "--resume")
    assert options.model_path == random_model and len(said(app, "last written with")) == 1


async def test_a_model_named_by_a_relative_path_comes_back_from_another_folder(
    random_model: Path, sentence_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session recorded "models/mio.gguf" as given: reopened from another folder, that
    named nothing, and the config's model was loaded instead."""
    (tmp_path / "progetto" / "models").mkdir(parents=True)
    (tmp_path / "altrove").mkdir()
    (tmp_path / "progetto" / "models" / "mio.gguf").write_bytes(sentence_model.read_bytes())
    config = config_naming(random_model, tmp_path)
    monkeypatch.chdir(tmp_path / "progetto")
    await write_with("--config", str(config), "--model", "models/mio.gguf")
    monkeypatch.chdir(tmp_path / "altrove")
    app, options = await resumed("--config", str(config), "--resume")
    assert options.model_path == tmp_path / "progetto" / "models" / "mio.gguf"
    assert not said(app, "last written with")
