"""The generation loop: fit the prompt, reuse the cached prefix, prefill, then sample
token by token, reporting each step as the model computed it."""

from __future__ import annotations

import ctypes
import time
from typing import TYPE_CHECKING, Callable, Iterator

from . import native
from .errors import GenerationError
from .events import ContextTrimmed, Event, GenerationDone, PrefillDone, PrefillProgress, TokenEvent
from .sampling import LastLogits, SamplerChain, StepReader
from .settings import LogitBias, SamplerSettings
from .text import StopStringFilter, TokenTextDecoder

if TYPE_CHECKING:
    from .engine import Engine

DECODE_ABORTED = 2


def never_stop() -> bool:
    return False


def fit_to_context(tokens: list[int], n_ctx: int, max_tokens: int, bos_id: int | None) -> tuple[list[int], int]:
    """Keep the most recent tokens so that prompt + max_tokens fits; returns (tokens, dropped).

    A BOS token stays first: models are trained to see it there. If max_tokens alone
    fills the context, at least a quarter of it is kept for the prompt and generation
    stops when the context is full."""
    budget = max(n_ctx - max_tokens, n_ctx // 4, 1)
    if len(tokens) <= budget:
        return tokens, 0
    keep_bos = bos_id is not None and tokens[:1] == [bos_id]
    head = tokens[:1] if keep_bos else []
    tail = tokens[len(tokens) - (budget - len(head)):]
    return head + tail, len(tokens) - len(head) - len(tail)


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _decode(engine: "Engine", tokens: list[int]) -> tuple[int, float]:
    """llama_decode of one batch after the cached tokens; returns (status, milliseconds)."""
    lib = engine.handles.lib
    array = (ctypes.c_int32 * len(tokens))(*tokens)
    batch = lib.llama_batch_get_one(array, len(tokens))
    start = time.perf_counter()
    status = lib.llama_decode(engine.handles.ctx, batch)
    return status, (time.perf_counter() - start) * 1000.0


class _OneTokenDecoder:
    """llama_decode of one token at a time, the batch made once: decode steps are where
    every microsecond of Python shows in tokens per second."""

    def __init__(self, engine: "Engine"):
        self._decode = engine.handles.lib.llama_decode
        self._ctx = engine.handles.ctx
        self._token = (ctypes.c_int32 * 1)()
        self._batch = engine.handles.lib.llama_batch_get_one(self._token, 1)

    def __call__(self, token: int) -> int:
        self._token[0] = token
        return self._decode(self._ctx, self._batch)


def _reuse_prefix(engine: "Engine", tokens: list[int]) -> int:
    """Drop the cached tokens that differ from `tokens`; return how many are kept."""
    lib = engine.handles.lib
    keep = _common_prefix(engine.cached_tokens, tokens)
    if keep == len(tokens):
        keep -= 1  # the last prompt token must be evaluated again to get its logits
    if keep <= 0:
        engine.clear_cache()
        return 0
    memory = lib.llama_get_memory(engine.handles.ctx)
    removed = lib.llama_memory_seq_rm(memory, 0, keep, -1)
    window = engine.facts.sliding_window
    # Sliding-window layers forget positions older than the window: continuing at `keep`
    # needs the window before it still cached, or everything is computed again.
    lost_window = window and lib.llama_memory_seq_pos_min(memory, 0) > max(0, keep - window)
    if not removed or lost_window:
        engine.clear_cache()
        return 0
    del engine.cached_tokens[keep:]
    return keep


def run_generation(
    engine: "Engine",
    prompt: str,
    settings: SamplerSettings,
    bias: LogitBias,
    *,
    top_n: int,
    should_stop: Callable[[], bool] | None,
    special: bool,
) -> Iterator[Event]:
    stop_requested = should_stop or never_stop
    with engine.lock:
        started = time.perf_counter()
        lib, ctx = engine.handles.lib, engine.handles.ctx
        tokens = engine.tokenize(prompt, special=special)
        if special and len(tokens) > 1 and tokens[0] == tokens[1] == engine.bos_id:
            tokens = tokens[1:]  # the chat template wrote its own BOS
        if not tokens:
            tokens = [engine.bos_id]
        tokens, dropped = fit_to_context(tokens, engine.n_ctx, settings.max_tokens,
                                         engine.bos_id if engine.add_bos else None)
        if dropped:
            yield ContextTrimmed(dropped_tokens=dropped, kept_tokens=len(tokens))
        reused = _reuse_prefix(engine, tokens)
        pending = tokens[reused:]
        lib.llama_perf_context_reset(ctx)

        prefill_ms = 0.0
        cancelled = False
        engine.interruptible(stop_requested)
        try:
            batch_size = engine.n_batch
            for offset in range(0, len(pending), batch_size):
                if stop_requested():
                    cancelled = True
                    break
                chunk = pending[offset:offset + batch_size]
                status, elapsed = _decode(engine, chunk)
                prefill_ms += elapsed
                if status == DECODE_ABORTED:
                    # The interrupted batch may be partly cached: forget all of it.
                    lib.llama_memory_seq_rm(lib.llama_get_memory(ctx), 0, len(engine.cached_tokens), -1)
                    cancelled = True
                    break
                if status != 0:
                    engine.clear_cache()
                    raise GenerationError(f"llama.cpp failed to evaluate the prompt (llama_decode returned {status})")
                engine.cached_tokens.extend(chunk)
                yield PrefillProgress(done=reused + offset + len(chunk), total=len(tokens))
        finally:
            engine.interruptible(None)

        prefill_tokens = len(engine.cached_tokens) - reused
        yield PrefillDone(prompt_tokens=len(tokens), reused_tokens=reused, prefill_tokens=prefill_tokens,
                          prefill_ms=prefill_ms, kv_cache=engine.kv_usage())

        bias_map = bias.resolve(engine.byte_token_ids)
        seed = settings.resolved_seed()
        chain = SamplerChain(lib, engine.n_vocab, settings, bias_map, seed)
        step = StepReader(engine.n_vocab, native.softmax_kernel())
        last_logits = LastLogits(ctx)
        decode_one = _OneTokenDecoder(engine)
        decoder = TokenTextDecoder()
        stops = StopStringFilter(settings.stop)
        pieces: list[str] = []
        produced = 0
        first_token_at = last_token_at = None
        reason = "cancelled" if cancelled else "length"
        try:
            if settings.repeat_window:
                chain.remember(tokens[-settings.repeat_window:])
            while not cancelled and produced < settings.max_tokens:
                if stop_requested():
                    reason = "cancelled"
                    break
                # Sample first: llama.cpp's sampler leaves the logits as they are and pulls
                # them into this core's cache, so reading them afterwards is cheaper.
                token = chain.sample(ctx)
                last_token_at = time.perf_counter()
                if first_token_at is None:
                    first_token_at = last_token_at
                if engine.is_end_of_generation(token):
                    reason = "eos"
                    break
                p, top = step.measure(last_logits(), token, top_n, engine.token_text, bias_map)
                text = stops.feed(decoder.feed(engine.token_bytes(token)))
                pieces.append(text)
                produced += 1
                yield TokenEvent(index=produced - 1, id=token, text=text, p=p,
                                 top=top, elapsed_ms=(last_token_at - started) * 1000.0,
                                 kv_tokens=len(engine.cached_tokens))
                if stops.stopped:
                    reason = "stop"
                    break
                if produced >= settings.max_tokens:
                    break
                if len(engine.cached_tokens) >= engine.n_ctx:
                    reason = "context"
                    break
                status = decode_one(token)
                if status != 0:
                    raise GenerationError(f"llama.cpp failed to evaluate a token (llama_decode returned {status})")
                engine.cached_tokens.append(token)
        finally:
            chain.close()

        tail = "" if stops.stopped else stops.feed(decoder.finish()) + stops.finish()
        pieces.append(tail)
        ttft_ms = ((first_token_at or time.perf_counter()) - started) * 1000.0
        decode_ms = ((last_token_at - first_token_at) * 1000.0) if first_token_at and last_token_at else 0.0
        yield GenerationDone(
            stop_reason=reason,
            prompt_tokens=len(tokens),
            completion_tokens=produced,
            reused_tokens=reused,
            prefill_ms=prefill_ms,
            ttft_ms=ttft_ms,
            decode_ms=decode_ms,
            decode_tokens_per_s=(produced - 1) / decode_ms * 1000.0 if produced > 1 and decode_ms > 0 else 0.0,
            prefill_tokens_per_s=prefill_tokens / prefill_ms * 1000.0 if prefill_ms > 0 else 0.0,
            kv_cache=engine.kv_usage(),
            text="".join(pieces),
            tail_text=tail,
            seed=seed if settings.temperature > 0 else None,
            trimmed_tokens=dropped,
        )
