"""How many tokens the memory and the author's note take of the prompt, for the line the
memory and note dialogs show as the author types (counted by the backend, off the UI
thread: a server may be slow, and the author is typing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from scriptorium.inference.window.window import Pinned, memory_block, note_block, prompt_budget

from scriptorium.app.i18n.language import ENGLISH, Language


@dataclass(frozen=True, slots=True)
class PinnedSize:
    tokens: int
    n_ctx: int
    budget: int
    """What the context leaves for the prompt (the window's own rule, prompt_budget)."""

    @property
    def fits(self) -> bool:
        return self.tokens <= self.budget

    def line(self, language: Language = ENGLISH) -> str:
        number = language.number
        counts = {
            "tokens": number(self.tokens, ","),
            "n_ctx": number(self.n_ctx, ","),
            "left": number(self.budget - self.tokens, ","),
            "budget": number(self.budget, ","),
        }
        if self.fits:
            return language.gettext(
                "memory and note {tokens} tokens · the window {n_ctx} · leaves {left} for the draft"
            ).format(**counts)
        return language.gettext(
            "memory and note {tokens} tokens, more than the {budget} the window "
            "({n_ctx}) leaves for the prompt: the model cannot be given them; shorten them"
        ).format(**counts)


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
