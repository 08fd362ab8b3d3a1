"""`scriptorium [DRAFT.md] [--model PATH] [--lora PATH --lora-scale F] [--ctx N] [--preset NAME]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from scriptorium.inference.settings import PRESETS, SettingsError, preset

HELP = ("Write with your own language model: your draft in an editor, the model continuing it, "
        "a chat, and llama.cpp's numbers (probabilities, KV cache, speed) beside them.")

DEFAULT_CTX = 4096


def _one_line_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    # argparse prints the whole usage before the error; one line is easier to read.
    parser.exit(2, f"{parser.prog}: {message} (see {parser.prog} --help)\n")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("draft", nargs="?", type=Path, metavar="DRAFT.md",
                        help="the draft to edit; created on the first save if it does not exist")
    parser.add_argument("--model", type=Path, metavar="PATH", help="GGUF model to load (in the background)")
    parser.add_argument("--lora", type=Path, metavar="PATH", help="GGUF LoRA adapter for the model")
    parser.add_argument("--lora-scale", type=float, metavar="F", default=None,
                        help="adapter strength: 0 disables it, 1 as trained (default 1)")
    parser.add_argument("--ctx", type=int, metavar="N", default=DEFAULT_CTX,
                        help=f"context size in tokens (default {DEFAULT_CTX})")
    parser.add_argument("--preset", choices=list(PRESETS), default="prose",
                        help="sampler preset to start with (default prose)")
    parser.error = lambda message: _one_line_error(parser, message)  # type: ignore[method-assign]


def run(args: argparse.Namespace) -> int:
    # Imported here so `scriptorium --help` stays fast.
    from scriptorium.inference.engine import LoadOptions

    from ..drafts import DraftFile
    from ..tui import ScriptoriumApp
    from ..tui_settings import TuiSettings

    if args.lora_scale is not None and args.lora is None:
        raise SettingsError("--lora-scale needs --lora PATH")
    if args.lora is not None and args.model is None:
        raise SettingsError("--lora needs --model PATH (an adapter applies to a model)")
    settings = TuiSettings(sampler=preset(args.preset)).validated()
    load_options = None
    if args.model is not None:
        load_options = LoadOptions(
            model_path=args.model, lora_path=args.lora,
            lora_scale=1.0 if args.lora_scale is None else args.lora_scale, n_ctx=args.ctx,
            n_threads=settings.generation_threads(),
        ).validated()
    elif args.ctx != DEFAULT_CTX:
        raise SettingsError("--ctx needs --model PATH")
    app = ScriptoriumApp(settings=settings, draft=DraftFile(args.draft), load_options=load_options)
    app.run()
    return app.return_code or 0
