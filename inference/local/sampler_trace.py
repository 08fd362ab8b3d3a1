"""What the sampler chain did at one step, read off llama.cpp's candidate array as each
sampler leaves it (sampler_chain.ChainObserver).

Followed are the model's own top candidates (the ones the probabilities panel lists): a
sampler that takes one out of the array (top-k, XTC, min-p...) or sets its logit to minus
infinity (temperature 0) removed it; one that lowers or raises its logit (the logit bias,
the penalties, DRY) pushed it by that much. Temperature rescales every logit alike and is
no push. After the draw, the survivors with their probabilities as the chain left them on
the array (llama-server's `post_sampling_probs`): the distribution the token was drawn from.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .sampler_chain import CandidateArray

PUSHING = frozenset({"logit_bias", "penalties", "dry"})
"""The samplers that move single logits: what they did to a token is said by how much."""
MOVED = 1e-4
"""A change of a logit smaller than this is float rounding, not a push."""
SMALL = 256
"""An array this short (top-k's survivors, and what follows) is searched in plain Python."""


@dataclass(frozen=True, slots=True)
class StepTrace:
    """What the chain did at one step, to the candidates followed."""

    kept: tuple[tuple[int, float], ...]
    """The survivors, most probable first (at most as many as followed): (id, probability
    after the chain). Greedy computes none: its token has 1."""
    removed: tuple[tuple[int, str], ...]
    """(id, sampler) for each followed candidate a sampler took out."""
    pushed: tuple[tuple[int, str, float], ...]
    """(id, sampler, change of its logit) for each followed candidate a sampler moved."""


class ChainTrace:
    """Follows `ids` through the chain of one step (give them with `follow` before it).

    Called after every sampler of every step (eleven times with every sampler on), so kept
    lean: the few followed tokens' logits and presence in plain lists, read off the array by
    one call into the C helper (`_step.follow`), which also says when a sampler changed
    nothing for them, as most do: then nothing is recorded. Without the helper a short
    array (what top-k leaves) is read in Python, where a dozen numpy calls would cost more
    than the array holds."""

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int32)
        self._tokens: list[int] = []
        self._logits: list[float] = []
        self._present: list[bool] = []
        self._removed: list[tuple[int, str]] = []
        self._pushed: list[tuple[int, str, float]] = []
        self._compiled = _compiled_follow()
        # What the helper keeps for each followed token: where it was last found, its logit
        # then, and whether it is still in the array (with their addresses, for one call).
        self._at = np.empty(0, dtype=np.int64)
        self._now = np.empty(0, dtype=np.float32)
        self._in = np.empty(0, dtype=np.uint8)
        self._addresses = (0, 0, 0, 0)

    def follow(self, ids: list[int]) -> None:
        self._ids = np.asarray(ids, dtype=np.int32)
        self._tokens = [int(token) for token in ids]
        count = len(self._tokens)
        self._at = np.empty(count, dtype=np.int64)
        self._now = np.empty(count, dtype=np.float32)
        self._in = np.empty(count, dtype=np.uint8)
        self._addresses = (self._ids.ctypes.data, self._at.ctypes.data, self._now.ctypes.data, self._in.ctypes.data)

    def followed(self) -> np.ndarray:
        return self._ids

    def start(self, candidates: CandidateArray) -> None:
        # Before any sampler each followed token has its raw logit, wherever it sits in the array.
        now = candidates.logits[self._ids]
        self._logits = now.tolist()
        self._present = [True] * len(self._tokens)
        self._removed, self._pushed = [], []
        if self._compiled is not None:
            self._now[:] = now
            self._in[:] = 1
            self._at[:] = self._ids  # where a whole vocabulary, in id order, holds them

    def after(self, stage: str, candidates: CandidateArray) -> None:
        if self._compiled is not None:
            if not self._compiled(candidates.pointer, len(self._tokens), *self._addresses):
                return
            logits = self._now.tolist()
        elif not any(self._present):
            return
        else:
            logits = self._read(candidates)
        pushing = stage in PUSHING
        for slot, token in enumerate(self._tokens):
            if not self._present[slot]:
                continue
            value = logits[slot]
            if not math.isfinite(value):
                self._present[slot] = False
                self._removed.append((token, stage))
                continue
            if pushing and abs(value - self._logits[slot]) > MOVED:
                self._pushed.append((token, stage, round(value - self._logits[slot], 4)))
            self._logits[slot] = value

    def _read(self, candidates: CandidateArray) -> list[float]:
        """The followed tokens' logits as the array holds them (minus infinity where one is not)."""
        view = candidates.view()
        if len(view) <= SMALL:
            where = dict(zip(view["id"].tolist(), view["logit"].tolist()))
            return [where.get(token, -math.inf) for token in self._tokens]
        return self._looked_up(view, candidates.n_vocab).tolist()

    def _looked_up(self, view: np.ndarray, n_vocab: int) -> np.ndarray:
        """The followed tokens' logits in a long array (minus infinity where one is not)."""
        ids = self._ids
        view_ids = view["id"]
        if len(view) == n_vocab and np.array_equal(view_ids[ids], ids):
            return view["logit"][ids]
        if len(view) < n_vocab and (in_order := _in_id_order(view_ids, ids)) is not None:
            # a short array, in id order as it was filled (sampler_shortlist.py)
            return _read(view, in_order)
        # reordered or cut: find each followed token where it went
        where = {int(token): index for index, token in enumerate(view_ids.tolist())} if len(view) <= 4096 else None
        logits = np.full(len(ids), -np.inf, dtype=np.float32)
        for slot, token in enumerate(self._tokens):
            index = where.get(token) if where is not None else _find(view_ids, token)
            if index is not None:
                logits[slot] = view["logit"][index]
        return logits

    def finish(self, candidates: CandidateArray, token: int, greedy: bool, count: int) -> StepTrace:
        """The trace of the step that drew `token`, with the `count` likeliest survivors."""
        if greedy:
            kept: tuple[tuple[int, float], ...] = ((token, 1.0),)
        else:
            view = candidates.view()
            probabilities = view["p"]
            n = min(count, len(view))
            order = (
                np.argsort(-probabilities, kind="stable")[:n]
                if len(view) <= 4096
                else np.argpartition(-probabilities, n - 1)[:n]
                if n
                else np.empty(0, dtype=np.int64)
            )
            order = order[np.argsort(-probabilities[order], kind="stable")]
            kept = tuple(
                (int(view["id"][i]), float(probabilities[i]))
                for i in order.tolist()
                if probabilities[i] > 0.0 and math.isfinite(probabilities[i])
            )
        return StepTrace(kept=kept, removed=tuple(self._removed), pushed=tuple(self._pushed))


def _in_id_order(view_ids: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """Where each of `ids` sits in `view_ids` (-1: not there) when the array is in id order,
    as a short array is filled (sampler_shortlist.py); None when it is not."""
    if len(view_ids) == 0 or np.any(view_ids[1:] <= view_ids[:-1]):
        return None
    at = np.minimum(np.searchsorted(view_ids, ids), len(view_ids) - 1)
    return np.where(view_ids[at] == ids, at, -1)


def _read(view: np.ndarray, at: np.ndarray) -> np.ndarray:
    return np.where(at >= 0, view["logit"][np.maximum(at, 0)], np.float32(-np.inf))


def _find(view_ids: np.ndarray, token: int) -> int | None:
    hits = np.flatnonzero(view_ids == token)
    return int(hits[0]) if len(hits) else None


def _compiled_follow() -> Callable[..., int] | None:
    """`_step.follow`, or None where the C helper was not built."""
    try:
        from ._step import follow
    except ImportError:
        return None
    return follow
