"""The per-step probabilities: the C helper, the numpy fallback and a brute-force sort
agree on which tokens are on top, in what order, and with what probability."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from scriptorium.inference.core import native
from scriptorium.inference.local.sampling import COMPILED_TOP_LIMIT, StepReader


def expected(logits: np.ndarray, top_n: int) -> tuple[list[int], np.ndarray]:
    order = np.lexsort((np.arange(len(logits)), -logits))  # by logit, ties by lower id
    wide = logits.astype(np.float64)
    p = np.exp(wide - wide.max())
    return order[:top_n].tolist(), p / p.sum()


def readers(n_vocab: int) -> dict[str, StepReader]:
    return {
        "compiled": StepReader(n_vocab, native.softmax_kernel()),
        "numpy + llama.cpp kernel": StepReader(n_vocab, native.softmax_kernel(), compiled=False),
        "numpy alone": StepReader(n_vocab, None),
    }


def test_the_fast_path_is_built() -> None:
    """The speed of decoding with probabilities rests on these two; a silent fallback
    would only show as a slower benchmark."""
    assert native.softmax_kernel() is not None, "llama.cpp's ggml_vec_soft_max_f32 was not found or misbehaved"
    from scriptorium.inference.local import _step  # noqa: F401  (built by the package install)

    assert StepReader(100, native.softmax_kernel())._compiled is not None


@pytest.mark.parametrize("n_vocab", [3, 63, 64, 4095, 4096, 16256, 50257, 262144])
def test_top_candidates_match_a_full_sort(n_vocab: int) -> None:
    rng = np.random.default_rng(n_vocab)
    for trial in range(6):
        logits = (rng.standard_normal(n_vocab) * rng.uniform(0.5, 8.0)).astype(np.float32)
        if trial % 2:
            logits[rng.integers(0, n_vocab, 4)] += 20.0  # a peaked step, as after a strong context
        token = int(rng.integers(0, n_vocab))
        for top_n in (0, 1, 10, 40):
            want_ids, want_p = expected(logits, top_n)
            # The same float32 logits, so the only difference is the normaliser: llama.cpp's
            # SIMD expf (a few float32 ulp) summed in another order than numpy's float64.
            # 1e-6 is ten times that, relative; abs=1e-9 for the probabilities that underflow.
            for name, reader in readers(n_vocab).items():
                p, top = reader.measure(logits.ctypes.data, token, top_n, str, {})
                assert [c.id for c in top] == want_ids, name
                assert p == pytest.approx(want_p[token], abs=1e-9, rel=1e-6), name
                for candidate in top:
                    assert candidate.p == pytest.approx(want_p[candidate.id], abs=1e-9, rel=1e-6), name


@pytest.mark.parametrize("name", ["compiled", "numpy + llama.cpp kernel", "numpy alone"])
def test_a_token_has_the_same_probability_inside_the_top_n_or_beside_it(name: str) -> None:
    """The app reports 8 candidates and `continue --json` 10: a token ranked 9th was given
    its probability from float32 exp values in one and float64 in the other, 1 ulp apart,
    and the same seed's texts compared unequal. Exactly equal, bit for bit."""
    logits = (np.random.default_rng(9).standard_normal(16256) * 4.0).astype(np.float32)
    reader = readers(16256)[name]
    _, wide = reader.measure(logits.ctypes.data, -1, 40, str, {})
    for rank in (0, 8, 39):
        token = wide[rank].id
        reader.measure(logits.ctypes.data, -1, 8, str, {})
        assert reader.probability_of(token) == wide[rank].p
        assert reader.measure(logits.ctypes.data, token, 0, str, {})[0] == wide[rank].p


def test_ties_come_out_lowest_id_first() -> None:
    logits = np.zeros(16256, dtype=np.float32)
    logits[[9000, 42, 16255, 7]] = 5.0
    p, top = readers(16256)["compiled"].measure(logits.ctypes.data, 42, 3, str, {})
    assert [c.id for c in top] == [7, 42, 9000]
    assert p == pytest.approx(np.exp(5.0) / (4 * np.exp(5.0) + 16252))


def test_more_candidates_than_the_helper_returns_go_through_numpy() -> None:
    logits = np.random.default_rng(1).standard_normal(16256).astype(np.float32)
    _, top = readers(16256)["compiled"].measure(logits.ctypes.data, -1, COMPILED_TOP_LIMIT + 44, str, {})
    assert [c.id for c in top] == expected(logits, COMPILED_TOP_LIMIT + 44)[0]


def test_banned_candidates_are_marked_and_texts_come_from_the_caller() -> None:
    logits = np.arange(16256, dtype=np.float32) / 1000.0
    _, top = readers(16256)["compiled"].measure(logits.ctypes.data, -1, 3, lambda i: f"<{i}>", {16255: -100.0})
    assert [(c.id, c.text, c.banned) for c in top] == [
        (16255, "<16255>", True),
        (16254, "<16254>", False),
        (16253, "<16253>", False),
    ]


def test_the_helper_refuses_what_would_read_outside_the_logits() -> None:
    from scriptorium.inference.local._step import top_candidates

    reader = readers(16)["compiled"]
    logits = (ctypes.c_float * 16)()
    with pytest.raises(ValueError):
        top_candidates(ctypes.addressof(logits), 16, 3, 16, reader._scratch_address, reader._kernel_address)
    with pytest.raises(ValueError):
        top_candidates(0, 16, 3, 1, reader._scratch_address, reader._kernel_address)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # numpy alone, on the way
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["one", "all"])
def test_logits_that_are_not_numbers_stop_the_step(bad: float, where: str) -> None:
    """A NaN (or +inf, or all -inf) leaves no softmax: every path says so instead of
    reporting NaN probabilities. One -inf among finite logits is an ordinary ban."""
    from scriptorium.inference.core.errors import GenerationError

    logits = np.zeros(16256, dtype=np.float32)
    if where == "one":
        logits[5] = bad
    else:
        logits[:] = bad
    for name, reader in readers(16256).items():
        if where == "one" and bad == -np.inf:
            p, top = reader.measure(logits.ctypes.data, 1, 3, str, {})
            assert p == pytest.approx(1 / 16255), name
            continue
        with pytest.raises(GenerationError, match="not a number"):
            reader.measure(logits.ctypes.data, 1, 3, str, {})
