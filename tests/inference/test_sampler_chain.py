"""Every sampler draws what llama.cpp's own chain draws: scriptorium's generation against a
chain built directly with llama-cpp-python's API, as llama.cpp's common_sampler builds it
(every sampler of the order, acting or not, then the draw), on the same context."""

from __future__ import annotations

import contextlib
import ctypes
from pathlib import Path

import pytest

from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.events import TokenEvent
from scriptorium.inference.settings import PRESETS, SAMPLER_NAMES, LogitBias, SamplerSettings, SettingsError

DRAFT = "La casa era buia, e la notte più lunga."
STEPS = 200
SEED = 4242
# Nothing truncating but the sampler under test: temperature 1, top-k, top-p and min-p off.
NEUTRAL = SamplerSettings(temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, max_tokens=STEPS, seed=SEED)

SAMPLERS = {
    "penalties": {"repeat_penalty": 1.3, "frequency_penalty": 0.4, "presence_penalty": 0.3, "repeat_window": 32},
    # The random model seldom repeats itself: cooler, it does, and DRY has something to act on.
    "dry": {"temperature": 0.4, "dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 1},
    "top_n_sigma": {"top_n_sigma": 1.0},
    "top_k": {"top_k": 12},
    "typ_p": {"typical_p": 0.6},
    "top_p": {"top_p": 0.7},
    "min_p": {"min_p": 0.2},
    # The random model's top candidates are 5-10 %: a low threshold makes XTC act.
    "xtc": {"xtc_probability": 0.6, "xtc_threshold": 0.04},
    "temperature": {"temperature": 0.7},
    "dynamic temperature": {"temperature": 0.9, "dynatemp_range": 0.5, "dynatemp_exponent": 1.5},
    "greedy": {"temperature": 0.0},
    "mirostat v2": {"mirostat": 2, "mirostat_tau": 4.0, "mirostat_eta": 0.2},
    "mirostat v1": {"mirostat": 1, "mirostat_tau": 4.0, "mirostat_eta": 0.2},
    "every sampler, reordered": {
        "repeat_penalty": 1.1, "dry_multiplier": 0.8, "top_n_sigma": 2.0, "top_k": 40, "typical_p": 0.95,
        "top_p": 0.95, "min_p": 0.02, "xtc_probability": 0.5, "xtc_threshold": 0.04, "temperature": 0.9,
        "samplers": ("temperature", "xtc", "min_p", "top_p", "typ_p", "top_k", "top_n_sigma", "dry", "penalties"),
    },
}


@pytest.fixture(scope="module")
def engine(random_model: Path):
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512, flash_attn=False, n_threads=1))
    yield engine
    engine.close()


def llama_cpp_chain(lib, vocab, n_vocab: int, s: SamplerSettings, bias: dict[int, float], seed: int):
    """common/sampling.cpp's common_sampler_init, written out with the Python bindings."""
    chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
    add = lambda sampler: lib.llama_sampler_chain_add(chain, sampler)  # noqa: E731
    entries = (lib.llama_logit_bias * len(bias))()
    for slot, (token_id, value) in enumerate(bias.items()):
        entries[slot].token, entries[slot].bias = token_id, value
    add(lib.llama_sampler_init_logit_bias(n_vocab, len(bias), entries))
    if s.mirostat == 1:
        add(lib.llama_sampler_init_temp(s.temperature))
        add(lib.llama_sampler_init_mirostat(n_vocab, seed, s.mirostat_tau, s.mirostat_eta, 100))
        return chain
    if s.mirostat == 2:
        add(lib.llama_sampler_init_temp(s.temperature))
        add(lib.llama_sampler_init_mirostat_v2(seed, s.mirostat_tau, s.mirostat_eta))
        return chain
    breakers = [b.encode() for b in s.dry_sequence_breakers]
    make = {
        "penalties": lambda: lib.llama_sampler_init_penalties(n_vocab, s.repeat_window, s.repeat_penalty,
                                                              s.frequency_penalty, s.presence_penalty),
        "dry": lambda: lib.llama_sampler_init_dry(vocab, s.dry_multiplier, s.dry_base, s.dry_allowed_length,
                                                  s.dry_penalty_last_n, (ctypes.c_char_p * len(breakers))(*breakers),
                                                  len(breakers)),
        "top_n_sigma": lambda: lib.llama_sampler_init_top_n_sigma(s.top_n_sigma),
        "top_k": lambda: lib.llama_sampler_init_top_k(s.top_k),
        "typ_p": lambda: lib.llama_sampler_init_typical(s.typical_p, 0),
        "top_p": lambda: lib.llama_sampler_init_top_p(s.top_p, 0),
        "min_p": lambda: lib.llama_sampler_init_min_p(s.min_p, 0),
        "xtc": lambda: lib.llama_sampler_init_xtc(s.xtc_probability, s.xtc_threshold, 0, seed),
        "temperature": lambda: lib.llama_sampler_init_temp_ext(s.temperature, s.dynatemp_range, s.dynatemp_exponent),
    }
    for name in s.samplers:
        add(make[name]())
    add(lib.llama_sampler_init_dist(seed))
    return chain


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
    assert SamplerSettings().samplers == ("penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p",
                                          "xtc", "temperature")
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
