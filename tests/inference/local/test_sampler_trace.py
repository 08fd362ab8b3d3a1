"""What the chain kept, as the probabilities panel shows it: equal to what llama.cpp's own
chain leaves on its candidate array, step by step; and what each sampler did, marked."""

from __future__ import annotations

import contextlib
import ctypes

import numpy as np
import pytest
from float_tolerance import PROB_RTOL
from gguf_loop import PROMPT
from sampler_reference import DRAFT, NEUTRAL, SAMPLERS, engine, llama_cpp_chain, loop_engine  # noqa: F401  (fixtures)

from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.local.sampler_chain import TOKEN_DATA
from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings

STEPS = 60
TOP_N = 8


def reference_steps(
    engine: Engine, prompt: str, settings: SamplerSettings
) -> list[tuple[int, list[tuple[int, float]]]]:
    """(drawn token, survivors by probability) at each step, from llama_sampler_apply of the
    whole chain on an array filled as llama_sampler_sample fills its own."""
    lib, ctx, n_vocab = engine._h.lib, engine.context.handle, engine.n_vocab
    tokens = engine.vocabulary.tokenize(prompt, special=False)
    engine.clear_cache()
    chain = llama_cpp_chain(
        lib, engine._h.vocab, n_vocab, settings, LogitBias().resolve(engine.byte_token_ids), settings.seed
    )
    buffer = np.zeros(n_vocab, dtype=TOKEN_DATA)
    array = lib.llama_token_data_array()
    steps = []
    try:
        assert lib.llama_decode(ctx, lib.llama_batch_get_one((ctypes.c_int32 * len(tokens))(*tokens), len(tokens))) == 0
        if history := settings.history_length():
            for token in tokens[-history:]:
                lib.llama_sampler_accept(chain, token)
        for _ in range(settings.max_tokens):
            address = ctypes.cast(lib.llama_get_logits_ith(ctx, -1), ctypes.c_void_p).value
            buffer["id"] = np.arange(n_vocab)
            buffer["logit"] = np.frombuffer((ctypes.c_float * n_vocab).from_address(address), dtype=np.float32)
            array.data = ctypes.cast(buffer.ctypes.data, type(array.data))
            array.size, array.selected, array.sorted = n_vocab, -1, False
            lib.llama_sampler_apply(chain, ctypes.byref(array))
            start = (ctypes.cast(array.data, ctypes.c_void_p).value - buffer.ctypes.data) // TOKEN_DATA.itemsize
            left = buffer[start : start + array.size]
            token = int(left["id"][array.selected])
            survivors = sorted(
                ((int(i), float(p)) for i, p in zip(left["id"], left["p"]) if p > 0), key=lambda s: -s[1]
            )
            steps.append((token, survivors[:TOP_N]))
            lib.llama_sampler_accept(chain, token)
            assert lib.llama_decode(ctx, lib.llama_batch_get_one((ctypes.c_int32 * 1)(token), 1)) == 0
        return steps
    finally:
        lib.llama_sampler_free(chain)
        engine.context.clear()


def events_of(engine: Engine, prompt: str, settings: SamplerSettings) -> list[TokenEvent]:
    engine.clear_cache()
    with contextlib.closing(engine.generate(prompt, settings, LogitBias(), top_n=TOP_N)) as events:
        return [event for event in events if isinstance(event, TokenEvent)]


@pytest.mark.parametrize(
    "name",
    [
        "top_k",
        "top_p",
        "min_p",
        "xtc",
        "typ_p",
        "top_n_sigma",
        "penalties",
        "dry",
        "mirostat v2",
        "every sampler, reordered",
    ],
)
def test_what_was_kept_is_what_llama_cpps_chain_leaves(engine: Engine, name: str) -> None:  # noqa: F811
    settings = NEUTRAL.with_changes(**SAMPLERS[name], max_tokens=STEPS)
    ours = events_of(engine, DRAFT, settings)
    theirs = reference_steps(engine, DRAFT, settings)
    assert len(ours) == len(theirs) == STEPS
    for event, (token, survivors) in zip(ours, theirs):
        assert event.id == token
        assert [i for i, _ in event.kept] == [i for i, _ in survivors]
        # The reference chain runs on its own evaluation of the prompt, whose logits may differ by
        # float32 rounding (float_tolerance.py); DRY's penalty then moves them on the same scale.
        assert [p for _, p in event.kept] == pytest.approx([p for _, p in survivors], rel=PROB_RTOL)


def test_greedy_keeps_its_token_alone(engine: Engine) -> None:  # noqa: F811
    events = events_of(engine, DRAFT, PRESETS["greedy"].with_changes(max_tokens=5))
    assert all(event.kept == ((event.id, 1.0),) for event in events)
    assert all(event.id == event.top[0].id for event in events)


def test_xtc_and_top_k_say_which_candidates_they_took_out(loop_engine: Engine) -> None:  # noqa: F811
    settings = SamplerSettings(
        temperature=1.0, top_k=5, top_p=1.0, xtc_probability=1.0, xtc_threshold=0.1, max_tokens=20, seed=3
    )
    for event in events_of(loop_engine, PROMPT, settings):
        removed = dict(event.removed)
        # XTC sees the probabilities top-k left: the 5 likeliest, renormalised.
        mass = sum(c.p for c in event.top[:5])
        above = [c.id for c in event.top[:5] if c.p / mass >= 0.1]
        # XTC keeps the least likely above the threshold and takes out the others.
        assert [removed.get(token) for token in above[:-1]] == ["xtc"] * (len(above) - 1)
        assert above[-1] not in removed
        assert all(removed.get(c.id) == "top_k" for c in event.top[5:])  # beyond the 5 most probable
        assert {i for i, _ in event.kept}.isdisjoint(removed)


def test_dry_says_which_token_it_pushed_down_and_by_how_much(loop_engine: Engine) -> None:  # noqa: F811
    dry = PRESETS["greedy"].with_changes(dry_multiplier=0.8, dry_base=1.75, dry_allowed_length=2, max_tokens=30)
    pushes = [push for event in events_of(loop_engine, PROMPT, dry) for push in event.pushed if push[1] == "dry"]
    assert pushes, "the looping model repeats itself: DRY acts"
    # multiplier * base^(n - allowed length) for a repetition of n tokens: 0.8, 1.4, 2.45 ...
    allowed = [-0.8 * 1.75**k for k in range(12)]
    assert all(min(abs(delta - value) for value in allowed) < 1e-3 for _token, _stage, delta in pushes)


@pytest.mark.parametrize("order", ["llama.cpp's", "temperature first"])
def test_the_c_helper_and_python_read_the_same_of_what_each_sampler_did(
    loop_engine: Engine,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    order: str,
) -> None:
    """`_step.follow` (most samplers change nothing for the followed tokens, and it says so in
    one call) against the trace's own reading of the array in Python, where the helper was not
    built: the same removals, pushes and survivors at every step, with every sampler on."""
    pytest.importorskip("scriptorium.inference.local._step")
    from scriptorium.inference.local import sampler_trace

    every = SamplerSettings(
        temperature=0.9,
        top_k=6,
        top_p=0.95,
        min_p=0.02,
        typical_p=0.95,
        top_n_sigma=2.5,
        repeat_penalty=1.2,
        frequency_penalty=0.1,
        presence_penalty=0.1,
        dry_multiplier=0.8,
        dry_allowed_length=2,
        xtc_probability=0.5,
        xtc_threshold=0.1,
        dynatemp_range=0.3,
        max_tokens=40,
        seed=5,
    )
    if order == "temperature first":
        every = every.with_changes(samplers=("temperature",) + tuple(s for s in every.samplers if s != "temperature"))

    def did(events: list[TokenEvent]) -> list[tuple]:
        return [(event.id, event.kept, event.removed, event.pushed) for event in events]

    compiled = did(events_of(loop_engine, PROMPT, every))
    monkeypatch.setattr(sampler_trace, "_compiled_follow", lambda: None)
    in_python = did(events_of(loop_engine, PROMPT, every))
    assert compiled == in_python
    assert any(removed for _, _, removed, _ in compiled) and any(pushed for _, _, _, pushed in compiled)
