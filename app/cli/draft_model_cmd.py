"""`scriptorium draft-model IN.gguf OUT.gguf --keep-layers N`: a self-speculative draft."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = (
    "Make a draft model for speculative decoding from a model itself: its tensors copied, all but N "
    "layers left out (llama.cpp's prune_layers), so its vocabulary is the model's. Use it with "
    "--speculative draft --draft-model OUT.gguf."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", type=Path, metavar="IN.gguf", help="the model the draft is made from")
    parser.add_argument("output", type=Path, metavar="OUT.gguf", help="where to write the draft")
    parser.add_argument(
        "--keep-layers",
        type=int,
        required=True,
        metavar="N",
        help="layers the draft keeps: the first N - 1 and the last (fewer: faster, worse guesses)",
    )


def run(args: argparse.Namespace) -> int:
    from scriptorium.inference.gguf.quantize import make_draft

    from scriptorium.app.models.choice import stderr_progress
    from scriptorium.app.units import format_bytes

    progress = stderr_progress(f"scriptorium: making a draft of {args.input.name}")
    result = make_draft(args.input, args.output, args.keep_layers, progress)
    progress(1, 1)
    ratio = result.output_bytes / result.input_bytes if result.input_bytes else 0.0
    print(
        f"wrote {result.output_path}: {args.keep_layers} layers of {args.input.name}, "
        f"{format_bytes(result.output_bytes)} ({ratio:.0%}), in {result.seconds:.1f} s"
    )
    return 0
