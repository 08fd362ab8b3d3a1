"""`scriptorium compare MODEL [MODEL ...] --text FILE`: which model predicts the author's prose best.

Each model (and, with --lora, each adapter scale) scores the same text in a child
process of its own (inference/compare_worker.py, inference/comparison.py for the
definitions); the rows come back as they finish, and ctrl+c prints those finished.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
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


@dataclass
class Planned:
    """One model of the run and the rows it gives."""

    options: Any
    label: str
    scales: tuple[float | None, ...]
    digest: str
    file_bytes: int
    notes: list[str] = field(default_factory=list)


def run(args: argparse.Namespace) -> int:
    from scriptorium.app.cli.common import EXIT_INTERRUPTED, read_draft
    from scriptorium.inference.errors import ScriptoriumError

    from .compare_output import print_results

    text = read_draft(args.text)
    if not text.strip():
        raise ScriptoriumError(f"--text {args.text}: no text to score")
    plan = _plan(args)
    results: list[dict] = []
    interrupted = False
    with tempfile.TemporaryDirectory(prefix="scriptorium-compare-") as scratch:
        try:
            _run_plan(plan, text, args, Path(scratch), results)
        except KeyboardInterrupt:
            interrupted = True
    print_results(results, text, args, planned_rows=sum(len(p.scales) for p in plan), interrupted=interrupted)
    if interrupted:
        print("scriptorium: interrupted (ctrl+c): the rows above are those that finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _plan(args: argparse.Namespace) -> list[Planned]:
    """Every model checked before anything runs, so a typo fails at once, in one line."""
    from dataclasses import replace

    from scriptorium.inference.comparison import vocabulary_digest
    from scriptorium.inference.errors import ModelFileError, ScriptoriumError
    from scriptorium.inference.gguf_file import read_adapter_facts, read_model_facts
    from scriptorium.inference.load_options import LoadOptions, beyond_training
    from scriptorium.inference.settings import rule_for

    if args.lora_scale and args.lora is None:
        raise ScriptoriumError("--lora-scale needs --lora FILE")
    if args.decode_tokens < 0:
        raise ScriptoriumError("--decode-tokens must be 0 or more")
    if args.spm is not None and not args.spm.is_file():
        raise ScriptoriumError(f"SentencePiece model not found: {args.spm}")
    scales = tuple(args.lora_scale or (1.0,))
    for scale in scales:
        rule_for(LoadOptions, "lora_scale").check(scale)
    if args.lora is not None:
        read_adapter_facts(args.lora)  # is it an adapter at all
    flash = {"on": True, "off": False}.get(args.flash_attn)
    plan = []
    for path in args.models:
        facts = read_model_facts(path)
        options = LoadOptions(
            model_path=path,
            n_ctx=args.ctx,
            n_threads=args.threads,
            n_threads_batch=args.threads,
            flash_attn=flash,
            spm_path=args.spm,
        ).validated()
        planned = Planned(options, path.name, (None,), vocabulary_digest(path), facts.file_size)
        beyond = beyond_training(options.context_for(facts.context_length), facts.context_length)
        if beyond:
            planned.notes.append(beyond)
        if args.lora is not None:
            try:
                adapter = read_adapter_facts(args.lora, facts.architecture, path)
            except ModelFileError as misfit:
                planned.notes.append(f"without the adapter: {misfit}")
            else:
                planned.options = replace(options, lora_path=args.lora, lora_scale=scales[0])
                planned.scales = scales
                planned.file_bytes += adapter.file_size
        plan.append(planned)
    return plan


def _run_plan(plan: list[Planned], text: str, args: argparse.Namespace, scratch: Path, results: list[dict]) -> None:
    from scriptorium.app import paths
    from scriptorium.app.models.choice import stderr_progress
    from scriptorium.inference.compare_worker import CompareJob, run_job
    from scriptorium.inference.errors import ScriptoriumError
    from scriptorium.inference.load_options import context_rounded

    from .compare_output import row_record

    first = plan[0]
    shares_vocabulary = len(first.scales) > 1 or any(p.digest == first.digest for p in plan[1:])
    reference = None
    total = sum(len(p.scales) for p in plan)
    done = 0
    for index, planned in enumerate(plan):
        job = CompareJob(
            options=planned.options,
            text=text,
            scales=planned.scales,
            write_reference=scratch / "reference.f32" if index == 0 and shares_vocabulary else None,
            reference=reference if reference is not None and planned.digest == first.digest else None,
            flash_cache=paths.flash_choice_file(),
            decode_tokens=args.decode_tokens,
        )
        progress: dict[float | None, Any] = {}
        finished_before = done

        def on_window(row: int, scale: float | None, windows_done: int, windows: int, planned=planned) -> None:
            if scale not in progress:
                label = _label(planned, scale)
                progress[scale] = stderr_progress(f"scriptorium: [{finished_before + row + 1}/{total}] scoring {label}")
            progress[scale](windows_done, windows)

        def on_row(row: Any, planned=planned) -> None:
            nonlocal done
            done += 1
            notes = list(planned.notes)
            rounded = context_rounded(args.ctx, row.score.n_ctx)
            if rounded:
                notes.append(rounded + " (llama-perplexity's windows would be the size asked)")
            if index > 0 and planned.digest != first.digest:
                notes.append("not compared with the first model: another vocabulary")
            elif index > 0 and job.reference is None and shares_vocabulary:
                notes.append("not compared with the first model: it gave no distributions to compare with")
            results.append(row_record(_label(planned, row.scale), planned, row, notes))

        try:
            written = run_job(job, on_window, on_row)
        except ScriptoriumError as error:
            results.append(
                {
                    "label": planned.label,
                    "model": str(planned.options.model_path),
                    "error": str(error),
                    "notes": [str(error)],
                }
            )
            done = finished_before + len(planned.scales)
            continue
        if index == 0:
            reference = written


def _label(planned: Planned, scale: float | None) -> str:
    if scale is None:
        return planned.label
    return f"{planned.label} + {planned.options.lora_path.name} x{scale:g}"
