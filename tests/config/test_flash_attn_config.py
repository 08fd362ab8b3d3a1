"""flash_attn in the config and --flash-attn: three words, one meaning each, bad ones refused by name."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import pytest

from scriptorium.app.cli.common import add_model_arguments
from scriptorium.app.cli.main import main
from scriptorium.app.config.parse import parse_config
from scriptorium.app.config.run_settings import run_settings
from scriptorium.app.config.schema import Config, ModelConfig
from scriptorium.app.config.text import effective_config_toml


def flags(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(("word", "meaning"), [("auto", None), ("on", True), ("off", False)])
def test_each_word_reaches_the_load_options(tmp_path: Path, word: str, meaning: bool | None) -> None:
    config, problems = parse_config({"model": {"flash_attn": word}}, tmp_path / "config.toml")
    assert problems == [] and config.model.flash_attn == word
    assert run_settings(flags(), config).load_options(tmp_path / "m.gguf").flash_attn is meaning


def test_auto_is_the_default_and_the_flag_beats_the_config(tmp_path: Path) -> None:
    assert ModelConfig().flash_attn == "auto"
    assert run_settings(flags(), Config()).flash_attn is None
    config = Config(model=ModelConfig(flash_attn="on"))
    assert run_settings(flags("--flash-attn", "off"), config).flash_attn is False
    assert run_settings(flags("--flash-attn", "auto"), config).flash_attn is None


@pytest.mark.parametrize("value", ["yes", True, 1, "ON"])
def test_a_bad_value_is_named_and_ignored(tmp_path: Path, value: object) -> None:
    config, problems = parse_config({"model": {"flash_attn": value}}, tmp_path / "config.toml")
    assert config.model.flash_attn == "auto"
    assert len(problems) == 1 and problems[0].startswith("model.flash_attn: must be one of 'auto', 'on', 'off'")


def test_the_effective_config_says_it(tmp_path: Path) -> None:
    config, _ = parse_config({"model": {"flash_attn": "off"}}, tmp_path / "config.toml")
    assert tomllib.loads(effective_config_toml(config))["model"]["flash_attn"] == "off"


def test_a_bad_flag_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["continue", "--flash-attn", "maybe", "-"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--flash-attn" in err and "maybe" in err and len(err.strip().splitlines()) == 1
