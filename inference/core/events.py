"""Plain events yielded by a generation: a test, the CLI or the TUI consume the same stream."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

# Re-exported: the events' users have always found them here.
from .probability import NO_PROBABILITY as NO_PROBABILITY, has_probability as has_probability

_Event = TypeVar("_Event")


def _pickled_by_fields(cls: type[_Event]) -> type[_Event]:
    """Pickle as a call to the class with the fields in order. What dataclasses give a
    frozen, slotted class instead looks its fields up again for every object, both ways;
    tokens cross the engine's pipe by the thousand, each with its candidates, and the
    child's share of that cost is spent between two decode steps."""
    values = operator.attrgetter(*(f.name for f in fields(cls)))  # type: ignore[arg-type]

    def __reduce__(self: Any) -> tuple[type[_Event], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment,method-assign]
    return cls


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Candidate:
    """One of the top candidates at a step, as the model saw it before sampling."""

    id: int
    text: str
    p: float
    """Softmax of llama.cpp's raw logits (no bias, penalty or temperature applied)."""
    banned: bool
    """True when the logit bias forbids this token (bias of -100 or less)."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class Healing:
    """A step held to the text the prompt backed up over (token healing, healing.py): only
    the tokens that write it again, or a beginning of it, were allowed."""

    rest: str
    """The text still to be written again at this step (" mo" for "lungo il mo")."""
    allowed_count: int
    """How many tokens of the vocabulary were allowed."""
    mass: float
    """The model's raw probability of all of them together: dividing by it renormalises
    a raw probability over the allowed set, as the chain's draw saw it."""
    allowed: tuple[Candidate, ...]
    """The most probable allowed tokens, with the model's raw probability (`p`), most probable first."""


@dataclass(frozen=True, slots=True)
class KVCacheUsage:
    """The KV cache of the context, sized as llama.cpp allocates it. The byte figures are
    None where they cannot be derived exactly (a remote server reports neither its cache
    types nor the model's layers and heads): unknown, never guessed."""

    tokens: int | None
    """Positions holding a token now; None while unknown (a llama-server with several slots,
    before this app's first generation there shows which slot is its)."""
    n_ctx: int
    bytes_allocated: int | None
    """What llama.cpp allocated for K and V of every layer."""
    bytes_used: int | None
    """The part of the allocation that holds the current tokens."""
    bytes_per_token: int | None
    """K+V bytes one more token costs across all layers (while the sliding windows are not full)."""
    window_tokens: int | None = None
    """Sliding-window models: the tokens their window layers' cache holds; past that many
    those layers recycle cells and stop growing. None without such layers (or unknown)."""
    bytes_per_token_past_window: int | None = None
    """What one more token costs once `window_tokens` are held: the other layers' K+V only."""


@dataclass(frozen=True, slots=True)
class ContextTrimmed:
    """The prompt did not fit with max_tokens in n_ctx: its oldest tokens were dropped."""

    dropped_tokens: int
    kept_tokens: int


@dataclass(frozen=True, slots=True)
class PrefillProgress:
    """Emitted after each prefill batch, so a long prompt shows progress."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class PrefillDone:
    """The prompt is in the KV cache; decoding starts."""

    prompt_tokens: int
    reused_tokens: int
    """Tokens kept from the previous request's cache (common prefix), not computed again."""
    prefill_tokens: int
    """Tokens actually evaluated: prompt_tokens - reused_tokens."""
    prefill_ms: float
    kv_cache: KVCacheUsage
    cache_reuse: str = "prefix"
    """How the cache was reused: 'prefix', 'shifted' (the window slid and the cache moved
    with it), 'refilled' (it slid, but the model cannot shift: evaluated again) or 'fresh'
    (a fixed seed: only what an evaluation from an empty cache left; fresh_prefix.py)."""
    shifted_tokens: int = 0
    """Of reused_tokens, those moved back by the shift."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class TokenEvent:
    """A sampled token."""

    index: int
    """0 for the first generated token."""
    id: int
    text: str
    """The characters this token completes; '' while a UTF-8 sequence is still open (one
    that never completes is dropped, text.py). A byte that can never start a character
    is U+FFFD; the candidates (`top`) name it by its byte, <0xFF>."""
    p: float
    """Probability of this token under the model: softmax of the raw logits; NO_PROBABILITY
    where the backend gave none (a speculating llama-server's token from a verifying pass)."""
    top: tuple[Candidate, ...]
    """The top-N candidates by raw probability, most probable first."""
    elapsed_ms: float
    """Since the generation started."""
    kv_tokens: int
    """Tokens in the KV cache after this step."""
    piece: bytes = b""
    """The token's own bytes, as the vocabulary holds them: one byte for a byte token, so
    a reader can join the bytes of a character the vocabulary spells in several (`text`
    is '' until the last one). From llama-server, the bytes it sent with the token: the
    whole character's, on the token that completes it."""
    kept: tuple[tuple[int, float], ...] = ()
    """What the sampler chain kept: the likeliest survivors (as many as `top`), with the
    probability the token was drawn by (after bias, penalties, truncation, temperature),
    most probable first; () where unknown (llama-server, older sessions)."""
    removed: tuple[tuple[int, str], ...] = ()
    """(id, sampler) for each of `top` a sampler took out (top_k, xtc, temperature at 0...)."""
    pushed: tuple[tuple[int, str, float], ...] = ()
    """(id, sampler, change of its logit) for each of `top` the logit bias, the penalties or DRY moved."""
    drafted: bool = False
    """Guessed by speculative decoding and accepted: sampled from a verifying pass's row, equal
    to the guess there. Its numbers are its own position's, as any token's."""
    healing: Healing | None = None
    """At a step held by token healing: what was allowed, and the model's numbers for it.
    `kept`, `removed` and `pushed` then follow the allowed candidates through the chain."""


@dataclass(frozen=True, slots=True)
class ThreadsChosen:
    """The thread counts llama.cpp runs with, and why (thread_choice.py): sent when the
    measured choice changes, and with every GenerationDone."""

    n_threads: int
    """Threads decoding one token at a time."""
    n_threads_batch: int
    """Threads evaluating prompt batches."""
    cores: int
    """The cores this engine may run on."""
    auto: bool
    """The decode count is chosen by measurement (threads = "auto"); False when set."""
    reason: str = ""
    """Why the decode count is the count: 'set', 'measuring', 'one core', '2 were slower
    while other work ran', '1 was slower'."""
    reason_batch: str = ""
    """The same for prompt batches."""

    def describe(self) -> str:
        """'threads 1 of 2 (auto: 2 were slower while other work ran)', or '2 threads' when set."""
        if not self.auto:
            text = f"{self.n_threads} thread{'s' if self.n_threads != 1 else ''}"
            return text + (f" ({self.n_threads_batch} for prompts)" if self.n_threads_batch != self.n_threads else "")
        text = f"threads {self.n_threads} of {self.cores} (auto: {self.reason})"
        if self.n_threads_batch != self.n_threads:
            text += f", {self.n_threads_batch} for prompts"
        return text

    def as_dict(self) -> dict[str, object]:
        return {
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads_batch,
            "threads_auto": self.auto,
            "threads_reason": self.reason if self.auto else None,
            "cores": self.cores,
        }


@dataclass(frozen=True, slots=True)
class SpeculationCounts:
    """What speculative decoding did in one generation (speculative.py)."""

    guesser: str
    """'lookup' or 'draft'."""
    drafted: int
    """Tokens guessed and checked in a verifying pass."""
    accepted: int
    """Of them, those the model's own sampling drew too: kept without a decode of their own."""
    passes: int
    """Verifying passes (one llama_decode each)."""
    probabilities: bool = True
    """Whether accepted tokens carry their probabilities (a llama-server gives them none, nor the
    token each verifying pass samples after them)."""

    @property
    def acceptance(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def tokens_per_pass(self) -> float:
        """Tokens each verifying pass gave: its accepted guesses and the one sampled after them."""
        return (self.accepted + self.passes) / self.passes if self.passes else 0.0

    def describe(self) -> str:
        """'lookup: 40 of 52 guesses accepted (77%), 3.1 tokens a pass'."""
        if not self.drafted:
            return f"{self.guesser}: nothing drafted"
        text = f"{self.guesser}: {self.accepted} of {self.drafted} guesses accepted ({self.acceptance:.0%})"
        if self.passes:
            text += f", {self.tokens_per_pass:.1f} tokens a pass"
        if not self.probabilities:
            text += "; the server gives the tokens of its verifying passes no probabilities"
        return text

    def as_dict(self) -> dict[str, object]:
        return {
            "guesser": self.guesser,
            "drafted": self.drafted,
            "accepted": self.accepted,
            "passes": self.passes,
            "acceptance": round(self.acceptance, 4),
            "tokens_per_pass": round(self.tokens_per_pass, 3),
            "probabilities": self.probabilities,
        }


@dataclass(frozen=True, slots=True)
class GenerationDone:
    """The last event of every generation, including a cancelled one."""

    stop_reason: str
    """'eos', 'length', 'stop' (a stop string), 'sentence' or 'paragraph' (it ended where the
    length mode stops, writer_stop.py), 'cancelled' or 'context' (n_ctx full)."""
    prompt_tokens: int
    completion_tokens: int
    reused_tokens: int
    prefill_ms: float
    ttft_ms: float
    """From the request to the first sampled token; 0 when none was sampled (cancelled)."""
    decode_ms: float
    """From the first sampled token to the last, an end-of-generation token included:
    completion_tokens - 1 decode steps, or completion_tokens when the model ended it."""
    decode_tokens_per_s: float
    prefill_tokens_per_s: float
    kv_cache: KVCacheUsage
    text: str = ""
    """The whole completion, stop string excluded."""
    tail_text: str = ""
    """Text released only at the end: held back while it might have begun a stop string
    (an unfinished UTF-8 sequence is dropped, never released). Append it after the token
    texts."""
    seed: int | None = None
    """The seed the sampler actually used (the random one drawn when none was set)."""
    trimmed_tokens: int = field(default=0)
    cache_reuse: str = "prefix"
    """As PrefillDone.cache_reuse."""
    shifted_tokens: int = 0
    threads: ThreadsChosen | None = None
    """The thread counts in use as it ended; None where the backend does not say (a llama-server)."""
    speculation: SpeculationCounts | None = None
    """What speculative decoding drafted and accepted; None when it was off."""
    healed: str = ""
    """The text the prompt backed up over and the model wrote again (token healing,
    healing.py): before the completion's `text`, which holds none of it; '' without healing."""


@_pickled_by_fields
@dataclass(frozen=True, slots=True)
class TokenScore:
    """How probable the model found one token of given text, given the text before it."""

    index: int
    """Position of the token in the scored text's tokens (BOS excluded)."""
    id: int
    text: str
    start: int
    """Character offset in the scored text where this token's characters begin."""
    p: float
    top: tuple[Candidate, ...]
    """What the model expected there instead, most probable first."""


@dataclass(frozen=True, slots=True)
class ScoreProgress:
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ScoreDone:
    tokens: int
    """Tokens scored (all of the text's tokens but a leading BOS)."""
    elapsed_ms: float
    cancelled: bool
    trimmed_tokens: int = 0
    """Leading tokens not scored because the text is longer than the context."""
    kv_cache: KVCacheUsage | None = None
    """The cache after scoring: it holds the scored text (if cancelled, the chunks scored before)."""


Event = (
    ContextTrimmed
    | PrefillProgress
    | PrefillDone
    | TokenEvent
    | ThreadsChosen
    | GenerationDone
    | TokenScore
    | ScoreProgress
    | ScoreDone
)
