"""`scriptorium quantize IN.gguf TYPE [OUT]`: llama.cpp's llama_model_quantize, with progress."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = (
    "Quantize a GGUF model with llama.cpp (Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q3_K_M, ...); --dry-run says "
    "the size it would have. Then `scriptorium compare IN OUT --text FILE` shows what it costs on your prose."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.inference.gguf.quantize import QUANT_TYPES

    parser.add_argument("input", type=Path, metavar="IN.gguf", help="the model to quantize (F32, F16 or BF16)")
    parser.add_argument(
        "type",
        metavar="TYPE",
        type=str.upper,
        choices=list(QUANT_TYPES),
        help="the quantization: " + ", ".join(QUANT_TYPES),
    )
    parser.add_argument(
        "output", type=Path, nargs="?", metavar="OUT.gguf", help="where to write it (default: IN-TYPE.gguf beside IN)"
    )
    parser.add_argument("--dry-run", action="store_true", help="compute the resulting size; write nothing")
    parser.add_argument("--threads", type=int, default=0, metavar="N", help="threads (default: every core)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from scriptorium.app.models.choice import stderr_progress
    from scriptorium.app.units import format_bytes
    from scriptorium.inference.core.errors import ScriptoriumError
    from scriptorium.inference.gguf.quantize import quantize

    if args.threads < 0:
        raise ScriptoriumError("--threads must be 0 (every core) or more")
    progress = stderr_progress(f"scriptorium: quantizing {args.input.name} to {args.type}")
    result = quantize(
        args.input,
        args.type,
        args.output,
        dry_run=args.dry_run,
        threads=args.threads,
        on_progress=None if args.dry_run else progress,
    )
    if not args.dry_run:
        progress(1, 1)
    if args.json:
        print(
            json.dumps(
                {
                    "input": str(result.input_path),
                    "output": None if result.dry_run else str(result.output_path),
                    "type": result.type_name,
                    "input_bytes": result.input_bytes,
                    "output_bytes": result.output_bytes,
                    "dry_run": result.dry_run,
                    "seconds": round(result.seconds, 3),
                    "warnings": list(result.warnings),
                }
            )
        )
        return 0
    ratio = result.output_bytes / result.input_bytes if result.input_bytes else 0.0
    sizes = f"{format_bytes(result.input_bytes)} -> {format_bytes(result.output_bytes)} ({ratio:.0%})"
    if result.dry_run:
        print(f"{result.input_path} as {result.type_name} would be {sizes} (dry run: nothing written)")
    else:
        print(f"wrote {result.output_path}: {result.type_name}, {sizes}, in {result.seconds:.1f} s")
    for warning in result.warnings:
        print(f"warning: {warning}")
    return 0
