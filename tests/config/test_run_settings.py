"""Precedence: command-line flags > config file > built-in defaults."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from scriptorium.app.cli.common import add_model_arguments, add_sampler_arguments, add_speculation_arguments
from scriptorium.app.config.file import load_config
from scriptorium.app.config.schema import Config
from scriptorium.app.config.run_settings import add_config_argument, run_settings
from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.core.load_options import usable_cores
from scriptorium.inference.core.settings import PRESETS, LogitBias, SettingsError

CONFIG = """
[model]
path = "/models/configured.gguf"
lora = "/loras/configured.gguf"
lora_scale = 0.5
context_size = 8192
threads = 3
gpu_layers = 10

[sampler]
preset = "creative"
top_k = 7
stop = ["FINE"]

[presets.mine]
temperature = 0.2

[logit_bias]
entries = [[5, 1.0], [6, -2.0]]
"""


def parse(*argv: str) -> argparse.Namespace:
    """The flags `scriptorium continue` defines, plus --config."""
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    add_sampler_arguments(parser)
    add_speculation_arguments(parser)
    add_config_argument(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def config(tmp_path: Path) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return load_config(path)


def test_built_in_defaults() -> None:
    run = run_settings(parse(), Config())
    assert (run.model, run.lora_path, run.lora_scale) == (None, None, 1.0)
    assert (run.n_ctx, run.n_threads, run.n_gpu_layers) == (None, None, -1)  # n_ctx: the training context
    assert run.sampler == PRESETS["prose"] and run.bias == LogitBias()


def test_config_over_defaults(config: Config) -> None:
    run = run_settings(parse(), config)
    assert (run.model, run.lora_path, run.lora_scale) == (
        "/models/configured.gguf",
        Path("/loras/configured.gguf"),
        0.5,
    )
    assert (run.n_ctx, run.n_threads, run.n_gpu_layers) == (8192, 3, 10)
    assert run.sampler == PRESETS["creative"].with_changes(top_k=7, stop=("FINE",))
    assert run.bias == LogitBias(ban_byte_tokens=True, entries=((5, 1.0), (6, -2.0)))


def test_flags_over_config(config: Config) -> None:
    args = parse(
        "--model",
        "cli.gguf",
        "--lora",
        "cli-lora.gguf",
        "--lora-scale",
        "2",
        "--ctx",
        "1024",
        "--threads",
        "1",
        "--gpu-layers",
        "0",
        "--top-k",
        "3",
        "--stop",
        "X",
        "--stop",
        "Y",
        "--bias",
        "6=4",
        "--bias",
        "9=-1",
        "--no-byte-ban",
    )
    run = run_settings(args, config)
    assert (run.model, run.lora_path, run.lora_scale) == ("cli.gguf", Path("cli-lora.gguf"), 2.0)
    assert (run.n_ctx, run.n_threads, run.n_gpu_layers) == (1024, 1, 0)
    assert run.sampler == PRESETS["creative"].with_changes(top_k=3, stop=("X", "Y"))
    assert run.bias == LogitBias(ban_byte_tokens=False, entries=((5, 1.0), (6, 4.0), (9, -1.0)))


def test_preset_flag_replaces_the_config_sampler(config: Config) -> None:
    assert run_settings(parse("--preset", "greedy"), config).sampler == PRESETS["greedy"]
    assert run_settings(parse("--preset", "greedy", "--temperature", "0.5"), config).sampler == (
        PRESETS["greedy"].with_changes(temperature=0.5)
    )
    # The user's own presets work too (a namespace: commands/common.py limits --preset's choices).
    mine = run_settings(argparse.Namespace(preset="mine"), config).sampler
    assert mine.temperature == 0.2 and mine.preset == "mine"


def test_a_preset_keeps_its_name_when_only_the_seed_length_or_stops_change(config: Config) -> None:
    """The panel and every session record show the preset a generation drew with: a length,
    a seed or stop strings are not part of a preset, so they keep its name; a sampling value
    makes it 'custom'."""
    run = run_settings(parse("--preset", "creative", "--max-tokens", "500", "--seed", "7", "--stop", "FINE"), config)
    assert run.sampler.preset == "creative" and (run.sampler.max_tokens, run.sampler.seed) == (500, 7)
    assert run.sampler.shape() == PRESETS["creative"].shape()
    assert run_settings(parse("--preset", "creative", "--top-k", "3"), config).sampler.preset == "custom"
    assert (
        run_settings(parse("--preset", "creative", "--min-p", "0.02"), config).sampler.preset == "creative"
    )  # its own value
    custom = PRESETS["prose"].with_changes(temperature=0.3)
    assert custom.with_changes(max_tokens=20).preset == "custom"


def test_load_options(config: Config) -> None:
    options = run_settings(parse("--threads", "2"), config).load_options(Path("/m.gguf"))
    assert (options.model_path, options.lora_path, options.lora_scale) == (
        Path("/m.gguf"),
        Path("/loras/configured.gguf"),
        0.5,
    )
    assert (options.n_ctx, options.n_threads, options.n_gpu_layers) == (8192, 2, 10)


def test_threads_0_uses_every_core_over_the_configs_count(config: Config) -> None:
    """As `threads = 0` in the config does; the flag refused 0, leaving no way to undo the
    config's count for one run."""
    assert config.model.threads == 3
    assert run_settings(parse("--threads", "0"), config).load_options(Path("/m.gguf")).n_threads == usable_cores()


def test_threads_auto_measures_over_the_configs_count(config: Config) -> None:
    assert config.model.threads == 3
    options = run_settings(parse("--threads", "auto"), config).load_options(Path("/m.gguf"))
    assert (options.n_threads, options.n_threads_batch) == (None, None)


@pytest.mark.parametrize(
    "argv, message",
    [
        (("--lora-scale", "0.5"), "--lora-scale needs --lora PATH (or lora in the config's [model])"),
        (("--lora", "x.gguf", "--lora-scale", "9"), "--lora-scale must be between 0 and 4, not 9.0"),
        (("--ctx", "10"), "--ctx must be a whole number from 64 to 1048576, not 10"),
        (("--threads", "-1"), "--threads must be a whole number from 1 to 1024, not -1"),
        (("--gpu-layers", "-2"), "--gpu-layers must be a whole number of at least -1, not -2"),
        (("--temperature", "20"), "temperature must be between 0 and 10, not 20.0"),
        (("--bias", "nope"), "bias 'nope' is not of the form ID=VALUE (e.g. 16001=-100)"),
        (("--bias", "3=5000"), "logit bias for token 3 must be in [-1000, 1000], not 5000.0"),
    ],
)
def test_bad_flags_are_one_line_errors(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(ScriptoriumError) as caught:
        run_settings(parse(*argv), Config())
    assert str(caught.value) == message


def test_unknown_preset_flag_names_the_choices(config: Config) -> None:
    with pytest.raises(
        SettingsError, match=r"^unknown preset 'nope' \(choose from greedy, prose, creative, anti-loop, mine\)$"
    ):
        run_settings(argparse.Namespace(preset="nope"), config)


def test_missing_flags_count_as_not_given(config: Config) -> None:
    """A command that defines none of the flags (the TUI's parser, say) still gets the config."""
    assert run_settings(argparse.Namespace(), config) == run_settings(parse(), config)


def test_a_model_named_on_the_command_line_runs_here_over_the_configs_server(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[server]\nurl = "http://gpu-box:8080"\n', encoding="utf-8")
    config = load_config(path)
    assert run_settings(parse(), config).server == "http://gpu-box:8080"
    run = run_settings(parse("--model", "cli.gguf", "--ctx", "1024"), config)
    assert (run.server, run.model, run.n_ctx) == (None, "cli.gguf", 1024)
    # Without a model here, a flag for one is refused, not ignored, as with --server.
    with pytest.raises(ScriptoriumError, match=r"--ctx is for a model run here, and the config's \[server\] url"):
        run_settings(parse("--ctx", "1024"), config)


@pytest.mark.parametrize("source", ["flag", "config"])
def test_threads_cap_the_prompts_threads_too(source: str, config: Config) -> None:
    """--threads 1 (to leave the other cores free) still ran prefill on every core."""
    run = run_settings(parse("--threads", "1"), config) if source == "flag" else run_settings(parse(), config)
    options = run.load_options(Path("model.gguf"))
    assert options.n_threads_batch == options.n_threads == (1 if source == "flag" else 3)
    every_core = run_settings(parse("--threads", "0"), config).load_options(Path("model.gguf"))
    assert (every_core.n_threads, every_core.n_threads_batch) == (usable_cores(),) * 2


def test_speculation_flags_over_the_config(tmp_path: Path) -> None:
    from scriptorium.inference.core.speculation import Speculation

    path = tmp_path / "config.toml"
    path.write_text('[speculative]\nguesser = "lookup"\ndraft_max = 4\n', encoding="utf-8")
    configured = load_config(path)
    assert run_settings(parse(), configured).speculation == Speculation("lookup", 4)
    assert run_settings(parse("--draft-max", "12"), configured).speculation == Speculation("lookup", 12)
    assert run_settings(parse("--speculative", "off"), configured).speculation.on is False
    chosen = run_settings(parse("--speculative", "draft", "--draft-model", "/m/d.gguf"), configured)
    assert chosen.speculation == Speculation("draft", 4, Path("/m/d.gguf"))
    assert run_settings(parse(), Config()).speculation == Speculation()
    with pytest.raises(SettingsError, match="--draft-max must be a whole number from 1 to 32, not 0"):
        run_settings(parse("--draft-max", "0"), configured)
    with pytest.raises(SettingsError, match="--speculative draft needs --draft-model FILE"):
        run_settings(parse("--speculative", "draft"), configured)
