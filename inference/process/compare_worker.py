"""One model of `scriptorium compare`, scored in a child process of its own.

A process per model: llama.cpp's aborts end that run only, its peak memory is the
model's own, and a model's memory is given back before the next loads (two 7B
quantizations need not fit at once). The child loads the model, scores the text at each
LoRA scale (changing the scale without reloading) and sends back a row per scale.

It is started as the engine's worker is (child_process.EngineProcess: `python -m` this
module, with pipes of its own, in a session of its own): its stderr, where llama.cpp
writes, is kept for the line that explains a death, never drawn on the app's terminal;
ctrl+c is the parent's to handle, and the parent ends it.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

from ..core.load_options import LoadOptions

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
    job: CompareJob,
    on_window: Callable[[int, float | None, int, int], None],
    on_row: Callable[[Row], None],
    should_stop: Callable[[], bool] = lambda: False,
) -> Any:
    """Run `job` in a child process; `on_window(row, scale, done, total)` as windows finish,
    `on_row` as rows do. Returns the comparison.Reference the first row wrote, if any (None
    when `should_stop` ended the child first: what it had not sent is lost).
    Raises a ScriptoriumError when the child fails or dies."""
    from ..core.errors import EngineCrashed, ScriptoriumError
    from .child_process import EngineProcess

    process = EngineProcess("scriptorium.inference.process.compare_worker")
    written, finished = None, False
    try:
        process.send(("job", job))
        while not should_stop():
            try:
                message = process.receive(POLL_S)
            except EngineCrashed as death:
                raise EngineCrashed(f"scoring {job.options.model_path.name}: {death}") from None
            if message is None:
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
                finished = True
                return written
        return None
    finally:
        if not finished and process.death is None:
            process.kill("the comparison was stopped")  # stopped, interrupted, or failed: its rows are not wanted
        process.stop()


def main(argv: list[str] | None = None) -> None:
    """The child: `python -m scriptorium.inference.process.compare_worker REQUEST_FD REPLY_FD`."""
    from .wire import decode, encode

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent ends us on ctrl+c
    request_fd, reply_fd = (int(arg) for arg in (sys.argv[1:] if argv is None else argv))
    requests, replies = Connection(request_fd, writable=False), Connection(reply_fd, readable=False)
    _, job = decode(requests.recv_bytes())
    _run_child(lambda message: replies.send_bytes(encode(message)), job)
    replies.close()


def _run_child(send: Callable[[tuple[Any, ...]], None], job: CompareJob) -> None:
    from ..core.errors import ScriptoriumError

    try:
        _score_job(send, job)
    except ScriptoriumError as error:
        send(("error", str(error)))
    except Exception as error:  # noqa: BLE001 - a row's failure, in one line, not the child's traceback
        send(("error", f"scoring {job.options.model_path.name} failed: {type(error).__name__}: {error}"))
    send(("done",))


def _score_job(send: Callable[[tuple[Any, ...]], None], job: CompareJob) -> None:
    from ..local.comparison import Reference, decode_speed, score_text
    from ..local.engine import Engine
    from ..vocab.tokenizer import tokenizer_warning

    engine = Engine.load(job.options, flash_cache=job.flash_cache, index_for_healing=False)  # it never generates
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
                    on_window=lambda done, total, s=scale: send(("window", index, s, done, total)),
                )
            finally:
                if handle is not None:
                    handle.close()
            if writing is not None and score.ppl_tokens and not score.cancelled:
                reference = Reference(writing, score.tokens_digest, score.n_ctx, engine.n_vocab)
                send(("reference", reference))
            tokens = engine.vocabulary.tokenize(job.text)
            decode = decode_speed(engine.context, tokens, job.decode_tokens) if job.decode_tokens else None
            send(
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


if __name__ == "__main__":
    # Through the package's own module, not this __main__ copy: the rows sent are pickled by
    # their class's module, which the parent must find as scriptorium.inference.process.compare_worker.
    from scriptorium.inference.process.compare_worker import main as package_main

    package_main()
