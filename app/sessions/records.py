"""What a session records of each generation: the model and adapter it ran on, the
sampler and bias, every token with its probability and alternatives, and what became of
the text (accepted, partly accepted, rejected). Plain mutable dataclasses, as in model.py,
whose fields declare their members of the session file (members.py); a token record, read
and written in bulk, has a fast path of its own (token_records.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from scriptorium.inference.window.lore import Fired
from scriptorium.inference.core.settings import LogitBias, SamplerSettings, describe_bias, describe_chain

from scriptorium.app.sessions.lorebook_file import fired_from_json
from scriptorium.app.sessions.members import FormatError, checked, member
from scriptorium.app.sessions.token_records import HealingRecord as HealingRecord
from scriptorium.app.sessions.token_records import TokenRecord, read_tokens, tokens_json
from scriptorium.app.sessions.token_records import recorded_p as recorded_p

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


def _bias_entries(value: Any, where: str, _: dict[str, Any]) -> tuple[tuple[int, float], ...]:
    entries = []
    for i, pair in enumerate(checked(value, (list,), where)):
        if not (
            isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and isinstance(pair[1], (int, float))
        ):
            raise FormatError(f"{where}[{i}] is not a [token_id, bias] pair")
        entries.append((pair[0], float(pair[1])))
    return tuple(entries)


@dataclass(kw_only=True)
class BiasRecord:
    """The logit bias as applied: the author's entries plus the one-line summary for exports."""

    ban_byte_tokens: bool
    entries: tuple[tuple[int, float], ...] = member(default=(), read=_bias_entries)
    """(token id, bias) pairs; [token_id, bias] in the file."""
    summary: str = ""
    """describe_bias() at generation time: it needs the vocabulary, which a file does not keep."""

    @classmethod
    def from_bias(cls, bias: LogitBias, byte_token_ids: tuple[int, ...]) -> "BiasRecord":
        return cls(
            ban_byte_tokens=bias.ban_byte_tokens,
            entries=tuple(bias.entries),
            summary=describe_bias(bias, byte_token_ids),
        )


def fired_lore(value: Any, where: str, _: dict[str, Any]) -> tuple[Fired, ...]:
    """A generation's `lore`: an item that is not one only loses itself (lorebook_file.fired_from_json)."""
    return fired_from_json(value)


def fired_json(lore: tuple[Fired, ...]) -> list[dict[str, Any]]:
    return [fired.as_json() for fired in lore]


@dataclass(kw_only=True)
class Generation:
    """One run of the model: how it was made, what it produced, what the author kept."""

    id: str
    """'g1', 'g2', ... in the order generations started within the session."""
    kind: Literal["continue", "chat"]
    started_at: str
    finished_at: str | None = None
    model: ModelRef
    lora: LoraRef | None
    """The adapter the author's scale applies to."""
    sampler: dict[str, Any]
    """SamplerSettings.as_dict(): kept as a dict so older files survive new settings."""
    seed: int | None = None
    """The seed the sampler used (drawn at random when the settings had none)."""
    bias: BiasRecord = member(key="logit_bias")
    anchor: int | None = None
    """Draft: the offset the suggestion was generated for. Chat: the index of the turn it answers."""
    text: str = ""
    """The whole suggestion (stop string excluded)."""
    stop_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    outcome: Outcome = "pending"
    accepted_text: str | None = None
    """What the author kept: all of `text` (accepted), a part (partly_accepted) or None."""
    decided_at: str | None = None
    tokens: list[TokenRecord] | None = member(default=None, read=read_tokens, write=tokens_json)
    """Per-token probabilities and alternatives, when recorded; None when not. Read and
    written by the token records' own fast path (token_records.py)."""
    arithmetic: dict[str, Any] | None = None
    """Arithmetic.as_dict() of the backend that ran it (flash attention, KV types, threads):
    the probabilities depend on it. None in sessions written before it was recorded."""
    origin: str = member(default="", optional=True)
    """Where the model ran: '' on this machine, else the llama-server ('llama-server BUILD at URL'):
    `model.path` is then a path on the server's machine."""
    other_loras: tuple[LoraRef, ...] = member(default=(), optional=True)
    """The further adapters a llama-server started with several `--lora` applied, each at the server's scale."""
    lore: tuple[Fired, ...] = member(default=(), optional=True, read=fired_lore, write=fired_json)
    """The lorebook entries that fired for its prompt: those in it, and those dropped for room."""
    speculation: dict[str, Any] | None = member(default=None, optional=True)
    """SpeculationCounts.as_dict() when speculative decoding was on (the guesser, what it drafted
    and what was accepted); None when it was off, and in sessions written before it existed."""
    healed: str = member(default="", optional=True)
    """The text the prompt backed up over and the model wrote again before `text` (token
    healing, inference/local/healing.py): " mo" when "lungo il mo" was continued with "lo"; ''
    when nothing was healed (and in older files)."""
    fim_after: int = member(default=0, optional=True)
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
