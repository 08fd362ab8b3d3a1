"""Arguments shared by the commands that load a model or sample from it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scriptorium.inference.errors import ScriptoriumError
from scriptorium.inference.settings import PRESETS, LogitBias, SamplerSettings, preset


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument("--model", type=Path, metavar="PATH", help="GGUF model file")
    group.add_argument("--lora", type=Path, metavar="PATH", help="GGUF LoRA adapter for the model")
    group.add_argument("--lora-scale", type=float, metavar="F", help="adapter strength, 0 disables it (default 1)")
    group.add_argument("--ctx", type=int, metavar="N", help="context size in tokens (default 4096)")
    group.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: all cores)")
    group.add_argument("--gpu-layers", type=int, metavar="N", help="layers offloaded to the GPU (default: all)")


def add_sampler_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sampling")
    group.add_argument("--preset", choices=sorted(PRESETS), help="starting values (default: prose)")
    group.add_argument("--temperature", type=float, metavar="T")
    group.add_argument("--top-k", type=int, metavar="K")
    group.add_argument("--top-p", type=float, metavar="P")
    group.add_argument("--min-p", type=float, metavar="P")
    group.add_argument("--repeat-penalty", type=float, metavar="F")
    group.add_argument("--repeat-window", type=int, metavar="N")
    group.add_argument("--presence-penalty", type=float, metavar="F")
    group.add_argument("--frequency-penalty", type=float, metavar="F")
    group.add_argument("--seed", type=int, metavar="N", help="fixed seed for a reproducible run")
    group.add_argument("--max-tokens", type=int, metavar="N")
    group.add_argument("--stop", action="append", metavar="TEXT", help="stop at this text (repeatable)")
    group.add_argument("--no-byte-ban", action="store_true", help="allow the vocabulary's byte tokens")
    group.add_argument("--bias", action="append", metavar="ID=VALUE", default=[],
                       help="add VALUE to token ID's logit (repeatable), e.g. --bias 16001=-100")


_SAMPLER_FLAGS = {
    "temperature": "temperature", "top_k": "top_k", "top_p": "top_p", "min_p": "min_p",
    "repeat_penalty": "repeat_penalty", "repeat_window": "repeat_window",
    "presence_penalty": "presence_penalty", "frequency_penalty": "frequency_penalty",
    "seed": "seed", "max_tokens": "max_tokens",
}


def sampler_from_args(args: argparse.Namespace, base: SamplerSettings | None = None) -> SamplerSettings:
    """Flags over the named preset over `base` (the config's defaults, or built-in prose)."""
    settings = preset(args.preset) if args.preset else (base or PRESETS["prose"])
    changes: dict[str, object] = {
        field: getattr(args, flag) for flag, field in _SAMPLER_FLAGS.items() if getattr(args, flag) is not None
    }
    if args.stop:
        changes["stop"] = tuple(args.stop)
    if changes:
        settings = settings.with_changes(**changes)
    return settings.validated()


def bias_from_args(args: argparse.Namespace, base: LogitBias | None = None) -> LogitBias:
    base = base or LogitBias()
    entries = dict(base.entries)
    entries.update(LogitBias.parse_entry(text) for text in args.bias)
    return LogitBias(ban_byte_tokens=base.ban_byte_tokens and not args.no_byte_ban, entries=tuple(entries.items()))


def read_draft(source: str | None) -> str:
    """The draft from a file, or from stdin for '-' or when piped."""
    if source in (None, "-"):
        if source is None and sys.stdin.isatty():
            raise ScriptoriumError("no draft: give a FILE, or pipe the text on standard input")
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScriptoriumError(f"draft not found: {path}") from None
    except IsADirectoryError:
        raise ScriptoriumError(f"draft is a folder, not a file: {path}") from None
    except UnicodeDecodeError:
        raise ScriptoriumError(f"draft {path} is not UTF-8 text") from None
    except OSError as error:
        raise ScriptoriumError(f"cannot read draft {path}: {error.strerror or error}") from None
