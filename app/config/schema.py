"""The TOML config file: typed, validated, and forgiving where it safely can be.

Precedence everywhere: command-line flags > this file > built-in defaults. The file lives
at `paths.config_file()` (SCRIPTORIUM_CONFIG names another one); `--config FILE` beats
both. `load_config` is strict (the CLI: first problem as one line, exit 2);
`load_config_lenient` returns defaults for whatever is wrong plus the problems, so the
TUI starts anyway and shows them.

This module is the schema alone; reading the file is config/file.py, turning its tables
into a Config is config/parse.py, the commented default file and the effective-config
dump are config/text.py. A table's keys are its dataclass's fields, named once here: the
parser's known keys, `config show`'s tables and the starter file's test all read them.
A field's metadata says what its name and type cannot: `table` (Config: the file's name for
the field's table; None for what is not one) and `show` (how `config show` writes a value;
None leaves it out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.core.load_options import DEFAULT_CONTEXT_CAP
from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings, SettingsError
from scriptorium.inference.core.speculation import Speculation


DEFAULT_CONTEXT_SIZE = DEFAULT_CONTEXT_CAP
DEFAULT_PRESET = "prose"
FLASH_ATTN_CHOICES = {"auto": None, "on": True, "off": False}
"""flash_attn in the config and --flash-attn -> LoadOptions.flash_attn (None: measured, the faster path)."""


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
    lora_scale: float = 1.0
    """Adapter strength: 0 disables it, 1 is as trained, at most 4."""
    tokenizer: Path | None = None
    """The SentencePiece `.model` the model was trained with: scriptorium then tokenizes
    with it (when its pieces match the GGUF's) instead of llama.cpp. `scriptorium vocab`
    checks the pair."""
    context_size: int | None = None
    """Context size in tokens (at least 64); None: the model's training context, at most
    DEFAULT_CONTEXT_SIZE. A larger value is allowed, and said to exceed the training."""
    threads: int | None = field(default=None, metadata={"show": lambda threads: "auto" if threads is None else threads})
    """CPU threads: None ("auto" in the file, the default) chooses them by measurement while
    the model writes (inference/local/thread_choice.py); a number fixes them, 0 at every core."""
    gpu_layers: int = -1
    """Layers offloaded to the GPU: -1 all, 0 none."""
    flash_attn: str = "auto"
    """Flash attention: "on", "off", or "auto" (both timed at a model's first load, the faster kept)."""
    folders: tuple[Path, ...] = ()
    """Extra folders searched for GGUF files, besides the data dir, LM Studio and the HF cache."""


@dataclass(frozen=True, slots=True)
class UiConfig:
    """[ui]: how the app looks."""

    theme: str | None = None
    """A Textual theme name (e.g. "textual-dark", "nord"); None keeps the app's default.
    The app checks the name against its registered themes."""
    frames_per_second: int | None = None
    """Screen updates a second while tokens stream; None keeps the app's default (10).
    Its bounds are TuiSettings.frames_per_second's rule."""
    language: str = field(
        # "auto", the default, is left out of `config show` as an unset theme is: the file said nothing.
        default="auto",
        metadata={"show": lambda language: None if language == "auto" else language},
    )
    """The interface's language: "en", "it", or "auto" (the default), which follows the locale
    as gettext does (LANGUAGE, LC_ALL, LC_MESSAGES, LANG): Italian where it is it*, else English.
    The command line stays English."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """[server]: a running llama-server to use instead of the in-process engine."""

    url: str | None = None
    """e.g. "http://gpu-box:8080"; None runs the model in-process. --server URL overrides it."""


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
    server: ServerConfig = field(default_factory=ServerConfig)
    """[server]"""
    speculation: Speculation = field(default_factory=Speculation, metadata={"table": "speculative"})
    """[speculative]: `guesser` ("off", "lookup", "draft"), `draft_max`, `draft_model`."""
    source: Path | None = field(default=None, metadata={"table": None})
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


TABLES: dict[str, str] = {
    f.metadata.get("table", f.name): f.name for f in fields(Config) if f.metadata.get("table", f.name)
}
"""The file's tables, in order -> the Config field each fills."""


def shown(record: Any) -> dict[str, Any]:
    """A table's values as `config show` writes them (TOML has no None: unset values are left out)."""
    table = {}
    for f in fields(record):
        value = f.metadata.get("show", _toml)(getattr(record, f.name))
        if value is not None:
            table[f.name] = value
    return table


def _toml(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_toml(item) for item in value]
    return value
