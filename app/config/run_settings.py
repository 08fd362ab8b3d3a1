"""Command-line flags over the config over built-in defaults, in one place.

`scriptorium continue`, `info` and the TUI all call `run_settings(args, config)`. Flags
are read by the attribute names commands/common.py gives them (`--ctx` -> args.ctx...);
a flag a command does not define counts as not given, so every command can use this.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.core.load_options import LoadOptions, usable_cores
from scriptorium.inference.core.settings import LogitBias, SamplerSettings, SettingsError, parse_order, rule_for
from scriptorium.inference.core.speculation import OFF, Speculation

from scriptorium.app.config.schema import FLASH_ATTN_CHOICES, Config

SAMPLER_FLAGS = (
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "repeat_penalty",
    "repeat_window",
    "presence_penalty",
    "frequency_penalty",
    "dry_multiplier",
    "dry_base",
    "dry_allowed_length",
    "dry_penalty_last_n",
    "xtc_probability",
    "xtc_threshold",
    "typical_p",
    "top_n_sigma",
    "dynatemp_range",
    "dynatemp_exponent",
    "mirostat",
    "mirostat_tau",
    "mirostat_eta",
    "seed",
    "max_tokens",
    "length",
    "heal",
)
"""SamplerSettings fields that have a flag of the same name (cli/common.py)."""

LOCAL_ONLY_FLAGS = {
    "model": "--model",
    "lora": "--lora",
    "spm": "--spm",
    "ctx": "--ctx",
    "threads": "--threads",
    "gpu_layers": "--gpu-layers",
    "flash_attn": "--flash-attn",
    "speculative": "--speculative",
    "draft_max": "--draft-max",
    "draft_model": "--draft-model",
}
"""Flags for a model run here: with --server, the server's model and its own settings are used."""

SERVER_ADAPTER = Path("llama-server's adapter")
"""The LoRA adapter a llama-server was started with, which --lora-scale sets with --server."""

# LoadOptions field -> the flag that sets it; the flag is checked by the field's own rule.
LOAD_FLAGS = {"lora_scale": "--lora-scale", "n_ctx": "--ctx", "n_threads": "--threads", "n_gpu_layers": "--gpu-layers"}


def add_config_argument(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """`--config FILE`: read this config file instead of the default one. A nested parser
    passes argparse.SUPPRESS, so that, not given there, it keeps the outer parser's value."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=default,
        help="config file to use (default: $SCRIPTORIUM_CONFIG or `scriptorium config path`)",
    )


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything a run needs before the model is chosen; field names follow LoadOptions."""

    model: str | None
    """--model, else [model] path; None means the demo model. Turn it into a file with
    model_choice.resolve_model."""
    lora_path: Path | None
    """--lora, else [model] lora."""
    lora_scale: float
    spm_path: Path | None
    """--spm, else [model] tokenizer: the SentencePiece `.model` to tokenize with."""
    n_ctx: int | None
    """--ctx, else [model] context_size; None: the model's training context, capped."""
    n_threads: int | None
    """--threads, else [model] threads: a fixed count; None chooses it by measurement ("auto")."""
    n_gpu_layers: int
    flash_attn: bool | None
    """--flash-attn, else [model] flash_attn: on True, off False, auto None (measured)."""
    sampler: SamplerSettings
    """Sampler flags over --preset (the user's presets included), which replaces [sampler]
    as a whole; without --preset, flags over [sampler]. --stop replaces the stop list."""
    bias: LogitBias
    """Config entries, then --bias entries (a flag wins for the same token); the byte ban is
    on unless the config turns it off or --no-byte-ban is given."""
    server: str | None = None
    """--server URL, else [server] url: a llama-server to use instead of the in-process engine."""
    speculation: Speculation = OFF
    """--speculative, --draft-max, --draft-model over [speculative]: off with a server (it
    speculates only as it was started)."""

    def load_options(self, model_path: Path) -> "LoadOptions":
        """LoadOptions for the engine (validated; SettingsError names a bad value)."""
        return LoadOptions(
            model_path=Path(model_path),
            lora_path=self.lora_path,
            lora_scale=self.lora_scale,
            spm_path=self.spm_path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            n_gpu_layers=self.n_gpu_layers,
            flash_attn=self.flash_attn,
            # The author's --threads (or [model] threads) caps the prompt's threads too: set
            # to leave cores free, it left prefill on every core. "auto": both measured.
            n_threads_batch=self.n_threads,
        ).validated()


def _flag(args: argparse.Namespace, name: str) -> Any:
    return getattr(args, name, None)


def _sampler(args: argparse.Namespace, config: Config) -> SamplerSettings:
    preset_name = _flag(args, "preset")
    settings = config.preset(preset_name) if preset_name else config.sampler
    changes: dict[str, object] = {name: value for name in SAMPLER_FLAGS if (value := _flag(args, name)) is not None}
    if _flag(args, "stop"):
        changes["stop"] = tuple(_flag(args, "stop"))
    if _flag(args, "dry_sequence_breaker"):
        changes["dry_sequence_breakers"] = tuple(_flag(args, "dry_sequence_breaker"))
    if _flag(args, "samplers") is not None:
        changes["samplers"] = parse_order(_flag(args, "samplers"))
    return settings.with_changes(**changes) if changes else settings.validated()


def _bias(args: argparse.Namespace, config: Config) -> LogitBias:
    entries = dict(config.logit_bias.entries)
    entries.update(LogitBias.parse_entry(text) for text in _flag(args, "bias") or ())
    ban = config.logit_bias.ban_byte_tokens and not _flag(args, "no_byte_ban")
    return LogitBias(ban_byte_tokens=ban, entries=tuple(entries.items())).validated()


def _speculation(args: argparse.Namespace, config: Config) -> Speculation:
    changes: dict[str, object] = {}
    if (guesser := _flag(args, "speculative")) is not None:
        changes["guesser"] = guesser
    if (draft_max := _flag(args, "draft_max")) is not None:
        changes["draft_max"] = rule_for(Speculation, "draft_max").check(draft_max, "--draft-max")
    if (draft_model := _flag(args, "draft_model")) is not None:
        changes["draft_model"] = Path(draft_model).expanduser()
    speculation = replace(config.speculation, **changes)  # type: ignore[arg-type]
    if speculation.guesser == "draft" and speculation.draft_model is None:
        raise SettingsError(
            "--speculative draft needs --draft-model FILE (or draft_model in the config's [speculative])"
        )
    return speculation.validated()


def run_settings(args: argparse.Namespace, config: Config) -> RunSettings:
    """Merge parsed flags over `config`; SettingsError / ScriptoriumError (one line) for a bad flag."""
    model_config = config.model
    local = [flag for name, flag in LOCAL_ONLY_FLAGS.items() if _flag(args, name) is not None]
    if _flag(args, "server") is not None and local:
        raise ScriptoriumError(
            f"{local[0]} is for a model run here: with --server the server's own model "
            "is used, with the settings llama-server was started with"
        )
    model = _flag(args, "model")
    lora = _flag(args, "lora")
    lora_scale = _flag(args, "lora_scale")
    lora_path = Path(lora).expanduser() if lora else model_config.lora
    spm = _flag(args, "spm")
    server = _server(args, config)
    if server is not None and _flag(args, "server") is None:
        if model is not None:
            server = None  # a model named on the command line runs here: a flag over the config's server
        elif local:
            raise ScriptoriumError(
                f"{local[0]} is for a model run here, and the config's [server] url ({server}) "
                "runs the server's own model: give --model to run one here"
            )
    if lora_scale is not None and lora_path is None:
        if server is None:
            raise ScriptoriumError("--lora-scale needs --lora PATH (or lora in the config's [model])")
        # For the adapter the server was started with (its --lora): the remote backend sends
        # the scale with every request when the options name an adapter.
        lora_path = SERVER_ADAPTER
    threads, ctx, gpu_layers = _flag(args, "threads"), _flag(args, "ctx"), _flag(args, "gpu_layers")
    for option, value in (
        ("lora_scale", lora_scale),
        ("n_ctx", ctx),
        ("n_threads", threads if threads not in (AUTO_THREADS, 0) else None),
        ("n_gpu_layers", gpu_layers),
    ):
        if value is not None:
            rule_for(LoadOptions, option).check(value, LOAD_FLAGS[option])
    return RunSettings(
        model=os.fspath(model) if model is not None else model_config.path,
        lora_path=lora_path,
        lora_scale=lora_scale if lora_scale is not None else model_config.lora_scale,
        spm_path=Path(spm).expanduser() if spm else model_config.tokenizer,
        n_ctx=ctx if ctx is not None else model_config.context_size,
        n_threads=fixed_threads(threads if threads is not None else model_config.threads),
        n_gpu_layers=gpu_layers if gpu_layers is not None else model_config.gpu_layers,
        flash_attn=FLASH_ATTN_CHOICES[_flag(args, "flash_attn") or model_config.flash_attn],
        sampler=_sampler(args, config),
        bias=_bias(args, config),
        server=server,
        speculation=_speculation(args, config) if server is None else OFF,
    )


AUTO_THREADS = "auto"
"""--threads auto: chosen by measurement, over a count the config sets."""


def threads_argument(text: str) -> int | str:
    """--threads N|auto, as argparse reads it (the count is checked with the other flags)."""
    if text.strip().lower() == AUTO_THREADS:
        return AUTO_THREADS
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be auto or a whole number, not {text!r}") from None


def fixed_threads(setting: int | str | None) -> int | None:
    """A fixed count, or None for "auto"; 0 is every core, fixed."""
    if setting is None or setting == AUTO_THREADS:
        return None
    return usable_cores() if setting == 0 else int(setting)


def _server(args: argparse.Namespace, config: Config) -> str | None:
    url = _flag(args, "server")
    if url is None:
        return config.server.url
    from scriptorium.inference.remote.remote_http import normalise_url

    return normalise_url(url)
