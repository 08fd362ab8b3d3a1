"""The owner of the llama.cpp context: its mirror of the KV memory always equals what
llama.cpp holds, through prefix reuse, interruption, failure and clearing, and both
generation and scoring leave a cache the other can reuse.

"What llama.cpp holds" is read from llama.cpp itself (the lowest and highest position of
sequence 0), never from the mirror."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest
from gguf_gemma3 import write_gemma3_model

from scriptorium.inference.core.backend import Backend
from scriptorium.inference.local.context import LlamaContext
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.errors import GenerationError
from scriptorium.inference.core.events import GenerationDone, PrefillDone, ScoreDone, ScoreProgress, TokenEvent
from scriptorium.inference.core.settings import PRESETS, LogitBias

DRAFT = "La casa era buia, e la notte più lunga. Il gatto dorme sul letto."
GREEDY = PRESETS["greedy"].with_changes(max_tokens=6)
LONG = " ".join([DRAFT] * 12)


def load(model: Path, **options) -> Engine:
    # One thread: the same arithmetic order as the fresh engines compared against.
    return Engine.load(LoadOptions(model_path=model, n_threads=1, **options))


def run(engine: Engine, prompt: str, settings=GREEDY) -> list:
    with contextlib.closing(engine.generate(prompt, settings, LogitBias())) as events:
        return list(events)


def prefill_of(events: list) -> PrefillDone:
    return next(e for e in events if isinstance(e, PrefillDone))


def assert_mirror_matches_llama_cpp(context: LlamaContext) -> None:
    held = context.n_cached
    assert context.memory_positions()[1] == held - 1  # -1 when empty
    assert len(context.cached_tokens) == held


def decode_all(context: LlamaContext, tokens: list[int], **kwargs) -> int:
    """Tokens decoded by context.decode (the caller holds the context)."""
    with contextlib.closing(context.decode(tokens, **kwargs)) as chunks:
        return sum(chunk.tokens for chunk in chunks)


@pytest.fixture
def engine(random_model: Path):
    engine = load(random_model, n_ctx=1024, n_batch=64)
    yield engine
    engine.close()


def test_the_mirror_is_read_only(engine: Engine) -> None:
    run(engine, DRAFT)
    assert isinstance(engine.cached_tokens, tuple)
    with pytest.raises(AttributeError):
        engine.cached_tokens = ()  # type: ignore[misc]


def test_prefix_reuse_keeps_the_common_prefix_and_evaluates_the_last_token_again(engine: Engine) -> None:
    context, tokens = engine.context, engine.tokenize(DRAFT)
    with context.claim():
        assert decode_all(context, tokens) == len(tokens)
        assert context.cached_tokens == tuple(tokens)
        edited = tokens[:10] + engine.tokenize(" notte notte", add_bos=False)
        assert context.reuse_prefix(edited) == 10
        assert context.cached_tokens == tuple(tokens[:10])
        assert_mirror_matches_llama_cpp(context)
        # The whole prompt cached: its last token is evaluated again, for its logits.
        assert context.reuse_prefix(tokens[:10]) == 9
        assert_mirror_matches_llama_cpp(context)
        assert context.reuse_prefix(engine.tokenize(" gatto", add_bos=False)) == 0
        assert context.n_cached == 0
        assert_mirror_matches_llama_cpp(context)


def test_prefix_reuse_on_a_sliding_window_model_needs_the_window_before_it(gguf_dir: Path) -> None:
    model = write_gemma3_model(gguf_dir / "gemma3-context.gguf", sliding_window=128)
    engine = load(model, n_ctx=1024, n_batch=256)
    context = engine.context
    tokens = engine.tokenize(" ".join(["casa", "notte"] * 350))
    other = engine.tokenize(" gatto", add_bos=False)
    with context.claim():
        decode_all(context, tokens)
        lowest = context.memory_positions()[0]
        # The sliding-window cache (512 cells) has recycled the oldest positions.
        assert lowest > 0
        # Continuing at 650 needs positions 522..649 in the window: still there.
        assert context.reuse_prefix(tokens[:650] + other) == 650
        assert_mirror_matches_llama_cpp(context)
        # Continuing at lowest + 10 needs positions the window has forgotten.
        assert context.reuse_prefix(tokens[: lowest + 10] + other) == 0
        assert context.n_cached == 0
        assert_mirror_matches_llama_cpp(context)
    engine.close()


class StopInsideTheSecondChunk:
    """should_stop that lets the first chunk finish and the check before the second
    pass, then stops llama.cpp from inside the second (through its abort callback)."""

    def __init__(self) -> None:
        self.chunks_done = 0
        self._asked_since = 0

    def __call__(self) -> bool:
        if not self.chunks_done:
            return False
        self._asked_since += 1
        return self._asked_since > 1

    @property
    def stopped_llama_cpp(self) -> bool:
        return self._asked_since > 1


def test_an_interrupted_chunk_leaves_exactly_the_chunks_before_it(engine: Engine) -> None:
    context = engine.context
    text = LONG
    tokens = engine.tokenize(text)
    assert len(tokens) > 3 * 64  # three chunks at least
    stop = StopInsideTheSecondChunk()
    with context.claim():
        with contextlib.closing(context.decode(tokens, should_stop=stop)) as chunks:
            for chunk in chunks:
                stop.chunks_done += 1
        assert stop.chunks_done == 1 and stop.stopped_llama_cpp
        assert context.cached_tokens == tuple(tokens[:64])
        assert_mirror_matches_llama_cpp(context)
    # What is kept is reused, and computes what a fresh engine computes.
    events = run(engine, text)
    assert prefill_of(events).reused_tokens == 64
    fresh = run(load(engine.options.model_path, n_ctx=1024, n_batch=64), text)
    assert [t.id for t in events if isinstance(t, TokenEvent)] == [t.id for t in fresh if isinstance(t, TokenEvent)]


def test_scoring_interrupted_mid_chunk_keeps_the_chunks_it_scored(engine: Engine) -> None:
    text = LONG
    stop = StopInsideTheSecondChunk()
    seen = []
    with contextlib.closing(engine.score(text, top_n=0, should_stop=stop)) as events:
        for event in events:
            seen.append(event)
            stop.chunks_done += isinstance(event, ScoreProgress)
    done = seen[-1]
    assert isinstance(done, ScoreDone) and done.cancelled and stop.stopped_llama_cpp
    assert [e.done for e in seen if isinstance(e, ScoreProgress)] == [64]
    assert done.kv_cache is not None and done.kv_cache.tokens == 64
    assert_mirror_matches_llama_cpp(engine.context)
    # Generation reuses what scoring left.
    assert prefill_of(run(engine, text)).reused_tokens == 64


def test_a_failed_decode_clears_the_cache_and_says_why(engine: Engine) -> None:
    context, tokens = engine.context, engine.tokenize(DRAFT)
    with context.claim():
        decode_all(context, tokens)
        # llama.cpp refuses a token outside the vocabulary before computing anything.
        with pytest.raises(GenerationError, match="failed to evaluate the prompt"):
            decode_all(context, [engine.n_vocab + 5])
        assert context.n_cached == 0
        assert_mirror_matches_llama_cpp(context)
        decode_all(context, tokens)
        with pytest.raises(GenerationError, match="failed to evaluate a token"):
            context.one_token_decoder()(engine.n_vocab + 5)
        assert context.n_cached == 0
        assert_mirror_matches_llama_cpp(context)


def test_clear_empties_llama_cpp_and_the_mirror(engine: Engine) -> None:
    run(engine, DRAFT)
    assert engine.kv_usage().tokens > 0
    engine.clear_cache()
    assert engine.cached_tokens == () and engine.kv_usage().tokens == 0
    assert_mirror_matches_llama_cpp(engine.context)
    assert prefill_of(run(engine, DRAFT)).reused_tokens == 0


def test_generation_keeps_the_mirror_token_by_token(engine: Engine) -> None:
    events = run(engine, DRAFT, GREEDY.with_changes(max_tokens=12))
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    done = events[-1]
    assert isinstance(done, GenerationDone) and done.completion_tokens == 12
    # The prompt, then every generated token but the last (sampled, never decoded).
    prompt = engine.tokenize(DRAFT)
    assert engine.cached_tokens == tuple(prompt + [t.id for t in tokens[:-1]])
    assert [t.kv_tokens for t in tokens] == list(range(len(prompt), len(prompt) + 12))
    assert_mirror_matches_llama_cpp(engine.context)


def test_generation_after_scoring_reuses_the_scored_text(engine: Engine, random_model: Path) -> None:
    with contextlib.closing(engine.score(DRAFT)) as events:
        list(events)
    longer = DRAFT + " Il gatto dorme."
    events = run(engine, longer)
    prefill = prefill_of(events)
    assert prefill.reused_tokens == len(engine.tokenize(DRAFT))
    assert prefill.prefill_tokens == len(engine.tokenize(longer)) - len(engine.tokenize(DRAFT))
    # Keys and values computed for scoring are those generation computes: same tokens,
    # probabilities equal to float32 accumulation noise (batches of different sizes sum
    # in a different order; 1e-4 relative is far above that and far below a real change).
    fresh = run(load(random_model, n_ctx=1024, n_batch=64), longer)
    ours, theirs = ([e for e in evs if isinstance(e, TokenEvent)] for evs in (events, fresh))
    assert [t.id for t in ours] == [t.id for t in theirs]
    assert [t.p for t in ours] == pytest.approx([t.p for t in theirs], rel=1e-4)


def test_the_engine_is_a_backend(engine: Engine) -> None:
    assert isinstance(engine, Backend)
    assert not isinstance(object(), Backend)
    backend: Backend = engine  # the typing assertion, for a type checker
    assert backend.n_ctx == 1024


def test_a_closed_engine_refuses_requests_in_one_line(random_model: Path) -> None:
    engine = load(random_model, n_ctx=256)
    engine.close()
    engine.close()  # closing twice is harmless
    with pytest.raises(GenerationError, match="closed"):
        run(engine, DRAFT)


def test_closing_waits_for_a_count_under_way_on_another_thread(random_model: Path) -> None:
    """The window marker counts tokens on a worker thread, without the context (a
    suggestion may be streaming): a model switched meanwhile was freed under the count,
    and llama.cpp crashed the process. Closing now waits for the count, and refuses the next."""
    engine = load(random_model, n_ctx=256)
    text = DRAFT * 4000  # about a second of tokenizing
    started, finished, closed = threading.Event(), [0.0], [0.0]

    def count() -> None:
        started.set()
        engine.count_tokens(text)
        finished[0] = time.perf_counter()

    counting = threading.Thread(target=count)
    counting.start()
    started.wait()
    time.sleep(0.05)  # inside llama_tokenize by now
    engine.close()
    closed[0] = time.perf_counter()
    counting.join()
    assert 0 < finished[0] <= closed[0]
    with pytest.raises(GenerationError, match="closed"):
        engine.count_tokens(DRAFT)


def test_an_abort_after_some_ubatches_removes_exactly_the_uncached_tail(engine: Engine) -> None:
    """llama.cpp splits a batch into ubatches and, when one is aborted, keeps the ones
    before it: the chunk is partly in the memory, and only the owner's trim makes the
    memory equal the mirror again. (The engine's own contexts use one ubatch per batch.)"""
    lib = engine.handles.lib
    params = lib.llama_context_default_params()
    params.n_ctx, params.n_batch, params.n_ubatch = 1024, 128, 32
    params.n_threads = params.n_threads_batch = 1
    ctx = lib.llama_init_from_model(engine.handles.model, params)
    context = LlamaContext(lib, None, ctx, engine.facts, type_k="f16", type_v="f16", swa_full=False)
    tokens = engine.tokenize(LONG)
    asked: list[int] = []

    def stop_at(count: int | None):
        def should_stop() -> bool:
            asked.append(1)
            return count is not None and len(asked) >= count

        return should_stop

    with context.claim():
        with contextlib.closing(context.decode(tokens, should_stop=stop_at(None))) as chunks:
            next(chunks)
        # The abort callback is asked once per graph node: the same count for every ubatch.
        per_ubatch = (len(asked) - 1) // 4
        assert per_ubatch > 4
        context.clear()
        asked.clear()
        # Decode one chunk, then stop in the middle of the second chunk's third ubatch.
        middle_of_third = 1 + 4 * per_ubatch + 1 + 2 * per_ubatch + per_ubatch // 2
        with contextlib.closing(context.decode(tokens, should_stop=stop_at(middle_of_third))) as chunks:
            assert sum(chunk.tokens for chunk in chunks) == 128
        assert context.cached_tokens == tuple(tokens[:128])
        assert_mirror_matches_llama_cpp(context)
    context.close()
