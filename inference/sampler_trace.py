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
from dataclasses import dataclass

import numpy as np

from .sampler_chain import CandidateArray

PUSHING = frozenset({"logit_bias", "penalties", "dry"})
"""The samplers that move single logits: what they did to a token is said by how much."""
MOVED = 1e-4
"""A change of a logit smaller than this is float rounding, not a push."""


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
    """Follows `ids` through the chain of one step (give them with `follow` before it)."""

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int32)
        self._logits = np.empty(0, dtype=np.float32)
        self._present = np.empty(0, dtype=bool)
        self._removed: list[tuple[int, str]] = []
        self._pushed: list[tuple[int, str, float]] = []

    def follow(self, ids: list[int]) -> None:
        self._ids = np.asarray(ids, dtype=np.int32)

    def start(self, candidates: CandidateArray) -> None:
        # Filled in id order: each followed token sits at its id.
        self._logits = candidates.view()["logit"][self._ids].copy()
        self._present = np.ones(len(self._ids), dtype=bool)
        self._removed, self._pushed = [], []

    def after(self, stage: str, candidates: CandidateArray) -> None:
        ids = self._ids
        if not len(ids):
            return
        view = candidates.view()
        view_ids = view["id"]
        if len(view) == candidates.n_vocab and np.array_equal(view_ids[ids], ids):
            logits, present = view["logit"][ids], np.ones(len(ids), dtype=bool)
        else:  # reordered or cut: find each followed token where it went
            where = {int(token): index for index, token in enumerate(view_ids.tolist())} if len(view) <= 4096 else None
            logits, present = np.full(len(ids), -np.inf, dtype=np.float32), np.zeros(len(ids), dtype=bool)
            for slot, token in enumerate(ids.tolist()):
                index = where.get(token) if where is not None else _find(view_ids, token)
                if index is not None:
                    logits[slot], present[slot] = view["logit"][index], True
        present &= np.isfinite(logits)
        for slot in np.flatnonzero(self._present & ~present).tolist():
            self._removed.append((int(ids[slot]), stage))
        if stage in PUSHING:
            both = np.flatnonzero(self._present & present)
            moved = both[np.abs(logits[both] - self._logits[both]) > MOVED]
            for slot in moved.tolist():
                self._pushed.append((int(ids[slot]), stage, round(float(logits[slot] - self._logits[slot]), 4)))
        self._logits, self._present = logits, present

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


def _find(view_ids: np.ndarray, token: int) -> int | None:
    hits = np.flatnonzero(view_ids == token)
    return int(hits[0]) if len(hits) else None
