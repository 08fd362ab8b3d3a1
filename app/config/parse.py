"""Turn the config file's TOML tables into a Config, one problem line per bad key or value.

Each bad value is reported and replaced by its default, so one typo never costs the rest
of the file. Problems name the key as written in the file (`model.context_size`,
`presets.mine.temperature`, `logit_bias.entries[2]`).
"""

from __future__ import annotations

import difflib
import json
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import (
    PRESETS,
    LogitBias,
    SamplerSettings,
    SettingsError,
    parse_order,
    rule_for,
)
from scriptorium.inference.core.speculation import GUESSERS, Speculation

from scriptorium.app.config.schema import (
    DEFAULT_PRESET,
    FLASH_ATTN_CHOICES,
    TABLES,
    Config,
    ModelConfig,
    ServerConfig,
    UiConfig,
)

TOP_LEVEL = tuple(TABLES)
SAMPLER_FIELDS = tuple(f.name for f in fields(SamplerSettings) if f.name != "preset")
FLOAT_FIELDS = {name for name, kind in typing.get_type_hints(SamplerSettings).items() if kind is float}
"""The sampler's settings that are numbers with a fraction, from SamplerSettings' annotations."""
PRESET_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
RESERVED_PRESET_NAMES = {"custom"}
"""SamplerSettings.preset says 'custom' once a value is changed by hand."""


class _Bad(ValueError):
    """One bad value; its message completes '<key>: ...'."""


KEY_MODIFIERS = ("shift", "ctrl", "alt", "meta", "super", "hyper")
"""The modifiers Textual names in a key (textual._xterm_parser.MODIFIERS, and shift)."""


def _is_key(key: str) -> bool:
    *modifiers, name = key.split("+")
    return bool(name) and all(modifier.lower() in KEY_MODIFIERS for modifier in modifiers)


def _textual_key(key: str) -> str:
    """`key` as Textual names the keys a terminal sends: modifiers and named keys in lower
    case ("Ctrl+G" and "F6" matched no key press, and moved the binding off its own key);
    a lone letter keeps its case, "K" being shift+k. Ctrl with a letter is one key either case."""
    *modifiers, name = key.split("+")
    modifiers = [modifier.lower() for modifier in modifiers]
    if len(name) > 1 or "ctrl" in modifiers:
        name = name.lower()
    return "+".join([*modifiers, name])


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _whole(value: Any, what: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"must be a whole number{' ' + what if what else ''}, not {_show(value)}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"must be a number, not {_show(value)}")
    return float(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_show(value)}")
    return value


def _list_of_strings(value: Any, what: str, *, blank_allowed: bool = True) -> list[str]:
    """`value` as a list of strings; a bad item is named by its place, since "not a list"
    for a list left the author to guess which entry was wrong."""
    if not isinstance(value, list):
        raise _Bad(f"must be a list of {what}, not {_show(value)}")
    for place, item in enumerate(value, start=1):
        if not isinstance(item, str) or not (blank_allowed or item.strip()):
            raise _Bad(f"must be a list of {what}; item {place} is {_show(item)}")
    return value


def _unknown(key: str, allowed: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(allowed)})"
    return f"unknown key{hint}"


class _Parser:
    def __init__(self, source: Path | None) -> None:
        self.base_dir = source.parent if source is not None else Path.cwd()
        self.problems: list[str] = []

    def report(self, key: str, message: str) -> None:
        # Keys and values are the author's: a newline or a control character in one must
        # not break the problem's one line (or the terminal showing it).
        self.problems.append("".join(c if c.isprintable() else repr(c)[1:-1] for c in f"{key}: {message}"))

    def table(self, data: Mapping[str, Any], key: str) -> dict[str, Any]:
        value = data.get(key, {})
        if isinstance(value, dict):
            return value
        self.report(key, f"must be a table ([{key}]), not {_show(value)}")
        return {}

    def each(
        self, table: Mapping[str, Any], prefix: str, readers: Mapping[str, Callable[[Any], Any]]
    ) -> dict[str, Any]:
        """Run each known key's reader; report unknown keys and bad values; return the good ones."""
        good: dict[str, Any] = {}
        for key, value in table.items():
            reader = readers.get(key)
            if reader is None:
                self.report(f"{prefix}.{key}", _unknown(key, list(readers)))
                continue
            try:
                good[key] = reader(value)
            except _Bad as error:
                self.report(f"{prefix}.{key}", str(error))
        return good

    # -- [model] ---------------------------------------------------------------------

    def path(self, value: Any) -> Path | None:
        text = _string(value).strip()
        if not text:
            return None
        path = Path(text).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    def model_reference(self, value: Any) -> str | None:
        """A path (made absolute) or a discovered model's name / "demo" (kept as written)."""
        text = _string(value).strip()
        if not text:
            return None
        looks_like_path = "/" in text or "\\" in text or text.startswith("~") or text.lower().endswith(".gguf")
        return str(self.path(text)) if looks_like_path else text

    def folders(self, value: Any) -> tuple[Path, ...]:
        folders = _list_of_strings(value, "folder paths", blank_allowed=False)
        return tuple(p for p in (self.path(item) for item in folders) if p is not None)

    @staticmethod
    def flash_attn(value: Any) -> str:
        if not isinstance(value, str) or value not in FLASH_ATTN_CHOICES:
            raise _Bad(f"must be one of {', '.join(repr(c) for c in FLASH_ATTN_CHOICES)}, not {_show(value)}")
        return value

    def model(self, data: Mapping[str, Any]) -> ModelConfig:
        def ruled(option: str) -> Callable[[Any], Any]:
            """The engine's own rule for `option` (LoadOptions), read from a config value."""
            rule = rule_for(LoadOptions, option)

            def read(value: Any) -> Any:
                problem = rule.problem(value)
                if problem is not None:
                    if not isinstance(value, (int, float)) or isinstance(value, bool):
                        # As TOML spells it (true, "big"): the rule's own message says True, big.
                        problem = f"must be {rule.describe()}, not {_show(value)}"
                    raise _Bad(problem)
                return float(value) if not rule.whole else value

            return read

        def threads(value: Any) -> int | None:
            """ "auto" (None: measured while writing), 0 (every core) or a count the engine's rule allows."""
            if value == "auto":
                return None
            if value == 0 and not isinstance(value, bool):
                return 0
            try:
                return ruled("n_threads")(value)
            except _Bad:
                raise _Bad(
                    f'must be "auto", 0 for every core, or {rule_for(LoadOptions, "n_threads").describe()}, '
                    f"not {_show(value)}"
                ) from None

        good = self.each(
            self.table(data, "model"),
            "model",
            {
                "path": self.model_reference,
                "lora": self.path,
                "tokenizer": self.path,
                "lora_scale": ruled("lora_scale"),
                "context_size": ruled("n_ctx"),
                "threads": threads,
                "gpu_layers": ruled("n_gpu_layers"),
                "flash_attn": self.flash_attn,
                "folders": self.folders,
            },
        )
        return ModelConfig(**good)

    # -- [sampler] and [presets.NAME] -------------------------------------------------

    def sampler_values(
        self, table: Mapping[str, Any], prefix: str, base: SamplerSettings, name_key: str
    ) -> SamplerSettings:
        """`base` with every valid override from `table` applied; `name_key` ('preset' in
        [sampler], 'base' in [presets.NAME]) was taken out and is only listed as known."""
        settings = base
        for key, value in table.items():
            where = f"{prefix}.{key}"
            if key not in SAMPLER_FIELDS:
                self.report(where, _unknown(key, [name_key, *SAMPLER_FIELDS]))
                continue
            try:
                candidate = replace(settings, **{key: self.sampler_value(key, value)}).validated()
            except _Bad as error:
                self.report(where, str(error))
            except SettingsError as error:
                self.report(where, str(error))
            else:
                settings = candidate
        return settings

    @classmethod
    def sampler_value(cls, key: str, value: Any) -> Any:
        if key in FLOAT_FIELDS:
            return _number(value)
        if key == "heal":
            return cls.boolean(value)
        if key == "length":
            return _string(value)
        if key == "stop":
            return tuple(_list_of_strings(value, "strings"))
        if key == "dry_sequence_breakers":
            return tuple(_list_of_strings(value, "strings"))
        if key == "samplers":
            # llama.cpp's own spelling ("penalties;dry;top_k") as well as a TOML list.
            names = parse_order(value) if isinstance(value, str) else _list_of_strings(value, "sampler names")
            return tuple(names)
        return _whole(value)

    def presets(self, data: Mapping[str, Any]) -> dict[str, SamplerSettings]:
        user: dict[str, SamplerSettings] = {}
        for name, table in self.table(data, "presets").items():
            where = f"presets.{name}"
            if not PRESET_NAME.match(name) or name in RESERVED_PRESET_NAMES:
                self.report(where, "a preset name uses letters, digits, '-' and '_' and is not 'custom'")
                continue
            if not isinstance(table, dict):
                self.report(where, f"must be a table ([{where}]), not {_show(table)}")
                continue
            values = dict(table)
            base = self.base_preset(values.pop("base", DEFAULT_PRESET), f"{where}.base", user)
            user[name] = replace(self.sampler_values(values, where, base, "base"), preset=name)
        return user

    def base_preset(self, value: Any, where: str, user: Mapping[str, SamplerSettings] | None = None) -> SamplerSettings:
        known = {**PRESETS, **(user or {})}
        if isinstance(value, str) and value in known:
            return known[value]
        self.report(where, f"unknown preset {_show(value)} (choose from {', '.join(known)})")
        return PRESETS[DEFAULT_PRESET]

    def sampler(self, data: Mapping[str, Any], user: Mapping[str, SamplerSettings]) -> SamplerSettings:
        values = dict(self.table(data, "sampler"))
        base = self.base_preset(values.pop("preset", DEFAULT_PRESET), "sampler.preset", user)
        settings = self.sampler_values(values, "sampler", base, "preset")
        return settings if settings.shape() == base.shape() else replace(settings, preset="custom")

    # -- [logit_bias], [keymap], [ui] -------------------------------------------------

    def logit_bias(self, data: Mapping[str, Any]) -> LogitBias:
        table = self.table(data, "logit_bias")
        good = self.each(table, "logit_bias", {"ban_byte_tokens": self.boolean, "entries": self.bias_entries})
        return LogitBias(ban_byte_tokens=good.get("ban_byte_tokens", True), entries=good.get("entries", ()))

    @staticmethod
    def boolean(value: Any) -> bool:
        if not isinstance(value, bool):
            raise _Bad(f"must be true or false, not {_show(value)}")
        return value

    def bias_entries(self, value: Any) -> tuple[tuple[int, float], ...]:
        if not isinstance(value, list):
            raise _Bad(f"must be a list of [token_id, bias] pairs, not {_show(value)}")
        entries: dict[int, float] = {}
        for index, pair in enumerate(value):
            where = f"logit_bias.entries[{index}]"
            try:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _Bad(f"must be a [token_id, bias] pair, not {_show(pair)}")
                token = _whole(pair[0], "(a token id)")
                bias = _number(pair[1])
                LogitBias(entries=((token, bias),)).validated()
            except _Bad as error:
                self.report(where, str(error))
            except SettingsError as error:
                self.report(where, str(error))
            else:
                entries[token] = bias  # a later entry for the same token wins, as on the command line
        return tuple(entries.items())

    def keymap(self, data: Mapping[str, Any]) -> dict[str, str]:
        keymap: dict[str, str] = {}
        for binding_id, keys in self.table(data, "keymap").items():
            where = f"keymap.{binding_id}"
            if not isinstance(keys, str):
                self.report(where, f'must be a string of keys like "ctrl+g,f5", not {_show(keys)}')
                continue
            parts = [part.strip() for part in keys.split(",")]
            if not all(parts) or any(" " in part for part in parts):
                self.report(where, f'must be keys separated by commas, like "ctrl+g,f5", not {_show(keys)}')
                continue
            # "ctrl+" or "strg+g" is no key a terminal sends: the binding went dead, unreported.
            if broken := next((part for part in parts if not _is_key(part)), None):
                self.report(
                    where,
                    f"{_show(broken)} is no key: a key name after any of {', '.join(m + '+' for m in KEY_MODIFIERS)}",
                )
                continue
            keymap[binding_id] = ",".join(_textual_key(part) for part in parts)
        return keymap

    def ui(self, data: Mapping[str, Any]) -> UiConfig:
        def theme(value: Any) -> str:
            # Textual's own themes: the app registers no others.
            from textual.theme import BUILTIN_THEMES

            name = _string(value).strip()
            if name not in BUILTIN_THEMES:
                known = ", ".join(sorted(BUILTIN_THEMES))
                raise _Bad(f"unknown theme {_show(value)}; the default is used (known: {known})")
            return name

        def frames_per_second(value: Any) -> int:
            from scriptorium.app.config.tui_settings import TuiSettings

            problem = rule_for(TuiSettings, "frames_per_second").problem(value)
            if problem is not None:
                raise _Bad(problem)
            return int(value)

        def language(value: Any) -> str:
            from scriptorium.app.i18n.choice import LANGUAGES

            if value not in LANGUAGES:
                raise _Bad(f"must be one of {', '.join(repr(code) for code in LANGUAGES)}, not {_show(value)}")
            return value

        checks = {"theme": theme, "frames_per_second": frames_per_second, "language": language}
        return UiConfig(**self.each(self.table(data, "ui"), "ui", checks))

    def server(self, data: Mapping[str, Any]) -> ServerConfig:
        from scriptorium.inference.remote.remote_http import ServerError, normalise_url

        def url(value: Any) -> str:
            try:
                return normalise_url(_string(value))
            except ServerError as error:
                raise _Bad(str(error)) from None

        return ServerConfig(**self.each(self.table(data, "server"), "server", {"url": url}))

    def speculative(self, data: Mapping[str, Any]) -> Speculation:
        def guesser(value: Any) -> str:
            if value not in GUESSERS:
                raise _Bad(f"must be one of {', '.join(repr(g) for g in GUESSERS)}, not {_show(value)}")
            return value

        def draft_max(value: Any) -> int:
            rule = rule_for(Speculation, "draft_max")
            if rule.problem(value) is not None:
                raise _Bad(f"must be {rule.describe()}, not {_show(value)}")
            return value

        good = self.each(
            self.table(data, "speculative"),
            "speculative",
            {"guesser": guesser, "draft_max": draft_max, "draft_model": self.path},
        )
        speculation = Speculation(**good)
        if speculation.guesser == "draft" and speculation.draft_model is None:
            self.report(
                "speculative.guesser", "'draft' needs speculative.draft_model (a GGUF file); speculation is off"
            )
            return replace(speculation, guesser="off")
        return speculation


def parse_config(data: Mapping[str, Any], source: Path | None = None) -> tuple[Config, list[str]]:
    """A Config from a parsed TOML document, and a 'key: problem' line per bad key or value.

    Relative paths are taken relative to the folder of `source` (the config file).
    """
    parser = _Parser(source)
    for key in data:
        if key not in TOP_LEVEL:
            parser.report(key, _unknown(key, TOP_LEVEL))
    user_presets = parser.presets(data)
    config = Config(
        model=parser.model(data),
        sampler=parser.sampler(data, user_presets),
        presets=MappingProxyType(user_presets),
        logit_bias=parser.logit_bias(data),
        keymap=MappingProxyType(parser.keymap(data)),
        ui=parser.ui(data),
        server=parser.server(data),
        speculation=parser.speculative(data),
        source=source,
    )
    return config, parser.problems
