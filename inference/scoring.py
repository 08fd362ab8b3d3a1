"""Score the author's own text: for every token, how probable the model found it.

One pass over the text with logits requested for every position, in chunks sized so the
logits buffer stays near 128 MiB whatever the vocabulary. The per-position work is the
same StepReader as generation, so a scored token and a generated one read alike.
"""

from __future__ import annotations

import codecs
import ctypes
import time
from typing import TYPE_CHECKING, Callable, Iterator

from . import native
from .errors import GenerationError
from .events import ScoreDone, ScoreProgress, TokenScore
from .generation import DECODE_ABORTED, never_stop
from .sampling import StepReader

if TYPE_CHECKING:
    from .engine import Engine

LOGITS_BUDGET_FLOATS = 32 * 1024 * 1024


def chunk_size(n_vocab: int, n_batch: int) -> int:
    """Never above n_batch: a larger llama_decode aborts the process."""
    return min(n_batch, max(8, LOGITS_BUDGET_FLOATS // n_vocab))


def character_offsets(engine: "Engine", tokens: list[int], text: str) -> list[int]:
    """Where each token starts in `text` (a character split over byte tokens starts at
    the token that opens it). SentencePiece decodes with a leading space the text did
    not have; offsets are shifted back by it."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    offsets, decoded = [], 0
    for token in tokens:
        offsets.append(decoded)
        decoded += len(decoder.decode(engine.token_bytes(token)))
    decoded += len(decoder.decode(b"", final=True))
    lead = decoded - len(text) if decoded >= len(text) and _decodes_to_end_with(engine, tokens, text) else 0
    return [max(0, offset - lead) for offset in offsets]


def _decodes_to_end_with(engine: "Engine", tokens: list[int], text: str) -> bool:
    return b"".join(engine.token_bytes(t) for t in tokens).decode("utf-8", errors="ignore").endswith(text)


def run_scoring(
    engine: "Engine", text: str, *, top_n: int, should_stop: Callable[[], bool] | None
) -> Iterator[TokenScore | ScoreProgress | ScoreDone]:
    stop_requested = should_stop or never_stop
    with engine.lock:
        started = time.perf_counter()
        lib, ctx = engine.handles.lib, engine.handles.ctx
        tokens = engine.tokenize(text)
        has_bos = bool(tokens) and tokens[0] == engine.bos_id and engine.add_bos
        # Without a BOS the first token has no context to be predicted from.
        first_scored = 1
        offsets = character_offsets(engine, tokens, text)
        trimmed = max(0, len(tokens) - engine.n_ctx)
        if trimmed:
            # Score the most recent text that fits, as generation would see it.
            keep = slice(1 + trimmed, None) if has_bos else slice(trimmed, None)
            tokens = (tokens[:1] if has_bos else []) + tokens[keep]
            offsets = (offsets[:1] if has_bos else []) + offsets[keep]
        engine.clear_cache()
        chunk = chunk_size(engine.n_vocab, engine.n_batch)
        batch = lib.llama_batch_init(chunk, 0, 1)
        for i in range(chunk):  # every position: sequence 0, logits wanted
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = 1
        batch_tokens = (ctypes.c_int32 * chunk).from_address(ctypes.addressof(batch.token.contents))
        batch_positions = (ctypes.c_int32 * chunk).from_address(ctypes.addressof(batch.pos.contents))
        step = StepReader(engine.n_vocab, native.softmax_kernel())
        scored, cancelled = 0, False
        engine.interruptible(stop_requested)
        try:
            for begin in range(0, len(tokens), chunk):
                if stop_requested():
                    cancelled = True
                    break
                part = tokens[begin:begin + chunk]
                batch.n_tokens = len(part)
                batch_tokens[:len(part)] = part
                batch_positions[:len(part)] = range(begin, begin + len(part))
                status = lib.llama_decode(ctx, batch)
                if status == DECODE_ABORTED:
                    engine.clear_cache()
                    cancelled = True
                    break
                if status != 0:
                    engine.clear_cache()
                    raise GenerationError(f"llama.cpp failed to score the text (llama_decode returned {status})")
                engine.cached_tokens.extend(part)
                first_row = ctypes.cast(lib.llama_get_logits(ctx), ctypes.c_void_p).value
                if not first_row:
                    raise GenerationError("llama.cpp returned no logits for the scored text")
                row_bytes = engine.n_vocab * ctypes.sizeof(ctypes.c_float)
                for i in range(len(part)):
                    target = begin + i + 1  # row i predicts the next token
                    if target >= len(tokens) or target < first_scored:
                        continue
                    token = tokens[target]
                    p, top = step.measure(first_row + i * row_bytes, token, top_n, engine.token_text, {})
                    yield TokenScore(index=target - 1, id=token, text=engine.token_text(token),
                                     start=offsets[target], p=p, top=top)
                    scored += 1
                yield ScoreProgress(done=begin + len(part), total=len(tokens))
        finally:
            engine.interruptible(None)
            lib.llama_batch_free(batch)
        yield ScoreDone(tokens=scored, elapsed_ms=(time.perf_counter() - started) * 1000.0,
                        cancelled=cancelled, trimmed_tokens=trimmed, kv_cache=engine.kv_usage())
