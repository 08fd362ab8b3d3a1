"""Side-by-side candidates (issue 6): several continuations of one point, each with its
own seed, so the author picks instead of re-rolling one at a time.

Only data and rules live here; the dialog is screens/candidates_screen.py and the draft
side (the key, the versions) is widgets/draft_candidates.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from scriptorium.inference.core.probability import has_probability
from scriptorium.inference.core.settings import PRESETS, SamplerSettings

from scriptorium.app.tui.branches import (
    CANDIDATE_LABEL,
    move_version,
    start_version,
    with_break,
    with_writer,
    written_on_from,
)
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.app.tui.token_spans import TokenSource, add_records, close_records
from scriptorium.app.config.tui_settings import MAX_CANDIDATES
from scriptorium.app.i18n.language import ENGLISH, Language

if TYPE_CHECKING:
    from scriptorium.inference.core.events import GenerationDone, TokenEvent

    from scriptorium.app.tui.branches import Ghost

__all__ = ["MAX_CANDIDATES", "Candidate", "candidate_sampler", "new_candidate", "next_seed", "put_on_ghost"]

SAMPLED_FOR_GREEDY = "prose"
"""The preset whose sampling the candidates borrow when the author's sampler is greedy."""

_SEED_SPACE = 2**32


def candidate_sampler(sampler: SamplerSettings, language: Language = ENGLISH) -> tuple[SamplerSettings, str | None]:
    """The sampler the candidates use, and a note for the author when it is not theirs.

    With temperature 0 every seed writes the same text, so N candidates would be N
    copies: an author asking for candidates wants variety, so these borrow the prose
    preset's sampling (their own sampler stays greedy for everything else). Length,
    stop strings and penalties stay the author's."""
    if sampler.temperature > 0:
        return sampler, None
    sampled = PRESETS[SAMPLED_FOR_GREEDY]
    borrowed = replace(
        sampler,
        temperature=sampled.temperature,
        top_k=sampled.top_k,
        top_p=sampled.top_p,
        min_p=sampled.min_p,
        preset=sampled.preset,
    ).validated()
    number = language.number
    note = language.gettext(
        "Greedy sampling writes the same text whatever the seed, so these candidates use the "
        "{preset} preset's sampling (temperature {temperature}, top-k {top_k}, "
        "top-p {top_p}). Your sampler stays greedy."
    ).format(
        preset=sampled.preset,
        temperature=number(sampled.temperature, "g"),
        top_k=sampled.top_k,
        top_p=number(sampled.top_p, "g"),
    )
    return borrowed, note


def next_seed(sampler: SamplerSettings, taken: list[int], rng: random.Random | None = None) -> int:
    """A seed no other candidate has. A fixed seed gives seed, seed+1, …, so the first
    candidate is exactly what continue would write and a run can be repeated; otherwise
    the seeds are fresh random ones."""
    if sampler.seed is not None:
        seed = (sampler.seed + len(taken)) % _SEED_SPACE
        while seed in taken:
            seed = (seed + 1) % _SEED_SPACE
        return seed
    rng = rng or random.SystemRandom()
    while (seed := rng.randrange(_SEED_SPACE)) in taken:
        pass
    return seed


@dataclass(slots=True)
class Candidate:
    """One continuation as it streams in."""

    request: GenerationRequest
    text: str = ""
    events: list[TokenEvent] = field(default_factory=list)
    done: GenerationDone | None = None
    error: str | None = None
    started: bool = False

    @property
    def seed(self) -> int:
        # Every candidate's request carries its seed: that is what tells them apart.
        seed = self.request.settings.seed
        assert seed is not None
        return seed

    @property
    def finished(self) -> bool:
        return self.done is not None or self.error is not None

    @property
    def usable(self) -> bool:
        """Complete text the author can take (a cancelled one is only part of one)."""
        return self.done is not None and self.done.stop_reason != "cancelled" and bool(self.text)

    @property
    def mean_p(self) -> float | None:
        """Mean probability of its tokens: how much the model agreed with its own draws."""
        # A speculating llama-server's tokens from its verifying passes have none: the mean is of those that do.
        known = [event.p for event in self.events if has_probability(event.p)]
        return sum(known) / len(known) if known else None

    def add(self, events: tuple[TokenEvent, ...]) -> None:
        self.events.extend(events)
        self.text += "".join(event.text for event in events)

    def finish(self, done: GenerationDone) -> None:
        self.done = done
        self.text += done.tail_text

    def status(self, language: Language = ENGLISH) -> str:
        """What its label says besides the seed."""
        _, mean = language.gettext, self.mean_p
        shown = _("mean p {percent}%").format(percent=language.number(mean * 100, ".1f")) if mean is not None else ""
        if self.error is not None:
            return _("failed")
        if self.done is not None:
            if self.done.stop_reason == "cancelled":
                return _("stopped")
            return shown or _("nothing written")
        if not self.started:
            return _("waiting")
        writing = _("writing…")
        return f"{shown} · {writing}" if shown else writing


def new_candidate(base: GenerationRequest, settings: SamplerSettings, taken: list[int]) -> Candidate:
    """A candidate for the same prompt as `base`, with a seed none of `taken` has."""
    seed = next_seed(settings, taken)
    chosen = replace(settings, seed=seed)
    request = GenerationRequest.create(
        kind=base.kind,
        prompt=base.prompt,
        settings=chosen,
        bias=base.bias,
        top_n=base.top_n,
        lora_scale=base.lora_scale,
        special=base.special,
        prepare=base.prepare,
    )
    return Candidate(request)


def put_on_ghost(ghost: "Ghost", candidates: list[Candidate], chosen: int, lead: str = "") -> None:
    """Make candidate `chosen` the ghost's text, the other usable ones versions beside it
    (alt+←/→), and whatever the ghost said before an earlier version.

    A candidate continues the ghost's text as it stood, so each version is that text
    followed by the candidate (after `lead`, the break a depth-0 note leaves: note_break)."""
    base_text, base_tokens, base_writers = written_on_from(ghost.text, list(ghost.tokens), ghost.writers)
    base_ids = list(ghost.request_ids)
    base_text, base_writers = with_break(base_text, base_writers, lead)
    shown = [c for c in candidates if c.usable]
    for candidate in shown:
        source = TokenSource("generated", candidate.request.settings, candidate.seed)
        tokens = list(base_tokens)
        add_records(tokens, candidate.events, len(base_text), source)
        close_records(tokens, base_text + candidate.text)
        start_version(
            ghost,
            CANDIDATE_LABEL.format(value=candidate.seed),
            base_text + candidate.text,
            tokens,
            with_writer(base_writers, base_text, candidate.request.id),
        )
        ghost.request_ids = base_ids + [candidate.request.id]  # each version is its own candidate's
    move_version(ghost, shown.index(candidates[chosen]) - (len(shown) - 1))
    ghost.streaming = False
