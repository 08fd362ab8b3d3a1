"""What a generation asks for, frozen when the key is pressed: the request, the prompt its
worker prepares, and the ids that tell requests apart. Panes make requests; the worker's
messages and its loop are generation.py's, which the first frame does not need."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

from scriptorium.inference.core.settings import LogitBias, SamplerSettings
from scriptorium.inference.core.speculation import OFF, Speculation

from scriptorium.app.tui import key_timing

if TYPE_CHECKING:
    from scriptorium.inference.window.window import Window

_request_ids = itertools.count(1)


def new_request_id() -> int:
    """An id no request of this run has: a generation of an earlier run, undecided, stands for itself by it."""
    return next(_request_ids)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A prompt made in the generation's worker, and what the author should know of it."""

    prompt: str
    window: Window | None = None
    note: str = ""
    """Said to the author when the prompt is ready ('' for nothing), e.g. turns left out."""


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """Everything one generation uses, frozen when the key is pressed: a nudge made
    while it streams applies to the next one."""

    kind: str
    """'draft' (continue the draft) or 'chat' (the assistant's reply)."""
    prompt: str
    settings: SamplerSettings
    bias: LogitBias
    top_n: int
    lora_scale: float | None = None
    """The adapter scale to apply before generating; None when no adapter is loaded."""
    special: bool = False
    """Parse control-token text in the prompt (chat templates write <start_of_turn> etc.)."""
    id: int = 0
    """Tells this generation's messages apart from a cancelled one still finishing."""
    window: Window | None = None
    """What of the draft the prompt holds, with memory and note (a draft continuation)."""
    speculation: Speculation = OFF
    """Speculative decoding (speculative.py): the same tokens with the same numbers, sooner."""
    prepare: Callable[[], Prepared] | None = None
    """Makes the prompt in the worker, before the engine starts (then `prompt` is ''): fitting
    a prompt to the window counts tokens, which asks the engine's process or a server, and
    the key that asked for it must not wait for the answer. It raises ScriptoriumError."""
    asked_at: float = field(default_factory=key_timing.asked_now, compare=False)
    """When the key was pressed (key_timing.now): the Speed panel's wait for the first token starts here."""

    @classmethod
    def create(cls, **fields: object) -> "GenerationRequest":
        return cls(id=next(_request_ids), **fields)  # type: ignore[arg-type]


def new_request(
    kind: str,
    prompt: str | Callable[[], Prepared],
    sampler: SamplerSettings,
    bias: LogitBias,
    top_n: int,
    lora_scale: float | None,
    *,
    special: bool = False,
    extra_stop: tuple[str, ...] = (),
    window: Window | None = None,
    speculation: Speculation = OFF,
) -> GenerationRequest:
    """A request with the sampler as it is right now; `extra_stop` adds to its stop strings.
    `prompt` is the prompt, or what makes it in the worker (GenerationRequest.prepare)."""
    if extra_stop:
        sampler = replace(sampler, stop=sampler.stop + tuple(s for s in extra_stop if s not in sampler.stop))
    prepare = None if isinstance(prompt, str) else prompt
    return GenerationRequest.create(
        kind=kind,
        prompt=prompt if isinstance(prompt, str) else "",
        settings=sampler,
        bias=bias,
        top_n=top_n,
        lora_scale=lora_scale,
        special=special,
        window=window,
        prepare=prepare,
        speculation=speculation,
    )


def prepared_once(prepare: Callable[[], Prepared]) -> Callable[[], Prepared]:
    """`prepare`, made at the first call and kept: for requests that share one prompt (the
    candidates dialog runs them one after another)."""
    kept: list[Prepared] = []

    def once() -> Prepared:
        if not kept:
            kept.append(prepare())
        return kept[0]

    return once
