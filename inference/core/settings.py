"""Sampler settings and logit bias: typed, validated at the edge, with presets; and the
rules that numeric settings obey, each stated once on the field it governs."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any

from .errors import ScriptoriumError
from .writer_stop import check_length


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


NOT_OF_A_PRESET = frozenset({"seed", "max_tokens", "length", "stop", "heal", "preset"})
"""SamplerSettings fields a preset does not fix: changing them keeps the preset's name."""

SAMPLER_NAMES = ("penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature")
"""The samplers whose order can change, by llama.cpp's own names (`--samplers`, llama-server's
`samplers` field), in llama.cpp's default order (common/common.h)."""
DEFAULT_DRY_BREAKERS = ("\n", ":", '"', "*")
"""llama.cpp's default DRY sequence breakers: a repetition is not followed across them."""
DRY_BREAKER_LIMIT = 40
"""llama.cpp cuts a longer DRY sequence breaker silently (MAX_CHAR_LEN): refused here instead."""
MIROSTAT_VERSIONS = (0, 1, 2)


@dataclass(frozen=True, slots=True)
class SamplerSettings:
    """How the next token is chosen. Applied by llama.cpp's own sampler chain: the logit
    bias, then the samplers in `samplers` order (llama.cpp's default: penalties -> DRY ->
    top-n-sigma -> top-k -> typical -> top-p -> min-p -> XTC -> temperature), then the
    draw; with Mirostat, temperature then Mirostat's draw (llama.cpp's common_sampler).
    Every sampler is off at its neutral value. Temperature 0 takes the most probable token
    of what the samplers before it left."""

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
    dry_multiplier: float = 0.0
    """DRY ("don't repeat yourself"): a token that would extend a sequence already seen loses
    multiplier * base^(length - allowed length) from its logit; 0 disables it."""
    dry_base: float = 1.75
    """How fast the DRY penalty grows with the length of the repetition (at least 1)."""
    dry_allowed_length: int = 2
    """Repetitions up to this many tokens are not penalised by DRY."""
    dry_penalty_last_n: int = 64
    """How many recent tokens DRY scans for repetitions; 0 disables it."""
    dry_sequence_breakers: tuple[str, ...] = DEFAULT_DRY_BREAKERS
    """DRY does not follow a repetition across these (a line break, a colon, a quote...)."""
    xtc_probability: float = 0.0
    """XTC ("exclude top choices"): with this probability, every candidate above the threshold
    but the least likely of them is removed; 0 disables it."""
    xtc_threshold: float = 0.1
    """The probability above which XTC counts a candidate as a top choice (above 0.5 it never acts)."""
    typical_p: float = 1.0
    """Locally typical sampling: keep the candidates whose surprise is closest to the
    average, adding up to p; 1 disables it."""
    top_n_sigma: float = -1.0
    """Keep the candidates within n standard deviations of the top logit; -1 disables it."""
    dynatemp_range: float = 0.0
    """Dynamic temperature: the temperature moves within ± this range with the entropy; 0 disables it."""
    dynatemp_exponent: float = 1.0
    """How the entropy maps onto the dynamic temperature's range."""
    mirostat: int = 0
    """Mirostat version (1 or 2) in place of the truncating samplers; 0 disables it."""
    mirostat_tau: float = 5.0
    """Mirostat's target surprise (cross-entropy)."""
    mirostat_eta: float = 0.1
    """Mirostat's learning rate."""
    samplers: tuple[str, ...] = SAMPLER_NAMES
    """The order llama.cpp applies the samplers in (its `--samplers`); one left out is not applied."""
    seed: int | None = None
    """Fixed seed for a reproducible run; None draws a fresh one per generation."""
    max_tokens: int = 200
    """Stop after this many generated tokens."""
    length: str = "tokens"
    """Where else to stop (writer_stop.py): 'tokens' (max_tokens only), 'sentence' (at the
    end of the first sentence written) or 'paragraph' (at the end of the paragraph)."""
    stop: tuple[str, ...] = ()
    """Stop as soon as the text contains one of these; the stop string is not emitted."""
    heal: bool = True
    """Token healing (healing.py): the prompt backs up over the tokens the cursor may have
    cut, and the first tokens drawn must write that text again. Off: the prompt ends as
    the text does, before the spaces ending it (window.prompt_end)."""
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
        need(
            -10.0 <= self.presence_penalty <= 10.0,
            f"presence penalty must be in [-10, 10], not {self.presence_penalty}",
        )
        need(
            -10.0 <= self.frequency_penalty <= 10.0,
            f"frequency penalty must be in [-10, 10], not {self.frequency_penalty}",
        )
        need(0.0 <= self.dry_multiplier <= 10.0, f"DRY multiplier must be in [0, 10], not {self.dry_multiplier}")
        need(1.0 <= self.dry_base <= 10.0, f"DRY base must be in [1, 10], not {self.dry_base}")
        need(
            0 <= self.dry_allowed_length <= 1000,
            f"DRY allowed length must be a whole number from 0 to 1000, not {self.dry_allowed_length}",
        )
        need(
            self.dry_penalty_last_n >= 0,
            f"DRY window (penalty last n) must be 0 or more, not {self.dry_penalty_last_n}",
        )
        need(
            all(0 < len(b) <= DRY_BREAKER_LIMIT for b in self.dry_sequence_breakers),
            f"a DRY sequence breaker must be 1 to {DRY_BREAKER_LIMIT} characters long",
        )
        need(0.0 <= self.xtc_probability <= 1.0, f"XTC probability must be in [0, 1], not {self.xtc_probability}")
        need(0.0 <= self.xtc_threshold <= 1.0, f"XTC threshold must be in [0, 1], not {self.xtc_threshold}")
        need(0.0 < self.typical_p <= 1.0, f"typical-p must be in (0, 1], not {self.typical_p}")
        need(
            self.top_n_sigma == -1.0 or 0.0 < self.top_n_sigma <= 10.0,
            f"top-n-sigma must be -1 (off) or in (0, 10], not {self.top_n_sigma}",
        )
        need(
            0.0 <= self.dynatemp_range <= 10.0,
            f"dynamic temperature range must be in [0, 10], not {self.dynatemp_range}",
        )
        need(
            0.0 < self.dynatemp_exponent <= 10.0,
            f"dynamic temperature exponent must be in (0, 10], not {self.dynatemp_exponent}",
        )
        need(
            self.mirostat in MIROSTAT_VERSIONS and not isinstance(self.mirostat, bool),
            f"mirostat must be 0 (off), 1 or 2, not {self.mirostat}",
        )
        need(0.0 <= self.mirostat_tau <= 20.0, f"mirostat tau must be in [0, 20], not {self.mirostat_tau}")
        need(0.0 < self.mirostat_eta <= 1.0, f"mirostat eta must be in (0, 1], not {self.mirostat_eta}")
        check_order(self.samplers)
        need(self.seed is None or 0 <= self.seed < 2**32, f"seed must be in [0, 2^32), not {self.seed}")
        need(self.max_tokens >= 1, f"max tokens must be at least 1, not {self.max_tokens}")
        need(all(self.stop), "a stop string cannot be empty")
        need(isinstance(self.heal, bool), f"heal must be true or false, not {self.heal!r}")
        need(check_length(self.length) is None, f"length {check_length(self.length)}")
        return self

    def acting_samplers(self) -> tuple[str, ...]:
        """The samplers of `samplers` that change anything at these values, in order (each
        other one returns at once in llama.cpp); with Mirostat, none of them: llama.cpp
        then applies temperature and Mirostat alone."""
        if self.mirostat:
            return ()
        acting = {
            "penalties": self.repeat_window != 0
            and (self.repeat_penalty != 1.0 or self.frequency_penalty != 0.0 or self.presence_penalty != 0.0),
            "dry": self.dry_multiplier != 0.0 and self.dry_penalty_last_n != 0,
            "top_n_sigma": self.top_n_sigma > 0.0,
            "top_k": self.top_k > 0,
            "typ_p": self.typical_p < 1.0,
            "top_p": self.top_p < 1.0,
            "min_p": self.min_p > 0.0,
            "xtc": self.xtc_probability > 0.0 and self.xtc_threshold <= 0.5,
            "temperature": True,
        }
        return tuple(name for name in self.samplers if acting[name])

    def greedy_draw(self) -> bool:
        """Temperature 0 applied last: the most probable token of what is left, whatever the seed."""
        acting = self.acting_samplers()
        return (
            not self.mirostat
            and self.temperature == 0.0
            and self.dynatemp_range == 0.0
            and bool(acting)
            and acting[-1] == "temperature"
        )

    def applied_chain(self) -> tuple[str, ...]:
        """What llama.cpp applies after the logit bias, in order, ending with the draw: the
        acting samplers then 'dist' (a draw by the probabilities); temperature 0 last is
        'greedy' in its place; with Mirostat, 'temperature' and 'mirostat'."""
        if self.mirostat:
            return ("temperature", "mirostat")
        acting = self.acting_samplers()
        return acting[:-1] + ("greedy",) if self.greedy_draw() else acting + ("dist",)

    def history_length(self) -> int:
        """How many recent tokens the penalties and DRY look at (0 when neither acts)."""
        acting = self.acting_samplers()
        return max(
            self.repeat_window if "penalties" in acting else 0, self.dry_penalty_last_n if "dry" in acting else 0
        )

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


def check_order(names: tuple[str, ...]) -> None:
    """SettingsError unless `names` are llama.cpp sampler names, each at most once."""
    for name in names:
        if name not in SAMPLER_NAMES:
            raise SettingsError(f"samplers: unknown sampler '{name}' (known: {', '.join(SAMPLER_NAMES)})")
    if len(set(names)) != len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise SettingsError(f"samplers: '{repeated}' is listed twice")


def describe_chain(settings: SamplerSettings, biased: bool) -> str:
    """'logit bias → top_k → top_p → temperature → dist': what llama.cpp applies, in order."""
    return " → ".join((("logit bias",) if biased else ()) + settings.applied_chain())


def parse_order(text: str) -> tuple[str, ...]:
    """'penalties;dry;top_k;temperature' (llama.cpp's `--samplers`; commas work too) as a checked order."""
    names = tuple(part.strip() for part in text.replace(",", ";").split(";") if part.strip())
    check_order(names)
    return names


PRESETS: dict[str, SamplerSettings] = {
    "greedy": SamplerSettings(temperature=0.0, top_k=0, top_p=1.0, min_p=0.0, repeat_penalty=1.0, preset="greedy"),
    # The values the author uses for narrative text.
    "prose": SamplerSettings(temperature=0.8, top_k=50, top_p=0.95, min_p=0.0, repeat_penalty=1.0, preset="prose"),
    # text-generation-webui's "Creative": min-p 0.02 and XTC at probability 0.5, nothing else truncating.
    "creative": SamplerSettings(
        temperature=1.0, top_k=0, top_p=1.0, min_p=0.02, xtc_probability=0.5, xtc_threshold=0.1, preset="creative"
    ),
    # The prose values with DRY at the multiplier llama.cpp's docs recommend, its base and allowed length.
    "anti-loop": SamplerSettings(
        temperature=0.8,
        top_k=50,
        top_p=0.95,
        min_p=0.0,
        dry_multiplier=0.8,
        dry_base=1.75,
        dry_allowed_length=2,
        preset="anti-loop",
    ),
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


def describe_bias(
    bias: LogitBias,
    byte_token_ids: tuple[int, ...],
    gettext: Callable[[str], str] = str,
    number: Callable[[float, str], str] = format,
) -> str:
    """One line for panels and exports: 'byte tokens 16000–16255 banned (256); 42: +2.0'. The
    app's side panel passes its language's `gettext` and `number` (app/i18n; babel.cfg extracts
    the strings here); an export stays English."""
    parts = []
    if bias.ban_byte_tokens and byte_token_ids:
        banned = gettext("byte tokens {ranges} banned ({count})")
        parts.append(banned.format(ranges=describe_ranges(byte_token_ids), count=len(byte_token_ids)))
    elif byte_token_ids:
        parts.append(gettext("byte tokens allowed"))
    parts.extend(f"{token_id}: {number(value, '+g')}" for token_id, value in bias.entries)
    return "; ".join(parts) if parts else gettext("none")
