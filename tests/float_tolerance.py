"""How far two float32 evaluations of the same model may differ: the argument, once.

llama.cpp computes logits in float32. Two evaluations of the same tokens that differ in
batch shape (a prompt prefilled in one batch against its last token evaluated alone after
a reused prefix; logits for every position against the last one only) or in CPU (AVX512
against AVX2 kernels) sum the same products in another order, so they round differently.

The bound, for the generated llama models (tests/gguf_models.py, n_embd = 64, n_ff = 128):

- A logit is a dot product of the final RMS-normed hidden state h (so |h| = sqrt(64) = 8)
  with one row w of the output matrix (|w| <= 4.7 for every row of the "random" model).
  Summing its 64 products in any order changes it by at most 64 * u * sum|w_i h_i|
  <= 64 * u * |w| |h| = 64 * 6e-8 * 37.6 = 1.4e-4, u = 2**-24 the float32 unit roundoff.
- h itself comes out of the last block, whose sums are at most n_ff = 128 terms long with
  rows of norm <= 1.25: a reordering there moves the logit by no more than the same order
  again. So |delta logit| <= LOGIT_ATOL = 3e-4. In practice it is a few ulp: at most
  2.4e-6 (2.5 ulp of a logit near 10) between the batch shapes above on an AMD EPYC, and
  the same between its native (AVX512) and generic (AVX2) builds of llama.cpp.
- Softmax turns an absolute logit error into a relative probability error:
  p_i = exp(z_i) / sum_j exp(z_j), so delta p_i / p_i = delta z_i - sum_j p_j delta z_j,
  at most 2 * max |delta z|. Hence PROB_RTOL = 2 * LOGIT_ATOL.

What the tolerance still catches: a temperature, a bias, a penalty or a wrong position
moves probabilities by percent, three orders of magnitude above it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

LOGIT_ATOL = 3e-4
PROB_RTOL = 2 * LOGIT_ATOL


def assert_top_matches(top: Sequence, softmax: np.ndarray, rtol: float = PROB_RTOL) -> None:
    """`top` (candidates with .id and .p, best first) are the len(top) likeliest tokens of
    `softmax`, with its probabilities. Two candidates closer than `rtol` may come in either
    order, and the last one may be any of those tied with it: rounding decides there."""
    ids = [c.id for c in top]
    probabilities = [c.p for c in top]
    assert probabilities == sorted(probabilities, reverse=True)
    np.testing.assert_allclose(probabilities, softmax[ids], rtol=rtol)
    np.testing.assert_allclose(probabilities, np.sort(softmax)[::-1][: len(top)], rtol=rtol)


def assert_same_greedy_run(first: Sequence, second: Sequence, rtol: float = PROB_RTOL) -> None:
    """Two greedy runs (TokenEvents) of one model and prompt, evaluated in different batch
    shapes: the same tokens with the same probabilities. They may part only where the two
    best candidates are within rounding of each other; after that nothing is comparable."""
    assert len(first) == len(second)
    for a, b in zip(first, second):
        if a.id != b.id:
            best, runner_up = a.top[0], a.top[1]
            assert {best.id, runner_up.id} == {a.id, b.id}, "the runs parted where no tie was"
            assert best.p == runner_up.p or abs(best.p - runner_up.p) <= rtol * best.p
            return
        assert a.p == b.p or abs(a.p - b.p) <= rtol * b.p
