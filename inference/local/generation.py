"""The generation loop: fit the prompt, reuse the cached prefix, prefill, then sample
token by token, reporting each step as the model computed it."""

from __future__ import annotations

import time
from contextlib import closing
from typing import Callable, Iterator, Sequence

from ..core import native
from ..core.events import ContextTrimmed, Event, GenerationDone, PrefillDone, PrefillProgress, TokenEvent
from ..core.settings import LogitBias, SamplerSettings
from ..core.speculation import OFF, Speculation
from ..core.text import CompletionText
from ..core.writer_stop import WriterStop
from ..window.window import prompt_budget
from . import speculative
from .context import DecodedChunk, LlamaContext, Reuse, never_stop
from .healing import Healer, plan_healing
from .sampler_trace import ChainTrace
from .sampling import StepReader
from .thread_choice import ThreadTuner
from .vocabulary import Vocabulary


def fit_to_context(tokens: list[int], n_ctx: int, max_tokens: int, bos_id: int | None) -> tuple[list[int], int]:
    """Keep the most recent tokens so that prompt + max_tokens fits (window.prompt_budget);
    returns (tokens, dropped). A BOS token stays first: models are trained to see it there.
    The app fits its prompts in words first (window.py); this is the last guard."""
    budget = prompt_budget(n_ctx, max_tokens)
    if len(tokens) <= budget:
        return tokens, 0
    keep_bos = bos_id is not None and tokens[:1] == [bos_id]
    head = tokens[:1] if keep_bos else []
    tail = tokens[len(tokens) - (budget - len(head)) :]
    return head + tail, len(tokens) - len(head) - len(tail)


def healed(tokens: list[int], vocabulary: Vocabulary) -> tuple[list[int], Healer | None]:
    """The prompt backed up over the tokens the cursor may have cut, and the healer that
    holds the first tokens drawn to their text (healing.py); None when nothing was cut."""
    plan = plan_healing(tokens, vocabulary.token_bytes, vocabulary.prefixes)
    if not plan.removed:
        return tokens, None
    return tokens[: plan.kept], Healer(vocabulary.prefixes, plan.removed, vocabulary.n_vocab)


def reuse_fresh(context: LlamaContext, tokens: Sequence[int]) -> Reuse:
    """For a fixed seed: keep the cache only as far as an evaluation of `tokens` from an empty cache left it
    (before the last token: a re-roll), else clear it; the rest is then evaluated as `continue` evaluates it."""
    head = tuple(tokens[:-1])
    if context.fresh.covers(head) and context.cached_tokens[: len(head)] == head:
        return Reuse(context.trim(len(head)), "fresh")
    context.clear()
    return Reuse(0, "fresh")


def decode_prompt(
    context: LlamaContext, pending: Sequence[int], should_stop: Callable[[], bool]
) -> Iterator[DecodedChunk]:
    """Evaluate the uncached rest of a prompt, its last token alone: a re-roll, which evaluates only that
    token again, then computes what the first run computed (fresh_prefix.py). From an empty cache, what
    came before the last token is remembered for `reuse_fresh`."""
    from_empty = context.n_cached == 0
    yield from context.decode(pending[:-1], should_stop=should_stop)
    if not pending or context.n_cached < len(pending) - 1:
        return  # stopped midway
    if from_empty:
        context.fresh.left(context.cached_tokens)
    yield from context.decode(pending[-1:], should_stop=should_stop)


def run_generation(  # noqa: C901 - the per-token loop kept in one frame on purpose: a call per step costs decode speed
    context: LlamaContext,
    vocabulary: Vocabulary,
    prompt: str,
    settings: SamplerSettings,
    bias: LogitBias,
    *,
    top_n: int,
    should_stop: Callable[[], bool] | None,
    special: bool,
    threads: ThreadTuner | None = None,
    speculation: Speculation = OFF,
    guesser_for: speculative.GuesserFactory | None = None,
) -> Iterator[Event]:
    """Stream the generation's events. With `threads`, each decode step and prompt batch
    is timed for it, and the thread counts it chooses apply from the next decode on
    (announced as a ThreadsChosen event); a speculating generation's one-token decodes are
    timed, its passes are not (they are of other widths). With `speculation` on, a Speculator
    stands in for the one-token decoder (speculative.py): the loop samples the same way from the
    logits it gives."""
    stop_requested = should_stop or never_stop
    with context.claim():
        started = time.perf_counter()
        tokens = vocabulary.tokenize(prompt, special=special)
        if special and len(tokens) > 1 and tokens[0] == tokens[1] == vocabulary.bos_id:
            tokens = tokens[1:]  # the chat template wrote its own BOS
        if not tokens:
            tokens = [vocabulary.bos_id]
        tokens, dropped = fit_to_context(
            tokens, context.n_ctx, settings.max_tokens, vocabulary.bos_id if vocabulary.add_bos else None
        )
        if dropped:
            yield ContextTrimmed(dropped_tokens=dropped, kept_tokens=len(tokens))
        # A chat's prompt ends in its template's turn marker, where no cursor cut anything.
        tokens, healer = healed(tokens, vocabulary) if settings.heal and not special else (tokens, None)
        token_bytes = vocabulary.token_bytes

        def same_text(a: Sequence[int], b: Sequence[int]) -> bool:
            # The same words, spelled with or without the space before them (" Poi" after a
            # full stop, "Poi" after a paragraph break). Only spaces, and only before words:
            # a lead of line breaks alone read as "the same" as the cache's other line
            # breaks, or none, and the model saw "resto.\n[Nota" where "resto.\n\n[Nota" was sent.
            def text(ids: Sequence[int]) -> str:
                return b"".join(map(token_bytes, ids)).decode("utf-8", "replace").lstrip(" ")

            words = text(a)
            return words == text(b) and words.strip() != ""

        if settings.seed is not None and settings.temperature > 0:
            reuse = reuse_fresh(context, tokens)  # the seed gives the same text warm or cold (fresh_prefix.py)
        else:
            tokens, reuse = context.reuse(tokens, same_text)
        reused = reuse.tokens
        pending = tokens[reused:]

        prefill_ms = 0.0
        prefilled = 0
        with closing(decode_prompt(context, pending, stop_requested)) as chunks:
            for chunk in chunks:
                prefill_ms += chunk.ms
                prefilled += chunk.tokens
                if threads is not None and (chosen := threads.prefilled(chunk.tokens, chunk.ms / 1000.0)):
                    yield chosen
                yield PrefillProgress(done=reused + prefilled, total=len(tokens))
        cancelled = prefilled < len(pending)
        held = context.n_cached
        yield PrefillDone(
            prompt_tokens=len(tokens),
            reused_tokens=reused,
            prefill_tokens=prefilled,
            prefill_ms=prefill_ms,
            kv_cache=context.kv_usage(),
            cache_reuse=reuse.how,
            shifted_tokens=reuse.shifted,
        )

        bias_map = bias.resolve(vocabulary.byte_token_ids)
        seed = settings.resolved_seed()
        chain = context.sampler(vocabulary.n_vocab, settings, bias_map, seed)
        step = StepReader(vocabulary.n_vocab, native.softmax_kernel())
        trace = ChainTrace()
        if top_n:
            chain.observer = trace
        greedy = settings.greedy_draw()
        speculator = speculative.start(context, tokens, speculation, guesser_for) if not cancelled else None
        last_logits = speculator.logits if speculator is not None else context.last_logits()
        decode_one = context.one_token_decoder()
        clock = time.perf_counter
        decoded_in = threads.decoded if threads is not None else None
        token_text = vocabulary.token_text
        ends_generation, n_ctx = vocabulary.is_end_of_generation, context.n_ctx
        completion = CompletionText(settings.stop)
        writer_stop = WriterStop(settings.length)
        pieces: list[str] = []
        produced = 0
        first_token_at = last_token_at = None
        # Decode steps finished before the last sampled token: an end-of-generation token
        # is sampled after a decode but is no completion token, so counting completion
        # tokens - 1 would leave that step's time in decode_ms without its token.
        decoded = steps = 0
        reason = "cancelled" if cancelled else "length"
        try:
            if history := settings.history_length():
                chain.remember(tokens[-history:])
            while not cancelled and produced < settings.max_tokens:
                if stop_requested():
                    reason = "cancelled"
                    break
                logits = last_logits()
                if top_n:  # the model's own candidates first: the trace follows them through the chain
                    _, top = step.measure(logits, -1, top_n, token_text, bias_map)
                # Read before it holds the step to the text backed up over: the raw numbers stay the model's.
                healing = healer.constrain(logits, top_n, token_text, bias_map) if healer and healer.active else None
                if top_n:
                    trace.follow([candidate.id for candidate in (healing.allowed if healing else top)])
                token = chain.sample(logits)
                last_token_at = time.perf_counter()
                steps = decoded
                if first_token_at is None:
                    first_token_at = last_token_at
                if ends_generation(token):
                    reason = "eos"
                    break
                if top_n:
                    p = next((c.p for c in top if c.id == token), None) or step.probability_of(token)
                else:
                    p, top = step.measure(logits, token, 0, token_text, bias_map)
                if healing is not None:
                    p = healer.raw_probability(token)  # type: ignore[union-attr]
                did = trace.finish(chain.candidates, token, greedy, top_n)
                piece = token_bytes(token)
                shown = healer.take(piece) if healing is not None else piece  # type: ignore[union-attr]
                if writer_stop.stops_before(shown.decode("utf-8", "replace")):
                    reason = settings.length  # the sentence or the paragraph ended before this token
                    break
                text = completion.feed(shown)
                writer_stop.wrote(text)
                pieces.append(text)
                produced += 1
                yield TokenEvent(
                    index=produced - 1,
                    id=token,
                    text=text,
                    p=p,
                    top=top,
                    elapsed_ms=(last_token_at - started) * 1000.0,
                    kv_tokens=held,
                    piece=piece,
                    kept=did.kept,
                    removed=did.removed,
                    pushed=did.pushed,
                    drafted=speculator is not None and speculator.accepts(token),
                    healing=healing,
                )
                if completion.stopped:
                    reason = "stop"
                    break
                if produced >= settings.max_tokens:
                    break
                if held >= n_ctx:
                    reason = "context"
                    break
                if speculator is not None:
                    held = speculator.advance(token, settings.max_tokens - produced)
                    alone = speculator.alone_seconds
                    if decoded_in is not None and alone is not None and (chosen := decoded_in(alone)):
                        yield chosen
                elif decoded_in is None:
                    held = decode_one(token)
                else:
                    # Only llama_decode is timed: the thread count changes nothing else in a step.
                    step_started = clock()
                    held = decode_one(token)
                    if chosen := decoded_in(clock() - step_started):
                        yield chosen
                decoded += 1
        finally:
            chain.close()
            if speculator is not None:
                speculator.close()

        tail = completion.finish()
        pieces.append(tail)
        # No first token, no time to it: a run cancelled during its prefill reports 0 (as
        # the remote backend does) rather than the time until it was cancelled.
        ttft_ms = (first_token_at - started) * 1000.0 if first_token_at is not None else 0.0
        decode_ms = ((last_token_at - first_token_at) * 1000.0) if first_token_at and last_token_at else 0.0
        yield GenerationDone(
            stop_reason=reason,
            prompt_tokens=len(tokens),
            completion_tokens=produced,
            reused_tokens=reused,
            prefill_ms=prefill_ms,
            ttft_ms=ttft_ms,
            decode_ms=decode_ms,
            decode_tokens_per_s=steps / decode_ms * 1000.0 if steps and decode_ms > 0 else 0.0,
            prefill_tokens_per_s=prefilled / prefill_ms * 1000.0 if prefill_ms > 0 else 0.0,
            kv_cache=context.kv_usage(),
            text="".join(pieces),
            tail_text=tail,
            seed=seed if settings.temperature > 0 else None,
            trimmed_tokens=dropped,
            cache_reuse=reuse.how,
            shifted_tokens=reuse.shifted,
            threads=threads.chosen() if threads is not None else None,
            speculation=speculator.counts() if speculator is not None else None,
            healed=healer.removed.decode("utf-8", "replace") if healer is not None else "",
        )
