"""Turning command-line model arguments into a loaded engine."""

from __future__ import annotations

import argparse
from pathlib import Path

from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.errors import ScriptoriumError


def load_options_from_args(args: argparse.Namespace) -> LoadOptions:
    if args.model is None:
        raise ScriptoriumError("no model: pass --model PATH to a GGUF file")
    options = LoadOptions(model_path=Path(args.model), lora_path=args.lora)
    changes = {
        "lora_scale": args.lora_scale,
        "n_ctx": args.ctx,
        "n_threads": args.threads,
        "n_gpu_layers": args.gpu_layers,
    }
    from dataclasses import replace

    options = replace(options, **{k: v for k, v in changes.items() if v is not None})
    if args.lora_scale is not None and args.lora is None:
        raise ScriptoriumError("--lora-scale needs --lora PATH")
    return options.validated()


def load_engine(args: argparse.Namespace) -> Engine:
    return Engine.load(load_options_from_args(args))
