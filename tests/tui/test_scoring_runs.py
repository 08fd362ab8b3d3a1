"""A scoring run in the TUI (issue 6): its progress, what stops it (Esc, typing, another
model) and what stays of its colours."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

from scoring_helpers import TEXT, HeldScoring, scored, scored_records
from tui_helpers import model_ready, ready, replacement_ready, typed

from scriptorium.inference.core.events import Event


async def test_a_long_draft_shows_progress_and_esc_stops_the_scoring(random_model: Path) -> None:
    held = HeldScoring()

    async with ready(random_model, loader=held.loader, size=(120, 40)) as (app, pilot):
        draft = app.main.draft
        await held.scoring(pilot, " ".join([TEXT] * 10))
        assert draft.scoring
        assert app.main.status.activity.startswith("scoring 32/")
        # The text the author sees is untouched while it is being scored.
        await pilot.press("escape")
        held.open.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not draft.scoring and app.main.status.activity == ""
        records = scored_records(app)
        # Only what was scored before the stop is coloured: far fewer than the whole text.
        assert 0 < len(records) < 100
        assert draft.editor.text == " ".join([TEXT] * 10)
        # Esc again is the draft's own key once more (nothing to stop): no error, text kept.
        await pilot.press("escape")
        assert draft.editor.text == " ".join([TEXT] * 10)


async def test_scoring_without_text_or_model_says_why(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await pilot.press("f9")
        await pilot.pause()
        assert not app.main.draft.scoring
        assert any("no text to score" in n.message for n in app.notices)


async def test_no_key_waits_while_the_scored_window_is_counted(random_model: Path) -> None:
    """What scoring sees is the continuation's window, fitted by counting tokens (the
    engine's process, or a server that may hang): counted in the scoring worker, so keys
    are taken meanwhile; typing stops the scoring, and nothing lands on the changed text."""
    from tui_helpers import HeldCounts, window_marked

    counts = HeldCounts()

    try:
        async with ready(random_model, loader=counts.loader()) as (app, pilot):
            draft = app.main.draft
            await typed(pilot, "La casa era buia.")
            await window_marked(pilot)  # the window marker's count, not held
            counts.hold()
            await pilot.press("f9")
            await counts.wait_counting()
            assert draft.scoring
            await pilot.press("end")
            await typed(pilot, " Poi")
            assert draft.editor.text == "La casa era buia. Poi"  # taken while the count is held
            assert not draft.scoring
            counts.release()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert draft.editor.spans.count_kind("scored") == 0
            await pilot.press("f9")  # the engine is free again: scoring works
            while draft.scoring:
                await pilot.pause(0.05)
            assert draft.editor.spans.count_kind("scored") > 0
    finally:
        counts.release()


async def test_a_byte_token_scored_last_before_a_stop_colours_no_more_than_its_character(random_model: Path) -> None:
    """Stopped after a chunk, the last token scored has no next token to say where it
    ends: its own text said, and a byte token's text is its label ('<0xE2>'), which
    coloured several characters the scoring never reached."""
    held = HeldScoring()

    async with ready(random_model, loader=held.loader, size=(120, 40)) as (app, pilot):
        draft = app.main.draft
        await held.scoring(pilot, "La casa " + "€" * 60)  # no piece has "€": three byte tokens each
        await pilot.press("escape")
        held.open.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        spans = [span for span in draft.editor.spans.spans if span.tokens and span.tokens[0].source.kind == "scored"]
        assert spans
        last = max(spans, key=lambda span: span.start)
        # 32 tokens a chunk: about eight of the sixty euros were reached, never more.
        assert last.end - last.start <= 1 and last.end < len("La casa ") + 15


async def test_choosing_another_model_stops_the_scoring(random_model: Path) -> None:
    """The scoring went on on the model being replaced, and its engine was closed under it:
    the new model waited for it (minutes for a long draft on a big model), or, in the child,
    the scoring was killed and said the engine 'did not stop when asked'."""
    import time

    from tui_helpers import loader_wrapping

    def held_until_stopped(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def held(text: str, *, top_n: int = 10, should_stop: Callable[[], bool] = lambda: False) -> Iterator[Event]:
            while not should_stop():  # a long draft on a big model, still scoring
                time.sleep(0.01)
            return score(text, top_n=top_n, should_stop=should_stop)

        return held

    async with ready(random_model, loader=loader_wrapping("score", held_until_stopped)) as (app, pilot):
        app.main.draft.editor.load_text(TEXT)
        await pilot.press("f9")
        await pilot.pause()
        assert app.main.draft.scoring
        first = app.engine_state.backend
        app.load_model(first.options)
        for _ in range(600):  # the new model ready, and the scoring ended: 30 s at most
            if app.engine_state.backend not in (None, first) and not app.main.draft.scoring:
                break
            await pilot.pause(0.05)
        assert not app.main.draft.scoring and app.engine_state.model_status.state == "ready"
        assert any("Scoring stopped: another model is loading" in n.message for n in app.notices)


async def test_scores_another_model_made_go_when_it_is_replaced(random_model: Path, sentence_model: Path) -> None:
    """Scored with one model, then another loaded: the cursor on the author's words still
    showed the first model's numbers as 'your text, scored', under the new model's name.
    The same model loaded again (as after a crash) keeps them."""
    from dataclasses import replace as replaced

    async def loaded(pilot: Any, options: Any) -> None:
        app = pilot.app
        first = app.engine_state.backend
        app.load_model(options)
        await replacement_ready(pilot, first)

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        assert await scored(pilot, TEXT)
        await loaded(pilot, app.engine_state.backend.options)
        assert scored_records(app), "the same model's scores stay"
        await loaded(pilot, replaced(app.engine_state.backend.options, model_path=sentence_model))
        assert scored_records(app) == []
        said = [n.message for n in app.notices if "scores it with this one" in n.message]
        assert said and "f9" in said[-1].lower()


async def test_colours_turned_off_while_scoring_stay_off(random_model: Path) -> None:
    """F8 during a long scoring hid the colours, and the next scores put them back on (the
    legend still hidden): the next F8 then seemed to do nothing."""
    held = HeldScoring()

    async with ready(random_model, loader=held.loader, size=(120, 40)) as (app, pilot):
        draft = app.main.draft
        await held.scoring(pilot, " ".join([TEXT] * 6))
        await pilot.press("f8")
        held.open.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert scored_records(app) and not draft.scoring
        assert (draft.inspection.colouring, draft.editor.colour_tokens) == (False, False)
        await pilot.press("f8")
        assert (draft.inspection.colouring, draft.editor.colour_tokens) == (True, True)


async def test_scoring_stopped_by_another_model_does_not_say_its_colours_stay(
    random_model: Path, sentence_model: Path
) -> None:
    """Another model chosen mid-scoring: 'Scoring stopped: another model is loading; what
    was scored stays coloured', then the colours went (they were the last model's). Stopped
    by an edit, the line says how to score again."""
    from dataclasses import replace as replaced

    held = HeldScoring()

    async with ready(random_model, loader=held.loader, size=(120, 40)) as (app, pilot):
        await held.scoring(pilot, " ".join([TEXT] * 6))
        await pilot.press("x")
        said = [n.message for n in app.notices if n.message.startswith("Scoring stopped")]
        assert said and "f9 scores it again" in said[-1].lower(), said
        held.open.set()
        await app.workers.wait_for_complete()
        held.reached.clear()
        held.open.clear()
        await held.scoring(pilot, TEXT * 6)
        first = app.engine_state.backend
        app.load_model(replaced(first.options, model_path=sentence_model))
        held.open.set()
        await replacement_ready(pilot, first)
        assert scored_records(app) == []
        said = [n.message for n in app.notices]
        assert not any("another model is loading; what was scored stays coloured" in m for m in said), said


async def test_a_model_file_refused_keeps_the_running_model_s_colours(random_model: Path, tmp_path: Path) -> None:
    """A mistyped path in the load dialog is refused and the model runs on, yet the colours it
    gave the author's text went, with a second notification calling them the last model's."""
    from dataclasses import replace as replaced

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        colours = await scored(pilot, TEXT)
        assert colours
        running = app.engine_state.backend
        app.notices.clear()
        app.load_model(replaced(running.options, model_path=tmp_path / "non-esiste.gguf"))
        await model_ready(pilot)
        assert app.engine_state.backend is running and scored_records(app) == colours
        said = [n.message for n in app.notices]
        assert len(said) == 1 and "Still writing with" in said[0], said
