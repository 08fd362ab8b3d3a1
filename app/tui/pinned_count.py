"""How many tokens the memory and the author's note take of the prompt, for the line the
memory and note dialogs show as the author types (counted by the backend, off the UI
thread: a server may be slow, and the author is typing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from scriptorium.inference.window import Pinned, memory_block, note_block, prompt_budget


@dataclass(frozen=True, slots=True)
class PinnedSize:
    tokens: int
    n_ctx: int
    budget: int
    """What the context leaves for the prompt (the window's own rule, prompt_budget)."""

    @property
    def fits(self) -> bool:
        return self.tokens <= self.budget

    def line(self) -> str:
        if self.fits:
            return (
                f"memory and note {self.tokens:,} tokens · the window {self.n_ctx:,} · "
                f"leaves {self.budget - self.tokens:,} for the draft"
            )
        return (
            f"memory and note {self.tokens:,} tokens, more than the {self.budget:,} the window "
            f"({self.n_ctx:,}) leaves for the prompt: the model cannot be given them; shorten them"
        )


@dataclass(frozen=True, slots=True)
class PinnedCounter:
    """The backend's count and the window's size now: a plain function for a worker thread."""

    count: Callable[[str], int]
    n_ctx: int
    max_tokens: int

    def size(self, pinned: Pinned) -> PinnedSize:
        pinned_text = memory_block(pinned.memory) + note_block(pinned.note)
        tokens = self.count(pinned_text) - self.count("") if pinned_text else 0
        return PinnedSize(max(tokens, 0), self.n_ctx, prompt_budget(self.n_ctx, self.max_tokens))
