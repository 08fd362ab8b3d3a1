"""The TOML config file: typed, validated, and forgiving where it safely can be.

Precedence everywhere: command-line flags > this file > built-in defaults. The file lives
at `paths.config_file()` (SCRIPTORIUM_CONFIG names another one); `--config FILE` beats
both. `load_config` is strict (the CLI: first problem as one line, exit 2);
`load_config_lenient` returns defaults for whatever is wrong plus the problems, so the
TUI starts anyway and shows them. Parsing lives in config_parse.py, the commented default
file and the effective-config dump in config_text.py.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from scriptorium.inference.errors import ScriptoriumError
from scriptorium.inference.settings import PRESETS, LogitBias, SamplerSettings, SettingsError

from . import paths

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pyproject pulls tomli in for 3.10
    import tomli as tomllib

DEFAULT_CONTEXT_SIZE = 4096
DEFAULT_PRESET = "prose"


class ConfigError(ScriptoriumError):
    """The config file is missing, unreadable, not TOML, or holds a bad key or value."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """[model]: what to load and how."""

    path: str | None = None
    """Default model: a GGUF path (relative paths are relative to the config file), the name
    of a model that `scriptorium models` lists, or "demo". None: the demo model."""
    lora: Path | None = None
    """Default LoRA adapter (a GGUF path), or None."""
    tokenizer: Path | None = None
    """The SentencePiece `.model` the model was trained with: scriptorium then tokenizes
    with it (when its pieces match the GGUF's) instead of llama.cpp. `scriptorium vocab`
    checks the pair."""
    lora_scale: float = 1.0
    """Adapter strength: 0 disables it, 1 is as trained, at most 4."""
    context_size: int = DEFAULT_CONTEXT_SIZE
    """Context size in tokens (at least 64)."""
    threads: int | None = None
    """CPU threads; None (or 0 in the file) uses every core."""
    gpu_layers: int = -1
    """Layers offloaded to the GPU: -1 all, 0 none."""
    folders: tuple[Path, ...] = ()
    """Extra folders searched for GGUF files, besides the data dir, LM Studio and the HF cache."""


@dataclass(frozen=True, slots=True)
class UiConfig:
    """[ui]: how the app looks."""

    theme: str | None = None
    """A Textual theme name (e.g. "textual-dark", "nord"); None keeps the app's default.
    The app checks the name against its registered themes."""


@dataclass(frozen=True, slots=True)
class Config:
    """The whole config file, with built-in defaults for everything it leaves out."""

    model: ModelConfig = field(default_factory=ModelConfig)
    """[model]"""
    sampler: SamplerSettings = field(default_factory=lambda: PRESETS[DEFAULT_PRESET])
    """[sampler]: the default sampler, a preset (`preset = "..."`) plus overrides."""
    presets: Mapping[str, SamplerSettings] = field(default_factory=lambda: MappingProxyType({}))
    """[presets.NAME]: the user's own presets, each a base preset plus overrides."""
    logit_bias: LogitBias = field(default_factory=LogitBias)
    """[logit_bias]: `ban_byte_tokens` and `entries = [[token_id, bias], ...]`."""
    keymap: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """[keymap]: binding id -> keys ("ctrl+g,f5"), handed to Textual's App.set_keymap."""
    ui: UiConfig = field(default_factory=UiConfig)
    """[ui]"""
    source: Path | None = None
    """The file this came from; None when only built-in defaults apply."""

    def all_presets(self) -> dict[str, SamplerSettings]:
        """Built-in presets overlaid with the user's (a user preset may redefine a built-in)."""
        return {**PRESETS, **self.presets}

    def preset(self, name: str) -> SamplerSettings:
        """A preset by name, the user's first; SettingsError (one line) for an unknown name."""
        presets = self.all_presets()
        try:
            return presets[name]
        except KeyError:
            raise SettingsError(f"unknown preset '{name}' (choose from {', '.join(presets)})") from None


def config_path(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """The config file in effect: `--config FILE`, else SCRIPTORIUM_CONFIG, else the default."""
    return Path(cli_value).expanduser() if cli_value else paths.config_file()


def _read(path: Path, explicit: bool) -> tuple[dict | None, str | None]:
    """(TOML table or None, problem or None); a missing default file is simply no config."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, (f"config file not found: {path}" if explicit else None)
    except IsADirectoryError:
        return None, f"config file {path} is a folder"
    except UnicodeDecodeError:
        return None, f"config file {path} is not UTF-8 text"
    except OSError as error:
        return None, f"cannot read config file {path}: {error.strerror or error}"
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as error:
        return None, f"{path}: not valid TOML: {error}"


def load_config_lenient(cli_value: str | os.PathLike[str] | None = None) -> tuple[Config, list[str]]:
    """The config with built-in defaults wherever the file is missing or wrong, and one line
    per problem found (each names the file and the key). Never raises for a bad file."""
    from .config_parse import parse_config

    path = config_path(cli_value)
    data, problem = _read(path, explicit=cli_value is not None)
    if data is None:
        return Config(), [problem] if problem else []
    config, problems = parse_config(data, path)
    return config, [f"{path}: {line}" for line in problems]


def load_config(cli_value: str | os.PathLike[str] | None = None) -> Config:
    """The config, or ConfigError naming the first problem in one line."""
    config, problems = load_config_lenient(cli_value)
    if problems:
        more = f" (and {len(problems) - 1} more; see scriptorium config show)" if len(problems) > 1 else ""
        raise ConfigError(problems[0] + more)
    return config
