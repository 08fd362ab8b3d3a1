"""What a session records of each generation: the model and adapter it ran on, the
sampler and bias, every token with its probability and alternatives, and what became of
the text (accepted, partly accepted, rejected). Plain mutable dataclasses, as in model.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from scriptorium.inference.window.lore import Fired
from scriptorium.inference.core.settings import LogitBias, SamplerSettings, describe_bias, describe_chain

Outcome = Literal["pending", "accepted", "partly_accepted", "rejected"]
OUTCOMES: tuple[str, ...] = ("pending", "accepted", "partly_accepted", "rejected")
_SAMPLER_DEFAULTS = {
    **{key: value for key, value in SamplerSettings().as_dict().items() if key != "preset"},
    "heal": False,  # a file from before token healing: its prompts were not healed
}
REPLY_ENDINGS = {"cancelled": "stopped", "error": "failed"}
"""stop_reason -> how the chat marks a reply that did not end as the model chose: stopped
(Esc, or the app closing while it streamed) or failed midway (a server gone, an engine
restarted). The live chat and a reopened one mark it alike."""
PROBABILITY_DIGITS = 6
"""Token probabilities are recorded to this many significant digits: more only bloat the
file. Significant, not decimal places: a token sampled at p 3e-7 (a bias, a high
temperature) would otherwise be recorded as impossible, p 0."""


def recorded_p(p: float) -> float:
    return float(f"{p:.{PROBABILITY_DIGITS}g}")


def now_iso() -> str:
    """Local time with its UTC offset, to the second: readable, sortable within one zone."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


@dataclass(kw_only=True)
class ModelRef:
    """The model file a generation ran on."""

    path: str
    name: str
    """general.name from the GGUF, else the file name without .gguf."""
    size: int
    """File size in bytes."""
    sha256: str | None
    """SHA-256 of the whole file (app/model_hash.py); None if it was not computed."""
    quantization: str = ""
    """The GGUF file type, e.g. 'Q4_K_M'."""
    architecture: str = ""
    parameters: int = 0

    @classmethod
    def from_facts(cls, facts: Any, sha256: str | None) -> "ModelRef":
        """From an inference.core.model_facts.ModelFacts (engine.facts)."""
        return cls(
            path=str(facts.path),
            name=facts.name,
            size=facts.file_size,
            sha256=sha256,
            quantization=facts.file_type,
            architecture=facts.architecture,
            parameters=facts.parameters,
        )


@dataclass(kw_only=True)
class LoraRef:
    """The LoRA adapter applied during a generation, and its scale."""

    path: str
    name: str
    size: int
    sha256: str | None
    scale: float

    @classmethod
    def from_facts(cls, facts: Any, scale: float, sha256: str | None) -> "LoraRef":
        """From an inference.core.model_facts.AdapterFacts (engine.adapter) and engine.lora_scale."""
        path = Path(facts.path)
        return cls(path=str(path), name=path.stem, size=facts.file_size, sha256=sha256, scale=float(scale))


@dataclass(kw_only=True)
class BiasRecord:
    """The logit bias as applied: the author's entries plus the one-line summary for exports."""

    ban_byte_tokens: bool
    entries: tuple[tuple[int, float], ...] = ()
    summary: str = ""
    """describe_bias() at generation time: it needs the vocabulary, which a file does not keep."""

    @classmethod
    def from_bias(cls, bias: LogitBias, byte_token_ids: tuple[int, ...]) -> "BiasRecord":
        return cls(
            ban_byte_tokens=bias.ban_byte_tokens,
            entries=tuple(bias.entries),
            summary=describe_bias(bias, byte_token_ids),
        )


Alternative = tuple[int, str, float, bool]
"""One of a recorded token's alternatives: (id, text, p, banned), in the file's order. A
plain tuple of plain values, which Python's garbage collector stops tracking: a long
session holds hundreds of thousands of them (twelve a token), and the collector's full
passes, which can come while tokens stream, would otherwise walk them all."""


@dataclass(kw_only=True)
class TokenRecord:
    """One sampled token with its probability and the top alternatives (for issue 6)."""

    id: int
    text: str
    p: float
    """NO_PROBABILITY (null in the file) where the backend gave none: a speculating llama-server's
    token from a verifying pass (accepted from its draft, or sampled after the guesses)."""
    top: tuple[Alternative, ...] = ()
    piece: bytes = b""
    """The token's own bytes where its text is not them (b"" elsewhere, and in older files):
    a byte token's text is '' or the character it completes, and its bytes join into it."""
    kept: tuple[tuple[int, float], ...] = ()
    """What the sampler chain kept: (id, probability after the chain), likeliest first
    (TokenEvent.kept); () where unknown (llama-server, older files)."""
    removed: tuple[tuple[int, str], ...] = ()
    """(id, sampler) for each of `top` a sampler took out."""
    pushed: tuple[tuple[int, str, float], ...] = ()
    """(id, sampler, change of its logit) for each of `top` the bias, the penalties or DRY moved."""
    drafted: bool = False
    """Guessed by speculative decoding and accepted (TokenEvent.drafted); its numbers are its own."""
    healing: "HealingRecord | None" = None
    """At a step token healing held (TokenEvent.healing): what it had to write again and
    what was allowed; None elsewhere and in older files."""

    @classmethod
    def from_event(cls, event: Any) -> "TokenRecord":
        """From an inference.core.events.TokenEvent."""
        top = tuple((c.id, c.text, recorded_p(c.p), c.banned) for c in event.top)
        healing = getattr(event, "healing", None)
        piece = b"" if event.text.encode("utf-8") == event.piece else event.piece
        kept = tuple((token, recorded_p(p)) for token, p in event.kept)
        return cls(
            id=event.id,
            text=event.text,
            p=recorded_p(event.p),
            top=top,
            piece=piece,
            kept=kept,
            removed=event.removed,
            pushed=event.pushed,
            drafted=getattr(event, "drafted", False),
            healing=HealingRecord.from_healing(healing) if healing is not None else None,
        )


@dataclass(kw_only=True)
class HealingRecord:
    """A healed step as the session keeps it (inference.core.events.Healing)."""

    rest: str
    """The text still to be written again at this step."""
    allowed_count: int
    mass: float
    """The model's raw probability of the allowed tokens together (renormalises theirs)."""
    allowed: tuple[Alternative, ...]
    """The most probable allowed tokens, with the model's raw probability."""

    @classmethod
    def from_healing(cls, healing: Any) -> "HealingRecord":
        return cls(
            rest=healing.rest,
            allowed_count=healing.allowed_count,
            mass=recorded_p(healing.mass),
            allowed=tuple((c.id, c.text, recorded_p(c.p), c.banned) for c in healing.allowed),
        )


@dataclass(kw_only=True)
class Generation:
    """One run of the model: how it was made, what it produced, what the author kept."""

    id: str
    """'g1', 'g2', ... in the order generations started within the session."""
    kind: Literal["continue", "chat"]
    started_at: str
    model: ModelRef
    lora: LoraRef | None
    """The adapter the author's scale applies to."""
    sampler: dict[str, Any]
    """SamplerSettings.as_dict(): kept as a dict so older files survive new settings."""
    bias: BiasRecord
    seed: int | None = None
    """The seed the sampler used (drawn at random when the settings had none)."""
    anchor: int | None = None
    """Draft: the offset the suggestion was generated for. Chat: the index of the turn it answers."""
    finished_at: str | None = None
    text: str = ""
    """The whole suggestion (stop string excluded)."""
    stop_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    outcome: Outcome = "pending"
    accepted_text: str | None = None
    """What the author kept: all of `text` (accepted), a part (partly_accepted) or None."""
    decided_at: str | None = None
    tokens: list[TokenRecord] | None = None
    """Per-token probabilities and alternatives, when recorded; None when not."""
    origin: str = ""
    """Where the model ran: '' on this machine, else the llama-server ('llama-server BUILD at URL'):
    `model.path` is then a path on the server's machine."""
    other_loras: tuple[LoraRef, ...] = ()
    """The further adapters a llama-server started with several `--lora` applied, each at the server's scale."""
    lore: tuple[Fired, ...] = ()
    """The lorebook entries that fired for its prompt: those in it, and those dropped for room."""
    arithmetic: dict[str, Any] | None = None
    """Arithmetic.as_dict() of the backend that ran it (flash attention, KV types, threads):
    the probabilities depend on it. None in sessions written before it was recorded."""
    speculation: dict[str, Any] | None = None
    """SpeculationCounts.as_dict() when speculative decoding was on (the guesser, what it drafted
    and what was accepted); None when it was off, and in sessions written before it existed."""
    healed: str = ""
    """The text the prompt backed up over and the model wrote again before `text` (token
    healing, inference/local/healing.py): " mo" when "lungo il mo" was continued with "lo"; ''
    when nothing was healed (and in older files)."""
    fim_after: int = 0
    """Fill in the middle: how many characters of the text after the cursor the insert's prompt
    carried (inference/window/window.py Fim); 0 for a plain continuation (and in older files)."""

    @property
    def ending(self) -> str:
        """How its reply ended when not as the model chose, as the chat marks it: see REPLY_ENDINGS."""
        return REPLY_ENDINGS.get(self.stop_reason or "", "")

    def arithmetic_text(self) -> str:
        """'flash attention on, KV f16' (threads aside: they do not change the numbers), or 'unknown'."""
        values = self.arithmetic or {}
        if not isinstance(values.get("flash_attn"), bool):
            return "unknown"
        type_k, type_v = values.get("type_k", "?"), values.get("type_v", "?")
        kv = type_k if type_k == type_v else f"K {type_k} / V {type_v}"
        return f"flash attention {'on' if values['flash_attn'] else 'off'}, KV {kv}"

    def sampler_values(self) -> dict[str, Any]:
        """The recorded settings, with the defaults for those a file written before they
        existed leaves out (DRY, XTC, ..., the chain's order): those samplers were off,
        and the order of the others was llama.cpp's default, as the defaults say."""
        return {**_SAMPLER_DEFAULTS, **self.sampler}

    def chain_text(self) -> str:
        """The chain llama.cpp applied, in order ('logit bias → top_k → ... → dist'), or 'unknown'."""
        settings = self.sampler_settings()
        if settings is None:
            return "unknown"
        # The summary says "banned" only where the vocabulary had byte tokens to ban.
        return describe_chain(settings, biased=bool(self.bias.entries) or "banned" in self.bias.summary)

    def sampler_settings(self) -> SamplerSettings | None:
        """The settings as the typed object, or None if this version cannot read them."""
        values = dict(self.sampler)
        for key in ("stop", "dry_sequence_breakers", "samplers"):
            if isinstance(values.get(key), list):
                values[key] = tuple(values[key])
        try:
            return SamplerSettings(**values)
        except TypeError:
            return None

    def add_token(self, event: Any) -> None:
        """Record a TokenEvent's probability and alternatives."""
        if self.tokens is None:
            self.tokens = []
        self.tokens.append(TokenRecord.from_event(event))

    def finish(self, done: Any) -> None:
        """Record an inference.core.events.GenerationDone (also for a cancelled generation)."""
        self.finished_at = now_iso()
        self.text = done.text
        self.stop_reason = done.stop_reason
        self.prompt_tokens = done.prompt_tokens
        self.completion_tokens = done.completion_tokens
        self.healed = getattr(done, "healed", "")
        if done.seed is not None:
            self.seed = done.seed
        # The thread counts move while the model writes (measured): those it ended on, and why.
        threads = getattr(done, "threads", None)
        if threads is not None and self.arithmetic is not None:
            self.arithmetic = {**self.arithmetic, **threads.as_dict()}
        speculation = getattr(done, "speculation", None)
        self.speculation = speculation.as_dict() if speculation is not None else None

    def interrupt(self, text: str, reason: str = "cancelled") -> None:
        """Record a generation that ended without its summary as the author saw it, with the
        text drawn so far: still streaming as the app closed ("cancelled", as a stop key
        records it), or failed midway ("error": a server gone, an engine restarted)."""
        self.finished_at = now_iso()
        self.text = text
        self.stop_reason = reason
        self.completion_tokens = len(self.tokens or ())

    def record_kept(self, kept: str) -> None:
        """Add `kept` to what the author took from this suggestion; recompute the outcome."""
        self.accepted_text = (self.accepted_text or "") + kept
        self.outcome = "accepted" if self.accepted_text == self.text else "partly_accepted"
        self.decided_at = now_iso()

    def take_back(self, length: int) -> None:
        """The last `length` characters kept were undone: they wait in the suggestion again."""
        kept = (self.accepted_text or "")[: len(self.accepted_text or "") - length]
        self.accepted_text = kept or None
        self.outcome, self.decided_at = ("partly_accepted", now_iso()) if kept else ("pending", None)

    def reject(self) -> None:
        self.outcome = "rejected"
        self.accepted_text = None
        self.decided_at = now_iso()

    def undecide(self) -> None:
        """A rejection taken back: the suggestion waits for the author again."""
        self.outcome, self.decided_at = "pending", None

    def lora_text(self) -> str:
        """'style ×0.5', every adapter applied ('style ×0.5 + tone ×1'), or 'none'."""
        loras = [self.lora, *self.other_loras] if self.lora else []
        return " + ".join(f"{lora.name} ×{lora.scale:g}" for lora in loras) or "none"

    def same_settings(self, other: "Generation") -> bool:
        """Same model file, LoRA adapters and scales, sampler settings, bias and arithmetic (the drawn seed aside)."""
        return settings_key(self) == settings_key(other)


def settings_key(generation: Generation) -> tuple[Any, ...]:
    model = generation.model
    lora = generation.lora
    return (
        model.sha256 or model.path,
        (lora.sha256 or lora.path, lora.scale, tuple((o.sha256 or o.path, o.scale) for o in generation.other_loras))
        if lora
        else None,
        tuple(sorted((k, repr(v)) for k, v in generation.sampler_values().items())),
        (generation.bias.ban_byte_tokens, generation.bias.entries),
        generation.arithmetic_text(),
    )
