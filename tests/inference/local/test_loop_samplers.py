"""DRY and XTC against a model that loops (gguf_loop.py): what each is for, measured."""

from __future__ import annotations

import contextlib

from gguf_loop import PROMPT, repeated_share
from sampler_reference import loop_engine  # noqa: F401  (a fixture)

from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings

TOKENS = 300


def drawn(engine: Engine, settings: SamplerSettings) -> list[TokenEvent]:
    engine.clear_cache()
    with contextlib.closing(engine.generate(PROMPT, settings, LogitBias(), top_n=10)) as events:
        return [event for event in events if isinstance(event, TokenEvent)]


def test_dry_cuts_the_repeated_four_grams_at_least_fivefold(loop_engine: Engine) -> None:
    # Greedy: without DRY the model repeats its phrase for ever. DRY scans the whole
    # context, so a repetition further back than its default 64 tokens counts too.
    greedy = PRESETS["greedy"].with_changes(max_tokens=TOKENS)
    looping = [event.id for event in drawn(loop_engine, greedy)]
    dry = [
        event.id
        for event in drawn(
            loop_engine,
            greedy.with_changes(dry_multiplier=0.8, dry_base=1.75, dry_allowed_length=2, dry_penalty_last_n=512),
        )
    ]
    assert len(looping) == len(dry) == TOKENS
    assert repeated_share(looping) > 0.95
    assert repeated_share(dry) * 5 <= repeated_share(looping)


def test_xtc_at_probability_one_never_draws_the_top_candidate(loop_engine: Engine) -> None:
    settings = SamplerSettings(
        temperature=1.0,
        top_k=0,
        top_p=1.0,
        min_p=0.0,
        xtc_probability=1.0,
        xtc_threshold=0.1,
        max_tokens=TOKENS,
        seed=7,
    )
    events = drawn(loop_engine, settings)
    assert len(events) == TOKENS
    acted = 0
    for event in events:
        above = [candidate for candidate in event.top if candidate.p >= settings.xtc_threshold]
        if len(above) >= 2:
            acted += 1
            assert event.id != event.top[0].id
    assert acted == TOKENS  # the model keeps two words above the threshold at every step
    # Without XTC the same seed draws the top candidate often.
    plain = drawn(loop_engine, settings.with_changes(xtc_probability=0.0))
    assert sum(event.id == event.top[0].id for event in plain) > TOKENS // 10
