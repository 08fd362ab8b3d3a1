"""Sampler settings and logit bias: typed, validated at the edge, with presets; and the
rules that numeric settings obey, each stated once on the field it governs."""

from __future__ import annotations

import random
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any

from .errors import ScriptoriumError


class SettingsError(ScriptoriumError, ValueError):
    """A setting has a value llama.cpp cannot use; the message names it in one line."""


@dataclass(frozen=True, slots=True)
class Rule:
    """What values a numeric setting takes. Declared once on its dataclass field
    (`ruled(default, Rule(...))`); the config file, the command line and the engine all
    check a value with it, each naming the setting the way the author wrote it
    (`model.context_size`, `--ctx`, `context size`).

    Plain dataclass metadata rather than pydantic: the rules are a handful of bounds, the
    messages must read the same everywhere, and the inference layer stays free of a
    validation framework it would import on every start."""

    label: str
    """How the setting reads in a message when no key names it ('context size')."""
    low: float | None = None
    high: float | None = None
    whole: bool = False
    """A whole number (an int, never a bool)."""
    optional: bool = False
    """None is allowed (it means a default, such as 'every core')."""

    def describe(self) -> str:
        low, high = _plain(self.low), _plain(self.high)
        if self.whole:
            if self.low is not None and self.high is not None:
                return f"a whole number from {low} to {high}"
            return f"a whole number of at least {low}" if self.low is not None else "a whole number"
        if self.low is not None and self.high is not None:
            return f"between {low} and {high}"
        return f"at least {low}" if self.low is not None else "a number"

    def problem(self, value: Any) -> str | None:
        """'must be ..., not X' when `value` breaks the rule, else None."""
        if value is None and self.optional:
            return None
        number_types = (int,) if self.whole else (int, float)
        ok = isinstance(value, number_types) and not isinstance(value, bool)
        # Written as "not within" so that NaN, which compares false with everything, is out too.
        if ok and not ((self.low is None or value >= self.low) and (self.high is None or value <= self.high)):
            ok = False
        return None if ok else f"must be {self.describe()}, not {value}"

    def check(self, value: Any, name: str | None = None) -> Any:
        """`value`, or SettingsError naming it `name` (the rule's label by default)."""
        problem = self.problem(value)
        if problem is not None:
            raise SettingsError(f"{name or self.label} {problem}")
        return value


def _plain(number: float | None) -> str:
    """1048576 and 0.5 as written, never 1.04858e+06."""
    return str(int(number)) if number is not None and float(number).is_integer() else str(number)


def ruled(default: Any, rule: Rule) -> Any:
    """A dataclass field with `default` and its rule."""
    return field(default=default, metadata={"rule": rule})


def rule_for(cls: type, name: str) -> Rule:
    """The rule declared on field `name` of dataclass `cls`."""
    declared: dict[str, Field[Any]] = {f.name: f for f in fields(cls)}
    return declared[name].metadata["rule"]


def check_rules(obj: Any) -> None:
    """SettingsError for the first field of `obj` that breaks its declared rule."""
    for declared in fields(obj):
        rule = declared.metadata.get("rule")
        if rule is not None:
            rule.check(getattr(obj, declared.name))


BAN = -100.0
"""The bias that forbids a token; -100 on a logit is never sampled in practice."""


def check_top_n(top_n: int) -> None:
    """How many candidates a request reports per token: 0 or more."""
    if top_n < 0:
        raise SettingsError(f"top must be 0 or more, not {top_n}")


NOT_OF_A_PRESET = frozenset({"seed", "max_tokens", "stop", "preset"})
"""SamplerSettings fields a preset does not fix: changing them keeps the preset's name."""


@dataclass(frozen=True, slots=True)
class SamplerSettings:
    """How the next token is chosen. Applied by llama.cpp's own sampler chain, in the
    order logit bias -> penalties -> top-k -> top-p -> min-p -> temperature -> draw
    (llama.cpp's common order). Temperature 0 takes the most probable token after bias
    and penalties."""

    temperature: float = 0.8
    """0 picks the most probable token every time (greedy); higher flattens the distribution."""
    top_k: int = 50
    """Keep only the k most probable tokens; 0 keeps the whole vocabulary."""
    top_p: float = 0.95
    """Keep the smallest set of tokens whose probabilities add up to p; 1 disables it."""
    min_p: float = 0.0
    """Drop tokens less probable than min_p times the most probable one; 0 disables it."""
    repeat_penalty: float = 1.0
    """Divide the logit of recently seen tokens by this; 1 disables it."""
    repeat_window: int = 64
    """How many recent tokens (prompt included) the penalties look at; 0 disables them."""
    presence_penalty: float = 0.0
    """Subtracted once from the logit of any token seen in the window."""
    frequency_penalty: float = 0.0
    """Subtracted from a token's logit for each time it occurs in the window."""
    seed: int | None = None
    """Fixed seed for a reproducible run; None draws a fresh one per generation."""
    max_tokens: int = 200
    """Stop after this many generated tokens."""
    stop: tuple[str, ...] = ()
    """Stop as soon as the text contains one of these; the stop string is not emitted."""
    preset: str = "prose"
    """The preset these values came from ('custom' once a value is changed by hand)."""

    def validated(self) -> "SamplerSettings":
        """Return self, or raise SettingsError naming the first bad value."""
        def need(ok: bool, message: str) -> None:
            if not ok:
                raise SettingsError(message)

        need(0.0 <= self.temperature <= 10.0, f"temperature must be between 0 and 10, not {self.temperature}")
        need(self.top_k >= 0, f"top-k must be 0 (off) or a positive whole number, not {self.top_k}")
        need(0.0 < self.top_p <= 1.0, f"top-p must be in (0, 1], not {self.top_p}")
        need(0.0 <= self.min_p < 1.0, f"min-p must be in [0, 1), not {self.min_p}")
        need(0.0 < self.repeat_penalty <= 10.0, f"repeat penalty must be in (0, 10], not {self.repeat_penalty}")
        need(self.repeat_window >= 0, f"repeat window must be 0 or more, not {self.repeat_window}")
        need(-10.0 <= self.presence_penalty <= 10.0, f"presence penalty must be in [-10, 10], not {self.presence_penalty}")
        need(-10.0 <= self.frequency_penalty <= 10.0, f"frequency penalty must be in [-10, 10], not {self.frequency_penalty}")
        need(self.seed is None or 0 <= self.seed < 2**32, f"seed must be in [0, 2^32), not {self.seed}")
        need(self.max_tokens >= 1, f"max tokens must be at least 1, not {self.max_tokens}")
        need(all(self.stop), "a stop string cannot be empty")
        return self

    def with_changes(self, **changes: object) -> "SamplerSettings":
        """A validated copy. Unless a preset is named, it keeps this one's name while only
        the seed, the length or the stop strings changed (they are not part of a preset:
        `--preset creative --max-tokens 500` is still creative), and is 'custom' otherwise."""
        changed = replace(self, **changes).validated()
        if "preset" in changes:
            return changed
        return changed if changed.shape() == self.shape() else replace(changed, preset="custom")

    def shape(self) -> tuple[object, ...]:
        """The values a preset stands for: how the next token is drawn, not the seed, the
        length or the stop strings."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name not in NOT_OF_A_PRESET)

    def resolved_seed(self) -> int:
        return self.seed if self.seed is not None else random.SystemRandom().randrange(2**32)

    def as_dict(self) -> dict[str, object]:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}


PRESETS: dict[str, SamplerSettings] = {
    "greedy": SamplerSettings(temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, preset="greedy"),
    # The values the author uses for narrative text.
    "prose": SamplerSettings(temperature=0.8, top_k=50, top_p=0.95, min_p=0.0, repeat_penalty=1.0, preset="prose"),
    "creative": SamplerSettings(temperature=1.1, top_k=100, top_p=0.98, min_p=0.02, repeat_penalty=1.05, preset="creative"),
}


def preset(name: str) -> SamplerSettings:
    try:
        return PRESETS[name]
    except KeyError:
        raise SettingsError(f"unknown preset '{name}' (choose from {', '.join(PRESETS)})") from None


@dataclass(frozen=True, slots=True)
class LogitBias:
    """Additive biases on logits: the byte-token ban plus the author's own entries."""

    ban_byte_tokens: bool = True
    """Give every byte token of the vocabulary (<0x00>..<0xFF>) a bias of -100."""
    entries: tuple[tuple[int, float], ...] = field(default=())
    """The author's own (token id, bias) pairs; they win over the byte ban."""

    def validated(self, n_vocab: int | None = None) -> "LogitBias":
        for token_id, bias in self.entries:
            if token_id < 0 or (n_vocab is not None and token_id >= n_vocab):
                limit = f" (vocabulary has {n_vocab} tokens)" if n_vocab is not None else ""
                raise SettingsError(f"logit bias names token {token_id}, which does not exist{limit}")
            if not -1000.0 <= bias <= 1000.0:
                raise SettingsError(f"logit bias for token {token_id} must be in [-1000, 1000], not {bias}")
        return self

    def resolve(self, byte_token_ids: tuple[int, ...]) -> dict[int, float]:
        """The effective id -> bias map for a vocabulary."""
        effective = {token_id: BAN for token_id in byte_token_ids} if self.ban_byte_tokens else {}
        effective.update(dict(self.entries))
        return effective

    @staticmethod
    def parse_entry(text: str) -> tuple[int, float]:
        """Parse 'ID=VALUE' (the CLI form)."""
        token, sep, value = text.partition("=")
        try:
            if not sep:
                raise ValueError
            return int(token.strip()), float(value.strip())
        except ValueError:
            raise SettingsError(f"bias '{text}' is not of the form ID=VALUE (e.g. 16001=-100)") from None

    @staticmethod
    def from_pairs(pairs: object) -> tuple[tuple[int, float], ...]:
        """Accept the author's `[[id, bias], ...]` form."""
        try:
            return tuple((int(token), float(bias)) for token, bias in pairs)  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise SettingsError("logit bias must be a list of [token_id, bias] pairs") from None


def describe_ranges(ids: tuple[int, ...]) -> str:
    """'16000–16255' for a run of ids, comma-separated runs otherwise."""
    if not ids:
        return "none"
    ordered = sorted(ids)
    runs: list[str] = []
    start = prev = ordered[0]
    for token_id in ordered[1:] + [None]:  # type: ignore[list-item]
        if token_id is not None and token_id == prev + 1:
            prev = token_id
            continue
        runs.append(f"{start}–{prev}" if prev != start else f"{start}")
        if token_id is not None:
            start = prev = token_id
    return ", ".join(runs)


def describe_bias(bias: LogitBias, byte_token_ids: tuple[int, ...]) -> str:
    """One line for panels and exports: 'byte tokens 16000–16255 banned (256); 42: +2.0'."""
    parts = []
    if bias.ban_byte_tokens and byte_token_ids:
        parts.append(f"byte tokens {describe_ranges(byte_token_ids)} banned ({len(byte_token_ids)})")
    elif byte_token_ids:
        parts.append("byte tokens allowed")
    parts.extend(f"{token_id}: {value:+g}" for token_id, value in bias.entries)
    return "; ".join(parts) if parts else "none"
