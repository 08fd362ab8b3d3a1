"""The candidates llama.cpp's chain can need at one step, so that its samplers before top-k
run on a short array with the very result they have on the whole vocabulary.

In llama.cpp's default order the logit bias, the penalties, DRY and top-n-sigma come before
top-k, and each walks the whole vocabulary: about 3 ms a token on Gemma's 262k, where a
decode takes 12. Yet the bias, the penalties and DRY move the logits of a known few tokens
(the biased ones, and the ones in the history window the penalties and DRY read), and
top-n-sigma only cuts what lies below a threshold. So the k candidates top-k keeps are
always among the tokens whose raw logit reaches a level that at least k untouched tokens
reach, plus the touched ones: an untouched token below that level stays below k others, or
is cut by top-n-sigma along with them. That short array, in id order as
llama_sampler_sample fills its own, goes through llama.cpp's own samplers; top-n-sigma's
threshold, which depends on every logit, comes from `_step.sigma_statistics`, computed over
the whole vocabulary as the samplers before it would have left it (the raw logits, the bias
added, the short array's values where it has them) as llama.cpp computes it, then applied
to the short array.

Exact, not approximate: where llama.cpp's sort would order two equal logits by where they
sat in the whole array, or a logit sits on top-n-sigma's threshold within its last rounding,
the step runs again on the whole vocabulary (`clear_cut`, `SigmaCut`). Any other sampler
before top-k, or no top-k, and the whole vocabulary is used from the start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

BEFORE_TOP_K = frozenset({"logit_bias", "penalties", "dry", "top_n_sigma"})
"""The samplers a short array can stand in for when they come before top-k: each moves known
tokens or cuts below a threshold."""
READ_HISTORY = frozenset({"penalties", "dry"})
WORTH_IT = 4
"""A short array longer than a quarter of the vocabulary saves too little: the whole one is used."""
SAMPLE_STRIDE = 16
"""The level is first guessed from every 16th logit, a cheap sample of the vocabulary."""

SigmaStatistics = Callable[[int, int, int, int, int, int, int], tuple[float, float]]


def compiled_sigma_statistics() -> SigmaStatistics | None:
    """`_step.sigma_statistics`, or None where the C helper was not built (top-n-sigma before
    top-k then runs on the whole vocabulary, as llama.cpp runs it)."""
    try:
        from ._step import sigma_statistics
    except ImportError:
        return None
    return sigma_statistics


class SigmaCut:
    """Top-n-sigma's cut for one step: llama.cpp turns every logit below max - n * std into
    minus infinity. The statistics are llama.cpp's to the bit; whether its build fuses the
    last multiply-subtract is not known here, so both results, one float step wider each
    way, bound where the cut falls."""

    def __init__(self, n: float, statistics: SigmaStatistics):
        self._n = np.float32(n)
        self._statistics = statistics

    def bounds(
        self, raw: np.ndarray, bias_ids: np.ndarray, bias_values: np.ndarray, kept: np.ndarray
    ) -> tuple[np.float32, np.float32] | None:
        """(low, high): a logit below low is cut, one above high kept, one between them
        undecided. The logits are `raw` as the samplers before this one left them: `bias_values`
        added at `bias_ids` (ascending, int64), and the short array `kept` (llama_token_data,
        ids ascending) as they left it. None when a logit is not finite (llama.cpp then skips
        minus infinity, which is left to it)."""
        highest, std = self._statistics(
            raw.ctypes.data,
            len(raw),
            bias_ids.ctypes.data,
            bias_values.ctypes.data,
            len(bias_ids),
            kept.ctypes.data,
            len(kept),
        )
        if not (np.isfinite(highest) and np.isfinite(std)):
            return None
        top, spread = np.float32(highest), np.float32(std)
        separate = np.float32(top - np.float32(self._n * spread))
        fused = np.float32(float(top) - float(self._n) * float(spread))  # the product is exact in double
        low, high = min(separate, fused), max(separate, fused)
        return np.nextafter(low, np.float32(-np.inf)), np.nextafter(high, np.float32(np.inf))


class Shortlist:
    """For one chain: which tokens a step's short array holds, and whether its top-k came
    out as it would have over the whole vocabulary. Keeps the history window the
    penalties and DRY read (`accept`), as their own ring buffers do."""

    def __init__(
        self,
        top_k: int,
        history: int,
        bias: dict[int, float],
        n_vocab: int,
        sigma: SigmaCut | None,
    ):
        self.top_k = top_k
        self.sigma = sigma
        self._n_vocab = n_vocab
        valid = {token: bias[token] for token in sorted(bias) if 0 <= token < n_vocab}  # ascending, as C reads them
        self._bias_ids = np.fromiter(valid, dtype=np.int64, count=len(valid))
        self._bias_values = np.fromiter(valid.values(), dtype=np.float32, count=len(valid))
        self._unbiased = (self._bias_ids[:0], self._bias_values[:0])
        # A raised token may climb past any level: it is always in the short array.
        self._raised = self._bias_ids[self._bias_values > 0]
        self._history = np.zeros(history, dtype=np.int64)
        self._seen = 0
        self.level = np.float32(-np.inf)
        """This step's level: every untouched token left out of the short array is below it."""

    @classmethod
    def plan(
        cls,
        stage_names: Sequence[str],
        top_k: int,
        history: int,
        bias: dict[int, float],
        n_vocab: int,
        top_n_sigma: float,
        statistics: SigmaStatistics | None,
    ) -> "Shortlist | None":
        """A shortlist for a chain of `stage_names`, or None where the short array cannot
        give llama.cpp's result: no top-k, another sampler before it, or top-n-sigma before
        it without the C helper."""
        if "top_k" not in stage_names or top_k <= 0:
            return None
        before = set(stage_names[: list(stage_names).index("top_k")])
        if not before <= BEFORE_TOP_K:
            return None
        sigma = None
        if "top_n_sigma" in before:
            if statistics is None:
                return None
            sigma = SigmaCut(top_n_sigma, statistics)
        window = history if before & READ_HISTORY else 0
        if (top_k + window + len(bias)) * WORTH_IT > n_vocab:
            return None
        return cls(top_k, window, bias, n_vocab, sigma)

    def accept(self, token: int) -> None:
        """The token llama.cpp's samplers accepted (a drawn one, or the context's)."""
        if len(self._history):
            self._history[self._seen % len(self._history)] = token
            self._seen += 1

    def select(self, raw: np.ndarray, followed: np.ndarray) -> np.ndarray | None:
        """The ids of the short array, ascending: every token whose raw logit reaches a
        level that k untouched tokens reach, the touched tokens that may rise, and
        `followed` (the tokens a trace reads). None when no such level is found cheaply."""
        history = self._history[: min(self._seen, len(self._history))]
        sample = raw[::SAMPLE_STRIDE]
        rank = min(len(sample), 2 * (self.top_k // SAMPLE_STRIDE) + 8)
        while True:
            level = np.partition(sample, len(sample) - rank)[len(sample) - rank]
            chosen = raw >= level
            reached = np.count_nonzero(chosen)
            # A touched token counts for nothing: the bias or a penalty may push it under.
            touched = np.count_nonzero(raw[self._bias_ids] >= level) + np.count_nonzero(raw[history] >= level)
            if reached - touched >= self.top_k:
                break
            if rank == len(sample):
                return None
            rank = min(len(sample), rank * 4)
        if reached * WORTH_IT > len(raw):
            return None
        self.level = level
        chosen[self._raised] = True
        chosen[history] = True
        chosen[followed] = True
        return np.flatnonzero(chosen)

    def sigma_bounds(self, raw: np.ndarray, kept: np.ndarray, biased: bool) -> tuple[np.float32, np.float32] | None:
        """Top-n-sigma's bounds (SigmaCut.bounds) for the raw logits `raw`, the short array as
        the samplers before it left it (`kept`) and, `biased`, the logit bias among them."""
        assert self.sigma is not None
        bias_ids, bias_values = (self._bias_ids, self._bias_values) if biased else self._unbiased
        return self.sigma.bounds(raw, bias_ids, bias_values, kept)

    def clear_cut(self, before_top_k: np.ndarray) -> bool:
        """Whether the top k + 1 of the short array's logits, as they reached top-k, hold no
        two equal finite values: then llama.cpp's sort puts the same tokens in the same
        places over the short array as over the whole vocabulary. Minus infinity (cut by
        top-n-sigma) carries no probability and no token of it is ever drawn."""
        k = min(self.top_k + 1, len(before_top_k))
        if k < len(before_top_k):
            highest = np.partition(before_top_k, len(before_top_k) - k)[len(before_top_k) - k :]
        else:
            highest = before_top_k
        highest = np.sort(highest[np.isfinite(highest)])
        return not bool(np.any(highest[1:] == highest[:-1]))
