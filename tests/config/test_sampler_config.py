"""The samplers beyond temperature and top-k: in the config, in presets, on the command line."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import pytest

from scriptorium.app.cli.common import add_model_arguments, add_sampler_arguments
from scriptorium.app.config.file import load_config_lenient
from scriptorium.app.config.parse import parse_config
from scriptorium.app.config.run_settings import run_settings
from scriptorium.app.config.schema import Config
from scriptorium.app.config.text import effective_config_toml
from scriptorium.inference.core.settings import PRESETS, SettingsError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    add_sampler_arguments(parser)
    return parser.parse_args(list(argv))


def config_of(tmp_path: Path, text: str) -> tuple[Config, list[str]]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_config_lenient(path)


def test_the_shipped_presets() -> None:
    assert list(PRESETS) == ["greedy", "prose", "creative", "anti-loop"]
    creative, anti_loop = PRESETS["creative"], PRESETS["anti-loop"]
    assert (creative.min_p, creative.xtc_probability, creative.top_k, creative.top_p) == (0.02, 0.5, 0, 1.0)
    assert creative.acting_samplers() == ("min_p", "xtc", "temperature")
    assert (anti_loop.dry_multiplier, anti_loop.dry_base, anti_loop.dry_allowed_length) == (0.8, 1.75, 2)
    assert "dry" in anti_loop.acting_samplers()
    prose = PRESETS["prose"]
    assert prose.acting_samplers() == ("top_k", "top_p", "temperature")  # as before: nothing new acts


def test_every_sampler_and_the_order_in_the_config(tmp_path: Path) -> None:
    config, problems = config_of(
        tmp_path,
        """
[sampler]
dry_multiplier = 0.8
dry_sequence_breakers = ["\\n", "—"]
xtc_probability = 0.5
xtc_threshold = 0.2
typical_p = 0.9
top_n_sigma = 1.5
dynatemp_range = 0.3
dynatemp_exponent = 1.2
samplers = "top_k;dry;temperature"

[presets.mirostat]
mirostat = 2
mirostat_tau = 4.0
mirostat_eta = 0.2
samplers = ["temperature", "top_k"]
""",
    )
    assert problems == []
    s = config.sampler
    assert (s.dry_multiplier, s.dry_sequence_breakers, s.xtc_probability, s.xtc_threshold) == (
        0.8,
        ("\n", "—"),
        0.5,
        0.2,
    )
    assert (s.typical_p, s.top_n_sigma, s.dynatemp_range, s.dynatemp_exponent) == (0.9, 1.5, 0.3, 1.2)
    assert s.samplers == ("top_k", "dry", "temperature") and s.preset == "custom"
    mine = config.preset("mirostat")
    assert (mine.mirostat, mine.mirostat_tau, mine.mirostat_eta, mine.samplers) == (
        2,
        4.0,
        0.2,
        ("temperature", "top_k"),
    )
    assert mine.applied_chain() == ("temperature", "mirostat")
    # The effective config writes every one back, and reads the same.
    again, problems = parse_config(tomllib.loads(effective_config_toml(config)))
    assert problems == [] and again.sampler == config.sampler and again.presets == config.presets


def test_a_users_preset_overrides_a_shipped_one_of_the_same_name(tmp_path: Path) -> None:
    config, problems = config_of(tmp_path, '[presets.anti-loop]\nbase = "anti-loop"\ndry_multiplier = 1.2\n')
    assert problems == []
    assert config.preset("anti-loop").dry_multiplier == 1.2
    assert list(config.all_presets()).count("anti-loop") == 1


@pytest.mark.parametrize(
    "text, problem",
    [
        ('[sampler]\nsamplers = ["top_k", "nucleus"]', "sampler.samplers: samplers: unknown sampler 'nucleus'"),
        ('[sampler]\nsamplers = "top_k;top_k"', "sampler.samplers: samplers: 'top_k' is listed twice"),
        ("[sampler]\nxtc_probability = 2", "sampler.xtc_probability: XTC probability must be in [0, 1], not 2.0"),
        ("[sampler]\nmirostat = 3", "sampler.mirostat: mirostat must be 0 (off), 1 or 2, not 3"),
        ("[sampler]\ndry_base = 0.5", "sampler.dry_base: DRY base must be in [1, 10], not 0.5"),
        ('[sampler]\ndry_sequence_breakers = "x"', "sampler.dry_sequence_breakers: must be a list of strings"),
        ("[presets.x]\ntypical_p = 0", "presets.x.typical_p: typical-p must be in (0, 1], not 0.0"),
    ],
)
def test_a_bad_value_is_one_line_naming_its_key(tmp_path: Path, text: str, problem: str) -> None:
    _config, problems = config_of(tmp_path, text + "\n")
    assert len(problems) == 1 and problem in problems[0]


def test_continue_has_a_flag_for_every_sampler() -> None:
    args = parse(
        "--dry-multiplier",
        "0.8",
        "--dry-base",
        "2",
        "--dry-allowed-length",
        "3",
        "--dry-penalty-last-n",
        "128",
        "--dry-sequence-breaker",
        "\n",
        "--dry-sequence-breaker",
        ".",
        "--xtc-probability",
        "0.5",
        "--xtc-threshold",
        "0.2",
        "--typical-p",
        "0.9",
        "--top-n-sigma",
        "1.5",
        "--dynatemp-range",
        "0.3",
        "--dynatemp-exponent",
        "1.2",
        "--mirostat",
        "2",
        "--mirostat-tau",
        "4",
        "--mirostat-eta",
        "0.2",
        "--samplers",
        "xtc;top_k;temperature",
        "--frequency-penalty",
        "0.1",
        "--presence-penalty",
        "0.2",
    )
    s = run_settings(args, Config()).sampler
    assert (s.dry_multiplier, s.dry_base, s.dry_allowed_length, s.dry_penalty_last_n) == (0.8, 2.0, 3, 128)
    assert s.dry_sequence_breakers == ("\n", ".")
    assert (s.xtc_probability, s.xtc_threshold, s.typical_p, s.top_n_sigma) == (0.5, 0.2, 0.9, 1.5)
    assert (s.dynatemp_range, s.dynatemp_exponent, s.mirostat, s.mirostat_tau, s.mirostat_eta) == (
        0.3,
        1.2,
        2,
        4.0,
        0.2,
    )
    assert s.samplers == ("xtc", "top_k", "temperature")
    assert (s.frequency_penalty, s.presence_penalty) == (0.1, 0.2)


@pytest.mark.parametrize(
    "argv, message",
    [
        (("--samplers", "top_k;bogus"), "unknown sampler 'bogus'"),
        (("--xtc-threshold", "-1"), "XTC threshold"),
        (("--mirostat", "5"), "mirostat must be 0"),
    ],
)
def test_a_bad_flag_is_refused_naming_it(argv, message) -> None:
    with pytest.raises(SettingsError, match=message):
        run_settings(parse(*argv), Config())


def test_healing_and_the_length_mode_come_from_the_config_and_the_flags(tmp_path: Path) -> None:
    config, problems = config_of(tmp_path, '[sampler]\npreset = "greedy"\nheal = false\nlength = "paragraph"\n')
    assert problems == []
    chosen = run_settings(parse(), config).sampler
    assert (chosen.heal, chosen.length, chosen.preset) == (False, "paragraph", "greedy")  # a preset says neither
    flagged = run_settings(parse("--heal", "--length", "sentence"), config).sampler
    assert (flagged.heal, flagged.length) == (True, "sentence")
    assert run_settings(parse("--no-heal"), Config()).sampler.heal is False
    assert run_settings(parse(), Config()).sampler.heal is True  # on by default


def test_a_bad_healing_or_length_value_is_one_problem_naming_the_key(tmp_path: Path) -> None:
    config, problems = config_of(tmp_path, '[sampler]\nheal = "yes"\nlength = "chapter"\n')
    assert any("sampler.heal" in problem and "true or false" in problem for problem in problems), problems
    assert any("sampler.length" in problem and "'chapter'" in problem for problem in problems), problems
    assert (config.sampler.heal, config.sampler.length) == (True, "tokens")
