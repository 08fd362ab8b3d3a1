"""Keyboard nudges of the sampler: one step up or down, within useful bounds.

Pure functions over the immutable settings objects, so the app, the command palette and
the tests share one definition of what a step is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping

from scriptorium.inference.settings import PRESETS, LogitBias, SamplerSettings


@dataclass(frozen=True, slots=True)
class Knob:
    """One sampler setting the keyboard can move."""

    field: str
    """The SamplerSettings field."""
    label: str
    step: float
    low: float
    high: float
    ladder: tuple[float, ...] = ()
    """When set, steps walk these values instead of adding `step`."""

    def moved(self, value: float, direction: int) -> float:
        if self.ladder:
            if direction > 0:
                moved = next((v for v in self.ladder if v > value), self.ladder[-1])
            else:
                moved = next((v for v in reversed(self.ladder) if v < value), self.ladder[0])
        else:
            # Rounded, so ten steps of 0.05 land on a value that prints as typed.
            moved = round(min(self.high, max(self.low, value + direction * self.step)), 4)
        # The config and the flags allow values beyond the keys' range (temperature 3, top-k
        # 5000): a step there must not jump back to the range's end against its direction.
        return moved if (moved - value) * direction > 0 else value


KNOBS: dict[str, Knob] = {
    "temperature": Knob("temperature", "temperature", 0.05, 0.0, 2.0),
    # top-k 0 means off; useful values are spread over orders of magnitude.
    "top_k": Knob("top_k", "top-k", 1, 0, 1000, ladder=(0, 1, 2, 3, 5, 10, 20, 40, 50, 80, 100, 200, 500, 1000)),
    "top_p": Knob("top_p", "top-p", 0.05, 0.05, 1.0),
    "min_p": Knob("min_p", "min-p", 0.01, 0.0, 0.5),
    "repeat_penalty": Knob("repeat_penalty", "repetition penalty", 0.05, 0.5, 2.0),
}

LORA_STEP = 0.1
LORA_MAX = 2.0


def nudge(settings: SamplerSettings, knob_name: str, direction: int) -> SamplerSettings:
    """`settings` with one knob moved a step (direction +1 or -1); preset becomes 'custom'."""
    knob = KNOBS[knob_name]
    current = getattr(settings, knob.field)
    value = knob.moved(current, direction)
    if isinstance(current, int):
        value = int(value)
    if value == current:
        return settings
    return settings.with_changes(**{knob.field: value})


def next_preset(settings: SamplerSettings,
                presets: Mapping[str, SamplerSettings] = PRESETS) -> SamplerSettings:
    """The preset after the current one among `presets` (the config's all_presets: the
    author's own and their redefinitions of built-ins); the first one after 'custom'.
    Keeps the seed, the length and the stop strings, which are not part of a preset."""
    names = list(presets)
    following = names[(names.index(settings.preset) + 1) % len(names)] if settings.preset in names else names[0]
    chosen = presets[following]
    return chosen.with_changes(seed=settings.seed, max_tokens=settings.max_tokens, stop=settings.stop)


def with_new_seed(settings: SamplerSettings) -> SamplerSettings:
    """A freshly drawn seed, fixed from now on (a seed is not part of a preset)."""
    return settings.with_changes(seed=random.SystemRandom().randrange(2**32))


def with_seed_fixed(settings: SamplerSettings, last_seed: int | None) -> SamplerSettings:
    """Toggle: fix the seed the last generation used (or a new one), or go back to a
    fresh seed per generation."""
    if settings.seed is not None:
        return settings.with_changes(seed=None)
    if last_seed is None:
        return with_new_seed(settings)
    return settings.with_changes(seed=last_seed)


def with_ban(bias: LogitBias, banned: bool) -> LogitBias:
    """The byte tokens banned or allowed; the author's own entries kept."""
    return LogitBias(ban_byte_tokens=banned, entries=bias.entries)


LORA_KNOB = Knob("lora_scale", "LoRA scale", LORA_STEP, 0.0, LORA_MAX)
"""Not a sampler setting, but moved by the same rule (--lora-scale takes up to 4)."""


def lora_scale_moved(scale: float, direction: int) -> float:
    return LORA_KNOB.moved(scale, direction)
