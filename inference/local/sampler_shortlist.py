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

llama.cpp's greedy draw (temperature 0 with nothing after it) is such a cut at k = 1: it takes
the first array entry with the highest logit, and a short array holds every token at the top,
in the same order, so it takes the same token.

Exact, not approximate: where llama.cpp's sort would order two equal logits by where they
sat in the whole array, or a logit sits on top-n-sigma's threshold within its last rounding,
the step runs again on the whole vocabulary (`clear_cut`, `SigmaCut`). Any other sampler
before the cut (top-k, or else the greedy draw), or no cut, and the whole vocabulary is used
from the start.
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
"""Without the C helper, the level is first guessed from every 16th logit, a cheap sample of
the vocabulary."""
MAX_RANK = 256
"""The deepest rank the C helper finds a level at (its MAX_TOP); past it, the sample's guess."""

SigmaStatistics = Callable[[int, int, int, int, int, int, int], tuple[float, float]]
AtOrAbove = Callable[[int, int, int, int, int], tuple[int, float]]


def compiled_sigma_statistics() -> SigmaStatistics | None:
    """`_step.sigma_statistics`, or None where the C helper was not built (top-n-sigma before
    top-k then runs on the whole vocabulary, as llama.cpp runs it)."""
    try:
        from ._step import sigma_statistics
    except ImportError:
        return None
    return sigma_statistics


def compiled_at_or_above() -> AtOrAbove | None:
    """`_step.at_or_above`, or None where the C helper was not built (the level is then
    guessed from a sample of the logits, with numpy)."""
    try:
        from ._step import at_or_above
    except ImportError:
        return None
    return at_or_above


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


def cut_stage(stage_names: Sequence[str], top_k: int) -> int | None:
    """Where the chain's first cut stands: top-k (when it keeps a bounded number) or the
    greedy draw, the first of them; None when it has neither."""
    for index, name in enumerate(stage_names):
        if (name == "top_k" and top_k > 0) or name == "greedy":
            return index
    return None


class Shortlist:
    """For one chain: which tokens a step's short array holds, and whether its top-k came
    out as it would have over the whole vocabulary. Keeps the history window the
    penalties and DRY read (`accept`), as their own ring buffers do."""

    def __init__(
        self,
        keep: int,
        history: int,
        bias: dict[int, float],
        n_vocab: int,
        sigma: SigmaCut | None,
        cut_at: int,
        at_or_above: AtOrAbove | None = None,
    ):
        self.keep = keep
        """How many candidates the cut keeps: top-k's k, or 1 for the greedy draw."""
        self.cut_at = cut_at
        """Where the cut stands in the chain: the samplers before it run on the short array."""
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
        self._at_or_above = at_or_above
        self._found = np.zeros(n_vocab // WORTH_IT, dtype=np.int64) if at_or_above is not None else None
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
        at_or_above: AtOrAbove | None = None,
    ) -> "Shortlist | None":
        """A shortlist for a chain of `stage_names`, or None where the short array cannot
        give llama.cpp's result: no cut (top-k, or the greedy draw), another sampler before
        it, or top-n-sigma before it without the C helper."""
        cut_at = cut_stage(stage_names, top_k)
        if cut_at is None:
            return None
        before = set(stage_names[:cut_at])
        if not before <= BEFORE_TOP_K:
            return None
        sigma = None
        if "top_n_sigma" in before:
            if statistics is None:
                return None
            sigma = SigmaCut(top_n_sigma, statistics)
        keep = top_k if stage_names[cut_at] == "top_k" else 1
        window = history if before & READ_HISTORY else 0
        if (keep + window + len(bias)) * WORTH_IT > n_vocab:
            return None
        return cls(keep, window, bias, n_vocab, sigma, cut_at, at_or_above)

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
        found = self._found_exactly(raw, history) or self._found_by_sample(raw, history)
        if found is None:
            return None
        level, reaching = found
        if reaching is None or len(reaching) * WORTH_IT > len(raw):
            return None  # too many reach it (ties, or a flat distribution): the short array saves too little
        self.level = level
        if not (len(self._raised) or len(history) or len(followed)):
            return reaching
        return np.union1d(reaching, np.concatenate((self._raised, history, followed)))

    def _touched(self, raw: np.ndarray, history: np.ndarray, level: np.float32) -> int:
        """How many tokens the bias or a penalty may push under `level` reach it: they count for nothing."""
        return int(np.count_nonzero(raw[self._bias_ids] >= level) + np.count_nonzero(raw[history] >= level))

    def _found_exactly(self, raw: np.ndarray, history: np.ndarray) -> tuple[np.float32, np.ndarray | None] | None:
        """(level, the ids reaching it, or None where more reach it than a short array may
        hold) from the C helper, the level an exact rank of the logits; None without the
        helper, or where the level must go deeper than it reaches."""
        at_or_above, found = self._at_or_above, self._found
        if at_or_above is None or found is None:
            return None
        rank = self.keep + 8
        while rank <= min(MAX_RANK, len(raw)):
            count, value = at_or_above(raw.ctypes.data, len(raw), rank, found.ctypes.data, len(found))
            if count > len(found):
                return np.float32(value), None
            level = np.float32(value)
            if count - self._touched(raw, history, level) >= self.keep:
                return level, found[:count]
            rank *= 4
        return None

    def _found_by_sample(self, raw: np.ndarray, history: np.ndarray) -> tuple[np.float32, np.ndarray] | None:
        """(level, the ids reaching it) with numpy, the level guessed from every
        SAMPLE_STRIDE-th logit; None when the sample holds no level deep enough."""
        sample = raw[::SAMPLE_STRIDE]
        rank = min(len(sample), 2 * (self.keep // SAMPLE_STRIDE) + 8)
        while True:
            level = np.partition(sample, len(sample) - rank)[len(sample) - rank]
            chosen = raw >= level
            if np.count_nonzero(chosen) - self._touched(raw, history, level) >= self.keep:
                return level, np.flatnonzero(chosen)
            if rank == len(sample):
                return None
            rank = min(len(sample), rank * 4)

    def sigma_bounds(self, raw: np.ndarray, kept: np.ndarray, biased: bool) -> tuple[np.float32, np.float32] | None:
        """Top-n-sigma's bounds (SigmaCut.bounds) for the raw logits `raw`, the short array as
        the samplers before it left it (`kept`) and, `biased`, the logit bias among them."""
        assert self.sigma is not None
        bias_ids, bias_values = (self._bias_ids, self._bias_values) if biased else self._unbiased
        return self.sigma.bounds(raw, bias_ids, bias_values, kept)

    def clear_cut(self, before_cut: np.ndarray) -> bool:
        """Whether the top k + 1 of the short array's logits, as they reached the cut, hold no
        two equal finite values: then llama.cpp's sort puts the same tokens in the same
        places over the short array as over the whole vocabulary. Minus infinity (cut by
        top-n-sigma) carries no probability and no token of it is ever drawn."""
        k = min(self.keep + 1, len(before_cut))
        if k < len(before_cut):
            highest = np.partition(before_cut, len(before_cut) - k)[len(before_cut) - k :]
        else:
            highest = before_cut
        highest = np.sort(highest[np.isfinite(highest)])
        return not bool(np.any(highest[1:] == highest[:-1]))
