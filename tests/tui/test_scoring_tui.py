"""Scoring the author's own draft in the TUI (issue 6): the values are llama.cpp's, the
run shows progress, and Esc stops it."""

from __future__ import annotations

import asyncio
import threading
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest
from float_tolerance import PROB_RTOL, assert_top_matches
from tui_helpers import make_app, model_ready, run

from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.events import Event, ScoreProgress

TEXT = "La casa era buia, e la notte più lunga. Il gatto dorme sul letto."


def flash_loader(n_batch: int = 512) -> Callable[..., Engine]:
    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        return Engine.load(replace(options, flash_attn=True, n_batch=n_batch), on_progress)
    return load


def scored_records(app: Any) -> list[Any]:
    return [(span.start, span.tokens[0]) for span in app.main.draft.editor.spans.spans
            if span.tokens and span.tokens[0].source.kind == "scored"]


async def scored(pilot: Any, text: str) -> list[Any]:
    """Put `text` in the draft, score it with F9 and wait for the end: its scored records."""
    pilot.app.main.draft.editor.load_text(text)
    await pilot.press("f9")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return scored_records(pilot.app)


def test_scores_equal_a_softmax_of_llama_cpp_logits_and_the_cursor_shows_them(random_model: Path) -> None:
    from llama_cpp import Llama

    async def scenario() -> list[Any]:
        app = make_app(random_model, loader=flash_loader(), top_n=5)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            records = await scored(pilot, TEXT)
            assert app.main.draft.colouring and not app.main.draft.scoring
            assert app.main.status.activity == ""
            # The cursor on the fourth token shows its numbers, marked as the author's text.
            start, fourth = records[3]
            app.main.draft.editor.move_cursor((0, start))
            await pilot.pause()
            panel = app.main.sidebar.probabilities
            assert panel.event.id == fourth.id and panel.border_subtitle == "your text, scored"
            # The KV panel shows the cache as scoring left it: the draft's tokens, BOS included.
            assert app.main.sidebar.kv.usage.tokens == len(records) + 1
            return records

    records = asyncio.run(scenario())
    reference = Llama(model_path=str(random_model), n_ctx=512, n_threads=1, logits_all=True, flash_attn=True,
                      verbose=False)
    tokens = reference.tokenize(TEXT.encode())
    reference.eval(tokens)
    logits = np.asarray(reference.scores[: len(tokens)], dtype=np.float64)
    reference.close()
    assert [r.id for _, r in records] == tokens[1:]
    # Every scored token covers its own characters, and together they cover the text.
    assert "".join(r.text for _, r in records) == TEXT[records[0][0]:]
    for position, (_, record) in enumerate(records):
        row = logits[position]
        softmax = np.exp(row - row.max())
        softmax /= softmax.sum()
        # Within float32 rounding of llama.cpp's own logits (see float_tolerance).
        assert record.p == pytest.approx(softmax[record.id], rel=PROB_RTOL)
        assert_top_matches(record.top, softmax)


class HeldScoring:
    """Holds a scoring run after its first chunk until released."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.open = threading.Event()

    def loader(self, options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = flash_loader(n_batch=32)(options, on_progress)
        original = engine.score

        def score(*args: Any, **kwargs: Any) -> Iterator[Event]:
            with closing(original(*args, **kwargs)) as events:
                for event in events:
                    yield event
                    if isinstance(event, ScoreProgress) and not self.reached.is_set():
                        self.reached.set()
                        self.open.wait(30)

        engine.score = score  # type: ignore[method-assign]
        return engine

    async def scoring(self, pilot: Any, text: str) -> None:
        """Put `text` in the draft and press F9: back once the run is held after its first chunk."""
        pilot.app.main.draft.editor.load_text(text)
        await pilot.press("f9")
        assert await asyncio.to_thread(self.reached.wait, 30)  # its progress is posted by then
        await pilot.pause()


def test_a_long_draft_shows_progress_and_esc_stops_the_scoring(random_model: Path) -> None:
    held = HeldScoring()

    async def scenario() -> None:
        app = make_app(random_model, loader=held.loader)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
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
    run(scenario)


def test_scoring_without_text_or_model_says_why(random_model: Path) -> None:
    async def scenario() -> None:
        app = make_app(random_model)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            await pilot.press("f9")
            await pilot.pause()
            assert not app.main.draft.scoring
            assert any("no text to score" in n.message for n in app._notifications)
    run(scenario)


def test_scoring_sees_the_memory_and_the_note_as_a_continuation_does(random_model: Path) -> None:
    """The scores are how probable the model finds the author's words given what it sees
    when it continues: the memory first, the note N paragraphs before the end. Only the
    draft's own tokens are scored, each over its own characters."""
    from tui_helpers import loader_wrapping

    from scriptorium.inference.window import Pinned

    draft_text = "Uno due tre.\n\nIl gatto dorme sul letto."
    scored_texts: list[str] = []

    def spy(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def recorded(text: str, **kwargs: Any) -> Iterator[Event]:
            scored_texts.append(text)
            return score(text, **kwargs)
        return recorded

    async def scenario() -> None:
        app = make_app(random_model, loader=loader_wrapping("score", spy))
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            draft = app.main.draft
            draft.pinned = Pinned("Memoria: una casa sul lago.", "Nota: tono cupo.", 1)
            draft.editor.load_text(draft_text)
            await pilot.press("f9")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert scored_texts == ["Memoria: una casa sul lago.\n\nUno due tre.\n\nNota: tono cupo.\n\n"
                                    "Il gatto dorme sul letto."]
            records = scored_records(app)
            assert records[0][0] == 0 and "".join(r.text for _, r in records) == draft_text
            assert all(draft_text[start:].startswith(r.text) for start, r in records)
            assert any(f"Scored {len(records)} tokens of your text" in n.message for n in app._notifications)
    run(scenario)


def test_no_key_waits_while_the_scored_window_is_counted(random_model: Path) -> None:
    """What scoring sees is the continuation's window, fitted by counting tokens (the
    engine's process, or a server that may hang): counted in the scoring worker, so keys
    are taken meanwhile; typing stops the scoring, and nothing lands on the changed text."""
    from tui_helpers import HeldCounts, window_marked

    counts = HeldCounts()

    async def scenario() -> None:
        app = make_app(random_model, loader=counts.loader())
        async with app.run_test() as pilot:
            await model_ready(pilot)
            draft = app.main.draft
            await pilot.press(*"La casa era buia.")
            await window_marked(pilot)  # the window marker's count, not held
            counts.hold()
            await pilot.press("f9")
            await counts.wait_counting()
            assert draft.scoring
            await pilot.press("end", *" Poi")
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

    try:
        run(scenario)
    finally:
        counts.release()


def test_a_byte_token_scored_last_before_a_stop_colours_no_more_than_its_character(random_model: Path) -> None:
    """Stopped after a chunk, the last token scored has no next token to say where it
    ends: its own text said, and a byte token's text is its label ('<0xE2>'), which
    coloured several characters the scoring never reached."""
    held = HeldScoring()

    async def scenario() -> None:
        app = make_app(random_model, loader=held.loader)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
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


def test_choosing_another_model_stops_the_scoring(random_model: Path) -> None:
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

    async def scenario() -> None:
        app = make_app(random_model, loader=loader_wrapping("score", held_until_stopped))
        async with app.run_test() as pilot:
            await model_ready(pilot)
            app.main.draft.editor.load_text(TEXT)
            await pilot.press("f9")
            await pilot.pause()
            assert app.main.draft.scoring
            first = app.backend
            app.load_model(first.options)
            for _ in range(600):  # the new model ready, and the scoring ended: 30 s at most
                if app.backend not in (None, first) and not app.main.draft.scoring:
                    break
                await pilot.pause(0.05)
            assert not app.main.draft.scoring and app.model_status.state == "ready"
            assert any("Scoring stopped: another model is loading" in n.message for n in app._notifications)

    run(scenario)


def test_scoring_a_draft_longer_than_the_window_says_the_text_before_it_is_not_scored(
        short_context_model: Path) -> None:
    """On a 256-token model F9 on a chapter said 'Scored 120 tokens of your text', as if that
    were all of it: only the window the model sees is scored, and the author is told so."""
    chapter = "\n\n".join(f"Il gatto nero dorme sul tetto. La casa era buia {i}." for i in range(200))

    async def scenario() -> None:
        app = make_app(short_context_model)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            records = await scored(pilot, chapter)
            assert 0 < records[0][0] == app.main.draft.editor.window_start
            said = [n.message for n in app._notifications if n.message.startswith("Scored")]
            assert said and f"the last {len(records)} tokens of your text" in said[-1]
            assert "the dimmed text before them is not scored" in said[-1]
    run(scenario)


def test_an_unexpected_word_of_the_author_says_it_is_not_among_the_candidates(random_model: Path) -> None:
    """The cursor on a word the model did not rank among its candidates drew
    '▶ chosen ␣gatto  0.0%  (no': the words saying why the bars miss it were cut off."""
    async def scenario() -> None:
        app = make_app(random_model, top_n=5)
        async with app.run_test(size=(140, 40)) as pilot:
            await model_ready(pilot)
            records = await scored(pilot, TEXT)
            # Far below the fifth candidate: unlisted whatever the rounding.
            start, record = next((start, r) for start, r in records[1:]
                                 if all(c.id != r.id for c in r.top) and r.p < r.top[-1].p / 2)
            editor = app.main.draft.editor
            editor.move_cursor(editor.document.get_location_from_index(start + len(record.text) // 2 + 1))
            await pilot.pause()
            panel = app.main.sidebar.probabilities
            summary = panel.render_line(panel.line_count - 1).text.rstrip()
            assert panel.content_size.width <= 30
            assert "top 5)" in summary and record.text.strip()[:3] in summary, summary
    run(scenario)


def test_characters_spread_over_byte_tokens_are_counted_as_the_tokens_scored(random_model: Path) -> None:
    """'Scored 59 tokens of your text' on a Japanese paragraph the 16k Italian vocabulary
    spells in 172 byte tokens: the count was of the characters coloured, not of the
    tokens llama.cpp scored."""
    from tui_helpers import loader_wrapping

    from scriptorium.inference.events import TokenScore

    counted: list[int] = []

    def spy(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def counting(text: str, **kwargs: Any) -> Iterator[Event]:
            for event in score(text, **kwargs):
                counted.extend([1] if isinstance(event, TokenScore) else [])
                yield event
        return counting

    async def scenario() -> None:
        app = make_app(random_model, loader=loader_wrapping("score", spy))
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            records = await scored(pilot, "La casa " + "€" * 5)  # no piece has "€": three byte tokens each
            assert len(counted) > len(records)
            said = [n.message for n in app._notifications if n.message.startswith("Scored")]
            assert said and f"Scored {len(counted)} tokens of your text" in said[-1], said
    run(scenario)


def test_scores_another_model_made_go_when_it_is_replaced(random_model: Path, sentence_model: Path) -> None:
    """Scored with one model, then another loaded: the cursor on the author's words still
    showed the first model's numbers as 'your text, scored', under the new model's name.
    The same model loaded again (as after a crash) keeps them."""
    from dataclasses import replace as replaced

    async def loaded(pilot: Any, options: Any) -> None:
        app = pilot.app
        first = app.backend
        app.load_model(options)
        for _ in range(600):  # 30 s at most
            if app.backend not in (None, first) and app.model_status.state == "ready":
                break
            await pilot.pause(0.05)
        await pilot.pause()

    async def scenario() -> None:
        app = make_app(random_model)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            assert await scored(pilot, TEXT)
            await loaded(pilot, app.backend.options)
            assert scored_records(app), "the same model's scores stay"
            await loaded(pilot, replaced(app.backend.options, model_path=sentence_model))
            assert scored_records(app) == []
            said = [n.message for n in app._notifications if "scores it with this one" in n.message]
            assert said and "f9" in said[-1].lower()
    run(scenario)


def test_a_character_spelled_in_byte_tokens_shows_its_own_probability_and_alternatives(random_model: Path) -> None:
    """'€' is three byte tokens to the vocabulary: the cursor on it showed the last byte's
    numbers (how probable that byte was after the first two), and a branch there offered
    what the model expected in the middle of the character. It shows the chance the model
    gave the whole character (the product of its bytes') and the alternatives where it starts."""
    from tui_helpers import loader_wrapping

    from scriptorium.inference.events import TokenScore

    events: list[TokenScore] = []

    def spy(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def kept(text: str, **kwargs: Any) -> Iterator[Event]:
            for event in score(text, **kwargs):
                events.extend([event] if isinstance(event, TokenScore) else [])
                yield event
        return kept

    text = "La casa €"

    async def scenario() -> list[Any]:
        app = make_app(random_model, loader=loader_wrapping("score", spy))
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            return await scored(pilot, text)

    records = asyncio.run(scenario())
    start, euro = records[-1]
    assert (start, euro.text) == (text.index("€"), "€")
    bytes_ = [event for event in events if event.start == start]
    assert len(bytes_) == 3
    assert euro.id == bytes_[0].id and euro.top == bytes_[0].top and euro.index == bytes_[0].index
    assert euro.p == pytest.approx(bytes_[0].p * bytes_[1].p * bytes_[2].p, rel=1e-12)


def test_colours_turned_off_while_scoring_stay_off(random_model: Path) -> None:
    """F8 during a long scoring hid the colours, and the next scores put them back on (the
    legend still hidden): the next F8 then seemed to do nothing."""
    held = HeldScoring()

    async def scenario() -> None:
        app = make_app(random_model, loader=held.loader)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            draft = app.main.draft
            await held.scoring(pilot, " ".join([TEXT] * 6))
            await pilot.press("f8")
            held.open.set()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert scored_records(app) and not draft.scoring
            assert (draft.colouring, draft.editor.colour_tokens) == (False, False)
            await pilot.press("f8")
            assert (draft.colouring, draft.editor.colour_tokens) == (True, True)
    run(scenario)


def test_scoring_stopped_by_another_model_does_not_say_its_colours_stay(random_model: Path,
                                                                        sentence_model: Path) -> None:
    """Another model chosen mid-scoring: 'Scoring stopped: another model is loading; what
    was scored stays coloured', then the colours went (they were the last model's). Stopped
    by an edit, the line says how to score again."""
    from dataclasses import replace as replaced

    held = HeldScoring()

    async def scenario() -> None:
        app = make_app(random_model, loader=held.loader)
        async with app.run_test(size=(120, 40)) as pilot:
            await model_ready(pilot)
            await held.scoring(pilot, " ".join([TEXT] * 6))
            await pilot.press("x")
            said = [n.message for n in app._notifications if n.message.startswith("Scoring stopped")]
            assert said and "f9 scores it again" in said[-1].lower(), said
            held.open.set()
            await app.workers.wait_for_complete()
            held.reached.clear()
            held.open.clear()
            await held.scoring(pilot, TEXT * 6)
            first = app.backend
            app.load_model(replaced(first.options, model_path=sentence_model))
            held.open.set()
            for _ in range(600):  # 30 s at most
                if app.backend not in (None, first) and app.model_status.state == "ready":
                    break
                await pilot.pause(0.05)
            await pilot.pause()
            assert scored_records(app) == []
            said = [n.message for n in app._notifications]
            assert not any("another model is loading; what was scored stays coloured" in m for m in said), said
    run(scenario)
