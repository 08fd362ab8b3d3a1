"""Whether and how to speculate: the guesser and the most tokens it may draft per pass.

Plain data with its rules, apart from the loop that uses it (speculative.py), so that the
app, the config file and the engine's child process can build, check and pass one on
without importing numpy or llama.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .settings import Rule, SettingsError, check_rules, ruled

GUESSERS = ("off", "lookup", "draft")
"""'lookup': continue a token sequence that already occurs in the text (no second model);
'draft': a small model with the same vocabulary guesses (`draft_model`); 'off': plain decoding."""


@dataclass(frozen=True, slots=True)
class Speculation:
    """Speculative decoding: a guesser proposes the next tokens, the model checks them all in
    one pass and keeps those its own sampler chain draws, so the text is plain decoding's."""

    guesser: str = "off"
    draft_max: int = ruled(6, Rule("draft length", 1, 32, whole=True))
    """The most tokens drafted for one verifying pass; fewer while guesses are rejected. Six by
    default: a pass of 8 rows or more takes llama.cpp's tiled K-quant matmul, which sums in
    another order than one-token decoding, so the text could part from plain decoding's."""
    draft_model: Path | None = None
    """The draft model's GGUF (guesser 'draft')."""

    @property
    def on(self) -> bool:
        return self.guesser != "off"

    def validated(self) -> "Speculation":
        """Return self, or raise SettingsError naming the first bad value."""
        if self.guesser not in GUESSERS:
            raise SettingsError(f"speculative must be one of {', '.join(GUESSERS)}, not '{self.guesser}'")
        check_rules(self)
        if self.guesser == "draft" and self.draft_model is None:
            raise SettingsError("speculative 'draft' needs a draft model (--draft-model FILE)")
        return self

    def describe(self) -> str:
        """'lookup, up to 8 tokens a pass', or 'off'."""
        if not self.on:
            return "off"
        name = f"draft model {self.draft_model.name}" if self.guesser == "draft" and self.draft_model else self.guesser
        return f"{name}, up to {self.draft_max} tokens a pass"

    def as_dict(self) -> dict[str, object]:
        return {
            "guesser": self.guesser,
            "draft_max": self.draft_max,
            "draft_model": str(self.draft_model) if self.draft_model else None,
        }


OFF = Speculation()


def next_speculation(current: Speculation, configured: Speculation) -> Speculation:
    """The palette's cycle: off -> lookup -> draft (where `configured` names a draft model) -> off,
    keeping the configured draft length."""
    order = ["off", "lookup"] + (["draft"] if configured.draft_model is not None else [])
    following = order[(order.index(current.guesser) + 1) % len(order)] if current.guesser in order else "off"
    return replace(configured, guesser=following)
