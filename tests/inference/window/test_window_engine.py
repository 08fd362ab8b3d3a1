"""The window on a real model with the author's layout trained on 256 tokens: the prompt
never exceeds the window, and when the window slides the cache slides with it.

The shifted-cache comparison uses a one-layer model with a float32 KV cache. With one
layer, a token's key and value depend on the token and its position only, so the moved
cache holds what a cold prefill of the same window computes, except for RoPE: the cold
keys are rotated once by angle (p - d)·θ, the moved ones by p·θ and then by -d·θ. The
angles reach n_ctx = 256 radians, where float32 spacing is 2^-16 ≈ 1.5e-5, so each
rotated key is off by a few 1e-5 relative; attention scores (|q·k|/√d of order 10 here)
move by about 1e-4, and probabilities, which are at most 1, by less than that through
the softmax and the single layer after it. 1e-3 absolute leaves a tenfold margin and is
still far below what a wrong shift does (a token off by one position moves these
probabilities by whole percents)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, PrefillDone, TokenEvent
from scriptorium.inference.core.settings import PRESETS, LogitBias
from scriptorium.inference.window.window import boundaries, build_window, prompt_budget

WORDS = (
    "il gatto nero dorme sul tetto e la casa era buia nella notte più lunga poi il cane corre verso la porta"
).split()
MEMORY = "Il gatto si chiama Nero e vive a Roma."
GREEDY = PRESETS["greedy"].with_changes(max_tokens=16)


def paragraph(i: int) -> str:
    """A paragraph of one sentence with no full stop inside: its only boundary is its start."""
    return " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(9 + i % 5)).capitalize() + "."


def long_draft(n: int = 400) -> str:
    return "\n\n".join(paragraph(i) for i in range(n))


def run(engine: Engine, prompt: str, settings=GREEDY) -> list:
    with contextlib.closing(engine.generate(prompt, settings, LogitBias())) as events:
        return list(events)


def window_for(engine: Engine, draft: str, **kwargs):
    return build_window(
        draft, budget=prompt_budget(engine.n_ctx, GREEDY.max_tokens), count=engine.count_tokens, memory=MEMORY, **kwargs
    )


@pytest.fixture
def engine(short_context_model: Path):
    engine = Engine.load(LoadOptions(model_path=short_context_model, n_threads=1))
    yield engine
    engine.close()


def test_the_default_context_is_the_training_context(engine: Engine, random_model: Path) -> None:
    assert engine.n_ctx == 256 and engine.context_warning == ""
    larger = Engine.load(LoadOptions(model_path=engine.options.model_path, n_ctx=1024, n_threads=1))
    try:
        assert larger.n_ctx == 1024
        assert larger.context_warning == (
            "the context (1,024 tokens) exceeds the 256 the model was trained on: past them its text drifts"
        )
    finally:
        larger.close()


def test_a_long_draft_fits_on_a_boundary_with_memory_and_note(engine: Engine) -> None:
    draft = long_draft()
    assert engine.count_tokens(draft) > 3000
    window = window_for(engine, draft, note="[Tono cupo.]", note_depth=2)
    events = run(engine, window.prompt)
    done = events[-1]
    assert isinstance(done, GenerationDone) and done.trimmed_tokens == 0
    assert done.prompt_tokens == window.prompt_tokens <= engine.n_ctx - GREEDY.max_tokens
    assert done.prompt_tokens + done.completion_tokens <= engine.n_ctx
    assert window.start in boundaries(draft)[0] and draft[window.start - 2 : window.start] == "\n\n"
    assert window.prompt.startswith(MEMORY + "\n\n")
    assert window.prompt.endswith("[Tono cupo.]\n\n" + "\n\n".join(draft.split("\n\n")[-2:]))
    assert window.memory_tokens + window.note_tokens + window.draft_tokens == done.prompt_tokens
    assert window.dropped_tokens + window.draft_tokens > 3000


def first_step(events: list) -> TokenEvent:
    return next(e for e in events if isinstance(e, TokenEvent))


def test_a_sliding_window_shifts_the_cache_and_computes_what_a_cold_prefill_does(one_layer_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=one_layer_model, n_threads=1, type_k="f32", type_v="f32"))
    try:
        draft = long_draft(60)
        first = window_for(engine, draft[:-200])
        run(engine, first.prompt)
        second = window_for(engine, draft)  # two paragraphs more: the window slides
        assert second.start > first.start
        shifted = run(engine, second.prompt)
        prefill = next(e for e in shifted if isinstance(e, PrefillDone))
        assert prefill.cache_reuse == "shifted" and prefill.shifted_tokens > 100
        # Only the appended text is evaluated (and a token or two where it joins).
        assert prefill.prefill_tokens <= engine.count_tokens(draft[-200:]) + 2
        assert prefill.reused_tokens + prefill.prefill_tokens == prefill.prompt_tokens
        # The same tokens as a cold prefill of this window, in the same positions.
        fresh = engine.tokenize(second.prompt)
        assert list(engine.cached_tokens[: len(fresh)]) == fresh
        engine.clear_cache()
        cold = run(engine, second.prompt)
        assert next(e for e in cold if isinstance(e, PrefillDone)).reused_tokens == 0
        a, b = first_step(shifted), first_step(cold)
        assert [c.id for c in a.top[:3]] == [c.id for c in b.top[:3]]
        for x, y in zip(a.top, b.top):
            if x.id == y.id:
                assert x.p == pytest.approx(y.p, abs=1e-3)
    finally:
        engine.close()


def test_appending_within_the_window_reuses_the_prefix(engine: Engine) -> None:
    draft = long_draft(3)
    run(engine, window_for(engine, draft).prompt)
    events = run(engine, window_for(engine, draft + " Poi il gatto dorme.").prompt)
    prefill = next(e for e in events if isinstance(e, PrefillDone))
    assert prefill.cache_reuse == "prefix" and prefill.prefill_tokens < 10


def test_a_paragraph_break_is_evaluated_as_written_not_as_the_line_break_the_cache_holds(engine: Engine) -> None:
    # Scoring a draft that ends in a newline, then continuing it, puts the author's note
    # after one newline, then after a paragraph break: the same text but for whitespace.
    body, note = long_draft(3), "[Nota: " + paragraph(7) + " " + paragraph(8) + "]\n\n"
    run(engine, body + "\n" + note)
    prompt = body + "\n\n" + note
    prefill = next(e for e in run(engine, prompt) if isinstance(e, PrefillDone))
    fresh = engine.tokenize(prompt)
    assert prefill.prompt_tokens == len(fresh)
    assert list(engine.cached_tokens[: len(fresh)]) == fresh
