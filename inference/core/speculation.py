"""Whether and how to speculate: the guesser and the most tokens it may draft per pass.

Plain data with its rules, apart from the loop that uses it (speculative.py), so that the
app, the config file and the engine's child process can build, check and pass one on
without importing numpy or llama.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .settings import Rule, SettingsError, check_rules, ruled

TILED_DRAFT_MAX = 6
"""The draft length for a model with K-quant or IQ weights: a pass of 8 rows or more takes
llama.cpp's tiled matmul for them, whose rows moved the demo model's probabilities by up to
6.9 points against one-token decodes (docs/guide/speculative.md). A pass of 7 rows (6 guesses
and the last token) goes through the one-token kernel, bit for bit."""
UNTILED_DRAFT_MAX = 12
"""The draft length for a model without such weights (F32, F16, BF16, Q8_0, Q4_0...). Its
products of 2 rows or more sum in another order than one row's (llamafile's sgemm), by float
rounding, so a pass's rows move its probabilities a little at any length: on Gemma 3 270M
widened to F32, one sampled draw in 16 generations fell the other way (0.027 points from a
boundary), the same one with 2, 6 and 12 guesses a pass. Each row costs a fraction of a
decode (that model, 2 threads: 7 rows 86 ms, 12 rows 111 ms, one 45 ms), so 12 guesses read
the weights once for up to 13 tokens; past that, the rows' share of a pass keeps growing."""


GUESSERS = ("off", "lookup", "draft")
"""'lookup': continue a token sequence that already occurs in the text (no second model);
'draft': a small model with the same vocabulary guesses (`draft_model`); 'off': plain decoding."""


@dataclass(frozen=True, slots=True)
class Speculation:
    """Speculative decoding: a guesser proposes the next tokens, the model checks them all in
    one pass and keeps those its own sampler chain draws, so the text is plain decoding's."""

    guesser: str = "off"
    draft_max: int | None = ruled(None, Rule("draft length", 1, 32, whole=True, optional=True))
    """The most tokens drafted for one verifying pass; fewer while guesses are rejected. None:
    the model's own (`for_model`)."""
    draft_model: Path | None = None
    """The draft model's GGUF (guesser 'draft')."""

    def for_model(self, tiled_weights: bool) -> "Speculation":
        """This speculation with its draft length settled for a model: the one set, else
        TILED_DRAFT_MAX where the model has weights llama.cpp's tiled kernel multiplies
        (ModelFacts.tiled_weights), UNTILED_DRAFT_MAX where it has none."""
        if self.draft_max is not None:
            return self
        return replace(self, draft_max=TILED_DRAFT_MAX if tiled_weights else UNTILED_DRAFT_MAX)

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
        if self.draft_max is None:
            return f"{name}, up to {TILED_DRAFT_MAX} tokens a pass ({UNTILED_DRAFT_MAX} for a model without K-quant weights)"
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
