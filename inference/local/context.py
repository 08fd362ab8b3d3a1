"""The llama.cpp context and the mirror of its KV memory, kept by one owner.

`cached_tokens` lists the tokens whose keys and values llama.cpp holds, at positions
0..n-1 of sequence 0. Everything that changes that memory is here and keeps the mirror
equal to it: evaluating batches and single tokens, trimming, clearing, reusing the
common prefix with a new prompt, interruption, and the adapter scale (which makes the
cached keys and values stale). Generation and scoring hold the context with `claim()`
and read the logits through it; nothing else writes the mirror.

When the draft window slides (window.py), the new prompt is the old one with its start
cut away: memory, then text the cache already holds a little further on. `reuse` keeps
the common prefix (the memory: llama.cpp's `n_keep`) where it is, removes the cached
tokens between it and the first of the window's tokens the cache holds, and moves the
rest back with `llama_memory_seq_rm` + `llama_memory_seq_add` (RoPE re-rotates the keys
by the shift). Only the tokens after the cached run are evaluated. The moved keys and
values were computed having seen the text that was cut: that is llama.cpp's own context
shift, an approximation past the first layer; within one layer (keys and values of a
token depend on it and its position alone) it equals a cold prefill up to float
rounding. Models that cannot shift (M-RoPE, sliding-window layers, whose caches keep
only recent positions) evaluate the window again, and `Reuse.how` says which happened.

The window's first tokens can be spelled differently from the same text inside the old
prompt (" Poi" after a full stop, "Poi" after a paragraph break): the cached spelling is
kept when its text is the same but for leading whitespace, so the window still starts on
its boundary and its words are the same; llama.cpp requires positions after the cached
ones to follow on, so new tokens cannot be put in front of the moved run.
"""

from __future__ import annotations

import ctypes
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

from ..core import native
from ..core.errors import GenerationError, ModelLoadError
from ..core.events import KVCacheUsage
from ..core.kv_cache import KVLayout
from ..core.model_facts import ModelFacts
from ..core.settings import SamplerSettings
from .fresh_prefix import FreshPrefix
from .row_batch import EveryRowBatch
from .sampler_chain import DryPrototypes, LastLogits, SamplerChain

DECODE_ABORTED = 2
"""What llama_decode returns when the abort callback stopped it mid-batch."""


def never_stop() -> bool:
    return False


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


SHIFT_MIN_RUN = 16
"""Fewer cached tokens than this are not worth a shift: evaluating them is as cheap."""
SHIFT_LEAD = 8
"""How many of the window's first tokens may be spelled differently from the cache."""
SHIFT_GRAM = 4


@dataclass(frozen=True, slots=True)
class Reuse:
    """How much of a new prompt the cache already held, and how it was kept."""

    tokens: int
    """Tokens of the prompt not evaluated again."""
    how: str
    """'prefix' (the common prefix), 'shifted' (the prefix kept and the rest moved back),
    'refilled' (the window slid but the model cannot shift its cache: evaluated again),
    'fresh' (a fixed seed: as from an empty cache, fresh_prefix.py)."""
    shifted: int = 0
    """Of `tokens`, how many were moved by the shift."""


@dataclass(frozen=True, slots=True)
class _Run:
    start: int
    """Where in the cache the reused tokens begin."""
    length: int
    """How many cached tokens are reused."""
    covers: int
    """How many of the new prompt's tokens they stand for (the first few may be spelled
    apart, their text the same)."""


@dataclass(frozen=True, slots=True)
class DecodedChunk:
    """One llama_decode call of `LlamaContext.decode`, its tokens now cached."""

    tokens: int
    """How many tokens it evaluated."""
    ms: float
    """Wall time of the llama_decode call."""


class LlamaContext:
    """One llama_context (and the model it was made from, freed after it): the only
    writer of the KV memory and of its mirror. Requests take turns through `claim()`;
    the methods that change the memory expect the caller to hold it."""

    def __init__(self, lib: Any, model: Any, ctx: Any, facts: ModelFacts, *, type_k: str, type_v: str, swa_full: bool):
        self._lib = lib
        self._model = model
        self._ctx = ctx
        self._window = facts.sliding_window or 0
        self.n_ctx = int(lib.llama_n_ctx(ctx))
        """The context size llama.cpp allocated (padded to a multiple of 256)."""
        self.n_batch = int(lib.llama_n_batch(ctx))
        """The most tokens one llama_decode may take: more aborts the process."""
        self.kv_layout = KVLayout.for_model(
            facts, self.n_ctx, type_k=type_k, type_v=type_v, n_ubatch=int(lib.llama_n_ubatch(ctx)), swa_full=swa_full
        )
        self._tokens: list[int] = []
        self._dry_prototypes: DryPrototypes | None = None
        """DRY samplers made once for this model and cloned into each chain (sampler_chain.py)."""
        self.fresh = FreshPrefix()
        """What an evaluation from an empty cache left before its prompt's last token (for a fixed seed)."""
        self._lock = threading.Lock()
        self._abort_check: Callable[[], bool] | None = None

        @lib.ggml_abort_callback
        def abort_requested(user_data: ctypes.c_void_p) -> bool:
            check = self._abort_check
            return bool(check and check())

        self._abort_callback = abort_requested  # ctypes callbacks must outlive their use

    # ---- reading -------------------------------------------------------------------
    @property
    def cached_tokens(self) -> tuple[int, ...]:
        """The tokens in the KV memory, in position order (a copy)."""
        return tuple(self._tokens)

    @property
    def n_cached(self) -> int:
        return len(self._tokens)

    def kv_usage(self) -> KVCacheUsage:
        return self.kv_layout.usage(len(self._tokens))

    @property
    def handle(self) -> Any:
        """The raw llama_context, for benchmarks and tests (clear() after: the mirror does not follow)."""
        return self._ctx

    def memory_positions(self) -> tuple[int, int]:
        """(lowest, highest) position llama.cpp holds for sequence 0 (-1, -1 when empty; a
        sliding-window model's lowest is its window cache's)."""
        memory = self._lib.llama_get_memory(self._ctx)
        return int(self._lib.llama_memory_seq_pos_min(memory, 0)), int(self._lib.llama_memory_seq_pos_max(memory, 0))

    def last_logits(self) -> LastLogits:
        """The reader of the last position's logits, for the per-token loop."""
        return LastLogits(self._ctx)

    def every_row_logits(self) -> int:
        """The address of the logits of the last chunk decoded with `every_row`: one
        row of n_vocab floats per token, valid until the next decode."""
        address = ctypes.cast(self._lib.llama_get_logits(self._ctx), ctypes.c_void_p).value
        if not address:
            raise GenerationError("llama.cpp returned no logits for the scored text")
        return address

    def sampler(self, n_vocab: int, settings: SamplerSettings, bias: dict[int, float], seed: int) -> SamplerChain:
        """llama.cpp's sampler chain for this context's model (DRY tokenizes its breakers with its vocabulary)."""
        vocab = self._lib.llama_model_get_vocab(self._model)
        if self._dry_prototypes is None:
            self._dry_prototypes = DryPrototypes(self._lib, vocab)
        return SamplerChain(self._lib, vocab, n_vocab, settings, bias, seed, self._dry_prototypes)

    # ---- holding -------------------------------------------------------------------
    @contextmanager
    def claim(self) -> Iterator[None]:
        """Hold the context for one request; another waits until it ends. llama.cpp's
        own timings restart with each request."""
        with self._lock:
            if self._ctx is None:
                raise GenerationError("the model was closed")
            self._lib.llama_perf_context_reset(self._ctx)
            yield

    def close(self, before_freeing: Callable[[], None] = lambda: None) -> None:
        """Free the context, then its model, once the request holding it has ended (then
        `before_freeing`: the vocabulary waits for its callers); closing again does nothing."""
        with self._lock:
            before_freeing()
            if self._dry_prototypes is not None:  # they hold the vocabulary's tokens: before the model goes
                self._dry_prototypes.free()
                self._dry_prototypes = None
            if self._ctx is not None:
                self._lib.llama_free(self._ctx)
                self._ctx = None
            self._tokens.clear()
            # Adapters are freed with their model in this llama.cpp.
            if self._model is not None:
                self._lib.llama_model_free(self._model)
                self._model = None

    def set_threads(self, n_threads: int, n_threads_batch: int) -> None:
        """The threads of one-token decodes and of batches from the next llama_decode on: llama.cpp
        reads the counts at each call, so a change between two costs nothing and touches no cache."""
        self._lib.llama_set_n_threads(self._ctx, n_threads, n_threads_batch)

    # ---- changing the memory -------------------------------------------------------
    def clear(self) -> None:
        self._lib.llama_memory_clear(self._lib.llama_get_memory(self._ctx), True)
        self._tokens.clear()
        self.fresh.cut(0)

    def trim(self, keep: int) -> int:
        """Forget the tokens from position `keep` on; return how many stay. A memory that
        cannot drop part of a sequence is cleared instead."""
        if keep <= 0 or not self._lib.llama_memory_seq_rm(self._lib.llama_get_memory(self._ctx), 0, keep, -1):
            self.clear()
            return 0
        del self._tokens[keep:]
        self.fresh.cut(keep)
        return len(self._tokens)

    def reuse_prefix(self, tokens: Sequence[int]) -> int:
        """Keep the cached tokens `tokens` begins with and drop the rest; return how many
        are kept. The last of `tokens` is always evaluated again, for its logits."""
        keep = common_prefix(self._tokens, tokens)
        if keep == len(tokens):
            keep -= 1
        keep = self.trim(keep)
        # Sliding-window layers forget positions older than the window: continuing at
        # `keep` needs the window before it still cached, or everything is computed again.
        if keep and self._window and self.memory_positions()[0] > max(0, keep - self._window):
            self.clear()
            return 0
        return keep

    def can_drop_tail(self) -> bool:
        """Whether the newest positions can be removed alone (speculative decoding removes the
        rejected guesses): not in a recurrent model's memory, which holds one state, not positions."""
        lib = self._lib
        return not (lib.llama_model_is_recurrent(self._model) or lib.llama_model_is_hybrid(self._model))

    def can_shift(self) -> bool:
        """Whether moving cached positions is sound: no M-RoPE (llama.cpp's check) and no
        sliding-window layers (their caches have already forgotten the older positions)."""
        return not self._window and bool(self._lib.llama_memory_can_shift(self._lib.llama_get_memory(self._ctx)))

    def reuse(
        self, tokens: Sequence[int], same_text: Callable[[Sequence[int], Sequence[int]], bool]
    ) -> tuple[list[int], Reuse]:
        """Keep what the cache holds of `tokens`: their common prefix, and when the window
        slid, a later run of them moved back behind it (module docstring). Returns the
        prompt to evaluate (its first tokens as the cache spells them, where `same_text`
        says two spellings read the same) and how much was kept; the tokens from
        `Reuse.tokens` on are still to be decoded."""
        tokens = list(tokens)
        keep = min(common_prefix(self._tokens, tokens), len(tokens) - 1)
        run = self._find_run(tokens, keep, same_text)
        if run is None:
            return tokens, Reuse(self.reuse_prefix(tokens), "prefix")
        if not self.can_shift():
            return tokens, Reuse(self.reuse_prefix(tokens), "refilled")
        memory = self._lib.llama_get_memory(self._ctx)
        cached = self._tokens
        end = run.start + run.length
        self.fresh.cut(keep)  # positions from `keep` on are to hold other tokens
        if not (
            self._lib.llama_memory_seq_rm(memory, 0, end, -1)
            and self._lib.llama_memory_seq_rm(memory, 0, keep, run.start)
        ):
            self.clear()
            return tokens, Reuse(0, "refilled")
        if run.start != keep:
            self._lib.llama_memory_seq_add(memory, 0, run.start, end, keep - run.start)
        moved = cached[run.start : end]
        cached[keep:] = moved  # in place: the one-token decoder holds this list
        return tokens[:keep] + moved + tokens[keep + run.covers :], Reuse(len(cached), "shifted", shifted=len(moved))

    def _find_run(
        self, tokens: list[int], keep: int, same_text: Callable[[Sequence[int], Sequence[int]], bool]
    ) -> _Run | None:
        """The longest run of the cache after `keep` that continues `tokens[keep:]`
        (starting within SHIFT_LEAD tokens, the lead's text the same as the cached tokens
        just before the run), leaving at least the last token to evaluate; None when no
        run of SHIFT_MIN_RUN tokens exists."""
        cached = self._tokens
        if len(cached) - keep < SHIFT_MIN_RUN or len(tokens) - keep <= SHIFT_MIN_RUN:
            return None
        where: dict[tuple[int, ...], list[int]] = {}
        for i in range(keep + 1, len(cached) - SHIFT_GRAM + 1):
            where.setdefault(tuple(cached[i : i + SHIFT_GRAM]), []).append(i)
        best: _Run | None = None
        limit = len(tokens) - 1  # the last token is evaluated again, for its logits
        for lead in range(min(SHIFT_LEAD, limit - keep) + 1):
            first = keep + lead
            for start in where.get(tuple(tokens[first : first + SHIFT_GRAM]), ())[:16]:
                length = 0
                while (
                    first + length < limit
                    and start + length < len(cached)
                    and cached[start + length] == tokens[first + length]
                ):
                    length += 1
                for back in range(0, min(SHIFT_LEAD, start - keep) + 1):
                    if (lead or back) and not same_text(tokens[keep:first], cached[start - back : start]):
                        continue
                    run = _Run(start - back, length + back, lead + length)
                    if run.length >= SHIFT_MIN_RUN and (best is None or run.covers > best.covers):
                        best = run
                    break
        return best

    def decode(
        self,
        tokens: Sequence[int],
        *,
        should_stop: Callable[[], bool] = never_stop,
        every_row: bool = False,
        chunk: int | None = None,
        failure: str = "evaluate the prompt",
    ) -> Iterator[DecodedChunk]:
        """Evaluate `tokens` after the cached ones, at most `chunk` (at most n_batch) per
        llama_decode, yielding after each call with its tokens cached. The last chunk's
        logits can be read until the next decode: the last position's, or every row's
        with `every_row`.

        Ends early when `should_stop` says so between chunks or, through llama.cpp's
        abort callback, inside one: that chunk may be partly in the memory, and exactly
        its uncached tail is removed, so the chunks before it stay reusable. Any other
        failure clears the cache and raises GenerationError ("failed to `failure`")."""
        size = max(1, min(chunk or self.n_batch, self.n_batch))
        rows = EveryRowBatch(self._lib, size) if every_row else None
        self._interruptible(should_stop)
        try:
            for begin in range(0, len(tokens), size):
                if should_stop():
                    return
                part = tokens[begin : begin + size]
                if rows is not None:
                    batch = rows.filled(part, len(self._tokens))
                else:
                    array = (ctypes.c_int32 * len(part))(*part)
                    batch = self._lib.llama_batch_get_one(array, len(part))
                started = time.perf_counter()
                status = self._lib.llama_decode(self._ctx, batch)
                elapsed = (time.perf_counter() - started) * 1000.0
                if status == DECODE_ABORTED:
                    self.trim(len(self._tokens))
                    return
                if status != 0:
                    self._failed(status, failure)
                self._tokens.extend(part)
                yield DecodedChunk(len(part), elapsed)
        finally:
            self._interruptible(None)
            if rows is not None:
                rows.free()

    def one_token_decoder(self) -> "_OneTokenDecoder":
        """The fast path for decoding: evaluate one token after the cached ones."""
        return _OneTokenDecoder(self)

    def rows_decoder(self, size: int) -> "RowsDecoder":
        """Speculative decoding's verifying pass: up to `size` tokens after the cached ones in
        one llama_decode, with the logits of every position (free it with `close`)."""
        return RowsDecoder(self, max(1, min(size, self.n_batch)))

    def set_adapter_scale(self, adapter: Any, scale: float) -> None:
        """Apply the LoRA `adapter` at `scale` (0 removes it). The cache is cleared: its
        keys and values were computed under the old scale."""
        lib = self._lib
        if scale == 0.0:
            result = lib.llama_set_adapters_lora(self._ctx, None, 0, None)
        else:
            adapters = (lib.llama_adapter_lora_p_ctypes * 1)(adapter)
            scales = (ctypes.c_float * 1)(scale)
            result = lib.llama_set_adapters_lora(self._ctx, adapters, 1, scales)
        if result != 0:
            raise ModelLoadError(f"llama.cpp could not apply the LoRA adapter (error {result})")
        self.clear()

    # ---- inside --------------------------------------------------------------------
    def _interruptible(self, should_stop: Callable[[], bool] | None) -> None:
        """Let `should_stop` interrupt llama_decode mid-batch, or (None) stop asking.

        llama.cpp calls the abort callback for every graph node; a Python callback there
        costs the GIL hundreds of times per token, so it is installed while batches are
        evaluated only, and between-token checks serve decoding."""
        self._abort_check = should_stop
        callback = self._abort_callback if should_stop else self._lib.ggml_abort_callback()  # () is NULL
        self._lib.llama_set_abort_callback(self._ctx, callback, None)

    def _failed(self, status: int, failure: str) -> None:
        # What llama.cpp kept of a failed batch is not reliably known: start afresh.
        self.clear()
        raise GenerationError(f"llama.cpp failed to {failure} (llama_decode returned {status})")


class _OneTokenDecoder:
    """llama_decode of one token at a time, the batch made once: decode steps are where
    every microsecond of Python shows in tokens per second. Returns the number of
    cached tokens after it."""

    __slots__ = ("_context", "_decode", "_ctx", "_token", "_batch", "_tokens")

    def __init__(self, context: LlamaContext):
        self._context = context
        self._decode = context._lib.llama_decode
        self._ctx = context._ctx
        self._token = (ctypes.c_int32 * 1)()
        self._batch = context._lib.llama_batch_get_one(self._token, 1)
        self._tokens = context._tokens  # the mirror itself: changed in place, never replaced

    def __call__(self, token: int) -> int:
        self._token[0] = token
        status = self._decode(self._ctx, self._batch)
        if status:
            self._context._failed(status, "evaluate a token")
        tokens = self._tokens
        tokens.append(token)
        return len(tokens)


class RowsDecoder:
    """A few tokens in one llama_decode with every position's logits, the batch made once per
    generation; the rejected tail is removed afterwards with `LlamaContext.trim`. No abort
    callback: a pass is a handful of tokens, and one in Python per graph node costs speed."""

    __slots__ = ("_context", "_decode", "_ctx", "_rows", "_tokens", "_row", "size")

    def __init__(self, context: LlamaContext, size: int):
        self._context = context
        self._decode = context._lib.llama_decode
        self._ctx = context._ctx
        self.size = size
        self._rows = EveryRowBatch(context._lib, size)
        self._tokens = context._tokens  # the mirror itself: changed in place, never replaced
        self._row = native.own_binding("llama_get_logits_ith", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)

    def __call__(self, tokens: Sequence[int]) -> int:
        """Evaluate `tokens` (at most `size`); returns the number of cached tokens after it."""
        batch = self._rows.filled(tokens, len(self._tokens))
        status = self._decode(self._ctx, batch)
        if status:
            self._context._failed(status, "verify drafted tokens")
        self._tokens.extend(tokens)
        return len(self._tokens)

    def row(self, index: int) -> int:
        """The address of the logits after the pass's token `index` (valid until the next decode)."""
        address = self._row(self._ctx, index)
        if not address:
            raise GenerationError(f"llama.cpp returned no logits for drafted position {index}")
        return address

    def close(self) -> None:
        self._rows.free()
