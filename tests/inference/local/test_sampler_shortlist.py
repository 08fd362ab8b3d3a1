"""The short candidate array (sampler_shortlist.py) draws what llama.cpp's chain draws over
the whole vocabulary, and leaves the same survivors with the same probabilities: both run
step by step on the same logits (written here, so that ties and thresholds can be rigged),
both accepting what they drew."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from sampler_reference import engine, llama_cpp_chain  # noqa: F401  (a fixture)

from scriptorium.inference.local import sampler_chain
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.local.sampler_chain import TOKEN_DATA, SamplerChain
from scriptorium.inference.local.sampler_trace import ChainTrace
from scriptorium.inference.core.settings import LogitBias, SamplerSettings, preset

STEPS = 200
SEED = 77
EVERY = SamplerSettings(
    temperature=0.9,
    top_k=40,
    top_p=0.95,
    min_p=0.02,
    repeat_penalty=1.3,
    frequency_penalty=0.2,
    presence_penalty=0.2,
    repeat_window=32,
    dry_multiplier=0.8,
    dry_allowed_length=1,
    top_n_sigma=1.5,
    typical_p=0.95,
    xtc_probability=0.5,
    xtc_threshold=0.05,
    dynatemp_range=0.3,
    seed=SEED,
)
GREEDY = preset("greedy").with_changes(seed=SEED)
"""The byte ban's logit bias, then llama.cpp's greedy draw."""
GREEDY_AFTER_EVERY_CUT = EVERY.with_changes(
    temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, typical_p=1.0, xtc_probability=0.0, dynatemp_range=0.0
)
"""The penalties, DRY and top-n-sigma, then the greedy draw."""


def logits_for(step: int, n_vocab: int, history: list[int], tied: bool) -> np.ndarray:
    """A model's logits, written: most of the vocabulary low, a few dozen candidates high, and
    the tokens just drawn among them (so that the penalties and DRY have something to push).
    `tied` rounds them to a coarse grid, so that equal logits meet at the top."""
    rng = np.random.default_rng(step)
    logits = rng.normal(-2.0, 2.0, n_vocab).astype(np.float32)
    top = rng.choice(n_vocab, 60, replace=False)
    logits[top] = rng.normal(6.0, 1.5, len(top))
    if history:
        logits[history[-8:]] += 4.0
    if tied:
        logits = np.round(logits * 2.0) / 2.0
    return logits.astype(np.float32)


class Reference:
    """llama.cpp's chain applied to the whole vocabulary, as llama_sampler_sample applies it."""

    def __init__(self, engine: Engine, settings: SamplerSettings, bias: dict[int, float]):
        self.lib = engine._h.lib
        self.chain = llama_cpp_chain(self.lib, engine._h.vocab, engine.n_vocab, settings, bias, settings.seed)
        self.buffer = np.zeros(engine.n_vocab, dtype=TOKEN_DATA)
        self.array = self.lib.llama_token_data_array()

    def draw(self, logits: np.ndarray) -> tuple[int, dict[int, float]]:
        lib, buffer, array = self.lib, self.buffer, self.array
        buffer["id"] = np.arange(len(logits))
        buffer["logit"] = logits
        buffer["p"] = 0.0
        array.data = ctypes.cast(buffer.ctypes.data, type(array.data))
        array.size, array.selected, array.sorted = len(logits), -1, False
        lib.llama_sampler_apply(self.chain, ctypes.byref(array))
        start = (ctypes.cast(array.data, ctypes.c_void_p).value - buffer.ctypes.data) // TOKEN_DATA.itemsize
        left = buffer[start : start + array.size]
        token = int(left["id"][array.selected])
        lib.llama_sampler_accept(self.chain, token)
        return token, {int(i): float(p) for i, p in zip(left["id"], left["p"]) if p > 0}

    def remember(self, tokens: list[int]) -> None:
        for token in tokens:
            self.lib.llama_sampler_accept(self.chain, token)

    def close(self) -> None:
        self.lib.llama_sampler_free(self.chain)


def run_both(engine: Engine, settings: SamplerSettings, tied: bool = False) -> SamplerChain:
    """Both chains over STEPS written steps; every drawn token and every survivor's
    probability equal. Returns scriptorium's chain (closed) for its counts."""
    bias = LogitBias().resolve(engine.byte_token_ids)
    bias[7] = 3.0  # a raised token, beside the banned byte tokens
    ours = SamplerChain(engine._h.lib, engine._h.vocab, engine.n_vocab, settings, bias, settings.seed)
    theirs = Reference(engine, settings, bias)
    trace = ChainTrace()
    ours.observer = trace
    history = [int(t) for t in np.random.default_rng(1).choice(engine.n_vocab, 40)]
    ours.remember(history)
    theirs.remember(history)
    try:
        for step in range(STEPS):
            logits = logits_for(step, engine.n_vocab, history, tied)
            trace.follow([int(i) for i in np.argsort(-logits, kind="stable")[:8]])
            token = ours.sample(logits.ctypes.data)
            expected, survivors = theirs.draw(logits)
            assert token == expected, f"step {step}"
            did = trace.finish(ours.candidates, token, settings.greedy_draw(), 8)
            for kept, p in did.kept:
                assert survivors[kept] == p  # the same floats, not merely close
            history.append(token)
    finally:
        ours.close()
        theirs.close()
    return ours


def test_every_sampler_in_llama_cpps_order_runs_on_a_short_array_and_draws_the_same(engine: Engine) -> None:  # noqa: F811
    chain = run_both(engine, EVERY)
    assert chain.shortlist is not None and chain.shortlist.sigma is not None
    # Random logits never tie at the top: every step on the short array.
    assert chain.short_steps == STEPS


def test_the_penalties_and_dry_alone_before_top_k_run_short(engine: Engine) -> None:  # noqa: F811
    chain = run_both(engine, EVERY.with_changes(top_n_sigma=-1.0))
    assert chain.shortlist is not None and chain.shortlist.sigma is None
    assert chain.short_steps == STEPS


def test_penalties_that_raise_a_token_run_short_and_draw_the_same(engine: Engine) -> None:  # noqa: F811
    # A repeat penalty below 1 and negative frequency and presence penalties lift the history.
    raising = EVERY.with_changes(repeat_penalty=0.7, frequency_penalty=-0.5, presence_penalty=-0.5)
    assert run_both(engine, raising).short_steps == STEPS


def test_equal_logits_at_the_top_send_the_step_to_the_whole_vocabulary(engine: Engine) -> None:  # noqa: F811
    # Rounded to half-units, the top candidates tie: llama.cpp's sort orders them by where
    # they sit in the whole array, so those steps are drawn from the whole of it.
    chain = run_both(engine, EVERY.with_changes(top_n_sigma=-1.0), tied=True)
    assert 0 <= chain.short_steps < STEPS


def test_the_greedy_draw_runs_on_a_short_array_and_draws_the_same(engine: Engine) -> None:  # noqa: F811
    chain = run_both(engine, GREEDY)
    assert chain.stage_names == ("logit_bias", "greedy")
    assert chain.shortlist is not None and chain.shortlist.keep == 1
    assert chain.short_steps == STEPS


def test_the_greedy_draw_after_the_penalties_dry_and_top_n_sigma_runs_short(engine: Engine) -> None:  # noqa: F811
    chain = run_both(engine, GREEDY_AFTER_EVERY_CUT)
    assert chain.stage_names == ("logit_bias", "penalties", "dry", "top_n_sigma", "greedy")
    assert chain.short_steps == STEPS


def test_equal_logits_at_the_top_of_a_greedy_draw_draw_the_same(engine: Engine) -> None:  # noqa: F811
    # llama.cpp's greedy draw takes the first of equal highest logits, in id order either way.
    chain = run_both(engine, GREEDY, tied=True)
    assert 0 <= chain.short_steps <= STEPS


@pytest.mark.parametrize("settings", [EVERY, GREEDY_AFTER_EVERY_CUT], ids=["every sampler", "greedy"])
def test_without_the_c_helper_the_level_guessed_from_a_sample_draws_the_same(
    engine: Engine,  # noqa: F811
    settings: SamplerSettings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sampler_chain, "compiled_at_or_above", lambda: None)
    assert run_both(engine, settings).short_steps == STEPS


@pytest.mark.parametrize(
    "order",
    [
        ("penalties", "dry", "xtc", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "temperature"),
        ("temperature", "top_k", "top_p"),
        ("penalties", "dry", "top_n_sigma", "typ_p", "top_p", "min_p", "xtc", "temperature"),
    ],
    ids=["xtc before top-k", "temperature before top-k", "no top-k"],
)
def test_orders_the_short_array_cannot_stand_for_use_the_whole_vocabulary(engine: Engine, order) -> None:  # noqa: F811
    chain = run_both(engine, EVERY.with_changes(samplers=order))
    assert chain.shortlist is None
    assert chain.short_steps == 0


def test_top_k_after_the_draws_samplers_is_no_shortcut_either(engine: Engine) -> None:  # noqa: F811
    assert run_both(engine, EVERY.with_changes(top_k=0)).short_steps == 0


def test_the_sigma_statistics_are_llama_cpps_to_the_bit() -> None:
    """The C helper's fast sums (runs added as whole numbers of the float spacing) against the
    same sums one addition at a time, as llama.cpp's top-n-sigma loops add them: on logits
    of every shape, coarse ones (whose terms fall half way between two floats) among them,
    sums that creep through one binade after another, and squares that leap within one."""
    step = pytest.importorskip("scriptorium.inference.local._step")
    rng = np.random.default_rng(5)
    shapes = [
        lambda n: rng.normal(rng.normal(0, 10), rng.uniform(0.1, 8), n),
        lambda n: np.round(rng.normal(-5, 3, n) * 4) / 4,
        lambda n: rng.normal(0, 1, n) * 1e-3,
        lambda n: rng.standard_cauchy(n).clip(-1e4, 1e4),
        lambda n: rng.normal(-10, 5, n) - 100 * (rng.random(n) < 0.001),
        lambda n: np.full(n, rng.choice([0.5, 1.0, -3.0, 0.75])) + rng.normal(0, 1e-3, n) * (rng.random() < 0.5),
        lambda n: rng.normal(0, 1, n) + 1e3 * rng.normal(0, 1, n) * (rng.random(n) < 0.01),
    ]
    for trial in range(140):
        n = int(rng.integers(2, 300_000))
        logits = shapes[trial % len(shapes)](n).astype(np.float32)
        none = np.empty(0, dtype=np.int64)
        fast = step.sigma_statistics(logits.ctypes.data, n, none.ctypes.data, none.ctypes.data, 0, 0, 0)
        assert fast == step.sigma_statistics_plain(logits.ctypes.data, n), (trial, n)


def test_the_sigma_statistics_read_the_logits_as_the_samplers_before_left_them() -> None:
    """The raw logits with the bias added where it is and the short array's values where it
    has them, read a run at a time (never copied whole): the same statistics as those logits
    written out in full, whether a change falls at a run's edge, in a run alone or nowhere."""
    step = pytest.importorskip("scriptorium.inference.local._step")
    rng = np.random.default_rng(8)
    for trial in range(40):
        n = int(rng.integers(2, 100_000))
        raw = rng.normal(-3, 3, n).astype(np.float32)
        edges = [i for i in (0, 255, 256, 511, n - 1) if i < n]
        bias_ids = np.unique(np.concatenate((rng.choice(n, min(n, 5)), edges[: trial % 3]))).astype(np.int64)
        bias = rng.normal(0, 5, len(bias_ids)).astype(np.float32)
        kept_ids = np.unique(np.concatenate((rng.choice(n, min(n, int(rng.integers(0, 300)))), edges[trial % 3 :])))
        kept = np.zeros(len(kept_ids), dtype=TOKEN_DATA)
        kept["id"] = kept_ids
        kept["logit"] = raw[kept_ids] + rng.normal(0, 2, len(kept_ids)).astype(np.float32)
        if trial % 4 == 0:
            bias_ids, bias = bias_ids[:0], bias[:0]
        written = raw.copy()
        written[bias_ids] += bias
        written[kept_ids] = kept["logit"]
        read = step.sigma_statistics(
            raw.ctypes.data, n, bias_ids.ctypes.data, bias.ctypes.data, len(bias), kept.ctypes.data, len(kept)
        )
        assert read == step.sigma_statistics_plain(written.ctypes.data, n), trial


def test_the_sigma_statistics_refuse_changes_out_of_order() -> None:
    step = pytest.importorskip("scriptorium.inference.local._step")
    raw = np.zeros(1000, dtype=np.float32)
    kept = np.zeros(2, dtype=TOKEN_DATA)
    kept["id"] = [7, 3]
    with pytest.raises(ValueError, match="ascend"):
        step.sigma_statistics(raw.ctypes.data, len(raw), 0, 0, 0, kept.ctypes.data, len(kept))


def test_the_tokens_at_or_above_a_rank_are_numpys_in_id_order() -> None:
    """The C helper's level is the rank-th highest logit and its ids every one reaching it,
    ascending, whatever the ties; a count beyond the buffer is reported, not written."""
    step = pytest.importorskip("scriptorium.inference.local._step")
    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(1, 200_000))
        logits = rng.normal(0, 3, n).astype(np.float32)
        if trial % 3 == 0:
            logits = np.round(logits)  # ties everywhere, at the level among them
        rank = int(rng.integers(1, min(n, 256) + 1))
        out = np.zeros(max(1, n // 4), dtype=np.int64)
        count, level = step.at_or_above(logits.ctypes.data, n, rank, out.ctypes.data, len(out))
        assert np.float32(level) == np.sort(logits)[n - rank], trial
        expected = np.flatnonzero(logits >= np.float32(level))
        assert count == len(expected), trial
        written = min(count, len(out))
        assert np.array_equal(out[:written], expected[:written]), trial


def test_the_tokens_at_or_above_refuse_a_rank_out_of_reach() -> None:
    step = pytest.importorskip("scriptorium.inference.local._step")
    logits = np.zeros(300, dtype=np.float32)
    out = np.zeros(300, dtype=np.int64)
    for rank in (0, 257, 301):
        with pytest.raises(ValueError, match="rank"):
            step.at_or_above(logits.ctypes.data, len(logits), rank, out.ctypes.data, len(out))
