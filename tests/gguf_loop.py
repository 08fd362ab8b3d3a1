"""The "looping" test model's word table: a markov model (gguf_models.py, kind="markov")
whose most probable next word always continues one 6-word phrase, so greedy decoding
repeats the phrase forever, as a small model falls into a loop.

Every word (the phrase's and eight others) is followed by the phrase's next word (a
word outside the phrase by its first), by the first two others a little less likely
(logits 0.3 and 0.6 lower: both above XTC's 0.1 threshold with it) and by the six
others about a third as likely. The margins are wide against float noise, narrow against
DRY: a repetition DRY penalises by 0.8 or more loses to an unpenalised other word.
"""

from __future__ import annotations

import math

from italian_vocab import italian_vocab

LOOP_PHRASE = ("▁La", "▁casa", "▁era", "▁buia", "▁e", "▁poi")
OTHER_WORDS = ("▁notte", "▁luna", "▁porta", "▁strada", "▁gatto", "▁cane", "▁vento", "▁mare")
RUNNER_UP_MARGINS = (0.3, 0.6)
"""How far below the phrase's next word the first two other words are (in logits)."""
OTHERS_MARGIN = 1.1
"""How far below it the rest are, each 0.02 further than the one before (no ties)."""
PROMPT = " La casa era buia e poi"


def loop_transitions() -> tuple[dict[int, dict[int, float]], dict[int, float]]:
    """(transitions, default_next) for write_llama_model(kind="markov", ...)."""
    vocab = italian_vocab()
    phrase = [vocab.id_of(piece) for piece in LOOP_PHRASE]
    others = [vocab.id_of(piece) for piece in OTHER_WORDS]

    def successors(following: int) -> dict[int, float]:
        table = {following: 1.0}
        for rank, word in enumerate(others):
            margin = RUNNER_UP_MARGINS[rank] if rank < len(RUNNER_UP_MARGINS) else OTHERS_MARGIN + 0.02 * rank
            table[word] = math.exp(-margin)
        return table

    table = {word: successors(phrase[(i + 1) % len(phrase)]) for i, word in enumerate(phrase)}
    table.update({word: successors(phrase[0]) for word in others})
    return table, successors(phrase[0])


def repeated_share(tokens: list[int], n: int = 4) -> float:
    """The share of the n-grams of `tokens` that already occurred earlier in them."""
    seen: set[tuple[int, ...]] = set()
    repeated = 0
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    for gram in grams:
        repeated += gram in seen
        seen.add(gram)
    return repeated / len(grams)
