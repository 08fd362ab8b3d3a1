"""Probabilities read straight from llama.cpp's logits, and its own sampler chain.

The probabilities are a softmax of the raw logits of the last position, computed once per
step with one log-sum-exp and an argpartition for the top N: cheap even for a 262k
vocabulary, unlike llama-cpp-python's logprobs path (a full sort per token). Sampling is
llama.cpp's sampler chain, so what is drawn is exactly what llama.cpp would draw.
"""

from __future__ import annotations

import ctypes
from types import ModuleType
from typing import Any, Callable

import numpy as np

from .events import Candidate
from .settings import BAN, SamplerSettings


class StepReader:
    """Turns one step's raw logits into probabilities, reusing its buffers every step.

    The top N are found among the logits within a margin of the maximum (one comparison
    over the vocabulary, then a partition of the few inside it), the margin learnt from
    the previous step; a full argpartition is the fallback when too few fall inside.
    Either way the ids and order are exactly those of the logits."""

    def __init__(self, n_vocab: int):
        self._scratch = np.empty(n_vocab, dtype=np.float32)
        self._margin = 8.0
        self.max_logit = 0.0
        self.normaliser = 1.0
        self.logits: np.ndarray = self._scratch

    def read(self, logits: np.ndarray) -> None:
        self.logits = logits
        self.max_logit = float(logits.max())
        np.subtract(logits, self.max_logit, out=self._scratch)
        np.exp(self._scratch, out=self._scratch)
        self.normaliser = float(self._scratch.sum(dtype=np.float64))

    def probability(self, token_id: int) -> float:
        return float(np.exp(np.float64(self.logits[token_id]) - self.max_logit) / self.normaliser)

    def top(self, n: int) -> np.ndarray:
        """Ids of the n most probable tokens, most probable first."""
        logits = self.logits
        n = min(n, logits.shape[0])
        if n <= 0:
            return np.empty(0, dtype=np.int64)
        near = np.flatnonzero(logits >= self.max_logit - self._margin)
        for _ in range(3):  # widen a margin that caught too few, a few times at most
            if len(near) >= n:
                break
            self._margin = self._margin * 2.0 + 1.0
            near = np.flatnonzero(logits >= self.max_logit - self._margin)
        if len(near) < n:
            ids = np.argpartition(logits, -n)[-n:]
        elif len(near) > n:
            ids = near[np.argpartition(logits[near], -n)[-n:]]
        else:
            ids = near
        ids = ids[np.argsort(-logits[ids], kind="stable")]
        # Next step, look well past where this step's n-th token was: a too-wide margin
        # costs a little, a too-narrow one a second pass.
        self._margin = 2.0 * (self.max_logit - float(logits[ids[-1]])) + 0.5
        return ids

    def candidates(self, n: int, text_of: Callable[[int], str], bias: dict[int, float]) -> tuple[Candidate, ...]:
        ids = self.top(n)
        probabilities = np.exp(self.logits[ids].astype(np.float64) - self.max_logit) / self.normaliser
        return tuple(
            Candidate(id=token_id, text=text_of(token_id), p=p, banned=bias.get(token_id, 0.0) <= BAN)
            for token_id, p in zip(ids.tolist(), probabilities.tolist())
        )


class SamplerChain:
    """llama.cpp's sampler chain for one generation (owns the C object)."""

    def __init__(self, lib: ModuleType, n_vocab: int, settings: SamplerSettings, bias: dict[int, float], seed: int):
        self._lib = lib
        params = lib.llama_sampler_chain_default_params()
        params.no_perf = True
        self._chain: Any = lib.llama_sampler_chain_init(params)
        self.seed = seed
        add = lambda sampler: lib.llama_sampler_chain_add(self._chain, sampler)  # noqa: E731
        if bias:
            entries = (lib.llama_logit_bias * len(bias))()
            for slot, (token_id, value) in enumerate(bias.items()):
                entries[slot].token = token_id
                entries[slot].bias = value
            add(lib.llama_sampler_init_logit_bias(n_vocab, len(bias), entries))
        penalised = settings.repeat_penalty != 1.0 or settings.frequency_penalty or settings.presence_penalty
        if settings.repeat_window > 0 and penalised:
            add(lib.llama_sampler_init_penalties(
                n_vocab, settings.repeat_window, settings.repeat_penalty,
                settings.frequency_penalty, settings.presence_penalty,
            ))
        if settings.temperature == 0.0:
            add(lib.llama_sampler_init_greedy())
            return
        if settings.top_k > 0:
            add(lib.llama_sampler_init_top_k(settings.top_k))
        if settings.top_p < 1.0:
            add(lib.llama_sampler_init_top_p(settings.top_p, 1))
        if settings.min_p > 0.0:
            add(lib.llama_sampler_init_min_p(settings.min_p, 1))
        add(lib.llama_sampler_init_temp(settings.temperature))
        add(lib.llama_sampler_init_dist(seed))

    def remember(self, tokens: list[int]) -> None:
        """Feed context tokens to the penalties' history, as llama.cpp does with the prompt."""
        for token in tokens:
            self._lib.llama_sampler_accept(self._chain, token)

    def sample(self, ctx: Any) -> int:
        """Draw from the last position's logits and record the token in the history."""
        return int(self._lib.llama_sampler_sample(self._chain, ctx, -1))

    def close(self) -> None:
        if self._chain is not None:
            self._lib.llama_sampler_free(self._chain)
            self._chain = None


def logits_view(lib: ModuleType, ctx: Any, n_vocab: int) -> np.ndarray:
    """The last position's logits, without a copy (valid until the next decode)."""
    pointer = lib.llama_get_logits_ith(ctx, -1)
    if not pointer:
        raise RuntimeError("llama.cpp returned no logits for the last position")
    return np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,))
