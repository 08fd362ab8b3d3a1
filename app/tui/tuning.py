"""Keyboard nudges of the sampler: one step up or down, within useful bounds.

Pure functions over the immutable settings objects, so the app, the command palette and
the tests share one definition of what a step is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping

from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings
from scriptorium.inference.core.writer_stop import LENGTH_MODES


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
    "repeat_window": Knob(
        "repeat_window", "repeat window", 1, 0, 4096, ladder=(0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
    ),
    "frequency_penalty": Knob("frequency_penalty", "frequency penalty", 0.05, -2.0, 2.0),
    "presence_penalty": Knob("presence_penalty", "presence penalty", 0.05, -2.0, 2.0),
    "dry_multiplier": Knob("dry_multiplier", "DRY multiplier", 0.1, 0.0, 3.0),
    "dry_base": Knob("dry_base", "DRY base", 0.05, 1.0, 4.0),
    "dry_allowed_length": Knob("dry_allowed_length", "DRY allowed length", 1, 0, 20),
    "dry_penalty_last_n": Knob(
        "dry_penalty_last_n", "DRY window", 1, 0, 4096, ladder=(0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
    ),
    "xtc_probability": Knob("xtc_probability", "XTC probability", 0.05, 0.0, 1.0),
    "xtc_threshold": Knob("xtc_threshold", "XTC threshold", 0.01, 0.0, 0.5),
    "typical_p": Knob("typical_p", "typical-p", 0.05, 0.05, 1.0),
    # -1 is off; the useful values are a few standard deviations.
    "top_n_sigma": Knob("top_n_sigma", "top-n-sigma", 0.5, -1.0, 5.0, ladder=(-1.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)),
    "dynatemp_range": Knob("dynatemp_range", "dynamic temperature range", 0.05, 0.0, 2.0),
    "dynatemp_exponent": Knob("dynatemp_exponent", "dynamic temperature exponent", 0.1, 0.1, 4.0),
    "mirostat": Knob("mirostat", "Mirostat version", 1, 0, 2, ladder=(0, 1, 2)),
    "mirostat_tau": Knob("mirostat_tau", "Mirostat tau", 0.5, 0.0, 10.0),
    "mirostat_eta": Knob("mirostat_eta", "Mirostat eta", 0.01, 0.01, 1.0),
    # The length is not a sampler, but the author tunes it beside them (a preset keeps it).
    "max_tokens": Knob(
        "max_tokens",
        "max tokens",
        1,
        1,
        4096,
        ladder=(1, 8, 16, 32, 50, 64, 100, 128, 200, 256, 400, 512, 1024, 2048, 4096),
    ),
}

KNOB_SAMPLER = {
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repeat_penalty": "penalties",
    "repeat_window": "penalties",
    "frequency_penalty": "penalties",
    "presence_penalty": "penalties",
    "dry_multiplier": "dry",
    "dry_base": "dry",
    "dry_allowed_length": "dry",
    "dry_penalty_last_n": "dry",
    "xtc_probability": "xtc",
    "xtc_threshold": "xtc",
    "typical_p": "typ_p",
    "top_n_sigma": "top_n_sigma",
    "dynatemp_range": "temperature",
    "dynatemp_exponent": "temperature",
}
"""The sampler of the chain each knob belongs to (Mirostat's replace the chain: none)."""

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


def moved_in_order(settings: SamplerSettings, knob_name: str, direction: int) -> SamplerSettings:
    """`settings` with the sampler `knob_name` belongs to moved past the next sampler that
    acts, earlier (-1) or later (+1) in the chain's order (past the next one, when none
    acts that way): the panel shows the acting ones, and a step past one that does nothing
    would change nothing on screen. Unchanged at an end, or for a knob of no sampler in it."""
    name = KNOB_SAMPLER.get(knob_name)
    order = list(settings.samplers)
    if name not in order:
        return settings
    here = order.index(name)
    acting = settings.acting_samplers()
    beyond = [order[i] for i in range(here + direction, -1 if direction < 0 else len(order), direction)]
    target = next((other for other in beyond if other in acting), beyond[0] if beyond else None)
    if target is None:
        return settings
    order.remove(name)
    at = order.index(target)
    order.insert(at + 1 if direction > 0 else at, name)
    return settings.with_changes(samplers=tuple(order))


def next_preset(
    settings: SamplerSettings, presets: Mapping[str, SamplerSettings] = PRESETS, custom: SamplerSettings | None = None
) -> SamplerSettings:
    """The preset after the current one among `presets` (the config's all_presets: the
    author's own and their redefinitions of built-ins); the first one after 'custom'.
    `custom`: the author's own values last tuned, which come back after the last preset
    (cycling threw them away with no way back). Keeps the seed, the length, the stop
    strings and healing, which are not part of a preset."""
    names = list(presets) + (["custom"] if custom is not None else [])
    following = names[(names.index(settings.preset) + 1) % len(names)] if settings.preset in names else names[0]
    chosen = custom if following == "custom" and custom is not None else presets[following]
    kept = ("seed", "max_tokens", "length", "stop", "heal")  # not part of a preset
    return chosen.with_changes(**{name: getattr(settings, name) for name in kept})


def next_length(settings: SamplerSettings) -> SamplerSettings:
    """The next length mode (tokens → sentence → paragraph → tokens, writer_stop.py)."""
    following = LENGTH_MODES[(LENGTH_MODES.index(settings.length) + 1) % len(LENGTH_MODES)]
    return settings.with_changes(length=following)


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
