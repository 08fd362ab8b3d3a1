"""Score the author's own text: for every token, how probable the model found it.

One pass over the text with logits requested for every position, in chunks sized so the
logits buffer stays near 128 MiB whatever the vocabulary. The per-position work is the
same StepReader as generation, so a scored token and a generated one read alike.
"""

from __future__ import annotations

import codecs
import ctypes
import time
from contextlib import closing
from typing import Callable, Iterator

from ..core import native
from ..core.events import ScoreDone, ScoreProgress, TokenScore
from ..vocab.tokenizer import SentencePieceTokenizer
from .context import LlamaContext, never_stop
from .sampling import StepReader
from .vocabulary import Vocabulary

LOGITS_BUDGET_FLOATS = 32 * 1024 * 1024


def chunk_size(n_vocab: int, n_batch: int) -> int:
    """Never above n_batch: a larger llama_decode aborts the process."""
    return min(n_batch, max(8, LOGITS_BUDGET_FLOATS // n_vocab))


def character_offsets(vocabulary: Vocabulary, tokens: list[int], text: str) -> list[int]:
    """Where each token starts in `text` (a character split over byte tokens starts at
    the token that opens it). SentencePiece decodes with a leading space the text did
    not have; offsets are shifted back by it. The author's `.model` says itself where
    its pieces came from: its normalizer rewrites text before cutting it, so decoded
    pieces do not walk the text."""
    tokenizer = vocabulary.tokenizer
    if isinstance(tokenizer, SentencePieceTokenizer):
        offsets = tokenizer.spm.offsets(text)
        return [0] * (len(tokens) - len(offsets)) + offsets  # the BOS, when there is one
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    offsets, decoded = [], 0
    for token in tokens:
        offsets.append(decoded)
        decoded += len(decoder.decode(vocabulary.token_bytes(token)))
    decoded += len(decoder.decode(b"", final=True))
    lead = decoded - len(text) if decoded >= len(text) and _decodes_to_end_with(vocabulary, tokens, text) else 0
    return [max(0, offset - lead) for offset in offsets]


def _decodes_to_end_with(vocabulary: Vocabulary, tokens: list[int], text: str) -> bool:
    return b"".join(vocabulary.token_bytes(t) for t in tokens).decode("utf-8", errors="ignore").endswith(text)


def run_scoring(
    context: LlamaContext, vocabulary: Vocabulary, text: str, *, top_n: int, should_stop: Callable[[], bool] | None
) -> Iterator[TokenScore | ScoreProgress | ScoreDone]:
    stop_requested = should_stop or never_stop
    with context.claim():
        started = time.perf_counter()
        tokens = vocabulary.tokenize(text)
        has_bos = bool(tokens) and tokens[0] == vocabulary.bos_id and vocabulary.add_bos
        # Without a BOS the first token has no context to be predicted from.
        first_scored = 1
        offsets = character_offsets(vocabulary, tokens, text)
        trimmed = max(0, len(tokens) - context.n_ctx)
        if trimmed:
            # Score the most recent text that fits, as generation would see it.
            keep = slice(1 + trimmed, None) if has_bos else slice(trimmed, None)
            tokens = (tokens[:1] if has_bos else []) + tokens[keep]
            offsets = (offsets[:1] if has_bos else []) + offsets[keep]
        # Every position's logits are needed, so nothing cached can be reused.
        context.clear()
        step = StepReader(vocabulary.n_vocab, native.softmax_kernel())
        row_bytes = vocabulary.n_vocab * ctypes.sizeof(ctypes.c_float)
        chunk = chunk_size(vocabulary.n_vocab, context.n_batch)
        scored = begin = 0
        with closing(
            context.decode(tokens, should_stop=stop_requested, every_row=True, chunk=chunk, failure="score the text")
        ) as chunks:
            for decoded in chunks:
                first_row = context.every_row_logits()
                for i in range(decoded.tokens):
                    target = begin + i + 1  # row i predicts the next token
                    if target >= len(tokens) or target < first_scored:
                        continue
                    token = tokens[target]
                    p, top = step.measure(first_row + i * row_bytes, token, top_n, vocabulary.token_text, {})
                    yield TokenScore(
                        index=target - 1,
                        id=token,
                        text=vocabulary.token_text(token),
                        start=offsets[target],
                        p=p,
                        top=top,
                    )
                    scored += 1
                begin += decoded.tokens
                yield ScoreProgress(done=begin, total=len(tokens))
        yield ScoreDone(
            tokens=scored,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            cancelled=begin < len(tokens),
            trimmed_tokens=trimmed,
            kv_cache=context.kv_usage(),
        )
