"""Score a whole text with one model, the way llama-perplexity does, for `scriptorium compare`.

The text is tokenized once and cut into llama-perplexity's windows: back to back, n_ctx
tokens each, the first token of each replaced by BOS when the model adds one, the cache
cleared between them. Each window is one pass with logits at every position; from it:

- **perplexity, KL divergence, top-1 agreement**: llama-perplexity's definitions, over the
  second half of every *full* window (positions n_ctx/2 .. n_ctx-2 predicting the next
  token); the tail after the last full window is not counted, as llama-perplexity drops it.
- **bits per character**: every token after the first, each predicted from the text
  before it in its window. A window's first token (which the BOS replaces) is predicted
  by the last position of the window before, which llama-perplexity computes and leaves
  unused; the tail is one more, shorter window. So every character is counted once and
  the total does not depend on how a tokenizer cuts the text (a token's probability is
  that of all its characters); the first half of each window is predicted from less
  context than the second. The characters of a first token without a BOS before it have
  nothing to be predicted from and are left out of the count.

KL divergence needs the first model's distributions at the same positions: its run writes
them (float32 log-probabilities, n_vocab per scored position) to a file that the later
runs read in the same order, as llama-perplexity's --kl-divergence-base does.
"""

from __future__ import annotations

import ctypes
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable

import numpy as np

from .context import LlamaContext, never_stop
from .scoring import character_offsets, chunk_size
from .vocabulary import Vocabulary

LN2 = float(np.log(2.0))
DECODE_PROBE_TOKENS = 32
"""Tokens decoded one at a time, from an empty cache, for the decode speed."""


@dataclass(frozen=True, slots=True)
class Window:
    start: int
    end: int
    full: bool


def windows(n_tokens: int, n_ctx: int) -> list[Window]:
    """llama-perplexity's full windows, then the tail as a shorter one (when it holds a
    token that the last full window's final position did not already predict)."""
    result = [Window(s, s + n_ctx, True) for s in range(0, n_tokens - n_ctx + 1, n_ctx)]
    tail = result[-1].end if result else 0
    if n_tokens - tail > 1 or (not result and n_tokens > 1):
        result.append(Window(tail, n_tokens, False))
    return result


def tokens_digest(tokens: list[int]) -> str:
    return hashlib.sha256(np.asarray(tokens, dtype=np.int32).tobytes()).hexdigest()


@dataclass(slots=True)
class Reference:
    """Where the first model's distributions are, and what they were computed on."""

    path: Path
    tokens_digest: str
    n_ctx: int
    n_vocab: int


@dataclass(slots=True)
class TextScore:
    """One model's (at one LoRA scale) numbers on the text."""

    n_ctx: int
    tokens: int
    characters: int
    """Characters whose tokens were predicted (the whole text, less an unpredicted first token)."""
    bits: float
    ppl_tokens: int = 0
    nll: float = 0.0
    token_bits: list[float] = field(default_factory=list)
    """-log2 p of every token, 0 for the first (unpredicted) one."""
    token_starts: list[int] = field(default_factory=list)
    kld: list[float] = field(default_factory=list)
    same_top: int = 0
    kld_note: str = ""
    prefill_tokens: int = 0
    prefill_ms: float = 0.0
    cancelled: bool = False
    tokens_digest: str = ""

    @property
    def bits_per_character(self) -> float | None:
        return self.bits / self.characters if self.characters else None

    @property
    def perplexity(self) -> float | None:
        return float(np.exp(self.nll / self.ppl_tokens)) if self.ppl_tokens else None

    @property
    def kld_mean(self) -> float | None:
        return float(np.mean(self.kld)) if self.kld else None

    @property
    def kld_p99(self) -> float | None:
        # Linear interpolation between neighbours, as llama-perplexity's percentile.
        return float(np.percentile(np.asarray(self.kld, dtype=np.float64), 99.0)) if self.kld else None

    @property
    def top1_agreement(self) -> float | None:
        return self.same_top / len(self.kld) if self.kld else None


def score_text(
    context: LlamaContext,
    vocabulary: Vocabulary,
    text: str,
    *,
    write_reference: BinaryIO | None = None,
    reference: Reference | None = None,
    should_stop: Callable[[], bool] = never_stop,
    on_window: Callable[[int, int], None] | None = None,
) -> TextScore:
    """Score `text` in llama-perplexity's windows (module docstring). `write_reference`:
    a file to receive this model's log-probabilities at the perplexity positions;
    `reference`: the first model's, to compare with (skipped, with `kld_note` saying why,
    when the tokens or the context differ)."""
    tokens = vocabulary.tokenize(text)
    n_ctx, n_vocab = context.n_ctx, vocabulary.n_vocab
    has_bos = bool(tokens) and vocabulary.add_bos and tokens[0] == vocabulary.bos_id
    starts = character_offsets(vocabulary, tokens, text) if tokens else []
    unpredicted = 0 if has_bos or len(tokens) < 2 else starts[1]
    result = TextScore(
        n_ctx=n_ctx,
        tokens=len(tokens),
        characters=len(text) - unpredicted if len(tokens) > 1 else 0,
        bits=0.0,
        token_bits=[0.0] * len(tokens),
        token_starts=starts,
        tokens_digest=tokens_digest(tokens),
    )
    reading = _open_reference(reference, result, n_vocab)
    plan = windows(len(tokens), n_ctx)
    if not any(w.full for w in plan):
        result.kld_note = result.kld_note or f"the text is shorter than one {n_ctx}-token window: no perplexity"
    rows_per_call = chunk_size(n_vocab, context.n_batch)
    try:
        with context.claim():
            for number, window in enumerate(plan):
                if should_stop():
                    result.cancelled = True
                    break
                _score_window(
                    context, tokens, window, vocabulary, rows_per_call, result, write_reference, reading, should_stop
                )
                if result.cancelled:
                    break
                if on_window is not None:
                    on_window(number + 1, len(plan))
            context.clear()
    finally:
        if reading is not None:
            reading.close()
    return result


def _open_reference(reference: Reference | None, result: TextScore, n_vocab: int) -> BinaryIO | None:
    if reference is None:
        return None
    if reference.n_vocab != n_vocab or reference.tokens_digest != result.tokens_digest:
        result.kld_note = "not compared with the first model: the text is tokenized differently"
        return None
    if reference.n_ctx != result.n_ctx:
        result.kld_note = (
            f"not compared with the first model: its windows are {reference.n_ctx} tokens, these {result.n_ctx}"
        )
        return None
    return reference.path.open("rb")


def _score_window(
    context: LlamaContext,
    tokens: list[int],
    window: Window,
    vocabulary: Vocabulary,
    rows_per_call: int,
    result: TextScore,
    write_reference: BinaryIO | None,
    reading: BinaryIO | None,
    should_stop: Callable[[], bool],
) -> None:
    part = tokens[window.start : window.end]
    if vocabulary.add_bos:
        part[0] = vocabulary.bos_id
    first_counted = (window.end - window.start) // 2 if window.full else len(part)
    n_vocab = vocabulary.n_vocab
    context.clear()
    begin = 0
    for decoded in context.decode(
        part, should_stop=should_stop, every_row=True, chunk=rows_per_call, failure="score the text"
    ):
        result.prefill_tokens += decoded.tokens
        result.prefill_ms += decoded.ms
        address = context.every_row_logits()
        logits = np.ctypeslib.as_array((ctypes.c_float * (decoded.tokens * n_vocab)).from_address(address))
        logits = logits.reshape(decoded.tokens, n_vocab)
        log_norm = _log_normalisers(logits, address)
        for row in range(decoded.tokens):
            target = window.start + begin + row + 1
            if target >= len(tokens):
                continue
            nll = float(log_norm[row] - logits[row, tokens[target]])
            result.token_bits[target] = nll / LN2
            result.bits += nll / LN2
            position = begin + row
            if window.full and first_counted <= position <= len(part) - 2:
                result.nll += nll
                result.ppl_tokens += 1
                if write_reference is not None or reading is not None:
                    log_probs = logits[row] - np.float32(log_norm[row])
                    if write_reference is not None:
                        write_reference.write(log_probs)  # the row's own buffer: a 1 MB copy less on 262k
                    if reading is not None:
                        _compare_row(reading, log_probs, n_vocab, result)
        begin += decoded.tokens
    if begin < len(part):
        result.cancelled = True


def _log_normalisers(logits: np.ndarray, address: int) -> np.ndarray:
    """log(sum(exp(row))) of every row. llama.cpp's own softmax kernel, row by row, when
    this build exports it: numpy's passes over a chunk of rows (up to 128 MiB) and their
    temporaries cost a third of the decode itself on a 262k vocabulary."""
    from ..core import native

    top = logits.max(axis=1)
    kernel = native.softmax_kernel()
    if kernel is None:
        sums = np.exp(logits - top[:, None], dtype=np.float32).sum(axis=1, dtype=np.float64)
        return top + np.log(sums)
    n_rows, n_vocab = logits.shape
    scratch = np.empty(n_vocab, dtype=np.float32)
    row_bytes = n_vocab * ctypes.sizeof(ctypes.c_float)
    sums = np.fromiter(
        (kernel(n_vocab, scratch.ctypes.data, address + row * row_bytes, float(top[row])) for row in range(n_rows)),
        dtype=np.float64,
        count=n_rows,
    )
    return top + np.log(sums)


def _compare_row(reading: BinaryIO, log_probs: np.ndarray, n_vocab: int, result: TextScore) -> None:
    reference = np.frombuffer(reading.read(n_vocab * 4), dtype=np.float32)
    # float32 throughout: on a 262k vocabulary, float64 copies of the row cost 40-60 ms a row
    # (12% of the KL divergence run on Gemma 3), float32 under 1 ms. The sum moves by about
    # 1e-5 of itself, far inside the 1% of llama-perplexity (which keeps 16 bits); a model
    # against itself still gives exactly 0, every difference being 0.
    result.kld.append(float(np.dot(np.exp(reference), reference - log_probs)))
    result.same_top += int(np.argmax(reference) == np.argmax(log_probs))


def decode_speed(context: LlamaContext, tokens: list[int], count: int = DECODE_PROBE_TOKENS) -> float | None:
    """Tokens per second decoding one token per llama_decode, from an empty cache."""
    count = min(count, len(tokens), context.n_ctx)
    if count < 2:
        return None
    with context.claim():
        context.clear()
        decode = context.one_token_decoder()
        decode(tokens[0])
        started = time.perf_counter()
        for token in tokens[1:count]:
            decode(token)
        elapsed = time.perf_counter() - started
        context.clear()
    return (count - 1) / elapsed if elapsed > 0 else None


def vocabulary_digest(model_path: Path) -> str:
    """A fingerprint of a GGUF's token texts: two models share a vocabulary when they match."""
    from ..gguf.gguf_header import read_gguf_header
    from ..gguf.preflight import TOKEN_TEXTS

    texts = read_gguf_header(model_path, whole_arrays=frozenset({TOKEN_TEXTS})).get(TOKEN_TEXTS) or ()
    # The count, every length, then every text (so two lists never hash alike by their
    # concatenation): three updates, not one per token from a Python loop (262k on Gemma 3).
    digest = hashlib.sha256(len(texts).to_bytes(8, "little"))
    digest.update(np.fromiter(map(len, texts), dtype="<u4", count=len(texts)).tobytes())
    digest.update(b"".join(texts))
    return digest.hexdigest()


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph (parted by blank lines); a paragraph's span runs to
    the next one's start, so the spans cover the whole text and every token falls in one."""
    import re

    starts = [0] + [match.end() for match in re.finditer(r"\n[ \t]*\n\s*", text) if match.end() < len(text)]
    return [(start, end) for start, end in zip(starts, starts[1:] + [len(text)]) if end > start]


def paragraph_bits_per_character(score: TextScore, spans: list[tuple[int, int]]) -> list[float | None]:
    """Bits per character of each paragraph: the bits of the tokens that start in it over
    its characters (a token across a paragraph break counts where it starts)."""
    import bisect

    bits = [0.0] * len(spans)
    span_starts = [start for start, _ in spans]
    for index, (token_bits, start) in enumerate(zip(score.token_bits, score.token_starts)):
        if index == 0:
            continue
        bits[max(0, bisect.bisect_right(span_starts, start) - 1)] += token_bits
    return [b / (end - start) if end > start else None for b, (start, end) in zip(bits, spans)]
