"""The engine on measured thread counts: a change applies between two decodes, never
inside one, and the probabilities are the same whatever the count (float tolerance)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from float_tolerance import assert_same_greedy_run

from scriptorium.inference.core import native
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, ThreadsChosen, TokenEvent
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.settings import PRESETS, LogitBias
from scriptorium.inference.local.thread_choice import ProbeSchedule, ThreadChooser

GREEDY = PRESETS["greedy"].with_changes(max_tokens=40)
DRAFT = "La casa era buia, e la notte più lunga."
RESTLESS = ProbeSchedule(min_period=1, max_period=1, length=1, warmup=0, confirm=0, recent=1, margin=-10.0, change=1.3)
"""Probes after every step and keeps whatever it tried: the count changes every few tokens."""


def generate(engine: Engine, prompt: str = DRAFT) -> list:
    engine.clear_cache()
    with contextlib.closing(engine.generate(prompt, GREEDY, LogitBias(ban_byte_tokens=False))) as events:
        return list(events)


def tokens_of(events: list) -> list[TokenEvent]:
    return [e for e in events if isinstance(e, TokenEvent)]


@pytest.fixture
def decodes_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Every llama_decode, as (its batch's tokens, the threads llama.cpp runs it with), and
    a failure if the thread counts are set while one runs."""
    lib = native.llama()
    seen: list[tuple[int, int]] = []
    inside = [False]
    real_decode, real_set = lib.llama_decode, lib.llama_set_n_threads

    def decode(ctx, batch):
        inside[0] = True
        try:
            seen.append(
                (
                    batch.n_tokens,
                    int(lib.llama_n_threads(ctx) if batch.n_tokens == 1 else lib.llama_n_threads_batch(ctx)),
                )
            )
            return real_decode(ctx, batch)
        finally:
            inside[0] = False

    def set_threads(ctx, n_threads, n_threads_batch):
        assert not inside[0], "thread counts changed during a llama_decode"
        return real_set(ctx, n_threads, n_threads_batch)

    monkeypatch.setattr(lib, "llama_decode", decode)
    monkeypatch.setattr(lib, "llama_set_n_threads", set_threads)
    return seen


def test_switching_threads_every_few_tokens_changes_no_probability(
    random_model: Path, decodes_seen: list[tuple[int, int]]
) -> None:
    runs = {}
    for threads in (1, 2):
        engine = Engine.load(
            LoadOptions(model_path=random_model, n_ctx=512, n_threads=threads, n_threads_batch=threads)
        )
        runs[threads] = tokens_of(generate(engine))
        engine.close()
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512))
    engine.threads.decode = ThreadChooser(2, schedule=RESTLESS)
    decodes_seen.clear()
    events = generate(engine)
    engine.close()
    one_token = [threads for size, threads in decodes_seen if size == 1]
    assert set(one_token) == {1, 2}, "the test must see the count change"
    assert sum(a != b for a, b in zip(one_token, one_token[1:])) >= 10
    switching = tokens_of(events)
    assert len(switching) == len(runs[1]) == GREEDY.max_tokens
    assert_same_greedy_run(runs[1], runs[2])
    assert_same_greedy_run(runs[2], switching)
    chosen = [e for e in events if isinstance(e, ThreadsChosen)]
    assert chosen and all(c.auto for c in chosen)
    done = events[-1]
    assert isinstance(done, GenerationDone) and done.threads is not None and done.threads.cores == 2


def test_the_engine_starts_on_every_core_measuring_and_says_so(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512))
    try:
        chosen = engine.arithmetic.threads
        assert chosen is not None and chosen.auto and chosen.reason == "measuring"
        assert engine.arithmetic.n_threads == native.llama().llama_n_threads(engine.context.handle) == chosen.cores
        assert engine.arithmetic.threads_text == f"threads {chosen.cores} of {chosen.cores} (auto: measuring)"
        assert engine.arithmetic.as_dict()["threads_auto"] is True
    finally:
        engine.close()


def test_a_fixed_count_is_kept_through_a_long_generation(
    random_model: Path, decodes_seen: list[tuple[int, int]]
) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512, n_threads=1, n_threads_batch=1))
    decodes_seen.clear()
    for _ in range(3):
        events = generate(engine)
        assert not [e for e in events if isinstance(e, ThreadsChosen)]
    engine.close()
    assert {threads for _, threads in decodes_seen} == {1}
    assert engine.arithmetic.threads_text == "1 thread" and engine.arithmetic.as_dict()["threads_reason"] is None


def test_the_engines_child_process_reports_the_threads_it_chose(random_model: Path) -> None:
    backend = IsolatedBackend.load(LoadOptions(model_path=random_model, n_ctx=512))
    try:
        assert backend.arithmetic is not None and backend.arithmetic.threads is not None
        assert backend.arithmetic.threads.auto
        with contextlib.closing(backend.generate(DRAFT, GREEDY, LogitBias())) as events:
            done = list(events)[-1]
        assert isinstance(done, GenerationDone) and done.threads is not None
        assert backend.arithmetic.threads == done.threads
    finally:
        backend.close()
