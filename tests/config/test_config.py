"""The config file: locations, typed values, and one line for every kind of mistake."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest
from textual.theme import BUILTIN_THEMES

from scriptorium.app import paths
from scriptorium.app.config.file import config_path, load_config, load_config_lenient
from scriptorium.app.config.schema import TABLES, Config, ConfigError, ModelConfig, ServerConfig, UiConfig
from scriptorium.app.config.parse import parse_config
from scriptorium.app.config.text import (
    DEFAULT_CONFIG_TEXT,
    effective_config,
    effective_config_toml,
    write_default_config,
)
from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings, SettingsError

FULL = """
[model]
path = "models/mine.gguf"
lora = "~/loras/style.gguf"
lora_scale = 0.5
context_size = 8192
threads = 6
gpu_layers = 0
folders = ["/srv/models", "more"]

[sampler]
preset = "tight"
max_tokens = 300

[presets.tight]
base = "creative"
temperature = 0.3
stop = ["\\n\\n"]

[presets.loose]
base = "tight"
seed = 7

[logit_bias]
ban_byte_tokens = false
entries = [[16001, -100], [42, 2.5], [16001, -50]]

[keymap]
generate = "ctrl+g, f5"
"app.quit" = "ctrl+q"

[ui]
theme = "nord"
frames_per_second = 20
language = "it"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conf" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_full_config_is_typed(tmp_path: Path, fake_home: Path) -> None:
    path = write(tmp_path, FULL)
    config = load_config(path)
    assert config.source == path
    assert config.model == ModelConfig(
        path=str(path.parent / "models" / "mine.gguf"),
        lora=fake_home / "loras" / "style.gguf",
        lora_scale=0.5,
        context_size=8192,
        threads=6,
        gpu_layers=0,
        folders=(Path("/srv/models"), path.parent / "more"),
    )
    tight = PRESETS["creative"].with_changes(temperature=0.3, stop=("\n\n",), preset="tight")
    assert config.presets == {"tight": tight, "loose": tight.with_changes(seed=7, preset="loose")}
    assert config.sampler == tight.with_changes(max_tokens=300)  # a length is not part of a preset
    assert config.sampler.preset == "tight"
    assert config.logit_bias == LogitBias(ban_byte_tokens=False, entries=((16001, -50.0), (42, 2.5)))
    assert dict(config.keymap) == {"generate": "ctrl+g,f5", "app.quit": "ctrl+q"}
    assert config.ui == UiConfig(theme="nord", frames_per_second=20, language="it")
    assert list(config.all_presets()) == ["greedy", "prose", "creative", "anti-loop", "tight", "loose"]


def test_sampler_naming_a_preset_keeps_its_name(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[sampler]\npreset = "greedy"\n'))
    assert config.sampler == PRESETS["greedy"]


def test_sampler_changing_a_sampling_value_is_custom(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, '[sampler]\npreset = "greedy"\nmax_tokens = 40\n')).sampler.preset == "greedy"
    assert load_config(write(tmp_path, '[sampler]\npreset = "greedy"\ntop_k = 5\n')).sampler.preset == "custom"


def test_model_name_is_kept_as_written(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[model]\npath = "gemma-3-1b"\n'))
    assert config.model.path == "gemma-3-1b"


def test_threads_zero_means_every_core(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "[model]\nthreads = 0\n")).model.threads == 0


def test_threads_are_measured_unless_a_count_is_set(tmp_path: Path) -> None:
    """The default is "auto" (None): chosen by measurement while the model writes."""
    assert load_config(write(tmp_path, "[model]\n")).model.threads is None
    assert load_config(write(tmp_path, '[model]\nthreads = "auto"\n')).model.threads is None
    assert effective_config(load_config(write(tmp_path, "[model]\n")))["model"]["threads"] == "auto"


def test_defaults_when_there_is_no_file() -> None:
    assert not paths.config_file().exists()
    assert load_config() == Config()
    assert load_config_lenient() == (Config(), [])
    assert Config().sampler == PRESETS["prose"] and Config().model.context_size is None


def test_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scriptorium_home: Path) -> None:
    assert config_path() == scriptorium_home / "config" / "config.toml"
    monkeypatch.setenv("SCRIPTORIUM_CONFIG", str(tmp_path / "env.toml"))
    assert config_path() == tmp_path / "env.toml"
    assert config_path(tmp_path / "cli.toml") == tmp_path / "cli.toml"  # --config beats the variable
    (tmp_path / "env.toml").write_text('[ui]\ntheme = "nord"\n')
    assert load_config().ui.theme == "nord"


def test_keymap_keys_are_named_as_textual_names_them(tmp_path: Path) -> None:
    """ "Ctrl+G" or "F9", as key names are often written, matched no key press: the binding
    left its own key for none. A lone capital stays one (shift+k)."""
    path = write(
        tmp_path, '[keymap]\n"draft.continue" = "Ctrl+G, F9"\n"sampler.top_k_up" = "K"\n"app.tune" = "Alt+Shift+Left"\n'
    )
    assert dict(load_config(path).keymap) == {
        "draft.continue": "ctrl+g,f9",
        "sampler.top_k_up": "K",
        "app.tune": "alt+shift+left",
    }


INVALID = [
    ("modle = 1", "modle: unknown key (did you mean 'model'?)"),
    ("zzz = 1", "zzz: unknown key (known: model, sampler, presets, logit_bias, keymap, ui, server, speculative)"),
    ("[server]\nurl = 8080", "server.url: must be a string, not 8080"),
    ('[server]\nurl = "ftp://box"', "server.url: server URL 'ftp://box' is not an http:// or https:// address"),
    ('[server]\nadress = "box"', "server.adress: unknown key (known: url)"),
    ("model = 3", "model: must be a table ([model]), not 3"),
    ("[model]\ncontxt_size = 10", "model.contxt_size: unknown key (did you mean 'context_size'?)"),
    ("[model]\npath = 3", "model.path: must be a string, not 3"),
    ("[model]\nlora = true", "model.lora: must be a string, not true"),
    ('[model]\nlora_scale = "half"', 'model.lora_scale: must be between 0 and 4, not "half"'),
    ("[model]\nlora_scale = 5", "model.lora_scale: must be between 0 and 4, not 5"),
    ("[model]\nlora_scale = nan", "model.lora_scale: must be between 0 and 4, not nan"),
    ("[model]\ncontext_size = 2048.5", "model.context_size: must be a whole number from 64 to 1048576, not 2048.5"),
    ("[model]\ncontext_size = 32", "model.context_size: must be a whole number from 64 to 1048576, not 32"),
    (
        "[model]\nthreads = -2",
        'model.threads: must be "auto", 0 for every core, or a whole number from 1 to 1024, not -2',
    ),
    (
        '[model]\nthreads = "fast"',
        'model.threads: must be "auto", 0 for every core, or a whole number from 1 to 1024, not "fast"',
    ),
    ("[model]\ngpu_layers = -5", "model.gpu_layers: must be a whole number of at least -1, not -5"),
    ("[model]\ngpu_layers = true", "model.gpu_layers: must be a whole number of at least -1, not true"),
    ('[model]\ncontext_size = "big"', 'model.context_size: must be a whole number from 64 to 1048576, not "big"'),
    ('[model]\nfolders = "~/models"', 'model.folders: must be a list of folder paths, not "~/models"'),
    ('[model]\nfolders = [""]', 'model.folders: must be a list of folder paths; item 1 is ""'),
    ('[model]\nfolders = ["~/a", 3]', "model.folders: must be a list of folder paths; item 2 is 3"),
    ('[sampler]\nstop = ["x", ["y"]]', "sampler.stop: must be a list of strings; item 2 is a list"),
    ("[sampler]\ntemperature = 11", "sampler.temperature: temperature must be between 0 and 10, not 11.0"),
    ('[sampler]\ntemperature = "hot"', 'sampler.temperature: must be a number, not "hot"'),
    ("[sampler]\ntop_k = 1.5", "sampler.top_k: must be a whole number, not 1.5"),
    ("[sampler]\ntop_k = -1", "sampler.top_k: top-k must be 0 (off) or a positive whole number, not -1"),
    ("[sampler]\ntop_p = 0", "sampler.top_p: top-p must be in (0, 1], not 0.0"),
    ("[sampler]\nseed = true", "sampler.seed: must be a whole number, not true"),
    ("[sampler]\nseed = -1", "sampler.seed: seed must be in [0, 2^32), not -1"),
    ("[sampler]\nmax_tokens = 0", "sampler.max_tokens: max tokens must be at least 1, not 0"),
    ('[sampler]\nstop = "\\n"', 'sampler.stop: must be a list of strings, not "\\n"'),
    ('[sampler]\nstop = [""]', "sampler.stop: a stop string cannot be empty"),
    (
        '[sampler]\npreset = "wild"',
        'sampler.preset: unknown preset "wild" (choose from greedy, prose, creative, anti-loop)',
    ),
    ("[sampler]\ntemprature = 1", "sampler.temprature: unknown key (did you mean 'temperature'?)"),
    ("presets = 1", "presets: must be a table ([presets]), not 1"),
    ("[presets]\nmine = 1", "presets.mine: must be a table ([presets.mine]), not 1"),
    (
        "[presets.custom]\ntop_k = 1",
        "presets.custom: a preset name uses letters, digits, '-' and '_' and is not 'custom'",
    ),
    (
        '[presets."my preset"]\ntop_k = 1',
        "presets.my preset: a preset name uses letters, digits, '-' and '_' and is not 'custom'",
    ),
    (
        '[presets.mine]\nbase = "wild"',
        'presets.mine.base: unknown preset "wild" (choose from greedy, prose, creative, anti-loop)',
    ),
    ("[presets.mine]\ntop_p = 2", "presets.mine.top_p: top-p must be in (0, 1], not 2.0"),
    (
        '[presets.mine]\npreset = "x"',
        "presets.mine.preset: unknown key (known: base, temperature, top_k, top_p, "
        "min_p, repeat_penalty, repeat_window, presence_penalty, frequency_penalty, dry_multiplier, dry_base, dry_allowed_length, dry_penalty_last_n, dry_sequence_breakers, xtc_probability, xtc_threshold, typical_p, top_n_sigma, dynatemp_range, dynatemp_exponent, mirostat, mirostat_tau, mirostat_eta, samplers, seed, max_tokens, length, stop, heal)",
    ),
    ("[logit_bias]\nban_byte_tokens = 1", "logit_bias.ban_byte_tokens: must be true or false, not 1"),
    ("[logit_bias]\nentries = {a = 1}", "logit_bias.entries: must be a list of [token_id, bias] pairs, not a table"),
    ("[logit_bias]\nentries = [[1, 2, 3]]", "logit_bias.entries[0]: must be a [token_id, bias] pair, not a list"),
    ("[logit_bias]\nentries = [5]", "logit_bias.entries[0]: must be a [token_id, bias] pair, not 5"),
    ('[logit_bias]\nentries = [["a", 1]]', 'logit_bias.entries[0]: must be a whole number (a token id), not "a"'),
    ('[logit_bias]\nentries = [[1, "x"]]', 'logit_bias.entries[0]: must be a number, not "x"'),
    ("[logit_bias]\nentries = [[-3, 1]]", "logit_bias.entries[0]: logit bias names token -3, which does not exist"),
    (
        "[logit_bias]\nentries = [[3, 5000]]",
        "logit_bias.entries[0]: logit bias for token 3 must be in [-1000, 1000], not 5000.0",
    ),
    ("[logit_bias]\nban = true", "logit_bias.ban: unknown key (known: ban_byte_tokens, entries)"),
    ("[keymap]\ngenerate = 5", 'keymap.generate: must be a string of keys like "ctrl+g,f5", not 5'),
    (
        '[keymap]\ngenerate = "ctrl+g,,f5"',
        'keymap.generate: must be keys separated by commas, like "ctrl+g,f5", not "ctrl+g,,f5"',
    ),
    (
        '[keymap]\ngenerate = "ctrl g"',
        'keymap.generate: must be keys separated by commas, like "ctrl+g,f5", not "ctrl g"',
    ),
    (
        '[keymap]\ngenerate = "f5,ctrl+"',
        'keymap.generate: "ctrl+" is no key: a key name after any of shift+, ctrl+, alt+, meta+, super+, hyper+',
    ),
    (
        '[keymap]\ngenerate = "strg+g"',
        'keymap.generate: "strg+g" is no key: a key name after any of shift+, ctrl+, alt+, meta+, super+, hyper+',
    ),
    (
        '[ui]\ntheme = ""',
        f'ui.theme: unknown theme ""; the default is used (known: {", ".join(sorted(BUILTIN_THEMES))})',
    ),
    ("[ui]\ntheme = 1", "ui.theme: must be a string, not 1"),
    ('[ui]\ncolour = "red"', "ui.colour: unknown key (known: theme, frames_per_second, language)"),
    ("[ui]\nframes_per_second = 0", "ui.frames_per_second: must be a whole number from 1 to 60, not 0"),
    ("[ui]\nframes_per_second = 12.5", "ui.frames_per_second: must be a whole number from 1 to 60, not 12.5"),
    ('[ui]\nlanguage = "de"', "ui.language: must be one of 'auto', 'en', 'it', not \"de\""),
    (
        '[speculative]\nguesser = "ngram"',
        "speculative.guesser: must be one of 'off', 'lookup', 'draft', not \"ngram\"",
    ),
    ("[speculative]\ndraft_max = 0", "speculative.draft_max: must be a whole number from 1 to 32, not 0"),
    ("[speculative]\ndraft_max = 2.5", "speculative.draft_max: must be a whole number from 1 to 32, not 2.5"),
    (
        '[speculative]\nguesser = "draft"',
        "speculative.guesser: 'draft' needs speculative.draft_model (a GGUF file); speculation is off",
    ),
]


@pytest.mark.parametrize("text, problem", INVALID, ids=[problem.split(":")[0] for _, problem in INVALID])
def test_every_invalid_value_is_one_line_naming_the_key(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text + "\n")
    config, problems = load_config_lenient(path)
    assert problems == [f"{path}: {problem}"]
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: {problem}"
    assert "\n" not in str(caught.value)


def test_lenient_keeps_the_good_values(tmp_path: Path) -> None:
    text = """
[model]
context_size = "big"
threads = 4
[sampler]
temperature = 99
top_k = 20
[logit_bias]
entries = [[1, 2], "oops", [3, 4]]
"""
    path = write(tmp_path, text)
    config, problems = load_config_lenient(path)
    assert config.model.context_size is None and config.model.threads == 4
    assert config.sampler == PRESETS["prose"].with_changes(top_k=20)
    assert config.logit_bias.entries == ((1, 2.0), (3, 4.0))
    assert len(problems) == 3
    with pytest.raises(ConfigError, match=r"context_size.*\(and 2 more; see scriptorium config show\)$"):
        load_config(path)


@pytest.mark.parametrize(
    "content, problem",
    [
        ("[model\npath = 1", "not valid TOML: "),
        (b"\xff\xfe[model]", "is not UTF-8 text"),
    ],
)
def test_unreadable_files(tmp_path: Path, content, problem: str) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    config, problems = load_config_lenient(path)
    assert config == Config() and len(problems) == 1 and problem in problems[0] and str(path) in problems[0]
    with pytest.raises(ConfigError):
        load_config(path)


def test_explicit_file_must_exist_the_default_need_not(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"^config file not found: {tmp_path / 'nope.toml'}$"):
        load_config(tmp_path / "nope.toml")
    (tmp_path / "dir.toml").mkdir()
    assert load_config_lenient(tmp_path / "dir.toml")[1] == [f"config file {tmp_path / 'dir.toml'} is a folder"]


def test_config_preset_lookup() -> None:
    config, _ = parse_config({"presets": {"mine": {"top_k": 3}}})
    assert config.preset("mine").top_k == 3 and config.preset("mine").preset == "mine"
    with pytest.raises(
        SettingsError, match="^unknown preset 'x' \\(choose from greedy, prose, creative, anti-loop, mine\\)$"
    ):
        config.preset("x")


def test_default_file_documents_every_field_and_changes_nothing(tmp_path: Path) -> None:
    config, problems = parse_config(tomllib.loads(DEFAULT_CONFIG_TEXT), tmp_path / "config.toml")
    assert problems == [] and config == Config(source=tmp_path / "config.toml")
    for table, cls in (("model", ModelConfig), ("ui", UiConfig), ("sampler", SamplerSettings)):
        for field in fields(cls):
            assert f"# {field.name} = " in DEFAULT_CONFIG_TEXT, f"{table}.{field.name} is missing from the starter file"
    # Uncomment every example setting and table header: the examples must be valid too.
    uncommented = "\n".join(
        line[2:] if re.match(r'^# ("?[\w.]+"? = |\[)', line) else line for line in DEFAULT_CONFIG_TEXT.splitlines()
    )
    example, problems = parse_config(tomllib.loads(uncommented), tmp_path / "config.toml")
    assert problems == [] and example.presets["dialogue"].temperature == 0.9


def test_every_field_of_every_table_is_in_the_starter_file_and_in_config_show(tmp_path: Path) -> None:
    """A table's keys are its dataclass's fields (config/schema.py): each is in the starter
    file (and so docs/reference.md), and `config show` writes each that is set."""
    from scriptorium.inference.core.speculation import Speculation

    config = Config(
        model=ModelConfig(
            path="/m.gguf",
            lora=Path("/l.gguf"),
            tokenizer=Path("/t.model"),
            context_size=512,
            threads=2,
            folders=(Path("/f"),),
        ),
        ui=UiConfig(theme="nord", frames_per_second=5, language="it"),
        server=ServerConfig(url="http://h:1"),
        speculation=Speculation(guesser="draft", draft_model=Path("/d.gguf")),
        logit_bias=LogitBias(entries=((1, 2.0),)),
    )
    shown = effective_config(config)
    tables = [(table, getattr(config, name)) for table, name in TABLES.items()]
    tables = [(table, value) for table, value in tables if is_dataclass(value)]
    assert [table for table, _ in tables] == ["model", "sampler", "logit_bias", "ui", "server", "speculative"]
    for table, value in tables:
        assert f"[{table}]" in DEFAULT_CONFIG_TEXT
        for field in fields(value):
            assert f"# {field.name} = " in DEFAULT_CONFIG_TEXT, f"{table}.{field.name} is missing from the starter file"
            if getattr(value, field.name) is not None and table != "sampler":
                assert field.name in shown[table], f"{table}.{field.name} is missing from config show"


def test_write_default_config_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    write_default_config(path)
    assert path.read_text(encoding="utf-8") == DEFAULT_CONFIG_TEXT
    path.write_text("# mine\n")
    with pytest.raises(Exception, match="already exists"):
        write_default_config(path)
    assert path.read_text() == "# mine\n"


def test_effective_config_round_trips(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    config = load_config(path)
    again, problems = parse_config(tomllib.loads(effective_config_toml(config)), path)
    assert problems == [] and again == config


def test_a_key_with_a_newline_is_reported_on_one_line(tmp_path: Path) -> None:
    """Found by the fuzz tests: TOML allows any quoted key, and the problem line printed it raw."""
    from scriptorium.app.config.file import load_config_lenient

    path = tmp_path / "c.toml"
    path.write_text('[presets.path]\n"a\\nb" = false\n[sampler]\n"\\u0007x" = 1\n', encoding="utf-8")
    _, problems = load_config_lenient(path)
    assert [line.removeprefix(f"{path}: ").split(": ")[0] for line in problems] == [
        "presets.path.a\\nb",
        "sampler.\\x07x",
    ]


def test_server_url_is_read_normalised_and_shown(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[server]\nurl = "gpu-box:8080/"\n', encoding="utf-8")
    config = load_config(path)
    assert config.server.url == "http://gpu-box:8080"
    assert 'url = "http://gpu-box:8080"' in effective_config_toml(config)
    assert "[server]" in DEFAULT_CONFIG_TEXT and "# url = " in DEFAULT_CONFIG_TEXT


def test_a_config_starting_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Notepad's "UTF-8 with BOM" made the whole file "not valid TOML"."""
    path = tmp_path / "config.toml"
    path.write_bytes("\ufeff[sampler]\ntemperature = 0.5\n".encode("utf-8"))
    assert load_config(path).sampler.temperature == 0.5


def test_a_command_that_does_not_start_the_app_only_warns_about_the_apps_sections(tmp_path: Path) -> None:
    """`continue` exited 2 for a bad theme, though the line itself says the default is used."""
    path = tmp_path / "config.toml"
    path.write_text('[ui]\ntheme = "nope"\n[keymap]\n"app.quit" = 5\n[sampler]\ntemperature = 0.5\n', encoding="utf-8")
    warned: list[str] = []
    assert load_config(path, warn=warned.append).sampler.temperature == 0.5
    assert sorted(line.split(": ", 2)[1] for line in warned) == ["keymap.app.quit", "ui.theme"]
    with pytest.raises(ConfigError, match="keymap.app.quit"):
        load_config(path)  # read strictly, they are problems as before
    path.write_text('[ui]\ntheme = "nope"\n[sampler]\ntemperature = "hot"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="sampler.temperature"):
        load_config(path, warn=warned.append)
