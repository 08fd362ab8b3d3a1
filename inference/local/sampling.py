"""Probabilities read straight from llama.cpp's logits, and its own sampler chain.

The probabilities are a softmax of the raw logits of the last position, computed once per
step in one pass over the vocabulary plus llama.cpp's own softmax kernel: cheap even for a
262k vocabulary, unlike llama-cpp-python's logprobs path (a full sort per token). Sampling
is llama.cpp's sampler chain (sampler_chain.py), so what is drawn is exactly what llama.cpp would draw.
"""

from __future__ import annotations

import ctypes
import math
from typing import Callable

import numpy as np

from ..core.errors import GenerationError
from ..core.events import Candidate
from ..core.settings import BAN

COMPILED_TOP_LIMIT = 256
"""The most candidates the C helper returns (MAX_TOP in _step.c); more go through numpy."""
NOT_FINITE = (
    "the model's output is not a number (NaN or infinite logits): the model or its LoRA adapter "
    "is broken, or the adapter's scale is too high"
)


class StepReader:
    """Turns one step's raw logits into probabilities, reusing its buffers every step.

    The work is one call into the C helper (_step.c) when it was built, which also uses
    llama.cpp's own softmax kernel for the normaliser. Without it, numpy: the vocabulary
    is seen as a GROUPS x width grid (token i in column i % width of the first
    GROUPS*width tokens, the few left over in a tail); one vectorised reduction gives each
    column's maximum, hence the overall maximum, and the top N can only be in the N
    columns with the highest maxima (or the tail), so they are picked from a few hundred
    logits instead of the whole vocabulary. Either way the ids and their order are those
    of a full sort of the logits (the C helper breaks ties by lower id)."""

    GROUPS = 64

    def __init__(
        self, n_vocab: int, kernel: Callable[[int, int, int, float], float] | None = None, *, compiled: bool = True
    ):
        self._n_vocab = n_vocab
        self._groups = self.GROUPS if n_vocab >= self.GROUPS * self.GROUPS else 1
        self._width = n_vocab // self._groups
        self._grid_size = self._groups * self._width
        self._tail = np.arange(self._grid_size, n_vocab)
        self._row_starts = np.arange(self._groups) * self._width
        self._column_max = np.empty(self._width, dtype=np.float32)
        self._scratch = np.empty(n_vocab, dtype=np.float32)
        self._scratch_address = self._scratch.ctypes.data
        self._kernel = kernel
        self._compiled = _compiled_step() if compiled and kernel is not None else None
        self._kernel_address = ctypes.cast(kernel, ctypes.c_void_p).value if self._compiled else 0
        self.max_logit = 0.0
        self.normaliser = 1.0
        self._address = 0
        """Where the logits `measure` last read are."""
        self.logits: np.ndarray = self._scratch

    def measure(
        self, address: int, token: int, top_n: int, text_of: Callable[[int], str], bias: dict[int, float]
    ) -> tuple[float, tuple[Candidate, ...]]:
        """(probability of `token`, the top_n candidates) for the logits at `address`;
        token -1 when no token was sampled there. One call into C when it was built.
        GenerationError when a logit is NaN or infinite: nothing after it means anything."""
        self._address = address
        try:
            if self._compiled is not None and top_n <= COMPILED_TOP_LIMIT:
                p, pairs, self.max_logit, self.normaliser = self._compiled(
                    address, self._n_vocab, top_n, token, self._scratch_address, self._kernel_address
                )
            else:
                self.read(np.frombuffer((ctypes.c_float * self._n_vocab).from_address(address), dtype=np.float32))
                p = self.probability(token) if token >= 0 else 0.0
                pairs = self.top_pairs(top_n)
        except FloatingPointError:
            raise GenerationError(NOT_FINITE) from None
        return p, tuple(
            Candidate(token_id, text_of(token_id), q, bias.get(token_id, 0.0) <= BAN) for token_id, q in pairs
        )

    def probability_of(self, token_id: int) -> float:
        """After `measure`: the probability of any token at that step, without another pass
        over the vocabulary. The same formula as the candidates', exp(logit - max) / normaliser
        in double, so a token's probability is the same bits whether it was among the top N
        or not: a float32 shortcut here made `continue --top 10` and the app's top 8 report
        one token 1 ulp apart, and a fixed seed's texts compare unequal."""
        logit = ctypes.c_float.from_address(self._address + ctypes.sizeof(ctypes.c_float) * token_id).value
        return math.exp(logit - self.max_logit) / self.normaliser

    def read(self, logits: np.ndarray) -> None:
        self.logits = logits
        grid = logits[: self._grid_size].reshape(self._groups, self._width)
        np.max(grid, axis=0, out=self._column_max)
        top = float(self._column_max.max())
        if len(self._tail):
            top = max(top, float(logits[self._grid_size :].max()))
        self.max_logit = top
        if self._kernel is not None and logits.flags.c_contiguous:
            self.normaliser = self._kernel(self._n_vocab, self._scratch_address, logits.ctypes.data, top)
        else:
            np.subtract(logits, top, out=self._scratch)
            np.exp(self._scratch, out=self._scratch)
            self.normaliser = float(self._scratch.sum(dtype=np.float64))
        if not 0.0 < self.normaliser < math.inf:
            raise FloatingPointError("the logits have no finite softmax")

    def probability(self, token_id: int) -> float:
        return math.exp(float(self.logits[token_id]) - self.max_logit) / self.normaliser

    def top(self, n: int) -> np.ndarray:
        """Ids of the n most probable tokens, most probable first."""
        logits = self.logits
        n = min(n, self._n_vocab)
        if n <= 0:
            return np.empty(0, dtype=np.int64)
        if n >= self._width:
            ids = np.argpartition(logits, -n)[-n:] if n < self._n_vocab else np.arange(self._n_vocab)
        else:
            columns = np.argpartition(self._column_max, -n)[-n:]
            pool = (columns[:, None] + self._row_starts).ravel()
            if len(self._tail):
                pool = np.concatenate((pool, self._tail))
            ids = pool[np.argpartition(logits[pool], -n)[-n:]]
        return ids[np.lexsort((ids, -logits[ids]))]

    def top_pairs(self, n: int) -> list[tuple[int, float]]:
        """(id, probability) of the n most probable tokens, most probable first."""
        ids = self.top(n).tolist()
        top, normaliser, exp = self.max_logit, self.normaliser, math.exp
        return [(token_id, exp(logit - top) / normaliser) for token_id, logit in zip(ids, self.logits[ids].tolist())]


def _compiled_step() -> Callable[..., tuple[float, tuple[tuple[int, float], ...]]] | None:
    """The C helper (built with the package), or None where it could not be built."""
    try:
        from ._step import top_candidates
    except ImportError:
        return None
    return top_candidates
