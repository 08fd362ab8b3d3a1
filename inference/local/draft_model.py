"""A draft model as speculative decoding's guesser: a small model with the target's own
vocabulary writes the next few tokens greedily, and the target checks them (speculative.py).

The draft keeps its own context and cache, and evaluates nothing while it is not asked: before
each guess it drops what it guessed wrong last time and evaluates what was written since in one
batch (a prompt's pass, far cheaper a token than decoding it), so while speculation pauses the
draft model costs nothing. It stops guessing early where it is unsure (its best token below
DRAFT_P_MIN: llama.cpp's p_min), since an unsure guess is mostly a wasted row of the verifying pass.

It runs on as many threads as the model decodes with now (thread_choice.py): on a busy machine,
where the model's decodes moved to one thread, a draft's batch on two waited for the second at
every step of its graph, 0.4 to 1.2 s for 3 to 33 tokens it evaluates in 30 to 50 ms on one
(Gemma 3 270M and its 6-layer draft, load average 5 on 2 cores, 2026-12-04): asking a draft that
guessed nothing then halved the speed of writing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from ..core import native
from ..core.errors import ModelLoadError
from .sampling import StepReader

if TYPE_CHECKING:
    from .context import LlamaContext
    from .speculative import PacingRecord
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

    def __init__(
        self,
        context: "LlamaContext",
        n_vocab: int,
        history: Sequence[int],
        threads: Callable[[], int],
        pacing_record: "PacingRecord",
    ) -> None:
        self.pacing_record = pacing_record
        """How this draft's passes went in the generations before: each guess costs the draft
        model's own decodes, so drafting pauses where it guesses nothing, from one generation to
        the next (speculative.PacingRecord)."""
        self._context = context
        self._n_vocab = n_vocab
        self._tokens = list(history)
        self._logits = context.last_logits()
        self._reader = StepReader(n_vocab, native.softmax_kernel())
        self._threads = threads
        """The thread count the model decodes with now: the draft's one-token decodes and its
        batches run at it (a batch of what was written since the last guess is a few tokens)."""
        self._threads_set = 0

    def append(self, token: int) -> None:
        self._tokens.append(token)

    def propose(self, limit: int) -> list[int]:
        context = self._context
        if limit <= 0 or len(self._tokens) >= context.n_ctx - limit:
            return []
        if (threads := self._threads()) != self._threads_set:
            context.set_threads(threads, threads)
            self._threads_set = threads
        kept = context.reuse_prefix(self._tokens)  # drops last time's wrong guesses
        for _ in context.decode(self._tokens[kept:], failure="evaluate the text for the draft model"):
            pass
        decode_one = context.one_token_decoder()
        draft: list[int] = []
        while len(draft) < limit:
            # The step reader the generation reads the model's own steps with: one pass in C for
            # the best token and llama.cpp's softmax kernel for its probability, where numpy took
            # a copy and three passes of the 262k logits a guess.
            _, (best, *_) = self._reader.measure(self._logits(), -1, 1, _no_text, {})
            if best.p < DRAFT_P_MIN:
                break
            draft.append(best.id)
            if len(draft) < limit:
                decode_one(best.id)
        return draft


def _no_text(_token_id: int) -> str:
    """A guess's text is never shown: the guess is checked by its id."""
    return ""
