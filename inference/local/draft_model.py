"""A draft model as speculative decoding's guesser: a small model with the target's own
vocabulary writes the next few tokens greedily, and the target checks them (speculative.py).

The draft keeps its own context and cache, following the text token by token: before each
guess it drops what it guessed wrong last time and evaluates what was written since. It stops
guessing early where it is unsure (its best token below DRAFT_P_MIN: llama.cpp's p_min),
since an unsure guess is mostly a wasted row of the verifying pass.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.errors import ModelLoadError

if TYPE_CHECKING:
    from .context import LlamaContext
    from .vocabulary import Vocabulary

DRAFT_P_MIN = 0.5
"""Stop drafting when the draft's best token is less probable than this."""


class DraftVocabularyError(ModelLoadError):
    """The draft model's vocabulary is not the model's: its token ids would mean other text."""


def check_same_vocabulary(model: "Vocabulary", draft: "Vocabulary", draft_path: Path) -> None:
    """DraftVocabularyError naming the first difference, token for token."""
    if draft.n_vocab != model.n_vocab:
        raise DraftVocabularyError(
            f"the draft model {draft_path.name} has {draft.n_vocab:,} tokens and the model {model.n_vocab:,}: "
            "a draft needs the model's own vocabulary"
        )
    for token_id in range(model.n_vocab):
        theirs, ours = draft.stored_text(token_id), model.stored_text(token_id)
        if theirs != ours:
            raise DraftVocabularyError(
                f"the draft model {draft_path.name} has another vocabulary: token {token_id} is "
                f"{theirs.decode('utf-8', 'replace')!r} there and {ours.decode('utf-8', 'replace')!r} in the model"
            )


class DraftModelGuesser:
    """Guesses with a draft model's context (speculative.Guesser)."""

    costly = True
    """Each guess costs the draft model's own decodes: drafting pauses when it guesses nothing."""

    def __init__(self, context: "LlamaContext", n_vocab: int, history: Sequence[int]):
        self._context = context
        self._n_vocab = n_vocab
        self._tokens = list(history)
        self._logits = context.last_logits()

    def append(self, token: int) -> None:
        self._tokens.append(token)

    def propose(self, limit: int) -> list[int]:
        context = self._context
        if limit <= 0 or len(self._tokens) >= context.n_ctx - limit:
            return []
        kept = context.reuse_prefix(self._tokens)  # drops last time's wrong guesses
        for _ in context.decode(self._tokens[kept:], failure="evaluate the text for the draft model"):
            pass
        decode_one = context.one_token_decoder()
        draft: list[int] = []
        while len(draft) < limit:
            logits = np.frombuffer((ctypes.c_float * self._n_vocab).from_address(self._logits()), dtype=np.float32)
            best = int(logits.argmax())
            if 1.0 / float(np.exp(logits - logits[best]).sum(dtype=np.float64)) < DRAFT_P_MIN:
                break
            draft.append(best)
            if len(draft) < limit:
                decode_one(best)
        return draft
