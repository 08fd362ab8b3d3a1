"""What a prompt's evaluation from an empty cache left in the cache, for a fixed seed.

llama.cpp's numbers depend on how the positions were batched: a prompt evaluated in one
batch, and the same prompt on a cache holding all but its last token, gave probabilities
apart by more than rounding (Gemma 3 270M: a top candidate at 22.06 % cold, 23.78 % on a
re-roll), so a fixed seed drew other words in the app than in `continue`. A fixed seed's
prompt is therefore evaluated as from an empty cache, its last token alone (generation.py),
and only what such an evaluation of the same text left is reused: a re-roll, or the next
candidate, evaluates one token, and computes what a cold run computes.
"""

from __future__ import annotations


class FreshPrefix:
    """The cached tokens, from position 0, that an evaluation from an empty cache left before
    its prompt's last token; the context cuts them when it changes those positions."""

    def __init__(self) -> None:
        self.tokens: tuple[int, ...] = ()

    def left(self, tokens: tuple[int, ...]) -> None:
        self.tokens = tokens

    def cut(self, keep: int) -> None:
        """The cache keeps its first `keep` positions only, or will hold other tokens from there."""
        if keep < len(self.tokens):
            self.tokens = ()

    def covers(self, head: tuple[int, ...]) -> bool:
        """Whether the cache holds `head` exactly as an evaluation from empty left it."""
        return bool(head) and self.tokens == head
