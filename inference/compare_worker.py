"""One model of `scriptorium compare`, scored in a child process of its own.

A process per model: llama.cpp's aborts end that run only, its peak memory is the
model's own, and a model's memory is given back before the next loads (two 7B
quantizations need not fit at once). The child loads the model, scores the text at each
LoRA scale (changing the scale without reloading) and sends back a row per scale;
ctrl+c is the parent's to handle (the child ignores it, and is ended).
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

from .load_options import LoadOptions

POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class CompareJob:
    options: LoadOptions
    text: str
    scales: tuple[float | None, ...] = (None,)
    """LoRA scales, one row each; None: no adapter."""
    write_reference: Path | None = None
    """Keep the first row's distributions here: later models of the same vocabulary compare with them."""
    reference: Any = None
    """A comparison.Reference to compare with, or None."""
    flash_cache: Path | None = None
    decode_tokens: int = 32


@dataclass(frozen=True, slots=True)
class Row:
    """A finished row: the score (comparison.TextScore) and what was measured around it."""

    scale: float | None
    score: Any
    decode_tps: float | None
    kv_bytes_per_token: int
    peak_rss_bytes: int
    tokenizer: str
    note: str
    n_vocab: int


def run_job(
    job: CompareJob, on_window: Callable[[int, float | None, int, int], None], on_row: Callable[[Row], None]
) -> Any:
    """Run `job` in a child process; `on_window(row, scale, done, total)` as windows finish,
    `on_row` as rows do. Returns the comparison.Reference the first row wrote, if any.
    Raises a ScriptoriumError when the child fails or dies."""
    from .errors import EngineCrashed, ScriptoriumError

    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(theirs, job), name="scriptorium-compare", daemon=True)
    process.start()
    theirs.close()
    written = None
    try:
        while True:
            if not ours.poll(POLL_S):
                if not process.is_alive() and not ours.poll(0):
                    raise EngineCrashed(
                        f"the process scoring {job.options.model_path.name} ended "
                        f"(exit status {process.exitcode}) before it finished"
                    )
                continue
            try:
                message = ours.recv()
            except EOFError:
                continue
            kind = message[0]
            if kind == "window":
                on_window(*message[1:])
            elif kind == "row":
                on_row(message[1])
            elif kind == "reference":
                written = message[1]
            elif kind == "error":
                raise ScriptoriumError(message[1])
            elif kind == "done":
                return written
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        ours.close()


def _child(pipe: Connection, job: CompareJob) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent ends us on ctrl+c
    from .errors import ScriptoriumError

    try:
        _score_job(pipe, job)
    except ScriptoriumError as error:
        pipe.send(("error", str(error)))
    except Exception as error:  # noqa: BLE001 - a row's failure, in one line, not the child's traceback
        pipe.send(("error", f"scoring {job.options.model_path.name} failed: {type(error).__name__}: {error}"))
    pipe.send(("done",))
    pipe.close()


def _score_job(pipe: Connection, job: CompareJob) -> None:
    from .comparison import Reference, decode_speed, score_text
    from .engine import Engine
    from .tokenizer import tokenizer_warning

    engine = Engine.load(job.options, flash_cache=job.flash_cache)
    try:
        reference = job.reference
        for index, scale in enumerate(job.scales):
            if scale is not None:
                engine.set_lora_scale(scale)
            writing = job.write_reference if index == 0 and reference is None else None
            handle = writing.open("wb") if writing is not None else None
            try:
                score = score_text(
                    engine.context,
                    engine.vocabulary,
                    job.text,
                    write_reference=handle,
                    reference=reference,
                    on_window=lambda done, total, s=scale: pipe.send(("window", index, s, done, total)),
                )
            finally:
                if handle is not None:
                    handle.close()
            if writing is not None and score.ppl_tokens and not score.cancelled:
                reference = Reference(writing, score.tokens_digest, score.n_ctx, engine.n_vocab)
                pipe.send(("reference", reference))
            tokens = engine.vocabulary.tokenize(job.text)
            decode = decode_speed(engine.context, tokens, job.decode_tokens) if job.decode_tokens else None
            pipe.send(
                (
                    "row",
                    Row(
                        scale=scale,
                        score=score,
                        decode_tps=decode,
                        kv_bytes_per_token=engine.context.kv_layout.bytes_per_token,
                        peak_rss_bytes=_peak_rss(),
                        tokenizer=engine.vocabulary.tokenizer.name,
                        note=tokenizer_warning(engine.vocabulary.tokenizer, engine.tokenizer_note),
                        n_vocab=engine.n_vocab,
                    ),
                )
            )
    finally:
        engine.close()


def _peak_rss() -> int:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB on Linux
