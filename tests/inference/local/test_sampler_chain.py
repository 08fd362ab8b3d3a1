"""Every sampler draws what llama.cpp's own chain draws: scriptorium's generation against a
chain built directly with llama-cpp-python's API, as llama.cpp's common_sampler builds it
(every sampler of the order, acting or not, then the draw), on the same context."""

from __future__ import annotations

import contextlib
import ctypes

import pytest
from sampler_reference import DRAFT, NEUTRAL, SAMPLERS, SEED, STEPS, engine, llama_cpp_chain  # noqa: F401  (engine: a fixture)

from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.settings import PRESETS, SAMPLER_NAMES, LogitBias, SamplerSettings, SettingsError


def reference_tokens(engine: Engine, settings: SamplerSettings, bias: dict[int, float]) -> list[int]:
    """Prefill as the engine does (one batch), then llama_sampler_sample and one-token decodes."""
    lib, ctx = engine._h.lib, engine.context.handle
    tokens = engine.vocabulary.tokenize(DRAFT, special=False)
    engine.clear_cache()
    chain = llama_cpp_chain(lib, engine._h.vocab, engine.n_vocab, settings, bias, SEED)
    try:
        assert lib.llama_decode(ctx, lib.llama_batch_get_one((ctypes.c_int32 * len(tokens))(*tokens), len(tokens))) == 0
        if history := settings.history_length():
            for token in tokens[-history:]:
                lib.llama_sampler_accept(chain, token)
        drawn: list[int] = []
        for _ in range(settings.max_tokens):
            token = lib.llama_sampler_sample(chain, ctx, -1)
            drawn.append(token)
            one = (ctypes.c_int32 * 1)(token)
            assert lib.llama_decode(ctx, lib.llama_batch_get_one(one, 1)) == 0
        return drawn
    finally:
        lib.llama_sampler_free(chain)
        engine.context.clear()  # the mirror does not follow raw decodes


def scriptorium_tokens(engine: Engine, settings: SamplerSettings) -> list[int]:
    engine.clear_cache()
    with contextlib.closing(engine.generate(DRAFT, settings, LogitBias(), top_n=5)) as events:
        return [event.id for event in events if isinstance(event, TokenEvent)]


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_each_sampler_draws_what_llama_cpps_chain_draws(engine: Engine, name: str) -> None:
    settings = NEUTRAL.with_changes(**SAMPLERS[name])
    bias = LogitBias().resolve(engine.byte_token_ids)
    ours = scriptorium_tokens(engine, settings)
    theirs = reference_tokens(engine, settings, bias)
    assert len(ours) == STEPS
    assert ours == theirs
    # The sampler acted: the same seed without it draws something else.
    without = NEUTRAL.with_changes(temperature=0.4) if name == "dry" else NEUTRAL
    assert ours != scriptorium_tokens(engine, without)


def test_the_default_order_is_llama_cpps() -> None:
    assert SamplerSettings().samplers == (
        "penalties",
        "dry",
        "top_n_sigma",
        "top_k",
        "typ_p",
        "top_p",
        "min_p",
        "xtc",
        "temperature",
    )
    assert SAMPLER_NAMES == SamplerSettings().samplers


@pytest.mark.parametrize(
    "change, message",
    [
        ({"dry_multiplier": -0.5}, "DRY multiplier"),
        ({"dry_base": 0.5}, "DRY base"),
        ({"dry_allowed_length": -1}, "DRY allowed length"),
        ({"dry_penalty_last_n": -1}, "DRY window"),
        ({"dry_sequence_breakers": ("",)}, "DRY sequence breaker"),
        ({"xtc_probability": 1.5}, "XTC probability"),
        ({"xtc_threshold": -0.1}, "XTC threshold"),
        ({"typical_p": 0.0}, "typical-p"),
        ({"top_n_sigma": 0.0}, "top-n-sigma"),
        ({"dynatemp_range": -1.0}, "dynamic temperature range"),
        ({"dynatemp_exponent": 0.0}, "dynamic temperature exponent"),
        ({"mirostat": 3}, "mirostat"),
        ({"mirostat_eta": 0.0}, "mirostat eta"),
        ({"samplers": ("top_k", "nucleus")}, "unknown sampler 'nucleus'"),
        ({"samplers": ("top_k", "top_k")}, "'top_k' is listed twice"),
    ],
)
def test_invalid_values_of_the_new_samplers_are_named(change, message) -> None:
    with pytest.raises(SettingsError, match=message):
        PRESETS["prose"].with_changes(**change)


def test_a_dry_sampler_cloned_for_the_next_generation_draws_as_a_fresh_one(engine: Engine) -> None:
    """DRY's reading of the vocabulary is made once per model and cloned into each chain
    (sampler_chain.DryPrototypes): the clone starts with an empty history, so every
    generation draws what a chain built afresh with llama.cpp's API draws."""
    settings = NEUTRAL.with_changes(**SAMPLERS["dry"])
    bias = LogitBias().resolve(engine.byte_token_ids)
    theirs = reference_tokens(engine, settings, bias)
    assert scriptorium_tokens(engine, settings) == theirs
    assert scriptorium_tokens(engine, settings) == theirs  # from the clone of the same prototype
    assert scriptorium_tokens(engine, settings.with_changes(dry_base=2.5)) != theirs  # another prototype
    assert scriptorium_tokens(engine, settings) == theirs
