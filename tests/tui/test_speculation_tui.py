"""Speculative decoding in the app: F7 (and the palette) switches it, the generation writes the
same tokens with the same numbers, the Speed panel says what was guessed, and the session
records it."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, make_app, model_ready, run

DRAFT = "Il cane aspettava sulla porta. Il cane aspettava sulla porta della casa, e poi il cane aspettava"


def speed_text(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in app.main.sidebar.speed.lines(40))


def test_f7_speculates_and_the_speed_panel_shows_what_was_guessed(random_model: Path) -> None:
    runs = {}

    async def scenario(speculate: bool) -> None:
        app = make_app(random_model)
        async with app.run_test(size=(160, 48)) as pilot:
            await model_ready(pilot)
            await pilot.press(*DRAFT)
            if speculate:
                await pilot.press("f7")
                await pilot.pause()
                assert app.engine_state.speculation.guesser == "lookup"
            done = await generated(pilot, "ctrl+g")
            _, tokens, _ = app.main.last_generation
            runs[speculate] = (tokens, done, speed_text(app))
            if speculate:
                await pilot.press("f7")  # off again: lookup is the last guesser without a draft model
                assert not app.engine_state.speculation.on

    run(lambda: scenario(False))
    run(lambda: scenario(True))
    (plain, plain_done, plain_speed), (guessed, done, speed) = runs[False], runs[True]
    assert [t.id for t in guessed] == [t.id for t in plain]
    assert plain_done.speculation is None and "guessed" not in plain_speed
    counts = done.speculation
    assert counts is not None and counts.drafted > 0
    assert f"{counts.accepted:,}/{counts.drafted:,} guessed {counts.acceptance:.0%}" in speed
    assert sum(t.drafted for t in guessed) == counts.accepted
