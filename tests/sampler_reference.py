"""Shared by the sampler tests: a chain built directly with llama-cpp-python's API, as
llama.cpp's common_sampler builds one; the settings each sampler is tested with; engines."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest
from gguf_loop import loop_transitions
from gguf_models import write_llama_model

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.settings import SamplerSettings

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
        "repeat_penalty": 1.1,
        "dry_multiplier": 0.8,
        "top_n_sigma": 2.0,
        "top_k": 40,
        "typical_p": 0.95,
        "top_p": 0.95,
        "min_p": 0.02,
        "xtc_probability": 0.5,
        "xtc_threshold": 0.04,
        "temperature": 0.9,
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
        "penalties": lambda: lib.llama_sampler_init_penalties(
            n_vocab, s.repeat_window, s.repeat_penalty, s.frequency_penalty, s.presence_penalty
        ),
        "dry": lambda: lib.llama_sampler_init_dry(
            vocab,
            s.dry_multiplier,
            s.dry_base,
            s.dry_allowed_length,
            s.dry_penalty_last_n,
            (ctypes.c_char_p * len(breakers))(*breakers),
            len(breakers),
        ),
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


@pytest.fixture(scope="module")
def loop_engine(tmp_path_factory: pytest.TempPathFactory):
    transitions, default_next = loop_transitions()
    path = write_llama_model(
        tmp_path_factory.mktemp("loop") / "loop.gguf", kind="markov", transitions=transitions, default_next=default_next
    )
    engine = Engine.load(LoadOptions(model_path=path, n_ctx=512, flash_attn=False, n_threads=1))
    yield engine
    engine.close()
