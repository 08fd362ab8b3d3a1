"""Token healing: the prompt backs up over the tokens the cursor may have cut, and the
first generated tokens are held to the text backed up over.

A writer's cursor is seldom a token boundary. "lungo il mo" ends in the token "▁mo",
which the model rarely saw followed by more letters: in training, "molo" was the one
token "▁molo". Fed "▁mo", Gemma 3 270M writes "zzo" or "etto", and "molo" is not among
its first six candidates. Healed, the prompt ends before "▁mo", and the first token must
begin with " mo" ("▁molo", "▁mo", "▁mostra"...) or be a beginning of it ("▁m", "▁",
then what follows held to the rest): the model chooses the word as it learned it, and
the suggestion shows only what follows the cursor ("lo"). The author's text is never
changed: the tokens backed up over are written again, byte for byte, before anything new.

How many tokens to back up. The cursor may have cut a token when the text after it
could have merged with the token's text into a longer token of the vocabulary. So the
prompt backs up over its last token while some token of the vocabulary is longer than
the text backed up over and begins with it, and goes on with the token before while that
still holds (" il mo" begins no token: one is enough; "cammin" as "▁cam" "min" both go
when "▁camminava" is a token). The longest token that could extend the text bounds how
far back that reaches, a few tokens at most. A token that nothing in the vocabulary
extends (a full stop, most often) is a boundary whatever follows, and stays. Trailing
spaces are no special case: "pronto. " ends in "▁", which every "▁word" extends, so the
space is backed up over and the first token must begin with it.

Applied as a filter stage before llama.cpp's chain: the logits of the tokens not allowed
are set to minus infinity where the chain reads them (as a logit bias of minus infinity
would), so what the chain's samplers keep, the probabilities they leave and the draw are
llama.cpp's own, over the allowed tokens. The model's raw numbers are read before that,
and reported beside the renormalised ones (`Healing`).

Pure numpy and bytes: no llama.cpp, no Textual.
"""

from __future__ import annotations

import ctypes
import math
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..core.events import Candidate, Healing
from ..core.settings import BAN


class TokenPrefixes:
    """Every token of a vocabulary by its bytes, sorted, to answer the prefix questions
    healing asks: which tokens begin with these bytes, which are a beginning of them.
    Built once per vocabulary, on a thread of its own as the model loads (engine.py; a sort
    of its pieces: about 0.26 s for Gemma's 262k on the 2-core machine); each question is a bisection."""

    def __init__(self, pieces: Sequence[bytes]) -> None:
        """`pieces[i]`: the bytes token i writes (b'' for a control token: never allowed)."""
        # Ids sorted by their pieces (a key sort: sorting (piece, id) pairs took twice as long).
        order = sorted((token_id for token_id, piece in enumerate(pieces) if piece), key=pieces.__getitem__)
        self._pieces = [pieces[token_id] for token_id in order]
        self._ids = np.asarray(order, dtype=np.int32)

    def extended(self, text: bytes) -> bool:
        """Some token is longer than `text` and begins with it."""
        at = bisect_left(self._pieces, text)
        pieces = self._pieces
        while at < len(pieces) and pieces[at] == text:
            at += 1
        return at < len(pieces) and pieces[at].startswith(text)

    def allowed(self, rest: bytes) -> np.ndarray:
        """The tokens that can come next while `rest` is still to be written again: those
        beginning with it, and those that are a beginning of it (the rest then follows)."""
        low = bisect_left(self._pieces, rest)
        beyond = _after_all_starting_with(rest)
        starting = self._ids[low : bisect_left(self._pieces, beyond) if beyond else None]
        shorter = [self.spelling(rest[:end]) for end in range(1, len(rest))]
        return np.concatenate((starting, *shorter)) if shorter else starting

    def spelling(self, piece: bytes) -> np.ndarray:
        """The tokens whose bytes are `piece` (a byte token and a piece can share them)."""
        low = high = bisect_left(self._pieces, piece)
        while high < len(self._pieces) and self._pieces[high] == piece:
            high += 1
        return self._ids[low:high]


def _after_all_starting_with(prefix: bytes) -> bytes:
    """The least bytes greater than every string beginning with `prefix` (b'' when none is:
    a prefix of 0xFF bytes only)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b""
    return stripped[:-1] + bytes([stripped[-1] + 1])


@dataclass(frozen=True, slots=True)
class HealPlan:
    """Where the healed prompt ends, and what it leaves for the model to write again."""

    kept: int
    """Tokens of the prompt kept."""
    removed: bytes
    """The bytes of the tokens backed up over, which the first generated tokens must write again."""


def plan_healing(tokens: Sequence[int], piece: Callable[[int], bytes], prefixes: TokenPrefixes) -> HealPlan:
    """Back up over the last tokens while some token of the vocabulary extends their text
    (the module docstring says why). The first token always stays (a BOS, or the text's
    first word: the model needs a position to predict from), and so does a control token."""
    kept, removed = len(tokens), b""
    while kept > 1:
        text = piece(tokens[kept - 1])
        if not text or not prefixes.extended(text + removed):
            break
        kept, removed = kept - 1, text + removed
    return HealPlan(kept, removed)


class Healer:
    """The constraint on one generation's first tokens, until the text backed up over is
    written again: `constrain` before each draw, `take` on each drawn token's bytes."""

    def __init__(self, prefixes: TokenPrefixes, removed: bytes, n_vocab: int) -> None:
        self._prefixes = prefixes
        self.removed = removed
        self.rest = removed
        self._n_vocab = n_vocab
        self._allowed = np.empty(0, dtype=np.int32)
        self._weights = np.empty(0, dtype=np.float64)

    @property
    def active(self) -> bool:
        """Some of the text backed up over is still to be written."""
        return bool(self.rest)

    def constrain(
        self, logits_address: int, top_n: int, text_of: Callable[[int], str], bias: dict[int, float]
    ) -> Healing:
        """Report the model's numbers for the allowed tokens, then set every other token's
        logit to minus infinity at `logits_address` (llama.cpp's output for this step,
        read by the chain next and rewritten by the next decode)."""
        logits = np.frombuffer((ctypes.c_float * self._n_vocab).from_address(logits_address), dtype=np.float32)
        allowed = self._prefixes.allowed(self.rest)
        healing, self._weights = _allowed_numbers(logits, allowed, top_n, text_of, bias, self.rest)
        self._allowed = allowed
        kept = logits[allowed].copy()
        logits.fill(-np.inf)
        logits[allowed] = kept
        return healing

    def raw_probability(self, token: int) -> float:
        """The model's own probability of `token`, allowed at the last constrained step."""
        where = np.flatnonzero(self._allowed == token)
        return float(self._weights[where[0]]) if len(where) else 0.0

    def take(self, piece: bytes) -> bytes:
        """The part of a drawn token's bytes that follows the text backed up over (what
        the suggestion shows); the rest still to be written is what it leaves."""
        rest = self.rest
        if piece.startswith(rest):
            self.rest = b""
            return piece[len(rest) :]
        self.rest = rest[len(piece) :]  # a beginning of the rest: it writes that much again
        return b""


def _allowed_numbers(
    logits: np.ndarray,
    allowed: np.ndarray,
    top_n: int,
    text_of: Callable[[int], str],
    bias: dict[int, float],
    rest: bytes,
) -> tuple[Healing, np.ndarray]:
    """The allowed tokens' raw probabilities (a softmax over the whole vocabulary, as the
    panel's other numbers) and their sum, which renormalises them over the allowed set;
    with the raw probability of every allowed token, in `allowed` order."""
    top = float(logits.max())
    if not math.isfinite(top):
        top = 0.0
    normaliser = float(np.exp(logits.astype(np.float64) - top).sum())
    weights = np.exp(logits[allowed].astype(np.float64) - top) / normaliser
    count = min(max(top_n, 1), len(allowed))
    # A space allows every "▁word" (100k of Gemma's tokens): partition, then sort the few.
    order = np.argpartition(-weights, count - 1)[:count] if 0 < count < len(weights) else np.arange(count)
    order = order[np.argsort(-weights[order], kind="stable")]
    candidates = tuple(
        Candidate(int(allowed[i]), text_of(int(allowed[i])), float(weights[i]), bias.get(int(allowed[i]), 0.0) <= BAN)
        for i in order.tolist()
    )
    healing = Healing(
        rest=rest.decode("utf-8", "replace"), allowed_count=len(allowed), mass=float(weights.sum()), allowed=candidates
    )
    return healing, weights
