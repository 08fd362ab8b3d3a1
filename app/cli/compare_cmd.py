"""`scriptorium compare MODEL [MODEL ...] --text FILE`: which model predicts the author's prose best.

Each model (and, with --lora, each adapter scale) scores the same text in a child
process of its own (inference/process/compare_worker.py, inference/local/comparison.py for the
definitions); the rows come back as they finish, and ctrl+c prints those finished.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

HELP = (
    "Compare models, quantizations and LoRA scales on your own text: bits per character (comparable across "
    "vocabularies), perplexity, KL divergence and top-1 agreement with the first model, speed, size and memory."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "models", nargs="+", type=Path, metavar="MODEL", help="GGUF model files; the first is the reference"
    )
    parser.add_argument("--text", required=True, metavar="FILE", help="the text to score (UTF-8; - for standard input)")
    parser.add_argument("--lora", type=Path, metavar="FILE", help="a GGUF LoRA adapter, applied to each model it fits")
    parser.add_argument(
        "--lora-scale",
        type=float,
        nargs="+",
        metavar="S",
        help="adapter scales, one row each (default 1; 0 is the model without it)",
    )
    parser.add_argument(
        "--ctx",
        type=int,
        metavar="N",
        help="window size in tokens (default: each model's training context, at most 4096)",
    )
    parser.add_argument(
        "--spm",
        type=Path,
        metavar="PATH",
        help="the SentencePiece .model to tokenize with, for the models whose vocabulary it matches",
    )
    parser.add_argument("--threads", type=int, metavar="N", help="CPU threads (default: every core)")
    parser.add_argument(
        "--flash-attn",
        choices=("auto", "on", "off"),
        default="auto",
        help="flash attention; auto uses the faster path measured at a model's first load",
    )
    parser.add_argument(
        "--decode-tokens",
        type=int,
        default=32,
        metavar="N",
        help="tokens decoded one at a time for the decode speed (default 32; 0 skips it)",
    )
    parser.add_argument("--paragraphs", action="store_true", help="also show bits per character paragraph by paragraph")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON object")
    output.add_argument("--markdown", action="store_true", help="print a Markdown table")


def run(args: argparse.Namespace) -> int:
    from scriptorium.app.cli.common import EXIT_INTERRUPTED, read_draft
    from scriptorium.app.models.comparing import plan_comparison
    from scriptorium.inference.core.errors import ScriptoriumError

    from .compare_output import print_results

    text = read_draft(args.text)
    if not text.strip():
        raise ScriptoriumError(f"--text {args.text}: no text to score")
    request = _request(args)
    plan = plan_comparison(request)
    results: list[dict] = []
    interrupted = False
    with tempfile.TemporaryDirectory(prefix="scriptorium-compare-") as scratch:
        try:
            _run_plan(plan, text, request, Path(scratch), results)
        except KeyboardInterrupt:
            interrupted = True
    print_results(results, text, args, planned_rows=sum(len(p.scales) for p in plan), interrupted=interrupted)
    if interrupted:
        print("scriptorium: interrupted (ctrl+c): the rows above are those that finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _request(args: argparse.Namespace) -> Any:
    from scriptorium.app.models.comparing import CompareRequest

    return CompareRequest(
        models=tuple(args.models),
        lora=args.lora,
        lora_scales=tuple(args.lora_scale or ()),
        ctx=args.ctx,
        spm=args.spm,
        threads=args.threads,
        flash_attn={"on": True, "off": False}.get(args.flash_attn),
        decode_tokens=args.decode_tokens,
    )


def _run_plan(plan: list, text: str, request: Any, scratch: Path, results: list[dict]) -> None:
    """Run the plan with a progress line on stderr per row."""
    from scriptorium.app.models.choice import stderr_progress
    from scriptorium.app.models.comparing import run_comparison

    progress: dict[int, Any] = {}

    def on_window(label: str, number: int, total: int, windows_done: int, windows: int) -> None:
        if number not in progress:
            progress[number] = stderr_progress(f"scriptorium: [{number}/{total}] scoring {label}")
        progress[number](windows_done, windows)

    run_comparison(plan, text, request, scratch, on_window, results.append)
