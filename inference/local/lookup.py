"""Prompt lookup: guess the next tokens by finding the text's last few tokens earlier in it
and proposing what followed them there (llama.cpp's examples/lookup, without its statistics).

It pays where the text echoes itself: names, recurring phrases, and above all a revision,
whose new version repeats most of the old. The history is every token the model sees:
the prompt (the draft, the memory, the note, earlier turns of a chat) and what it wrote.
"""

from __future__ import annotations

from typing import Sequence

LONGEST_GRAM = 4
"""The longest run of last tokens looked up; longer matches are tried first (they guess better)."""
SHORTEST_GRAM = 2
"""A single token recurs too often in prose to say what follows it."""


class PromptLookup:
    """The token history, indexed by its n-grams; `propose` drafts, `append` adds a token."""

    def __init__(self, history: Sequence[int], *, longest: int = LONGEST_GRAM, shortest: int = SHORTEST_GRAM):
        self._sizes = tuple(range(longest, shortest - 1, -1))
        self._tokens: list[int] = []
        self._follows: dict[tuple[int, ...], int] = {}
        """n-gram -> where the token after its latest occurrence sits (only occurrences with one)."""
        for token in history:
            self.append(token)

    def append(self, token: int) -> None:
        tokens = self._tokens
        end = len(tokens)  # the n-grams ending here are now followed by `token`
        for n in self._sizes:
            if end >= n:
                self._follows[tuple(tokens[end - n : end])] = end
        tokens.append(token)

    def propose(self, limit: int) -> list[int]:
        """Up to `limit` tokens that followed the longest recurring run of the last tokens, at
        its latest occurrence; [] when none recurs. A draft that runs into the text's end goes
        on with itself: the text is repeating."""
        tokens = self._tokens
        if limit <= 0:
            return []
        for n in self._sizes:
            if len(tokens) < n:
                continue
            start = self._follows.get(tuple(tokens[-n:]))
            if start is None:
                continue
            draft: list[int] = []
            end = len(tokens)
            for i in range(start, start + limit):
                draft.append(tokens[i] if i < end else draft[i - end])
            return draft
        return []
